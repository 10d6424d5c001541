package proxy

// In-process variant of integration's BenchmarkOverhead, for profiling the
// proxy's share of a tools/call: the go-sdk client talks
// to the proxy's MCP server over in-memory transports (no stdio front),
// and the proxy talks to a real examples/catalogserver child over stdio, as
// deployed. The client runs in this process too, so a CPU profile shows
// both; the proxy's part is under (*Proxy).middleware and (*Proxy).call.
//
//	go test ./proxy -run XXX -bench CallInProcess -benchtime 3000x -cpuprofile /tmp/proxy.cpu
//	go tool pprof -top -cum proxy.test /tmp/proxy.cpu

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// benchCatalogServer builds examples/catalogserver into a temp dir.
func benchCatalogServer(b *testing.B) string {
	b.Helper()
	out := filepath.Join(b.TempDir(), "catalogserver")
	cmd := exec.Command("go", "build", "-mod=readonly", "-o", out, "./examples/catalogserver")
	cmd.Dir = ".."
	if msg, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build ./examples/catalogserver: %v\n%s", err, msg)
	}
	return out
}

// BenchmarkCallInProcess: b.N tools/call of gh__list_issues through an
// in-process proxy in direct mode whose upstream is catalogserver serving
// examples/catalogs/github-like.jsonl. The sub-benchmarks run it with input
// validation off (direct mode's default) and on (validate_input = true, the
// default of the search modes): the difference is what validating the
// arguments against the inputSchema adds to a call.
func BenchmarkCallInProcess(b *testing.B) {
	cs := benchCatalogServer(b)
	for _, v := range []bool{false, true} {
		b.Run(fmt.Sprintf("validate_input=%v", v), func(b *testing.B) { benchCallInProcess(b, cs, v) })
	}
}

func benchCallInProcess(b *testing.B, cs string, validate bool) {
	cat, err := filepath.Abs("../examples/catalogs/github-like.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	p := startProxyText(b, fmt.Sprintf("[tool_search]\nenabled = false\n\n[upstreams.gh]\ncommand = %q\nargs = [\"-tools\", %q]\nvalidate_input = %v\n", cs, cat, validate))
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	if _, err := p.Server("", "stdio").Connect(ctx, st, nil); err != nil {
		b.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil)
	sess, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: legacyVersion})
	if err != nil {
		b.Fatal(err)
	}
	defer sess.Close()
	params := &mcp.CallToolParams{Name: "gh__list_issues", Arguments: map[string]any{"owner": "octo", "repo": "hello", "state": "open"}}
	for i := 0; i < 200; i++ { // warm-up
		if _, err := sess.CallTool(ctx, params); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := sess.CallTool(ctx, params)
		if err != nil || res.IsError {
			b.Fatalf("call %d: %v %v", i, err, res)
		}
	}
}
