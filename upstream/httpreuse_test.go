package upstream

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
)

// TestHTTPLegReusesConnections: calls to a Streamable HTTP upstream that
// answers each call as an event stream reuse the leg's connections. The
// caller's context ends as soon as the answer is delivered; reading the
// rest of the stream under it aborted the request, and net/http then
// dialed a new connection for a third of the calls (issue 16; postCtx).
func TestHTTPLegReusesConnections(t *testing.T) {
	s := newTestServer("plain", false)
	hs := httptest.NewUnstartedServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}))
	var conns atomic.Int64
	hs.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	hs.Start()
	t.Cleanup(hs.Close)
	m, _ := startManager(t, []*config.Upstream{httpUpstream("h", hs.URL, "")}, Options{})
	waitFor(t, "upstream ready", func() bool { st, _ := m.Status("h"); return st.State == StateReady })
	call := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel() // the moment the answer is in, as the proxy's call path does
		res, err := m.CallTool(ctx, "h", &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
		if err != nil {
			t.Fatal(err)
		}
		if got := textOf(t, res); got != "hi" {
			t.Fatalf("echo = %q", got)
		}
	}
	call()
	before := conns.Load()
	const n = 60
	for range n {
		call()
	}
	if extra := conns.Load() - before; extra > 2 {
		t.Errorf("%d sequential calls opened %d new connections, want them to reuse one", n, extra)
	}
}
