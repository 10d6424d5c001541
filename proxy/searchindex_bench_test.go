package proxy

import (
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
	"github.com/mcp-toolsearch/mcp-toolsearch/policy"
)

// BenchmarkSearchUnderChurn: search latency at 10,000
// tools (the 8,010 toolsdk_registry tools plus 1,990 sealtools tools, in 40
// upstreams of about 250 tools) while one upstream's tools change every
// 100 ms, for
// a client whose policy view denies every third upstream, so its searches
// use a view index. ns/op is the mean; p50-ns and p99-ns are per search
// (snapshot, view index and Search, as modes.API.Search does).
//
//	go test ./proxy -run XXX -bench SearchUnderChurn -benchtime 3000x
func BenchmarkSearchUnderChurn(b *testing.B) {
	dir := os.Getenv("MCPTS_BENCH_DIR")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared", "bench")
	}
	reg, err := catalog.LoadBenchTools(filepath.Join(dir, "toolsdk_registry", "tools.jsonl"))
	if err != nil {
		b.Skipf("bench data absent (set MCPTS_BENCH_DIR): %v", err)
	}
	seal, err := catalog.LoadBenchTools(filepath.Join(dir, "sealtools", "tools.jsonl"))
	if err != nil {
		b.Skipf("bench data absent: %v", err)
	}
	qs, err := catalog.LoadBenchQueries(filepath.Join(dir, "sealtools", "queries.jsonl"))
	if err != nil {
		b.Skipf("bench data absent: %v", err)
	}
	tools := append(reg, seal[:10000-len(reg)]...)
	byUp := map[string][]*catalog.Entry{}
	for _, t := range tools {
		h := fnv.New32a()
		h.Write([]byte(t.Server))
		up := fmt.Sprintf("up%02d", h.Sum32()%40)
		byUp[up] = append(byUp[up], &catalog.Entry{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema})
	}
	ups := make([]string, 0, len(byUp))
	for up := range byUp {
		ups = append(ups, up)
	}
	sort.Strings(ups)
	var infos []catalog.UpstreamInfo
	var pups []policy.Upstream
	var deny []string
	for i, up := range ups {
		infos = append(infos, catalog.UpstreamInfo{Name: up, Prefix: up, Trusted: true})
		pups = append(pups, policy.Upstream{Name: up, NamePrefix: up + "__", IDPrefix: "mcp:" + up + ":"})
		if i%3 == 0 {
			deny = append(deny, "mcp:"+up+":*")
		}
	}
	cat := catalog.New("__", nil, infos)
	for _, up := range ups {
		cat.SetTools(up, byUp[up])
	}
	pol, err := policy.Compile(policy.Spec{Tools: policy.Rules{Deny: deny}, Upstreams: pups})
	if err != nil {
		b.Fatal(err)
	}
	view := pol.View(policy.Subject{ClientName: "bench"})
	var vi catalog.ViewIndexes
	allow := func(e *catalog.Entry) bool { return view.Allowed(toolOf(e)) }
	search := func(q string) {
		snap := cat.Snapshot()
		vi.Index(policyView{view}, snap).Search(q, 10, allow)
	}
	search("warm up") // the view's first index is built once per view

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // one upstream changes every 100 ms
		defer wg.Done()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for n := 0; ; n++ {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			up := ups[(n*7)%len(ups)]
			es := make([]*catalog.Entry, len(byUp[up]))
			for i, e := range byUp[up] {
				c := *e
				c.Description = fmt.Sprintf("%s (v%d)", e.Description, n)
				es[i] = &c
			}
			cat.SetTools(up, es)
		}
	}()
	lat := make([]float64, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t := time.Now()
		search(qs[i%len(qs)].Query)
		lat = append(lat, float64(time.Since(t).Nanoseconds()))
	}
	b.StopTimer()
	close(stop)
	wg.Wait()
	sort.Float64s(lat)
	b.ReportMetric(lat[len(lat)/2], "p50-ns")
	b.ReportMetric(lat[min(len(lat)-1, len(lat)*99/100)], "p99-ns")
}
