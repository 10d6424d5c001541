package proxy

import (
	"fmt"
	"strings"
	"testing"
)

// TestFrontCancelledNoAnswer: a request the client cancels while it is in
// flight gets no answer (MCP basic/utilities/cancellation: the receiver
// SHOULD not send a response for the cancelled request), on the go-sdk's
// path and on the fast path; the upstream tool's context still ends; a
// notifications/cancelled naming an id that is not in flight leaves a
// later request with that id answered.
func TestFrontCancelledNoAnswer(t *testing.T) {
	url, started, cancelled := slowUpstream(t)
	p := startProxyText(t, fmt.Sprintf("[tool_search]\nenabled = false\n[upstreams.slowup]\nurl = %s\n", tomlQuote(url)))
	for _, fast := range []bool{false, true} {
		lc := startLineClient(t, p, fast)
		fastInit(lc)
		lc.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slowup__slow","arguments":{}}}`)
		waitSignal(t, started, "the upstream tool did not start")
		lc.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"user"}}`)
		waitSignal(t, cancelled, "the cancellation did not reach the upstream tool")
		lc.send(`{"jsonrpc":"2.0","id":4,"method":"ping","params":{}}`)
		if l := string(lc.next()); !strings.HasPrefix(l, `{"jsonrpc":"2.0","id":4,`) {
			t.Errorf("fast=%v: the line after the cancellation is %s, want the answer to ping 4 (none for the cancelled call 3)", fast, l)
		}
		// An id not in flight: nothing to drop; the next request with it is answered.
		lc.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}`)
		lc.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slowup__quick","arguments":{}}}`)
		if l := string(lc.next()); !strings.HasPrefix(l, `{"jsonrpc":"2.0","id":5,`) || !strings.Contains(l, `"quick"`) {
			t.Errorf("fast=%v: call 5 after a cancellation of an id not in flight: %s", fast, l)
		}
	}
}
