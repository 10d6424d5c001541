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
		// An id not in flight: nothing to drop, and the cancellation is
		// ignored (MCP basic/utilities/cancellation: a receiver MAY ignore
		// one for an unknown request), so the next request with that id
		// runs and is answered. Sent right after it on purpose: the
		// go-sdk's canceller runs apart from its reader and, given the
		// notification, cancelled the later request 5 about 1 run in 4
		// under -race.
		lc.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}`)
		lc.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slowup__quick","arguments":{}}}`)
		if l := string(lc.next()); !strings.HasPrefix(l, `{"jsonrpc":"2.0","id":5,`) || !strings.Contains(l, `"quick"`) {
			t.Errorf("fast=%v: call 5 after a cancellation of an id not in flight: %s", fast, l)
		}
	}
}

// TestFrontStdioLongLineSkipped: a client line longer
// than server.max_message_bytes is answered -32600 with its id and
// skipped; the session goes on (before: it ended, with every call in
// flight). A line whose id comes after the cut is answered with id null.
func TestFrontStdioLongLineSkipped(t *testing.T) {
	url, _, _ := slowUpstream(t)
	p := startProxyText(t, fmt.Sprintf("[tool_search]\nenabled = false\n[upstreams.slowup]\nurl = %s\n", tomlQuote(url)))
	big := strings.Repeat("A", 5<<20/2) // 2.5 MiB; the line client's cap is 1 MiB
	for _, fast := range []bool{false, true} {
		lc := startLineClient(t, p, fast)
		fastInit(lc)
		lc.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slowup__quick","arguments":{"s":"` + big + `"}}}`)
		if l := string(lc.next()); !strings.HasPrefix(l, `{"jsonrpc":"2.0","id":7,"error":{"code":-32600,`) || !strings.Contains(l, "max_message_bytes") {
			t.Errorf("fast=%v: answer to the long line: %.300s", fast, l)
		}
		lc.send(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"slowup__quick","arguments":{"s":"` + big + `"}},"id":8}`)
		if l := string(lc.next()); !strings.HasPrefix(l, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,`) {
			t.Errorf("fast=%v: answer to the long line with its id at the end: %.300s", fast, l)
		}
		if l := string(lc.call(9, "tools/call", `{"name":"slowup__quick","arguments":{}}`)); !strings.Contains(l, `"quick"`) {
			t.Errorf("fast=%v: a call after the long lines: %s", fast, l)
		}
	}
}

// TestFrontCancelledInBatch: a request cancelled inside
// a batch (protocol 2025-03-26) keeps its slot in the batch's answer, and
// its id, reused afterwards, is answered (before: the note stayed and the
// later request's answer was dropped).
func TestFrontCancelledInBatch(t *testing.T) {
	url, started, cancelled := slowUpstream(t)
	p := startProxyText(t, fmt.Sprintf("[tool_search]\nenabled = false\n[upstreams.slowup]\nurl = %s\n", tomlQuote(url)))
	for _, fast := range []bool{false, true} {
		lc := startLineClient(t, p, fast)
		lc.call(1, "initialize", `{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"c","version":"1"}}`)
		lc.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		lc.call(2, "ping", `{}`)
		lc.send(`[{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slowup__slow","arguments":{}}},{"jsonrpc":"2.0","id":4,"method":"ping","params":{}}]`)
		waitSignal(t, started, "the upstream tool did not start")
		lc.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`)
		waitSignal(t, cancelled, "the cancellation did not reach the upstream tool")
		if l := string(lc.next()); !strings.HasPrefix(l, "[") || !strings.Contains(l, `"id":3`) || !strings.Contains(l, `"id":4`) {
			t.Errorf("fast=%v: the batch's answer: %s", fast, l)
		}
		if l := string(lc.call(3, "tools/call", `{"name":"slowup__quick","arguments":{}}`)); !strings.Contains(l, `"quick"`) {
			t.Errorf("fast=%v: id 3 reused after the batch: %s", fast, l)
		}
	}
}
