package proxy

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/front"
	"github.com/mcp-toolsearch/mcp-toolsearch/internal/linewrite"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// lineClient speaks raw JSON-RPC lines to the proxy's stdio front
// (front.Stdio) served by runStdio (fast: the tools/call fast path on) or
// by the go-sdk server alone (mcp.Server.Run: every request decoded by
// the go-sdk).
type lineClient struct {
	t     *testing.T
	in    io.WriteCloser
	lines chan []byte
	fs    *front.Stdio
}

func startLineClient(t *testing.T, p *Proxy, fast bool) *lineClient {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	fs := front.NewStdio(inR, linewrite.New(outW), 1<<20)
	done := make(chan error, 1)
	go func() {
		if fast {
			done <- p.runStdio(ctx, fs)
		} else {
			done <- p.Server("", "stdio").Run(ctx, fs)
		}
	}()
	lc := &lineClient{t: t, in: inW, lines: make(chan []byte, 64), fs: fs}
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lc.lines <- append([]byte(nil), sc.Bytes()...)
		}
		close(lc.lines)
	}()
	t.Cleanup(func() { cancel(); inW.Close(); <-done; outW.Close() })
	if fast && front.Fast {
		// runStdio turns the fast path on once the go-sdk's Connect has
		// returned; requests read before that (a loaded machine) go the
		// go-sdk's way, which tests that count fast-path calls must not see.
		waitFor(t, "the stdio fast path on", fs.FastEnabled)
	}
	return lc
}

func (lc *lineClient) send(line string) {
	lc.t.Helper()
	if _, err := io.WriteString(lc.in, line+"\n"); err != nil {
		lc.t.Fatal(err)
	}
}

// next is the next line the proxy wrote.
func (lc *lineClient) next() []byte {
	lc.t.Helper()
	select {
	case l, ok := <-lc.lines:
		if !ok {
			lc.t.Fatal("the proxy closed its output")
		}
		return l
	case <-time.After(20 * time.Second):
		lc.t.Fatal("no line from the proxy in 20s")
	}
	return nil
}

// call sends a request and returns its answer line (notifications in
// between are skipped).
func (lc *lineClient) call(id int, method, params string) []byte {
	lc.t.Helper()
	lc.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params))
	for {
		l := lc.next()
		if strings.Contains(string(l), fmt.Sprintf(`"id":%d,`, id)) || strings.HasSuffix(string(l), fmt.Sprintf(`"id":%d}`, id)) {
			return l
		}
	}
}

func (lc *lineClient) fastCalls() int { return lc.fs.FastCalls() }

const fastPathConfig = `
[tool_search]
enabled = false
[upstreams.up]
url = %[1]s
[tools.by_client."restricted*"]
deny = ["up__delete_thing"]
`

// slowUpstream is a go-sdk upstream over Streamable HTTP with a tool
// "slow" that sends one progress notification (when the call has a token),
// signals started, and waits for its context to end, then signals
// cancelled; and a tool "quick" that answers at once.
func slowUpstream(t *testing.T) (url string, started, cancelled chan struct{}) {
	t.Helper()
	started, cancelled = make(chan struct{}, 4), make(chan struct{}, 4)
	s := mcp.NewServer(&mcp.Implementation{Name: "slow-upstream", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "slow", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if tok := req.Params.GetProgressToken(); tok != nil {
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Total: 2, Message: "half way"})
		}
		started <- struct{}{}
		<-ctx.Done()
		cancelled <- struct{}{}
		return nil, ctx.Err()
	})
	s.AddTool(&mcp.Tool{Name: "quick", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "quick"}}}, nil
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(hs.Close)
	return hs.URL, started, cancelled
}

// waitSignal waits up to 20 s for ch, else fails with what.
func waitSignal(t *testing.T, ch chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(20 * time.Second):
		t.Fatal(what)
	}
}

// TestFrontFastPathProgressAndCancel: a tools/call over the stdio front
// gets the upstream's progress under its own progress token, and
// notifications/cancelled for it reaches the upstream tool (its context
// ends) through the proxy's upstream leg. At 2025-11-25 (the call takes the
// fast path) and at 2026-07-28, where a call runs as an exchange
// (exchange.go) whose context outlives the request: the client's first
// request (the go-sdk's path, it opens the session) and a later one (the
// fast path) are each cancelled, and the upstream tool's context ends both
// times.
func TestFrontFastPathProgressAndCancel(t *testing.T) {
	url, started, cancelled := slowUpstream(t)
	p := startProxyText(t, fmt.Sprintf("[tool_search]\nenabled = false\n[upstreams.slowup]\nurl = %s\n", tomlQuote(url)))
	const trip = `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}`
	// slowCall sends tools/call slow with id and progress token tok, reads
	// the progress and waits for the upstream tool to start.
	slowCall := func(t *testing.T, lc *lineClient, id int, meta string) {
		t.Helper()
		lc.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"slowup__slow","arguments":{},"_meta":{%s"progressToken":"client-tok"}}}`, id, meta))
		var progress map[string]any
		for progress == nil {
			var msg map[string]any
			l := lc.next()
			if err := json.Unmarshal(l, &msg); err != nil {
				t.Fatalf("%s: %v", l, err)
			}
			if msg["method"] == "notifications/progress" {
				progress, _ = msg["params"].(map[string]any)
			} else {
				t.Fatalf("before the progress notification: %s", l)
			}
		}
		if progress["progressToken"] != "client-tok" || progress["message"] != "half way" {
			t.Errorf("progress: %v, want the client's token and the upstream's message", progress)
		}
		waitSignal(t, started, "the upstream tool did not start")
	}
	cancel := func(t *testing.T, lc *lineClient, id int) {
		t.Helper()
		lc.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d,"reason":"test"}}`, id))
		waitSignal(t, cancelled, fmt.Sprintf("notifications/cancelled for request %d did not reach the upstream tool", id))
	}
	t.Run(legacyVersion, func(t *testing.T) {
		lc := startLineClient(t, p, true)
		lc.call(1, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}`)
		lc.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		lc.call(2, "ping", `{}`)
		slowCall(t, lc, 3, "")
		if n := lc.fastCalls(); n != 1 {
			t.Fatalf("fast path served %d calls, want 1", n)
		}
		cancel(t, lc, 3)
		// The connection still serves calls after the cancellation.
		if l := lc.call(4, "ping", `{}`); !strings.Contains(string(l), `"result":{}`) {
			t.Errorf("ping after the cancellation: %s", l)
		}
	})
	t.Run(modernVersion, func(t *testing.T) {
		lc := startLineClient(t, p, true)
		slowCall(t, lc, 1, trip+",") // the first request: the go-sdk's path
		if n := lc.fastCalls(); n != 0 {
			t.Fatalf("fast path served %d calls, want 0 (the first request opens the session)", n)
		}
		cancel(t, lc, 1)
		quick := fmt.Sprintf(`{"name":"slowup__quick","arguments":{},"_meta":{%s}}`, trip)
		if l := lc.call(2, "tools/call", quick); !strings.Contains(string(l), `"text":"quick"`) {
			t.Fatalf("tools/call quick after the cancellation: %s", l)
		}
		slowCall(t, lc, 3, trip+",")
		if n := lc.fastCalls(); n != 1 {
			t.Fatalf("fast path served %d calls, want 1", n)
		}
		cancel(t, lc, 3)
		if l := lc.call(4, "tools/call", quick); !strings.Contains(string(l), `"text":"quick"`) {
			t.Errorf("tools/call quick after the cancellation: %s", l)
		}
		if n := exchangesLeft(p); n != 0 {
			t.Errorf("%d exchanges left after the calls were cancelled or answered", n)
		}
	})
}

// exchangesLeft is how many 2026-07-28 calls p keeps (exchange.go).
func exchangesLeft(p *Proxy) int {
	p.exs.mu.Lock()
	defer p.exs.mu.Unlock()
	return len(p.exs.m)
}

// TestToolCallRelaysProgress: in tools mode, a tool_call request with a
// progress token gets the upstream tool's progress under that token (the
// one call tool_call makes passes it on), over the stdio front with and
// without the fast path, and notifications/cancelled for the tool_call
// request still ends the upstream tool.
func TestToolCallRelaysProgress(t *testing.T) {
	url, started, cancelled := slowUpstream(t)
	p := startProxyText(t, fmt.Sprintf("[tool_search]\nmode = \"tools\"\n[upstreams.slowup]\nurl = %s\n", tomlQuote(url)))
	for _, fast := range []bool{false, true} {
		lc := startLineClient(t, p, fast)
		fastInit(lc)
		lc.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"tool_call","arguments":{"id":"slowup__slow","args":{}},"_meta":{"progressToken":"outer-tok"}}}`)
		l := lc.next()
		var msg struct {
			Method string                         `json:"method"`
			Params mcp.ProgressNotificationParams `json:"params"`
		}
		if err := json.Unmarshal(l, &msg); err != nil || msg.Method != "notifications/progress" {
			t.Fatalf("fast=%v: first line after tool_call: %s (%v), want the upstream's progress", fast, l, err)
		}
		if msg.Params.ProgressToken != "outer-tok" || msg.Params.Message != "half way" || msg.Params.Progress != 1 || msg.Params.Total != 2 {
			t.Errorf("fast=%v: progress %+v, want the tool_call request's token and the upstream's progress", fast, msg.Params)
		}
		waitSignal(t, started, "the upstream tool did not start")
		lc.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`)
		waitSignal(t, cancelled, fmt.Sprintf("fast=%v: cancelling tool_call did not reach the upstream tool", fast))
	}
}
