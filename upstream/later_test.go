package upstream

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
)

// TestLaterTakesOnePiece: a Later holds one piece of work until Run; a
// second piece, or one left after Run, runs at once on a goroutine of its
// own (nothing is left unrun).
func TestLaterTakesOnePiece(t *testing.T) {
	var l Later
	ran := make(chan string, 3)
	l.leave(func() { ran <- "first" })
	l.leave(func() { ran <- "second" })
	if got := <-ran; got != "second" {
		t.Fatalf("%s ran before Run, want only the second (the Later holds one)", got)
	}
	l.Run()
	if got := <-ran; got != "first" {
		t.Fatalf("Run ran %s, want first", got)
	}
	l.leave(func() { ran <- "after" })
	if got := <-ran; got != "after" {
		t.Fatalf("got %s, want the work left after Run run at once", got)
	}
	var none *Later
	none.leave(func() { ran <- "nil" })
	if got := <-ran; got != "nil" {
		t.Fatalf("got %s, want a nil Later's work run", got)
	}
}

// TestHTTPLegLaterReadsStreamEnd: own calls whose context carries a Later
// (the proxy's exchange, proxy/exchange.go) return with their answer; the
// end of each answer stream is read when the caller runs the Later, and
// the connection is then reused, as with the goroutine of its own.
func TestHTTPLegLaterReadsStreamEnd(t *testing.T) {
	s := newTestServer("plain", false)
	hs := httptest.NewUnstartedServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}))
	conns := startCounting(t, hs)
	m, _ := startManager(t, []*config.Upstream{httpUpstream("h", hs.URL, "")}, proxyLikeOptions())
	waitFor(t, "upstream ready", func() bool { st, _ := m.Status("h"); return st.State == StateReady })
	call := func() {
		var l Later
		ctx, cancel := context.WithTimeout(WithLater(context.Background(), &l), 10*time.Second)
		defer cancel()
		raw := &RawResult{}
		if _, err := m.CallToolWith(ctx, "h", &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}, CallOptions{Raw: raw}); err != nil {
			t.Fatal(err)
		}
		if len(raw.JSON) == 0 {
			t.Fatal("no raw result: the call did not take the own path")
		}
		l.Run()
	}
	call()
	before := conns.Load()
	for range 40 {
		call()
	}
	if extra := conns.Load() - before; extra > 2 {
		t.Errorf("40 sequential calls opened %d new connections, want them to reuse one", extra)
	}
}
