package catalog

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEvalHalves prints nDCG@10, recall@5 and top-1 of the engine on the
// tuning half (queries 1, 3, 5, …) and the held-out half (2, 4, 6, …) of
// every shared set, alone and with the 8,010 toolsdk_registry tools, and
// the means: the figure a ranking change is judged on while it is made
// (the tuning half), and the one it is reported with (the held-out half).
// It runs only with MCPTS_EVAL=1 and the bench data present (a minute);
// MCPTS_EVAL_SETS=bfcl,metatool limits the sets.
func TestEvalHalves(t *testing.T) {
	if os.Getenv("MCPTS_EVAL") == "" {
		t.Skip("set MCPTS_EVAL=1 to evaluate")
	}
	d := benchDataDir(t)
	if d == "" {
		t.Skip("bench data absent")
	}
	sets := []string{"bfcl", "metatool", "sealtools", "stabletoolbench"}
	if s := os.Getenv("MCPTS_EVAL_SETS"); s != "" {
		sets = splitComma(s)
	}
	dis, err := LoadBenchTools(filepath.Join(d, "toolsdk_registry", "tools.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	disEntries := BenchEntries(dis, "distractor:")
	var sum [2][3]float64
	runs := 0
	var b strings.Builder
	fmt.Fprintf(&b, "%-22s %-23s %-23s\n", "run", "tune nDCG R@5 top1", "held nDCG R@5 top1")
	for _, name := range sets {
		tools, qs := loadBenchSet(t, d, name)
		var halves [2][]BenchQuery
		for i, q := range qs {
			if len(q.Slots) > 0 {
				halves[i%2] = append(halves[i%2], q)
			}
		}
		own := BenchEntries(tools, "")
		for _, withDis := range []bool{false, true} {
			es := own
			label := name
			if withDis {
				es = append(append([]*Entry{}, own...), disEntries...)
				label += "+dis"
			}
			ix := NewIndexWithParams(es, evalParams())
			fmt.Fprintf(&b, "%-22s", label)
			for h := 0; h < 2; h++ {
				m := evalIndex(ix, halves[h], 10, ix.params.Semantic > 0)
				fmt.Fprintf(&b, " %.4f %.4f %.4f   ", m.NDCG, m.Recall5, m.Top1)
				sum[h][0] += m.NDCG
				sum[h][1] += m.Recall5
				sum[h][2] += m.Top1
			}
			b.WriteString("\n")
			runs++
		}
	}
	n := float64(runs)
	fmt.Fprintf(&b, "%-22s %.4f %.4f %.4f    %.4f %.4f %.4f\n", "mean", sum[0][0]/n, sum[0][1]/n, sum[0][2]/n, sum[1][0]/n, sum[1][1]/n, sum[1][2]/n)
	t.Logf("\n%s", b.String())
}

// evalParams returns DefaultRankParams with the MCPTS_EVAL_PARAMS changes
// ("name=value,…": generic_damp, english_prior, coverage, bag, pairs,
// semantic).
func evalParams() RankParams {
	p := DefaultRankParams()
	for _, kv := range splitComma(os.Getenv("MCPTS_EVAL_PARAMS")) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		var x float64
		fmt.Sscan(v, &x)
		switch k {
		case "name_cover":
			p.NameCover = x
		case "generic_damp":
			p.GenericDamp = x
		case "english_prior":
			p.EnglishPrior = x
		case "coverage":
			p.Coverage = x
		case "bag":
			p.Bag = x
		case "pairs":
			p.Pairs = x
		case "semantic":
			p.Semantic = x
		}
	}
	return p
}
