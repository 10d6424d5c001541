package front

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sessionsFront serves a go-sdk server over stateful Streamable HTTP with
// Sessions in front, as the proxy does: its receiving middleware records
// each initialized session and marks it initialized, and the fast path's
// dispatch runs the tool "held", which signals started, counts the call and
// answers "released" once release is closed.
func sessionsFront(t *testing.T, timeout time.Duration) (st *Sessions, url string, started, release chan struct{}, calls *atomic.Int64) {
	t.Helper()
	st = &Sessions{EndRequests: func(string) {}}
	started, release, calls = make(chan struct{}, 1), make(chan struct{}), new(atomic.Int64)
	held := func() *mcp.CallToolResult {
		calls.Add(1)
		select {
		case started <- struct{}{}:
		default:
		}
		<-release
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "released"}}}
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "held", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return held(), nil
	})
	var mu sync.Mutex
	flags := map[*mcp.ServerSession]*SessionFlags{}
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			ss, _ := req.GetSession().(*mcp.ServerSession)
			mu.Lock()
			defer mu.Unlock()
			switch method {
			case "initialize":
				f := &SessionFlags{}
				flags[ss] = f
				st.Record(ctx, ss, "", f, context.Background())
			case "notifications/initialized":
				if f := flags[ss]; f != nil {
					f.Initialized.Store(true)
				}
			}
			return res, err
		}
	})
	dispatch := func(context.Context, string, mcp.Request) (mcp.Result, error) { return held(), nil }
	h := IDGuard(st.Handler("", Endpoint{Server: func() (*mcp.Server, mcp.MethodHandler) { return srv, dispatch }}, timeout,
		mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)), 4<<20)
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	return st, hs.URL, started, release, calls
}

// post POSTs body on session sid and returns the status, the body and the
// answer's Mcp-Session-Id.
func post(t *testing.T, url, sid, body string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader([]byte(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return 0, "", ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header.Get("Mcp-Session-Id")
}

// waitUntil polls cond for at most 10 s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
	}
}

// TestSessionExpiryRacesPOST: the idle timer of a stateful session firing
// as a POST of the session begins (its Stop too late: expire runs with the
// POST in flight) does not close the session under the POST's call; nor
// does that firing when its expire runs only after the POST ended (a late
// timer goroutine: the session has not been idle for its timeout); and
// once the timer has closed an idle session, a POST in the window before
// the session's entry is dropped is not started on the closed session: it
// reaches the go-sdk, which answers 404, and the tool is not called. The
// timer's firing is played by calling expire (the function it runs) at
// those moments; the configured timeout is long enough never to fire by
// itself.
func TestSessionExpiryRacesPOST(t *testing.T) {
	st, url, started, release, calls := sessionsFront(t, time.Hour)
	_, _, sid := post(t, url, "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"racer","version":"1"}}}`)
	if sid == "" {
		t.Fatal("no session")
	}
	post(t, url, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	waitUntil(t, "the session ready for the fast path", func() bool { return st.Ready(sid) })
	e := st.table.get(sid)
	done := make(chan string, 1)
	go func() {
		_, b, _ := post(t, url, sid, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"held","arguments":{}}}`)
		done <- b
	}()
	select {
	case <-started:
	case <-time.After(20 * time.Second):
		t.Fatal("the tool did not start")
	}
	e.expire() // the timer fired as the POST began
	close(release)
	if b := <-done; !strings.Contains(b, "released") {
		t.Fatalf("the call in flight when the timer fired: %s (want its answer; the session was closed under it)", b)
	}
	// The client may read the answer before the POST ends (endPOST runs
	// once the handler returns, after the answer's write): the session is
	// idle only then.
	waitUntil(t, "the call's POST ended", func() bool {
		e.mu.Lock()
		defer e.mu.Unlock()
		return e.refs == 0
	})
	if !st.Known(sid) {
		t.Fatal("the session was dropped although a POST held it when the timer fired")
	}
	e.expire() // the same firing, its expire late: after the POST ended
	if _, _, ok := sessReady(e); !ok {
		t.Fatal("a late firing of the timer (it fired as a POST began) closed the session as the POST ended, before its idle timeout")
	}
	if st.Calls.Load() != 1 {
		t.Errorf("the fast path served %d calls, want the one", st.Calls.Load())
	}

	// The session has been idle for its timeout: the timer closes it, and
	// a POST that comes before its entry is dropped is the go-sdk's.
	before, n0 := st.Calls.Load(), calls.Load()
	e.mu.Lock()
	e.idleAt = time.Now().Add(-e.timeout)
	e.mu.Unlock()
	e.expire()
	if _, _, ok := sessReady(e); ok {
		t.Error("the fast path still serves the session the timer closed (until its entry is dropped)")
	}
	if status, b, _ := post(t, url, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"held","arguments":{}}}`); status != http.StatusNotFound {
		t.Fatalf("a call of the expired session: %d %s, want 404", status, b)
	}
	if n := st.Calls.Load() - before; n != 0 {
		t.Errorf("the fast path served %d calls of the expired session", n)
	}
	if n := calls.Load() - n0; n != 0 {
		t.Errorf("the tool was called %d times for the expired session", n)
	}
}
