package catalog

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestTuneRankParams is the tuning harness behind DefaultRankParams: a
// coordinate search over the BM25F parameters maximizing the mean nDCG@10
// of sealtools and bfcl, alone and with toolsdk_registry distractors. It
// runs only with MCPTS_TUNE=1 (it takes minutes).
func TestTuneRankParams(t *testing.T) {
	if os.Getenv("MCPTS_TUNE") == "" {
		t.Skip("set MCPTS_TUNE=1 to tune")
	}
	d := benchDataDir(t)
	if d == "" {
		t.Skip("bench data absent")
	}
	type set struct {
		docs    []idxDoc
		queries []BenchQuery
		name    string
	}
	dis, err := LoadBenchTools(filepath.Join(d, "toolsdk_registry", "tools.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	disDocs := analyzeAll(BenchEntries(dis, "distractor:"))
	var sets []set
	for _, name := range []string{"sealtools", "bfcl"} {
		tools, err := LoadBenchTools(filepath.Join(d, name, "tools.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		qs, err := LoadBenchQueries(filepath.Join(d, name, "queries.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		docs := analyzeAll(BenchEntries(tools, ""))
		sets = append(sets, set{docs, qs, name}, set{append(append([]idxDoc{}, docs...), disDocs...), qs, name + "+dis"})
	}
	eval := func(p RankParams) (float64, string) {
		sum := 0.0
		desc := ""
		for _, s := range sets {
			rep := evalIndex(newIndexFromDocs(s.docs, p), s.queries, 10, p.Semantic > 0)
			sum += rep.NDCG
			desc += fmt.Sprintf(" %s=%.4f", s.name, rep.NDCG)
		}
		return sum / float64(len(sets)), desc
	}
	best := DefaultRankParams()
	bestScore, desc := eval(best)
	t.Logf("start %.4f%s %+v", bestScore, desc, best)
	type knob struct {
		name string
		ptr  func(p *RankParams) *float64
		vals []float64
	}
	knobs := []knob{
		{"k1", func(p *RankParams) *float64 { return &p.K1 }, []float64{0.8, 1.2, 1.6, 2.2}},
	}
	for f, fname := range []string{"name", "desc", "upstream", "param", "paramdesc"} {
		f := f
		knobs = append(knobs,
			knob{"w_" + fname, func(p *RankParams) *float64 { return &p.Weight[f] }, []float64{0, 0.3, 0.6, 1, 1.5, 2.5, 4}},
			knob{"b_" + fname, func(p *RankParams) *float64 { return &p.B[f] }, []float64{0.2, 0.5, 0.8, 1}})
	}
	for round := 0; round < 1; round++ {
		for _, k := range knobs {
			for _, v := range k.vals {
				p := best
				*k.ptr(&p) = v
				if p == best {
					continue
				}
				sc, desc := eval(p)
				if sc > bestScore+1e-5 {
					best, bestScore = p, sc
					t.Logf("%s=%.2f -> %.4f%s", k.name, v, sc, desc)
				}
			}
		}
	}
	t.Logf("best %.4f %+v", bestScore, best)
}
