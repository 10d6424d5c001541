package catalog

import (
	"slices"
	"sort"
	"testing"
	"time"
)

// The table parses and holds the words tools are described with.
func TestDenseTable(t *testing.T) {
	tab := denseVectors()
	if tab == nil {
		t.Fatal("the embedded dense table does not parse")
	}
	if len(tab.ids) < 30000 || len(tab.vec) != len(tab.ids)*denseDims || len(tab.mult) != 4*len(tab.ids) {
		t.Fatalf("table: %d terms, %d components; want 30,000+ terms of %d dims", len(tab.ids), len(tab.vec), denseDims)
	}
	for _, w := range []string{"weather", "email", "calori", "meal", "flight"} { // stemmed as the index stems
		if _, ok := tab.ids[w]; !ok {
			t.Errorf("table lacks %q", w)
		}
	}
}

// denseTools are tools of our own that share no content word with the
// requests of TestDenseFindsParaphrase.
var denseTools = append([][3]string{
	{"health:nutrition_log", "Record meals and count calories.", ""},
	{"travel:airline_tickets", "Search airline tickets between two airports.", ""},
	{"home:thermostat", "Set the target temperature of the heating.", ""},
}, filler...)

// A request that shares no word with the tool it means: the dense signal
// (RankParams.Dense) finds it; with the signal off (and the related-terms
// table off, which relates some of these words) the tool is not in the
// first three hits.
func TestDenseFindsParaphrase(t *testing.T) {
	var es []*Entry
	for _, d := range testIndex(t, denseTools).docs {
		es = append(es, d.e)
	}
	for q, want := range map[string]string{
		"keep track of what I eat for lunch": "mcp:health:nutrition_log",
		"the house is freezing":              "mcp:home:thermostat",
		"I want to fly to Rome next week":    "mcp:travel:airline_tickets",
	} {
		p := DefaultRankParams()
		p.Dense = 0.3
		p.Semantic = 0
		on := NewIndexWithParams(es, p)
		if got := top(on, q, 1); !slices.Equal(got, []string{want}) {
			t.Errorf("%q with the dense signal: first hit %v, want %s", q, got, want)
		}
		if got := top(on.withDense(0), q, 3); slices.Contains(got, want) {
			t.Errorf("%q without the dense signal: %s is among the first hits %v: the test no longer shows what the signal adds", q, want, got)
		}
	}
}

// Switching the signal on for an index built without it computes the
// vectors the documents lack; the result equals a build with it on.
func TestDenseSwitchEqualsBuild(t *testing.T) {
	var es []*Entry
	for _, d := range testIndex(t, denseTools).docs {
		es = append(es, d.e)
	}
	p := DefaultRankParams()
	p.Dense = 0.3
	built := NewIndexWithParams(es, p)
	p.Dense = 0
	switched := NewIndexWithParams(es, p).withDense(0.3)
	for _, q := range []string{"keep track of what I eat for lunch", "the house is freezing", "send a message to my team"} {
		a, b := built.Search(q, 5, nil), switched.Search(q, 5, nil)
		if len(a) != len(b) {
			t.Fatalf("%q: %d hits built, %d switched", q, len(a), len(b))
		}
		for i := range a {
			if a[i].Entry.ID != b[i].Entry.ID || a[i].Score != b[i].Score {
				t.Errorf("%q hit %d: built %s %.6f, switched %s %.6f", q, i, a[i].Entry.ID, a[i].Score, b[i].Entry.ID, b[i].Score)
			}
		}
	}
}

// BenchmarkQueryDense is BenchmarkQuery with the dense signal on.
func BenchmarkQueryDense(b *testing.B) {
	es, qs := benchCatalog(b)
	p := DefaultRankParams()
	p.Dense = DefaultDenseWeight
	ix := NewIndexWithParams(es, p)
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

// BenchmarkIndexBuildDense is BenchmarkIndexBuild with the dense signal on
// (the table is parsed before the timer starts: once per process).
func BenchmarkIndexBuildDense(b *testing.B) {
	es, _ := benchCatalog(b)
	p := DefaultRankParams()
	p.Dense = DefaultDenseWeight
	denseVectors()
	b.ReportAllocs()
	b.ResetTimer()
	cpu := processCPU()
	for i := 0; i < b.N; i++ {
		if ix := NewIndexWithParams(es, p); ix.Len() != len(es) {
			b.Fatalf("Len %d, want %d", ix.Len(), len(es))
		}
	}
	if cpu > 0 {
		b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
	}
}

// BenchmarkDenseTableLoad parses the embedded table (done once per process,
// on the first index built with the signal on).
func BenchmarkDenseTableLoad(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := parseDense(embedTable); err != nil {
			b.Fatal(err)
		}
	}
}

// With the signal on, replacing an upstream's tools gives the results a
// fresh build over the same tools gives (vectors follow the documents).
func TestDenseReplaceEqualsBuild(t *testing.T) {
	var es []*Entry
	for _, d := range testIndex(t, denseTools).docs {
		es = append(es, d.e)
	}
	p := DefaultRankParams()
	p.Dense = 0.3
	ix := NewIndexWithParams(es, p)
	home := []*Entry{{ID: "mcp:home:boiler", Upstream: "home", Name: "boiler", Description: "Switch the boiler on or off."}}
	ix = ix.With("home", home)
	var want []*Entry
	for _, e := range es {
		if e.Upstream != "home" {
			want = append(want, e)
		}
	}
	fresh := NewIndexWithParams(append(want, home...), p)
	for _, q := range []string{"the house is freezing", "I want to fly to Rome next week", "keep track of what I eat for lunch"} {
		a, b := ix.Search(q, 5, nil), fresh.Search(q, 5, nil)
		if len(a) != len(b) {
			t.Fatalf("%q: %d hits after With, %d fresh", q, len(a), len(b))
		}
		for i := range a {
			if a[i].Entry.ID != b[i].Entry.ID || a[i].Score != b[i].Score {
				t.Errorf("%q hit %d: after With %s %.6f, fresh %s %.6f", q, i, a[i].Entry.ID, a[i].Score, b[i].Entry.ID, b[i].Score)
			}
		}
	}
}
