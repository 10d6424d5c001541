package upstream

import (
	"context"
	"log/slog"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
)

func benchManager(b *testing.B) *Manager {
	m := NewManager([]*config.Upstream{stdioUpstream("alpha", "plain")}, Options{Logger: slog.New(slog.DiscardHandler)})
	m.Start(context.Background())
	b.Cleanup(func() { _ = m.Close(context.Background()) })
	if st, _ := m.Status("alpha"); st.State != StateReady {
		b.Fatalf("status %+v", st)
	}
	return m
}

// BenchmarkStdioCallEcho measures one tools/call round trip to a stdio child.
func BenchmarkStdioCallEcho(b *testing.B) {
	m := benchManager(b)
	params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}
	for b.Loop() {
		if _, err := m.CallTool(context.Background(), "alpha", params); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStdioCallBig1MiB measures a call whose result is 1 MiB of text.
func BenchmarkStdioCallBig1MiB(b *testing.B) {
	m := benchManager(b)
	params := &mcp.CallToolParams{Name: "big", Arguments: map[string]any{"bytes": 1 << 20}}
	b.SetBytes(1 << 20)
	for b.Loop() {
		if _, err := m.CallTool(context.Background(), "alpha", params); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStdioStartClose measures start (spawn, initialize, 3-page
// listing) plus Close of one stdio upstream.
func BenchmarkStdioStartClose(b *testing.B) {
	for b.Loop() {
		m := NewManager([]*config.Upstream{stdioUpstream("alpha", "plain")}, Options{Logger: slog.New(slog.DiscardHandler)})
		m.Start(context.Background())
		if st, _ := m.Status("alpha"); st.State != StateReady {
			b.Fatalf("status %+v", st)
		}
		_ = m.Close(context.Background())
	}
}
