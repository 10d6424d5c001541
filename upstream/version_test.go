package upstream

import (
	"context"
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
