package proxy

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
)

// TestSubscriptionsPerSession: on a shared upstream session the upstream
// is subscribed once for all client sessions; an unsubscribe from a session
// that never subscribed changes nothing; the upstream is unsubscribed when
// the last subscribed session unsubscribes or goes away.
func TestSubscriptionsPerSession(t *testing.T) {
	var subs, unsubs atomic.Int32
	s := mcp.NewServer(&mcp.Implementation{Name: "res", Version: "1"}, &mcp.ServerOptions{
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { subs.Add(1); return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { unsubs.Add(1); return nil },
	})
	s.AddResource(&mcp.Resource{URI: "test://a", Name: "a"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "test://a", Text: "x"}}}, nil
	})
	s.AddTool(&mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(hs.Close) // after the proxy's Close (cleanups run last-in first-out)
	p := startProxyText(t, fmt.Sprintf("[tool_search]\nenabled = false\n[upstreams.r]\nurl = %s\n", tomlQuote(hs.URL)))
	ctx := context.Background()
	a := connect(t, p, "A", nil)
	b := connect(t, p, "B", nil)
	if _, err := a.ListResources(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := a.Subscribe(ctx, &mcp.SubscribeParams{URI: "test://a"}); err != nil {
		t.Fatal(err)
	}
	// B never subscribed; its unsubscribe must not end A's subscription upstream.
	if err := b.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: "test://a"}); err != nil {
		t.Fatal(err)
	}
	if unsubs.Load() != 0 {
		t.Fatalf("upstream was unsubscribed although client A is still subscribed")
	}
	// A second subscriber and a repeated subscribe: still one upstream subscription.
	for _, c := range []*mcp.ClientSession{b, a} {
		if err := c.Subscribe(ctx, &mcp.SubscribeParams{URI: "test://a"}); err != nil {
			t.Fatal(err)
		}
	}
	if subs.Load() != 1 {
		t.Fatalf("upstream subscribes = %d, want 1", subs.Load())
	}
	if err := a.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: "test://a"}); err != nil {
		t.Fatal(err)
	}
	if unsubs.Load() != 0 {
		t.Fatalf("unsubscribed upstream while B is subscribed")
	}
	// B goes away without unsubscribing: the upstream subscription is released.
	_ = b.Close()
	deadline := time.Now().Add(10 * time.Second)
	for unsubs.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if unsubs.Load() != 1 {
		t.Fatalf("upstream unsubscribes = %d after the last subscriber left, want 1", unsubs.Load())
	}
}

// TestSubscriptionsCarriedOverReload: a reload that restarts an upstream
// subscribes its new shared session to the resources clients were
// subscribed to on the old one (before, the subscription ended with the
// old session, and a client's new subscribe was taken for a repeat).
func TestSubscriptionsCarriedOverReload(t *testing.T) {
	var subs atomic.Int32
	s := mcp.NewServer(&mcp.Implementation{Name: "res", Version: "1"}, &mcp.ServerOptions{
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { subs.Add(1); return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
	s.AddResource(&mcp.Resource{URI: "test://a", Name: "a"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "test://a", Text: "x"}}}, nil
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(hs.Close)
	text := fmt.Sprintf("[tool_search]\nenabled = false\n[upstreams.r]\nurl = %s\n", tomlQuote(hs.URL))
	p := startProxyText(t, text)
	ctx := context.Background()
	a := connect(t, p, "A", nil)
	if err := a.Subscribe(ctx, &mcp.SubscribeParams{URI: "test://a"}); err != nil {
		t.Fatal(err)
	}
	next, err := config.Parse([]byte(text+"call_timeout = \"20s\"\n"), filepath.Join(t.TempDir(), "config.toml"), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	rep, err := p.Reload(ctx, next)
	if err != nil || !slices.Equal(rep.Changed, []string{"r"}) {
		t.Fatalf("reload: %+v, %v; want r changed", rep, err)
	}
	deadline := time.Now().Add(30 * time.Second) // liveness bound
	for subs.Load() < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("upstream subscribes = %d, want 2 (the new session subscribed again)", subs.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSubscriptionsRemadeAfterSessionLost: an HTTP upstream that
// restarts forgets the proxy's session (HTTP 404 for its session id, MCP
// basic/transports "Session Management"); the proxy initializes a new
// session, subscribes it again to the resource a client is subscribed to,
// and relays the new instance's notifications/resources/updated. Before,
// the new session had no subscription and the client got no more updates.
func TestSubscriptionsRemadeAfterSessionLost(t *testing.T) {
	type instance struct {
		srv  *mcp.Server
		subs chan string
	}
	newInstance := func() *instance {
		in := &instance{subs: make(chan string, 4)}
		in.srv = mcp.NewServer(&mcp.Implementation{Name: "res", Version: "1"}, &mcp.ServerOptions{
			SubscribeHandler:   func(_ context.Context, r *mcp.SubscribeRequest) error { in.subs <- r.Params.URI; return nil },
			UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
		})
		in.srv.AddResource(&mcp.Resource{URI: "test://a", Name: "a"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "test://a", Text: "x"}}}, nil
		})
		return in
	}
	var cur atomic.Pointer[http.Handler]
	serve := func(in *instance) {
		var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return in.srv }, nil)
		cur.Store(&h)
	}
	first := newInstance()
	serve(first)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*cur.Load()).ServeHTTP(w, r) }))
	t.Cleanup(hs.Close)
	p := startProxyText(t, fmt.Sprintf("[tool_search]\nenabled = false\n[upstreams.r]\nurl = %s\n", tomlQuote(hs.URL)))
	updated := make(chan string, 16)
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	if _, err := p.Server("", "stdio").Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "A", Version: "1"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) { updated <- r.Params.URI },
	})
	a, err := c.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: legacyVersion})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	if err := a.Subscribe(ctx, &mcp.SubscribeParams{URI: "test://a"}); err != nil {
		t.Fatal(err)
	}
	<-first.subs

	// The upstream restarts: a new server behind the same URL, the old
	// connections (the proxy's GET stream among them) cut.
	second := newInstance()
	serve(second)
	hs.CloseClientConnections()
	select {
	case u := <-second.subs:
		if u != "test://a" {
			t.Fatalf("the new upstream session subscribed to %q", u)
		}
	case <-time.After(30 * time.Second): // liveness bound
		t.Fatal("the proxy's new upstream session never subscribed to test://a again")
	}
	// The go-sdk records the subscription only after SubscribeHandler
	// returns (the signal above comes from inside it), so the update is
	// sent until one arrives: a single one could go to no session.
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(30 * time.Second) // liveness bound
	for {
		if err := second.srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: "test://a"}); err != nil {
			t.Fatal(err)
		}
		select {
		case u := <-updated:
			if u != "test://a" {
				t.Fatalf("notifications/resources/updated for %q", u)
			}
			return
		case <-tick.C:
		case <-deadline:
			t.Fatal("the client got no notifications/resources/updated from the restarted upstream")
		}
	}
}
