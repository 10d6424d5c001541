package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// gate is one tool of gatedUpstream: its calls signal started and answer
// with the tool's name once release is closed.
type gate struct {
	started, release chan struct{}
	calls            atomic.Int64
}

// gatedUpstream starts an upstream (Streamable HTTP) with tools "a" and
// "b", each held by its own gate.
func gatedUpstream(t *testing.T) (url string, a, b *gate) {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "gated", Version: "1"}, nil)
	a, b = &gate{started: make(chan struct{}, 4), release: make(chan struct{})}, &gate{started: make(chan struct{}, 4), release: make(chan struct{})}
	for name, g := range map[string]*gate{"a": a, "b": b} {
		s.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			g.calls.Add(1)
			g.started <- struct{}{}
			<-g.release
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "tool " + name}}}, nil
		})
	}
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(hs.Close)
	return hs.URL, a, b
}

// TestFrontBatchReusesCallID: a client that sends a batch (protocol
// versions before 2025-06-18) holding the id of its tools/call still in
// flight gets, in the batch's answer, an error object for that element
// (-32600 "duplicate in-flight request ID 7", the Streamable HTTP front's
// words) and the other element's result; the call in flight is not
// disturbed and its answer goes out on its own, whole. With and without
// the fast path.
func TestFrontBatchReusesCallID(t *testing.T) {
	for _, fast := range []bool{false, true} {
		url, a, b := gatedUpstream(t)
		p := startProxyText(t, fmt.Sprintf("[tool_search]\nenabled = false\n[upstreams.g]\nurl = %s\n", tomlQuote(url)))
		lc := startLineClient(t, p, fast)
		lc.call(1, "initialize", `{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"c","version":"1"}}`)
		lc.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		lc.call(2, "ping", `{}`)
		before := lc.fastCalls()
		lc.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"g__a","arguments":{}}}`)
		waitSignal(t, a.started, "tool a did not start")
		if fast && lc.fastCalls() != before+1 {
			t.Fatal("call 7 did not take the fast path")
		}
		lc.send(`[{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"g__b","arguments":{}}},{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"g__b","arguments":{}}}]`)
		waitSignal(t, b.started, "tool b did not start (batch element 8)")
		close(a.release)
		var seven []byte
		for seven == nil {
			l := lc.next()
			if !strings.HasPrefix(string(l), "[") && strings.Contains(string(l), `"id":7`) {
				seven = l
			}
		}
		if !strings.Contains(string(seven), `"text":"tool a"`) {
			t.Errorf("fast=%v: call 7's own answer: %s", fast, seven)
		}
		close(b.release)
		var batch []map[string]json.RawMessage
		for batch == nil {
			l := lc.next()
			if strings.HasPrefix(string(l), "[") {
				if err := json.Unmarshal(l, &batch); err != nil {
					t.Fatalf("fast=%v: the batch's answer: %v: %s", fast, err, l)
				}
			}
		}
		if len(batch) != 2 {
			t.Fatalf("fast=%v: the batch's answer has %d elements, want 2: %v", fast, len(batch), batch)
		}
		for _, m := range batch {
			switch string(m["id"]) {
			case "8":
				if !strings.Contains(string(m["result"]), `"text":"tool b"`) {
					t.Errorf("fast=%v: batch answer 8: %s", fast, m["result"])
				}
			case "7":
				if !strings.Contains(string(m["error"]), `"code":-32600,"message":"duplicate in-flight request ID 7"`) {
					t.Errorf("fast=%v: batch answer 7: %s %s, want -32600 duplicate in-flight request ID 7", fast, m["result"], m["error"])
				}
			default:
				t.Errorf("fast=%v: batch answer with id %s", fast, m["id"])
			}
		}
		if n := b.calls.Load(); n != 1 {
			t.Errorf("fast=%v: tool b was called %d times, want 1 (the batch's element 7 is refused unrun)", fast, n)
		}
	}
}

// TestFrontStdioReusedID: a request that reuses the id of a call in
// flight gets -32600 "duplicate in-flight request ID 7" (as on the
// Streamable HTTP front), is not run, and the call in flight answers as
// usual; with and without the fast path.
func TestFrontStdioReusedID(t *testing.T) {
	for _, fast := range []bool{false, true} {
		url, a, b := gatedUpstream(t)
		p := startProxyText(t, fmt.Sprintf("[tool_search]\nenabled = false\n[upstreams.g]\nurl = %s\n", tomlQuote(url)))
		lc := startLineClient(t, p, fast)
		lc.call(1, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}`)
		lc.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		lc.call(2, "ping", `{}`)
		lc.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"g__a","arguments":{}}}`)
		waitSignal(t, a.started, "tool a did not start")
		lc.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"g__b","arguments":{}}}`)
		if l := string(lc.next()); l != `{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"duplicate in-flight request ID 7"}}` {
			t.Fatalf("fast=%v: the reused id's answer: %s", fast, l)
		}
		close(a.release)
		if l := string(lc.next()); !strings.Contains(l, `"id":7,"result"`) || !strings.Contains(l, `"text":"tool a"`) {
			t.Fatalf("fast=%v: call 7's answer: %s", fast, l)
		}
		close(b.release)
		if n := b.calls.Load(); n != 0 {
			t.Errorf("fast=%v: tool b was called %d times, want 0", fast, n)
		}
		// The id is free again once answered.
		if l := string(lc.call(7, "ping", `{}`)); !strings.Contains(l, `"id":7,"result"`) {
			t.Errorf("fast=%v: id 7 after its call ended: %s", fast, l)
		}
	}
}
