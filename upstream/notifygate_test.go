package upstream

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
)

// One list_changed of a kind waits at a time: the ones that come while it
// waits are dropped until the handler takes it (or listChangedHold passes).
func TestNotifyGateCoalescesListChanged(t *testing.T) {
	g := newNotifyGate("flood", slog.New(slog.NewTextHandler(io.Discard, nil)))
	now := time.Now()
	const tools = "notifications/tools/list_changed"
	if !g.admit(tools, now) {
		t.Fatal("first list_changed dropped")
	}
	for i := 0; i < 1000; i++ {
		if g.admit(tools, now) {
			t.Fatalf("list_changed %d admitted while one waits", i+2)
		}
	}
	if !g.admit("notifications/prompts/list_changed", now) {
		t.Fatal("a prompts/list_changed was dropped because a tools/list_changed waits")
	}
	g.handled(tools)
	if !g.admit(tools, now) {
		t.Fatal("list_changed dropped after the handler took the waiting one")
	}
	if !g.admit(tools, now.Add(listChangedHold)) {
		t.Fatal("list_changed dropped although the waiting one was never handed over for listChangedHold")
	}
}

// notifications/message past msgBurst at one instant are dropped and
// counted; other notifications have their own budget.
func TestNotifyGateRateLimitsMessages(t *testing.T) {
	g := newNotifyGate("flood", slog.New(slog.NewTextHandler(io.Discard, nil)))
	now := time.Now()
	admitted := 0
	for i := 0; i < 10*msgBurst; i++ {
		if g.admit("notifications/message", now) {
			admitted++
		}
	}
	if admitted != msgBurst {
		t.Fatalf("admitted %d notifications/message at one instant, want the burst %d", admitted, msgBurst)
	}
	g.mu.Lock()
	dropped := g.dropped["notifications/message"]
	g.mu.Unlock()
	if dropped != 9*msgBurst {
		t.Fatalf("counted %d dropped, want %d", dropped, 9*msgBurst)
	}
	if !g.admit("notifications/progress", now) {
		t.Fatal("a progress notification was dropped by the message budget")
	}
	if !g.admit("notifications/message", now.Add(time.Second)) {
		t.Fatal("no notifications/message admitted a second later")
	}
}

// N re-list requests (what each notifications/tools/list_changed makes)
// while a re-listing runs make exactly one more re-listing: after it
// starts, none waits.
func TestRelistCoalesces(t *testing.T) {
	srv := newTestServer("", false)
	var lists atomic.Int32
	entered := make(chan int32, 16)
	release := make(chan struct{})
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if p, ok := req.GetParams().(*mcp.ListToolsParams); ok && method == "tools/list" && p.Cursor == "" {
				if n := lists.Add(1); n > 1 { // a re-listing: hold it
					entered <- n
					select {
					case <-release:
					case <-ctx.Done():
					}
				}
			}
			return next(ctx, method, req)
		}
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	u := &config.Upstream{Name: "web", URL: hs.URL}
	u.StartupTimeout.Duration = 30 * time.Second
	m, _ := startManager(t, []*config.Upstream{u}, Options{})
	t.Cleanup(func() { close(release) }) // before the manager closes (cleanups run last first)

	if !m.Relist("web") {
		t.Fatal("Relist: no live session")
	}
	if n := <-entered; n != 2 {
		t.Fatalf("first re-listing is listing %d, want 2", n)
	}
	for i := 0; i < 50; i++ { // while listing 2 is held
		m.Relist("web")
	}
	release <- struct{}{} // listing 2 ends
	if n := <-entered; n != 3 {
		t.Fatalf("the re-listing after 50 requests is listing %d, want 3", n)
	}
	c := m.conns["web"]
	c.mu.Lock()
	l := c.cur
	c.mu.Unlock()
	if waiting := len(l.relist); waiting != 0 {
		t.Fatalf("%d re-listings wait after the one the 50 requests made, want 0", waiting)
	}
	release <- struct{}{} // listing 3 ends
	select {
	case n := <-entered:
		t.Fatalf("an extra re-listing %d", n)
	default:
	}
}
