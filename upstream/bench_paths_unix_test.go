//go:build unix

package upstream

import (
	"context"
	"encoding/json"
	"log/slog"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
)

// BenchmarkStdioCallPaths measures a plain tools/call as the proxy makes
// it (raw result, the caller's capabilities, a 2026-07-28 leg) on the
// go-sdk client (sdk) and past it (own, owntoolcall.go). cpu-µs/op is
// this process's CPU (user+system) per call, without the child's.
func BenchmarkStdioCallPaths(b *testing.B) {
	for _, path := range []string{"sdk", "own"} {
		b.Run(path, func(b *testing.B) {
			o := proxyLikeOptions()
			o.Logger = slog.New(slog.DiscardHandler)
			m := NewManager([]*config.Upstream{stdioUpstream("alpha", "plain")}, o)
			m.sdkCalls = path == "sdk"
			m.Start(context.Background())
			b.Cleanup(func() { _ = m.Close(context.Background()) })
			if st, _ := m.Status("alpha"); st.State != StateReady {
				b.Fatalf("status %+v", st)
			}
			caps := &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}}
			args := json.RawMessage(`{"text":"hi"}`)
			cpu := func() time.Duration {
				var ru syscall.Rusage
				_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
				return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
			}
			b.ReportAllocs()
			start := cpu()
			for b.Loop() {
				raw := &RawResult{}
				if _, err := m.CallToolWith(context.Background(), "alpha", &mcp.CallToolParams{Name: "echo", Arguments: args}, CallOptions{Raw: raw, ClientCapabilities: caps}); err != nil || raw.JSON == nil {
					b.Fatal(err, raw.JSON == nil)
				}
			}
			b.ReportMetric(float64(cpu()-start)/float64(b.N)/1e3, "cpu-µs/op")
		})
	}
}
