package proxy

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
)

// TestHTTPCancelledNoAnswer: over the stateful
// Streamable HTTP front (protocols before 2026-07-28, the go-sdk's session
// handler) a request the client cancels with notifications/cancelled while
// it is in flight gets no answer on its POST stream (MCP
// basic/utilities/cancellation: the receiver SHOULD not send a response
// for the cancelled request); the stream ends; the upstream tool's context
// ends; the session goes on, and the id reused afterwards is answered.
func TestHTTPCancelledNoAnswer(t *testing.T) {
	url, started, cancelled := slowUpstream(t)
	p := startProxyText(t, fmt.Sprintf("[server]\ntransport = \"http\"\n[tool_search]\nenabled = false\n[upstreams.slowup]\nurl = %s\n", tomlQuote(url)))
	front := frontURL(t, p)
	for _, version := range []string{"2025-11-25", "2025-06-18", "2025-03-26"} {
		t.Run(version, func(t *testing.T) {
			c := &rawClient{t: t, url: front, version: version}
			if res := c.initialize("canceller"); res["error"] != nil {
				t.Fatalf("initialize: %v", res["error"])
			}
			body := make(chan string, 1)
			go func() {
				resp := c.post(context.Background(), "tools/call", map[string]any{"name": "slowup__slow", "arguments": map[string]any{}}, false)
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				body <- fmt.Sprintf("HTTP %d %s\n%s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
			}()
			waitSignal(t, started, "the upstream tool did not start")
			id := c.id
			resp := c.post(context.Background(), "notifications/cancelled", map[string]any{"requestId": id, "reason": "user"}, true)
			resp.Body.Close()
			if resp.StatusCode != 202 {
				t.Errorf("notifications/cancelled: HTTP %d, want 202", resp.StatusCode)
			}
			waitSignal(t, cancelled, "the cancellation did not reach the upstream tool")
			if got := <-body; strings.Contains(got, "data:") || strings.Contains(got, `"id"`) {
				t.Errorf("the cancelled call %d was answered:\n%s", id, got)
			}
			// The session goes on; the cancelled id, reused, is answered.
			c.id = id - 1
			if res := c.call("tools/call", map[string]any{"name": "slowup__quick", "arguments": map[string]any{}}); res["error"] != nil || !strings.Contains(fmt.Sprint(res["result"]), "quick") {
				t.Errorf("call %d after the cancellation: %v", id, res)
			}
		})
	}
}
