package catalog

import (
	"path/filepath"
	"sort"
	"testing"
	"time"
)

// benchCatalog loads the 8,010 tools of shared/bench/toolsdk_registry and
// pads them to 10,000 with sealtools tools (ids prefixed "seal:"), or skips
// when the data is absent.
func benchCatalog(b *testing.B) ([]*Entry, []BenchQuery) {
	d := benchDataDir(b)
	if d == "" {
		b.Skip("bench data absent (set MCPTS_BENCH_DIR)")
	}
	reg, err := LoadBenchTools(filepath.Join(d, "toolsdk_registry", "tools.jsonl"))
	if err != nil {
		b.Skipf("bench data absent: %v", err)
	}
	seal, err := LoadBenchTools(filepath.Join(d, "sealtools", "tools.jsonl"))
	if err != nil {
		b.Skipf("bench data absent: %v", err)
	}
	qs, err := LoadBenchQueries(filepath.Join(d, "sealtools", "queries.jsonl"))
	if err != nil {
		b.Skipf("bench data absent: %v", err)
	}
	es := BenchEntries(reg, "")
	es = append(es, BenchEntries(seal[:max(0, min(len(seal), 10000-len(es)))], "seal:")...)
	return es, qs
}

// BenchmarkIndexBuild builds the index over 10,000 tools (target: <= 200 ms
// on the 2-core dev machine) with the default parameters; the dense table
// is parsed before the timer starts (once per process).
func BenchmarkIndexBuild(b *testing.B) { benchIndexBuild(b, DefaultRankParams()) }

// BenchmarkIndexBuildNoDense is BenchmarkIndexBuild with the dense signal
// off ([tool_search] dense = false): its cost side by side.
func BenchmarkIndexBuildNoDense(b *testing.B) {
	p := DefaultRankParams()
	p.Dense = 0
	benchIndexBuild(b, p)
}

func benchIndexBuild(b *testing.B, p RankParams) {
	es, _ := benchCatalog(b)
	denseVectors()
	b.ReportAllocs()
	b.ResetTimer()
	cpu := processCPU()
	for i := 0; i < b.N; i++ {
		ix := NewIndexWithParams(es, p)
		if ix.Len() != len(es) {
			b.Fatalf("Len %d, want %d", ix.Len(), len(es))
		}
	}
	if cpu > 0 {
		b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
	}
}

// BenchmarkQuery runs the sealtools queries in turn against the 10,000
// tool index (target: p99 <= 1 ms) with the default parameters. ns/op is
// the mean; the p50-ns and p99-ns metrics are per-query percentiles.
func BenchmarkQuery(b *testing.B) { benchQuery(b, DefaultRankParams()) }

// BenchmarkQueryNoDense is BenchmarkQuery with the dense signal off.
func BenchmarkQueryNoDense(b *testing.B) {
	p := DefaultRankParams()
	p.Dense = 0
	benchQuery(b, p)
}

func benchQuery(b *testing.B, p RankParams) {
	es, qs := benchCatalog(b)
	ix := NewIndexWithParams(es, p)
	// The word tables load once per process (NewIndex starts the related
	// terms' in the background): not inside the timed loop, where their
	// CPU would count against the queries.
	related()
	zhWords()
	ruTab.get()
	koTab.get()
	thTab.get()
	lat := make([]float64, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := processCPU()
	for i := 0; i < b.N; i++ {
		t := time.Now()
		ix.Search(qs[i%len(qs)].Query, 10, nil)
		lat = append(lat, float64(time.Since(t).Nanoseconds()))
	}
	if cpu > 0 {
		b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
	}
	b.StopTimer()
	sort.Float64s(lat)
	b.ReportMetric(percentile(lat, 0.50), "p50-ns")
	b.ReportMetric(percentile(lat, 0.99), "p99-ns")
}

// BenchmarkReplace replaces one upstream of the 10,000 tool index.
func BenchmarkReplace(b *testing.B) {
	es, _ := benchCatalog(b)
	ix := NewIndex(es)
	up := es[0].Upstream
	var mine []*Entry
	for _, e := range es {
		if e.Upstream == up {
			mine = append(mine, e)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ix.Replace(up, mine)
	}
}

// BenchmarkWith derives a new index with one upstream's tools replaced
// (copy-on-write, what the catalog does on every change).
func BenchmarkWith(b *testing.B) {
	es, _ := benchCatalog(b)
	ix := NewIndex(es)
	up := es[0].Upstream
	var mine []*Entry
	for _, e := range es {
		if e.Upstream == up {
			mine = append(mine, e)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ix = ix.With(up, mine)
	}
}
