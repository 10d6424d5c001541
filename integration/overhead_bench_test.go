//go:build unix

package integration

// Proxy overhead (issue 6, item 5): tools/call through the real proxy
// binary against the same call made straight to the same upstream, side by
// side in one run. Targets: at most 150 µs added at p50, and at least 85%
// of the direct throughput.
//
//	go test ./integration -run XXX -bench Overhead -benchtime 3000x
//
// prints the usual benchmark lines (with p50_us, p99_us and calls/s) and a
// table comparing the two sides at 1 and 16 concurrent callers.

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// overheadResult is one side of one concurrency level, from the last (the
// reported) run of its sub-benchmark.
type overheadResult struct {
	calls          int
	p50, p99       time.Duration
	callsPerSecond float64
}

// runCalls makes b.N calls of tool through cs from conc goroutines sharing
// one client session, and reports p50_us, p99_us (per-call latency as the
// caller sees it) and calls/s (b.N over the wall-clock time of the loop).
func runCalls(b *testing.B, cs *gosdk.ClientSession, tool string, args map[string]any, conc int) overheadResult {
	lat := make([][]time.Duration, conc)
	var next atomic.Int64
	var failed atomic.Pointer[error]
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for g := 0; g < conc; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				t0 := time.Now()
				res, err := cs.CallTool(context.Background(), &gosdk.CallToolParams{Name: tool, Arguments: args})
				lat[g] = append(lat[g], time.Since(t0))
				if err == nil && res.IsError {
					err = fmt.Errorf("isError result: %v", res.Content)
				}
				if err != nil {
					failed.CompareAndSwap(nil, &err)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if e := failed.Load(); e != nil {
		b.Fatalf("call %s: %v", tool, *e)
	}
	all := slices.Concat(lat...)
	slices.Sort(all)
	r := overheadResult{calls: len(all), p50: percentile(all, 50), p99: percentile(all, 99), callsPerSecond: float64(len(all)) / elapsed.Seconds()}
	b.ReportMetric(float64(r.p50.Nanoseconds())/1e3, "p50_us")
	b.ReportMetric(float64(r.p99.Nanoseconds())/1e3, "p99_us")
	b.ReportMetric(r.callsPerSecond, "calls/s")
	return r
}

// percentile returns the p-th percentile (nearest rank) of sorted d.
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted)*p + 99) / 100 // ceil(n*p/100), 1-based rank
	return sorted[max(i, 1)-1]
}

// BenchmarkOverhead: the official go-sdk client over stdio calls
// list_issues of examples/catalogserver (12 tools of github-like.jsonl)
// once straight and once through `mcp-toolsearch serve --mode off` serving
// that same catalog server (the proxy in direct mode, session log off,
// metrics and in-memory telemetry on, as deployed). Each side has its own
// catalogserver process, started the same way. Sub-benchmarks run direct
// then proxy at 1 and then 16 concurrent callers; the parent prints the
// comparison table to stdout.
func BenchmarkOverhead(b *testing.B) {
	cat := catalogFile(b, "github-like.jsonl")
	server := []string{catalogServer(b), "-tools", cat}
	cfg := writeConfig(b, fmt.Sprintf(`
[tool_search]
enabled = false

[upstreams.gh]
command = %s
args = ["-tools", %s]
`, tomlString(server[0]), tomlString(cat)))
	args := map[string]any{"owner": "octo", "repo": "hello", "state": "open"}
	// OVERHEAD_PROXY_GOGC=N sets GOGC for the proxy process only (an
	// experiment knob: the go-sdk's decoder allocates a fresh 32 KiB buffer
	// per JSON message, so the proxy's GC work grows with its call rate).
	var proxyEnv []string
	if v := os.Getenv("OVERHEAD_PROXY_GOGC"); v != "" {
		proxyEnv = append(proxyEnv, "GOGC="+v)
	}
	sides := []struct {
		name, tool string
		cs         *gosdk.ClientSession
	}{
		{"direct", "list_issues", gosdkClientStdio(b, server)},
		{"proxy", "gh__list_issues", gosdkClientStdio(b, proxyCmd(b, cfg, "--mode", "off"), proxyEnv...)},
	}
	for _, s := range sides { // warm both paths (connections, JIT-free but caches and pools)
		for i := 0; i < 200; i++ {
			if _, err := s.cs.CallTool(context.Background(), &gosdk.CallToolParams{Name: s.tool, Arguments: args}); err != nil {
				b.Fatalf("warm-up %s: %v", s.name, err)
			}
		}
	}
	results := map[string]overheadResult{}
	for _, conc := range []int{1, 16} {
		for _, s := range sides {
			name := fmt.Sprintf("%s/c%d", s.name, conc)
			b.Run(name, func(b *testing.B) { results[name] = runCalls(b, s.cs, s.tool, args, conc) })
		}
	}
	if len(results) != 4 {
		return // a sub-benchmark was filtered out by -bench or failed
	}
	w := os.Stdout
	fmt.Fprintf(w, "\nproxy overhead, tools/call of %s over stdio (go-sdk client), GOMAXPROCS=%d\n", "list_issues", runtime.GOMAXPROCS(0))
	fmt.Fprintf(w, "%-12s %8s %10s %10s %12s\n", "side", "calls", "p50 µs", "p99 µs", "calls/s")
	for _, conc := range []int{1, 16} {
		for _, s := range sides {
			name := fmt.Sprintf("%s/c%d", s.name, conc)
			r := results[name]
			fmt.Fprintf(w, "%-12s %8d %10.1f %10.1f %12.0f\n", name, r.calls, us(r.p50), us(r.p99), r.callsPerSecond)
		}
		d, p := results[fmt.Sprintf("direct/c%d", conc)], results[fmt.Sprintf("proxy/c%d", conc)]
		fmt.Fprintf(w, "  c%-2d added p50 %.1f µs (target <= 150), added p99 %.1f µs, throughput %.1f%% of direct (target >= 85%%)\n",
			conc, us(p.p50-d.p50), us(p.p99-d.p99), 100*p.callsPerSecond/d.callsPerSecond)
	}
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
