package catalog

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// The table parses and holds the words tools are described with.
func TestDenseTable(t *testing.T) {
	tab := denseVectors()
	if tab == nil {
		t.Fatal("the embedded dense table does not parse")
	}
	if len(tab.ids) < 20000 || len(tab.vec) != len(tab.ids)*denseDims || len(tab.mult) != 4*len(tab.ids) {
		t.Fatalf("table: %d terms, %d components; want 20,000+ terms of %d dims", len(tab.ids), len(tab.vec), denseDims)
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
	es := testEntries(t, denseTools)
	for q, want := range map[string]string{
		"keep track of what I eat for lunch": "mcp:health:nutrition_log",
		"the house is freezing":              "mcp:home:thermostat",
		"I want to fly to Rome next week":    "mcp:travel:airline_tickets",
	} {
		p := DefaultRankParams()
		p.Dense = 0.3
		p.Semantic = 0
		on := NewIndexWithParams(es, p)
		// "next week" pulls the calendar tool up for the flight: second is
		// enough there.
		n := 1
		if strings.Contains(q, "next week") {
			n = 2
		}
		if got := top(on, q, n); !slices.Contains(got, want) {
			t.Errorf("%q with the dense signal: first hits %v, want %s among the first %d", q, got, want, n)
		}
		if got := top(on.withDense(0), q, 3); slices.Contains(got, want) {
			t.Errorf("%q without the dense signal: %s is among the first hits %v: the test no longer shows what the signal adds", q, want, got)
		}
	}
}

// Switching the signal on for an index built without it computes the
// vectors the documents lack; the result equals a build with it on.
func TestDenseSwitchEqualsBuild(t *testing.T) {
	es := testEntries(t, denseTools)
	p := DefaultRankParams()
	p.Dense = 0.3
	built := NewIndexWithParams(es, p)
	p.Dense = 0
	switched := NewIndexWithParams(es, p).withDense(0.3)
	sameHits(t, "built", built, "switched", switched, "keep track of what I eat for lunch", "the house is freezing", "send a message to my team")
}

// sameHits fails t unless indexes a and b (named na and nb in the
// messages) give every query the same first five hits with the same
// scores.
func sameHits(t *testing.T, na string, a *Index, nb string, b *Index, queries ...string) {
	t.Helper()
	for _, q := range queries {
		ha, hb := a.Search(q, 5, nil), b.Search(q, 5, nil)
		if len(ha) != len(hb) {
			t.Fatalf("%q: %d hits %s, %d %s", q, len(ha), na, len(hb), nb)
		}
		for i := range ha {
			if ha[i].Entry.ID != hb[i].Entry.ID || ha[i].Score != hb[i].Score {
				t.Errorf("%q hit %d: %s %s %.6f, %s %s %.6f", q, i, na, ha[i].Entry.ID, ha[i].Score, nb, hb[i].Entry.ID, hb[i].Score)
			}
		}
	}
}

// SetSignals ([tool_search] semantic and dense) sets each signal it is
// given at its default weight or 0 and leaves the other as it is.
func TestSetSignals(t *testing.T) {
	c := New("__", nil, []UpstreamInfo{{Name: "a", Prefix: "a"}})
	params := func() RankParams { return c.index.Params() }
	def := DefaultRankParams()
	if p := params(); p.Semantic != def.Semantic || p.Dense != def.Dense {
		t.Fatalf("defaults: semantic %v dense %v", p.Semantic, p.Dense)
	}
	off, on := false, true
	c.SetSignals(nil, &off)
	if p := params(); p.Semantic != def.Semantic || p.Dense != 0 {
		t.Errorf("dense off: semantic %v dense %v", p.Semantic, p.Dense)
	}
	c.SetSignals(&off, &on)
	if p := params(); p.Semantic != 0 || p.Dense != DefaultDenseWeight {
		t.Errorf("semantic off, dense on: semantic %v dense %v", p.Semantic, p.Dense)
	}
	c.SetSignals(nil, nil)
	if p := params(); p.Semantic != 0 || p.Dense != DefaultDenseWeight {
		t.Errorf("nil, nil changed them: semantic %v dense %v", p.Semantic, p.Dense)
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
	es := testEntries(t, denseTools)
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
	sameHits(t, "after With", ix, "fresh", fresh, "the house is freezing", "I want to fly to Rome next week", "keep track of what I eat for lunch")
}

// The bulk build's integer sums (denseBulk, one table look-up per distinct
// term) give every tool the vector denseDoc gives it alone, and that vector
// is the float weighted mean's up to rounding: also for a tool with
// thousands of terms, whose sums overflow the 32-bit lanes (flushed).
func TestDenseBulkEqualsDoc(t *testing.T) {
	tab := denseVectors()
	words := make([]string, 0, 3000)
	for w := range tab.ids {
		if len(words) == cap(words) {
			break
		}
		if len(w) > 3 && w[0] >= 'a' && w[0] <= 'z' {
			words = append(words, w)
		}
	}
	tools := append([][3]string{
		{"big:everything", strings.Join(words, " ") + " " + strings.Join(words[:500], " "), `{"type":"object","properties":{"city":{"type":"string","description":"the city to look up"}}}`},
	}, denseTools...)
	es := testEntries(t, tools)
	p := DefaultRankParams()
	p.Dense = DefaultDenseWeight
	ix := NewIndexWithParams(es, p)
	if len(ix.dvec) != len(ix.docs) || len(ix.dsig) != len(ix.docs) {
		t.Fatalf("%d vectors, %d signs for %d tools", len(ix.dvec), len(ix.dsig), len(ix.docs))
	}
	for i := range ix.docs {
		want := denseDoc(ix.docs[i].terms)
		if ix.dvec[i] != *want || ix.dsig[i] != want.sig {
			t.Errorf("%s: the bulk build's vector differs from denseDoc's", ix.docs[i].e.ID)
		}
		// The float reference: Σ w × row in float64, then quantised.
		var acc [denseDims]float64
		for _, tt := range ix.docs[i].terms {
			if _, ok := tab.ids[tt.term]; ok {
				var w float64
				for f, n := range tt.tf {
					if n > 0 {
						w += float64(denseFieldWeight[f]) * math.Log1p(float64(n))
					}
				}
				tab.addTerm(&acc, tt.term, w)
			}
		}
		var ref denseVec
		ref.quantise(&acc)
		if ref.scale == 0 || want.scale == 0 {
			t.Fatalf("%s: no vector", ix.docs[i].e.ID)
		}
		// Both int8 vectors are as near the float one (rounding aside).
		cr, ci := cosF(&acc, &ref), cosF(&acc, want)
		if ci < cr-0.001 || ci < 0.995 {
			t.Errorf("%s: cosine to the float vector %.5f (the float vector quantised: %.5f)", ix.docs[i].e.ID, ci, cr)
		}
	}
}

// cosF is the cosine between a float vector and an int8 one.
func cosF(a *[denseDims]float64, v *denseVec) float64 {
	var d, na, nv float64
	for k := range a {
		d += a[k] * float64(v.q[k])
		na += a[k] * a[k]
		nv += float64(v.q[k]) * float64(v.q[k])
	}
	return d / math.Sqrt(na*nv)
}

// The lane sums are exact: past the 32-bit lanes' capacity (flushes) the
// vector equals a plain int64 sum's.
func TestDenseAccFlush(t *testing.T) {
	tab := denseVectors()
	var a denseAcc
	var ref [denseDims]int64
	n := int32(len(tab.ids))
	for i := int32(0); i < 3000; i++ {
		id := (i * 7919) % n
		w := uint32(1 + (i*104729)%60000)
		a.add(tab, id, w)
		for k, b := range tab.row(id) {
			ref[k] += int64(w) * int64(int8(b))
		}
	}
	var got, want denseVec
	a.finish(&got)
	var acc [denseDims]float64
	for k, x := range ref {
		acc[k] = float64(x)
	}
	want.quantise(&acc)
	if got != want {
		t.Fatalf("lane sums differ from int64 sums:\n got %v\nwant %v", got.q, want.q)
	}
}

// BenchmarkDenseBulk is the dense signal's share of BenchmarkIndexBuild:
// the vectors of the 10,000 tools (denseBulk, one goroutine), the table
// look-ups included (every term's cached row id is reset each time).
func BenchmarkDenseBulk(b *testing.B) {
	es, _ := benchCatalog(b)
	p := DefaultRankParams()
	p.Dense = DefaultDenseWeight
	ix := NewIndexWithParams(es, p)
	var tis []*termInfo
	for i := range ix.docs {
		for _, t := range ix.docs[i].terms {
			tis = append(tis, ix.terms[t.term])
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu := processCPU()
	for i := 0; i < b.N; i++ {
		for _, ti := range ix.terms {
			ti.did = 0
		}
		ix.denseBulk(ix.docs, nil, tis)
	}
	if cpu > 0 {
		b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
	}
}

// Two query words the index knows joined ("zip codes" -> zipcode) count in
// the query's vector as that one word, not as "zip" (compression) and
// "codes" (stemmed to cod): with the dense signal on, the zip-code tool
// stays first, not the zip archiver.
func TestDenseCompoundQuery(t *testing.T) {
	tools := append([][3]string{
		{"post:lookup_zipcode", "Find the zipcode of a town.", ""},
		{"zip:compress", "Compress files into a zip archive.", ""},
		{"geo:find_address", "Find the postal address of a place and my current location.", ""},
	}, filler...)
	es := testEntries(t, tools)
	p := DefaultRankParams()
	p.Dense = DefaultDenseWeight
	ix := NewIndexWithParams(es, p)
	if got := top(ix, "zip codes of Springfield", 1); !slices.Equal(got, []string{"mcp:post:lookup_zipcode"}) {
		t.Errorf("zip codes of Springfield, dense on: first %v, want mcp:post:lookup_zipcode", got)
	}
	aq := analyzeQuery("zip codes of Springfield")
	ix.mu.RLock()
	ix.resolve(&aq)
	ix.expand(&aq)
	ix.mu.RUnlock()
	var with, parts [denseDims]float64
	denseVectors().queryVec(&aq, &with, 0xFF)
	denseVectors().addTerm(&parts, "zip", 1)
	var a, b denseVec
	a.quantise(&with)
	b.quantise(&parts)
	if c := float64(dot(&a.q, &b.q)) * float64(a.scale) * float64(b.scale); c > 0.5 {
		t.Errorf("the query's vector is near zip's (cosine %.2f): the joined words count by their parts", c)
	}
}
