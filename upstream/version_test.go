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

// TestStdioLegNegotiatesNewest: a stdio upstream that speaks 2026-07-28
// (a go-sdk v1.8.0 server with its default versions) is reached at
// 2026-07-28 (server/discover, no initialize); calls work and the result
// comes back. (Older servers: server/discover is -32601 there and the
// go-sdk client falls back to initialize; the integration matrix covers
// them.)
func TestStdioLegNegotiatesNewest(t *testing.T) {
	m, _ := startManager(t, []*config.Upstream{stdioUpstream("a", "plain")}, Options{})
	waitFor(t, "upstream ready", func() bool { st, _ := m.Status("a"); return st.State == StateReady })
	cs := m.Session("a")
	if cs == nil {
		t.Fatal("no session")
	}
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Errorf("stdio leg negotiated %q, want 2026-07-28", v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := m.CallTool(ctx, "a", &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := textOf(t, res); got != "hi" {
		t.Errorf("echo = %q", got)
	}
}

// TestHTTPLegNegotiatesNewest: a Streamable HTTP upstream served by a
// stateless go-sdk handler speaks 2026-07-28 and is reached at it (the
// proxy's client transport sends the per-request headers the server
// checks); one with sessions serves up to 2025-11-25 and is reached at
// that. Both list and call.
func TestHTTPLegNegotiatesNewest(t *testing.T) {
	for _, tc := range []struct {
		stateless bool
		want      string
	}{{true, "2026-07-28"}, {false, "2025-11-25"}} {
		s := newTestServer("plain", false)
		hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: tc.stateless}))
		t.Cleanup(hs.Close)
		m, _ := startManager(t, []*config.Upstream{httpUpstream("h", hs.URL, "")}, Options{})
		waitFor(t, "upstream ready", func() bool { st, _ := m.Status("h"); return st.State == StateReady })
		if v := m.Session("h").InitializeResult().ProtocolVersion; v != tc.want {
			t.Errorf("stateless=%v: negotiated %q, want %q", tc.stateless, v, tc.want)
		}
		if n := len(m.Tools("h")); n == 0 {
			t.Errorf("stateless=%v: no tools listed", tc.stateless)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		res, err := m.CallTool(ctx, "h", &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
		cancel()
		if err != nil {
			t.Fatalf("stateless=%v: %v", tc.stateless, err)
		}
		if got := textOf(t, res); got != "hi" {
			t.Errorf("stateless=%v: echo = %q", tc.stateless, got)
		}
	}
}
