package proxy

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mcp-toolsearch/mcp-toolsearch/internal/linewrite"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// lineClient speaks raw JSON-RPC lines to the proxy's stdio front
// (frontStdio) served by runStdio (fast: the tools/call fast path on) or
// by the go-sdk server alone (mcp.Server.Run: every request decoded by
// the go-sdk).
type lineClient struct {
	t     *testing.T
	in    io.WriteCloser
	lines chan []byte
	fs    *frontStdio
}

func startLineClient(t *testing.T, p *Proxy, fast bool) *lineClient {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	fs := &frontStdio{in: &lineReader{r: inR, max: 1 << 20}, out: linewrite.New(outW), max: 1 << 20}
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

func (lc *lineClient) fastCalls() int {
	lc.fs.mu.Lock()
	c := lc.fs.last
	lc.fs.mu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fastCalls
}

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

// TestFastParams: what the fast path decodes itself and what it leaves to
// the go-sdk.
func TestFastParams(t *testing.T) {
	var last string
	for i := 0; i < 2; i++ { // the second time the name is the last one's
		p := new(mcp.CallToolParamsRaw)
		ok := fastParams([]byte(`{"name":"a__b","arguments":{"x":[1,{"y":null}]},"_meta":{"progressToken":7}}`), nil, p, &last)
		if !ok || p.Name != "a__b" || string(p.Arguments) != `{"x":[1,{"y":null}]}` || p.GetProgressToken() != float64(7) {
			t.Fatalf("fastParams = %+v, %v", p, ok)
		}
	}
	if p := new(mcp.CallToolParamsRaw); !fastParams([]byte(`{"name":"a__c"}`), nil, p, &last) || p.Name != "a__c" || last != "a__c" {
		t.Fatalf("another name: %+v, last %q", p, last)
	}
	for _, in := range []string{
		``, `null`, `[]`, `{}`,
		`{"name":"a","name":"b"}`,
		`{"name":"a","task":{}}`,
		`{"name":"a","inputResponses":{}}`,
		`{"name":"a","requestState":"s"}`,
		`{"name":"a\"b"}`,
		`{"name":"a\\u0041"}`,
		`{"name":1}`,
		`{"n\u0061me":"a"}`,
		`{"name":"a","_meta":null}`,
		`{"name":"a","_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"}}`,
		`{"name":"a","_meta":{"io.modelcontextprotocol/logLevel":"debug"}}`,
		"{\"name\":\"a\xff\"}",
	} {
		checkScannedOnce(t, in) // frontmeta_test.go
		if p := new(mcp.CallToolParamsRaw); fastParams([]byte(in), nil, p, &last) {
			t.Errorf("fastParams(%s) = %+v: want it left to the go-sdk", in, p)
		}
	}
}

// TestTakeFastGuards: the connection-state guards of the fast path (the
// request itself qualifies in every case): no session yet, a notification
// the go-sdk has not handled yet, a batch, an id already in flight, a
// closing connection; and notifications/cancelled for a fast-path id is
// taken and cancels that call only.
func TestTakeFastGuards(t *testing.T) {
	req := func(id int64) *jsonrpc.Request {
		rid, _ := jsonrpc.MakeID(float64(id))
		return &jsonrpc.Request{ID: rid, Method: "tools/call", Params: json.RawMessage(`{"name":"t","arguments":{}}`)}
	}
	line := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}` + "\n")
	release := make(chan struct{})
	defer close(release)
	newConn := func() *frontConn {
		c := &frontConn{out: linewrite.New(io.Discard), base: context.Background(), sawInit: true, version: "2025-11-25"}
		c.enableFast(nil, func(ctx context.Context, _ string, _ mcp.Request) (mcp.Result, error) {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return nil, ctx.Err()
		})
		return c
	}
	c := newConn()
	if !c.takeFast(req(1), line, nil) {
		t.Fatal("an open session's tools/call was not taken")
	}
	if !c.takeFast(req(1), line, nil) || c.fastCalls != 1 {
		t.Errorf("an id in flight on the fast path: not dropped, or run again (%d calls)", c.fastCalls)
	}
	c.toSDK([]jsonrpc.Message{&jsonrpc.Request{Method: "notifications/initialized"}})
	if c.takeFast(req(2), line, nil) {
		t.Error("taken while notifications/initialized is not handled yet")
	}
	c.noteDone()
	if !c.takeFast(req(3), line, nil) {
		t.Error("not taken after the notification was handled")
	}
	if c.takeFast(req(4), append([]byte("["), line...), nil) {
		t.Error("a batch element was taken")
	}
	if !c.takeFast(&jsonrpc.Request{Method: "notifications/cancelled", Params: json.RawMessage(`{"requestId":3}`)}, nil, nil) {
		t.Error("notifications/cancelled for a fast-path call was passed on")
	}
	if c.takeFast(&jsonrpc.Request{Method: "notifications/cancelled", Params: json.RawMessage(`{"requestId":99}`)}, nil, nil) {
		t.Error("notifications/cancelled for another id was taken")
	}
	c.endFast() // cancels call 1 (3 was cancelled above) and waits for both
	if c.takeFast(req(5), line, nil) {
		t.Error("taken on a closing connection")
	}
	fresh := &frontConn{out: c.out, base: context.Background()}
	fresh.enableFast(nil, nil)
	if fresh.takeFast(req(1), line, nil) {
		t.Error("taken before the session is open (no initialize answer, no accepted triple)")
	}
	if n := (&frontConn{sawInit: true, version: "2025-11-25"}); n.takeFast(req(1), line, nil) {
		t.Error("taken without the go-sdk session (runStdio did not enable it)")
	}
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

// TestBindFast: a fast-path call is bound to its session without a
// context of its own (bindFast); the session's end cancels it with
// errSessionEnded, as bind does. A context cut off from the call's
// (WithoutCancel) or a second session on the connection is bound the
// usual way.
func TestBindFast(t *testing.T) {
	c := &frontConn{inflight: map[jsonrpc.ID]context.CancelCauseFunc{}}
	life, end := context.WithCancel(context.Background())
	s := &session{life: life, end: end}
	callCtx, cancel := context.WithCancelCause(context.Background())
	id, _ := jsonrpc.MakeID(float64(1))
	c.inflight[id] = cancel
	f := &fastCall{c: c, resp: jsonrpc.Response{ID: id}}
	f.mark(callCtx)
	ctx := context.WithValue(f, struct{ k int }{1}, "a middleware's value")
	bound, stop := s.bind(ctx)
	if bound != ctx {
		t.Fatal("a fast-path call got a context of its own")
	}
	stop()
	// Cut off from the call's cancellation: bound the usual way.
	if cut, stop := s.bind(context.WithoutCancel(ctx)); cut == context.WithoutCancel(ctx) || cut.Done() == nil {
		t.Error("a context cut off from the fast-path call was not bound")
	} else {
		defer stop()
	}
	// Another session on the same connection: bound the usual way.
	life2, end2 := context.WithCancel(context.Background())
	defer end2()
	s2 := &session{life: life2, end: end2}
	if other, stop := s2.bind(ctx); other == ctx {
		t.Error("a second session used the connection's binding")
	} else {
		defer stop()
	}
	end()
	select {
	case <-callCtx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the session's end did not cancel the fast-path call")
	}
	if !errors.Is(context.Cause(callCtx), errSessionEnded) {
		t.Errorf("cause %v, want errSessionEnded", context.Cause(callCtx))
	}
	// A call bound after the session ended is cancelled at once.
	late, cancelLate := context.WithCancelCause(context.Background())
	defer cancelLate(nil)
	lateCall := &fastCall{c: c}
	lateCall.mark(late)
	if b, _ := s.bind(lateCall); b.Err() == nil {
		t.Error("a fast-path call bound after its session ended was not cancelled")
	}
}
