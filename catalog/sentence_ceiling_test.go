package catalog

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestSentenceModelCeiling measures what a sentence model run per request
// would add: the Universal Sentence Encoder lite's own embeddings of every
// tool and every request of a labelled set, ranked alone and fused with
// the engine (engine score / its top score + w × cosine, over the union of
// the engine's first 50 and the model's first 50), nDCG@10 on all queries
// and on each half. A diagnostic, not a test of the shipped search:
//
//	MCPTS_SENTENCE_DIR=DIR MCPTS_BENCH_DIR=$BENCH go test ./catalog -run TestSentenceModelCeiling -v
//
// writes DIR/<set>.tools.txt and DIR/<set>.queries.txt (one text a line:
// a tool's name with its words split, ". ", its description; a request)
// when their vectors are missing, then asks for them: in a folder with
// scripts/embeduse's packages installed (npm ci),
//
//	node gen.js embed DIR/<set>.tools.txt DIR/<set>.tools.f32   (and .queries)
//
// and measures once they are there (MCPTS_SENTENCE_SETS, default
// "metatool,bfcl,stabletoolbench").
func TestSentenceModelCeiling(t *testing.T) {
	dir := os.Getenv("MCPTS_SENTENCE_DIR")
	bench := benchDataDir(t)
	if dir == "" || bench == "" {
		t.Skip("set MCPTS_SENTENCE_DIR (and MCPTS_BENCH_DIR)")
	}
	sets := "metatool,bfcl,stabletoolbench"
	if s := os.Getenv("MCPTS_SENTENCE_SETS"); s != "" {
		sets = s
	}
	for _, set := range strings.Split(sets, ",") {
		tools, err := LoadBenchTools(filepath.Join(bench, set, "tools.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		all, err := LoadBenchQueries(filepath.Join(bench, set, "queries.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		var qs []BenchQuery
		for _, q := range all {
			if len(q.Slots) > 0 {
				qs = append(qs, q)
			}
		}
		toolText := make([]string, len(tools))
		for i, tl := range tools {
			toolText[i] = oneLine(strings.ReplaceAll(tl.Name, "_", " ") + ". " + tl.Description)
		}
		qText := make([]string, len(qs))
		for i, q := range qs {
			qText[i] = oneLine(q.Query)
		}
		tv := sentenceVectors(t, filepath.Join(dir, set+".tools"), toolText)
		qv := sentenceVectors(t, filepath.Join(dir, set+".queries"), qText)
		if tv == nil || qv == nil {
			continue
		}
		ix := NewIndex(BenchEntries(tools, ""))
		toolIdx := map[string]int{}
		for i, tl := range tools {
			toolIdx[tl.ID] = i
		}
		type cand struct {
			id       string
			eng, cos float64
		}
		cands := make([][]cand, len(qs))
		engine := make([][]string, len(qs))
		model := make([][]string, len(qs))
		for i, q := range qs {
			res := ix.Search(q.Query, 50, nil)
			byID := map[string]*cand{}
			for _, r := range res {
				byID[r.Entry.ID] = &cand{id: r.Entry.ID, eng: r.Score / res[0].Score}
				if len(engine[i]) < 10 {
					engine[i] = append(engine[i], r.Entry.ID)
				}
			}
			near := make([]cand, len(tools))
			for j, tl := range tools {
				near[j] = cand{id: tl.ID, cos: dot32(qv[i], tv[j])}
			}
			sort.SliceStable(near, func(a, b int) bool { return near[a].cos > near[b].cos })
			for j := 0; j < 50 && j < len(near); j++ {
				if j < 10 {
					model[i] = append(model[i], near[j].id)
				}
				if byID[near[j].id] == nil {
					byID[near[j].id] = &cand{id: near[j].id}
				}
			}
			for _, c := range byID {
				c.cos = dot32(qv[i], tv[toolIdx[c.id]])
				cands[i] = append(cands[i], *c)
			}
			sort.Slice(cands[i], func(a, b int) bool { return cands[i][a].id < cands[i][b].id })
		}
		halves := func(runs [][]string) string {
			var out []string
			for h := 0; h < 2; h++ {
				var q2 []BenchQuery
				var r2 [][]string
				for i := range qs {
					if i%2 == h {
						q2, r2 = append(q2, qs[i]), append(r2, runs[i])
					}
				}
				out = append(out, fmt.Sprintf("%.3f", scoreRuns(q2, r2, 10).NDCG))
			}
			return fmt.Sprintf("%.3f (tune %s, held %s)", scoreRuns(qs, runs, 10).NDCG, out[0], out[1])
		}
		t.Logf("%s: engine %s; the model alone %s", set, halves(engine), halves(model))
		for _, w := range []float64{0.5, 1, 2, 3, 5, 8} {
			runs := make([][]string, len(qs))
			for i := range qs {
				c := append([]cand(nil), cands[i]...)
				sort.SliceStable(c, func(a, b int) bool { return c[a].eng+w*c[a].cos > c[b].eng+w*c[b].cos })
				for j := 0; j < 10 && j < len(c); j++ {
					runs[i] = append(runs[i], c[j].id)
				}
			}
			t.Logf("%s: fused, w = %.1f: %s", set, w, halves(runs))
		}
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// sentenceVectors reads base.f32 (one 512-float32 row per text, unit
// length after reading), or writes base.txt and reports that the vectors
// are to be made (nil).
func sentenceVectors(t *testing.T, base string, texts []string) [][]float32 {
	raw, err := os.ReadFile(base + ".f32")
	if err != nil {
		if err := os.WriteFile(base+".txt", []byte(strings.Join(texts, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s.txt: run node gen.js embed %s.txt %s.f32 (scripts/embeduse) and this test again", base, base, base)
		return nil
	}
	const dims = 512
	if len(raw) != len(texts)*dims*4 {
		t.Fatalf("%s.f32: %d bytes for %d texts of %d float32 (remove it: the texts changed)", base, len(raw), len(texts), dims)
	}
	out := make([][]float32, len(texts))
	for i := range out {
		v := make([]float32, dims)
		var n float64
		for j := range v {
			v[j] = math.Float32frombits(binary.LittleEndian.Uint32(raw[(i*dims+j)*4:]))
			n += float64(v[j]) * float64(v[j])
		}
		for j := range v {
			v[j] /= float32(math.Sqrt(n))
		}
		out[i] = v
	}
	return out
}

func dot32(a, b []float32) float64 {
	var d float32
	for i := range a {
		d += a[i] * b[i]
	}
	return float64(d)
}
