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

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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

// TestFrontBatchReusesCallID (h16stdio10's hazard, round 11): a client
// that sends a batch (protocol versions before 2025-06-18) holding the id
// of its tools/call still in flight breaks JSON-RPC, but it must not get
// a broken answer: as the go-sdk does (the reference, fast path off), the
// batch's element with that id is dropped unrun (jsonrpc2 acceptRequest),
// and the call in flight's answer takes its place in the batch, whole.
// With the fast path holding the call, the batch kept a pointer to the
// fast path's answer, whose result bytes went back to resultBufs after
// the write: the batch then carried {"jsonrpc":"2.0","id":7} with no
// result, or another call's bytes.
func TestFrontBatchReusesCallID(t *testing.T) {
	id7, _ := jsonrpc.MakeID(float64(7))
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
		close(a.release) // call 7 answers while the batch is open
		lc.call(9, "ping", `{}`)
		waitFor(t, "call 7's answer taken into the open batch", func() bool {
			c := lc.conn()
			c.mu.Lock()
			defer c.mu.Unlock()
			_, open := c.batches[id7]
			return !open
		})
		close(b.release)
		var batch []map[string]json.RawMessage
		for batch == nil {
			l := lc.next()
			if strings.HasPrefix(string(l), "[") {
				if err := json.Unmarshal(l, &batch); err != nil {
					t.Fatalf("fast=%v: the batch's answer: %v: %s", fast, err, l)
				}
				continue
			}
			if strings.Contains(string(l), `"id":7`) {
				t.Fatalf("fast=%v: an answer to id 7 outside the batch (its element ran): %s", fast, l)
			}
		}
		want := map[string]string{"7": "tool a", "8": "tool b"}
		if len(batch) != 2 {
			t.Fatalf("fast=%v: the batch's answer has %d elements, want 2: %v", fast, len(batch), batch)
		}
		for _, m := range batch {
			if w, ok := want[string(m["id"])]; !ok || !strings.Contains(string(m["result"]), `"text":"`+w+`"`) {
				t.Errorf("fast=%v: batch answer %s: result %s, want the result of %s", fast, m["id"], m["result"], w)
			}
		}
		if n := b.calls.Load(); n != 1 {
			t.Errorf("fast=%v: tool b was called %d times, want 1 (the batch's element 7 is dropped unrun)", fast, n)
		}
	}
}

// conn is the connection the line client's proxy made last.
func (lc *lineClient) conn() *frontConn {
	lc.fs.mu.Lock()
	defer lc.fs.mu.Unlock()
	return lc.fs.last
}
