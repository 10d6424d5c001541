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
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// heldUpstream starts an upstream whose tool "held" signals started when
// a call begins and answers "released" once release is closed; calls
// counts the calls that began.
func heldUpstream(t *testing.T) (url string, started, release chan struct{}, calls *atomic.Int64) {
	t.Helper()
	started, release, calls = make(chan struct{}, 1), make(chan struct{}), new(atomic.Int64)
	s := mcp.NewServer(&mcp.Implementation{Name: "held", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "held", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		calls.Add(1)
		select {
		case started <- struct{}{}:
		default:
		}
		<-release
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "released"}}}, nil
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(hs.Close)
	return hs.URL, started, release, calls
}

// TestFrontSessionExpiryRacesPOST (review r9 U1): the idle timer of a
// stateful session firing as a POST of the session begins (its Stop too
// late: expire runs with the POST in flight) does not close the session
// under the POST's call; nor does that firing when its expire runs only
// after the POST ended (a late timer goroutine: the session has not been
// idle for its timeout, round 11); and once the timer has closed an idle
// session, a POST in the window before the session's entry is dropped is
// not started on the closed session: it reaches the go-sdk, which answers
// 404, and the upstream is not called. The timer's firing is played by
// calling expire (the function it runs) at those moments; the configured
// timeout is long enough never to fire by itself.
func TestFrontSessionExpiryRacesPOST(t *testing.T) {
	upURL, started, release, calls := heldUpstream(t)
	p := startProxyText(t, fmt.Sprintf("[server]\ntransport = \"http\"\nsession_idle_timeout = \"1h\"\n[tool_search]\nenabled = false\n[upstreams.h]\nurl = %s\n", tomlQuote(upURL)))
	c := openSession(t, p, frontURL(t, p), "racer", nil)
	e := p.hsess.get(c.sid)
	done := make(chan httpAnswer, 1)
	go func() {
		done <- c.post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"h__held","arguments":{}}}`, nil)
	}()
	waitSignal(t, started, "the upstream tool did not start")
	e.expire() // the timer fired as the POST began
	close(release)
	if a := <-done; !strings.Contains(a.body, "released") {
		t.Fatalf("the call in flight when the timer fired: %s (want its answer; the session was closed under it)", a)
	}
	// The client may read the answer before the POST ends (endPOST runs
	// once the handler returns, after the answer's write): the session is
	// idle only then (round 10's CI failure: the expire below ran with
	// the POST still in flight and rightly left the session).
	waitFor(t, "the call's POST ended", func() bool {
		e.mu.Lock()
		defer e.mu.Unlock()
		return e.refs == 0
	})
	if p.hsess.get(c.sid) == nil {
		t.Fatal("the session was dropped although a POST held it when the timer fired")
	}
	e.expire() // the same firing, its expire late: after the POST ended
	if sessReady(e) == nil {
		t.Fatal("a late firing of the timer (it fired as a POST began) closed the session as the POST ended, before its idle timeout")
	}

	// The session has been idle for its timeout: the timer closes it, and
	// a POST that comes before its entry is dropped is the go-sdk's.
	before, n0 := p.sessFastCalls.Load(), calls.Load()
	e.mu.Lock()
	e.idleAt = time.Now().Add(-e.timeout)
	e.mu.Unlock()
	e.expire()
	if sessReady(e) != nil {
		t.Error("the fast path still serves the session the timer closed (until its entry is dropped)")
	}
	if a := c.post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"h__held","arguments":{}}}`, nil); a.status != http.StatusNotFound {
		t.Fatalf("a call of the expired session: %s, want 404", a)
	}
	if n := p.sessFastCalls.Load() - before; n != 0 {
		t.Errorf("the fast path served %d calls of the expired session", n)
	}
	if n := calls.Load() - n0; n != 0 {
		t.Errorf("the upstream tool was called %d times for the expired session", n)
	}
}
