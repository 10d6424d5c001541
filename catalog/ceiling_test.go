package catalog

import (
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// TestGoalCeiling measures how far the search goal (+0.10 nDCG@10 over
// plain BM25) can be reached on the labels of the shared sets at all
// (docs/performance.md "Search quality"). It runs
// only with MCPTS_CEILING=1 and ../shared/bench present (minutes);
// MCPTS_CEILING_SETS=bfcl,sealtools limits the sets,
// MCPTS_CEILING_THETA=0.5 sets the twin rule's cosine (default 0.5) and
// MCPTS_CEILING_DUMP=N prints N examples of twins and N sampled distractors
// ranked above a label.
//
// Near-twin rule, per query and labelled tool L: another tool T is a
// near-twin of L when
//
//  1. the query cannot tell them apart by the words it uses: every
//     query term (Tokenize: stemmed, stopwords dropped) found in L's
//     name or description is found in T's too, and at least one is;
//  2. they say the same thing: the cosine of their tf-idf vectors over
//     name and description terms is at least θ.
//
// Oracle: the tools of each slot (its labelled ids and their near-twins)
// form a group; the oracle puts every group's members in the first
// places, one group after the other round-robin (so each slot has a
// candidate early), but cannot order the members of a group: "random"
// is the mean over 200 random orders inside the groups, "worst" puts
// every label last in its group. A query with no twins scores 1 in both.
//
// "Twins count" re-scores the engine's and plain BM25's real rankings
// with each slot also filled by its near-twins (an extra figure, never
// the bench's metric).
func TestGoalCeiling(t *testing.T) {
	if os.Getenv("MCPTS_CEILING") == "" {
		t.Skip("set MCPTS_CEILING=1 to measure the ceiling")
	}
	d := benchDataDir(t)
	if d == "" {
		t.Skip("bench data absent")
	}
	theta := 0.5
	if s := os.Getenv("MCPTS_CEILING_THETA"); s != "" {
		theta, _ = strconv.ParseFloat(s, 64)
	}
	dump, _ := strconv.Atoi(os.Getenv("MCPTS_CEILING_DUMP"))
	sets := []string{"bfcl", "sealtools", "metatool"}
	if s := os.Getenv("MCPTS_CEILING_SETS"); s != "" {
		sets = splitComma(s)
	}
	dis, err := LoadBenchTools(filepath.Join(d, "toolsdk_registry", "tools.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range sets {
		tools, qs := loadBenchSet(t, d, name)
		for _, withDis := range []bool{false, true} {
			entries := BenchEntries(tools, "")
			label := name
			if withDis {
				entries = append(entries, BenchEntries(dis, "distractor:")...)
				label += "+dis"
			}
			ceilingRun(t, label, entries, qs, theta, dump)
		}
	}
}

// twinText is a tool's name and description terms as a tf-idf vector.
type twinText struct {
	tf   map[string]float64
	norm float64
}

func ceilingRun(t *testing.T, label string, entries []*Entry, qs []BenchQuery, theta float64, dump int) {
	byID := map[string]int{}
	texts := make([]twinText, len(entries))
	df := map[string]int{}
	post := map[string][]int{}
	for i, e := range entries {
		byID[e.ID] = i
		tf := map[string]float64{}
		nameTokens(e.Name, func(s string) { tf[s]++ })
		for _, s := range Tokenize(e.Description) {
			tf[s]++
		}
		texts[i].tf = tf
		for s := range tf {
			df[s]++
			post[s] = append(post[s], i)
		}
	}
	n := float64(len(entries))
	for i := range texts {
		var sq float64
		for s, c := range texts[i].tf {
			w := (1 + math.Log(c)) * math.Log(n/float64(df[s]))
			texts[i].tf[s] = w
			sq += w * w
		}
		texts[i].norm = math.Sqrt(sq)
	}
	cos := func(a, b int) float64 {
		x, y := texts[a], texts[b]
		if x.norm == 0 || y.norm == 0 {
			return 0
		}
		if len(y.tf) < len(x.tf) {
			x, y = y, x
		}
		var dot float64
		for s, w := range x.tf {
			dot += w * y.tf[s]
		}
		return dot / (x.norm * y.norm)
	}
	ix := NewIndexWithParams(entries, DefaultRankParams())
	plainIx := newPlainBM25(entries)
	rng := rand.New(rand.NewSource(1))
	type example struct{ q, l, tw string }
	var examples []example
	var sumRand, sumWorst, sumEng, sumPlain, sumEngTw, sumPlainTw, sumEngDis, sumPlainDis float64
	var nq, withTwins, twinsTotal int
	var above []string // "distractor ranked above a label" lines, for judging
	for _, q := range qs {
		if len(q.Slots) == 0 {
			continue
		}
		nq++
		qterms := map[string]bool{}
		for _, s := range Tokenize(q.Query) {
			qterms[s] = true
		}
		labels := map[int]bool{}
		for _, id := range q.Relevant {
			labels[byID[id]] = true
		}
		groups := make([][]int, len(q.Slots))
		twinSlots := make([][]string, len(q.Slots))
		placed := map[int]bool{}
		for si, slot := range q.Slots {
			for _, id := range slot {
				groups[si] = append(groups[si], byID[id])
			}
		}
		for si, slot := range q.Slots {
			for _, id := range slot {
				l := byID[id]
				var m []string
				for s := range qterms {
					if texts[l].tf[s] != 0 {
						m = append(m, s)
					}
				}
				if len(m) == 0 {
					continue
				}
				// candidates: tools having the rarest matched term, then all of m
				sort.Slice(m, func(i, j int) bool { return df[m[i]] < df[m[j]] })
			cand:
				for _, c := range post[m[0]] {
					if c == l || labels[c] || placed[c] {
						continue
					}
					for _, s := range m[1:] {
						if texts[c].tf[s] == 0 {
							continue cand
						}
					}
					if cos(l, c) < theta {
						continue
					}
					placed[c] = true
					groups[si] = append(groups[si], c)
					twinSlots[si] = append(twinSlots[si], entries[c].ID)
					twinsTotal++
					if len(examples) < 400 {
						examples = append(examples, example{q.Query, entries[l].Name + ": " + clip(entries[l].Description, 90), entries[c].Name + ": " + clip(entries[c].Description, 90)})
					}
				}
			}
		}
		has := false
		for _, ts := range twinSlots {
			has = has || len(ts) > 0
		}
		if has {
			withTwins++
		}
		// the oracle, random inside the groups and worst case
		const samples = 200
		var r float64
		for k := 0; k < samples; k++ {
			r += oracleDCG(groups, labels, rng, false)
		}
		sumRand += r / samples / idealDCG(len(q.Slots))
		sumWorst += oracleDCG(groups, labels, nil, true) / idealDCG(len(q.Slots))
		// real rankings, as labelled and with twins filling the slot
		eng := scoredIDs(ix.Search(q.Query, 10, nil))
		pl := plainIx.search(q.Query, 10)
		tq := q
		tq.Slots = make([][]string, len(q.Slots))
		for si := range q.Slots {
			tq.Slots[si] = append(append([]string{}, q.Slots[si]...), twinSlots[si]...)
		}
		// the first distractor ranked above every label, as if it filled
		// the first slot (an upper bound: "every such distractor does the
		// labelled job")
		firstDis := func(run []string) BenchQuery {
			fq := q
			for _, id := range run {
				if labels[byID[id]] {
					break
				}
				if strings.HasPrefix(id, "distractor:") {
					fq.Slots = append([][]string{append(append([]string{}, q.Slots[0]...), id)}, q.Slots[1:]...)
					break
				}
			}
			return fq
		}
		sumEngDis += scoreRuns([]BenchQuery{firstDis(eng)}, [][]string{eng}, 10).NDCG
		sumPlainDis += scoreRuns([]BenchQuery{firstDis(pl)}, [][]string{pl}, 10).NDCG
		one := []BenchQuery{q}
		two := []BenchQuery{tq}
		sumEng += scoreRuns(one, [][]string{eng}, 10).NDCG
		sumPlain += scoreRuns(one, [][]string{pl}, 10).NDCG
		sumEngTw += scoreRuns(two, [][]string{eng}, 10).NDCG
		sumPlainTw += scoreRuns(two, [][]string{pl}, 10).NDCG
		if dump > 0 && strings.HasSuffix(label, "+dis") {
			if os.Getenv("MCPTS_CEILING_PLAIN") != "" {
				eng = pl // judge plain BM25's distractors instead
			}
			for _, id := range eng {
				if labels[byID[id]] {
					break
				}
				if strings.HasPrefix(id, "distractor:") {
					e := entries[byID[id]]
					var ls []string
					for _, lid := range q.Relevant {
						le := entries[byID[lid]]
						ls = append(ls, le.Name+": "+clip(le.Description, 160))
					}
					above = append(above, fmt.Sprintf("Q %s\n   label: %s\n   above: %s / %s: %s", q.Query, strings.Join(ls, " | "), e.Upstream, e.Name, clip(e.Description, 200)))
					break
				}
			}
		}
	}
	f := float64(nq)
	t.Logf("%s θ=%.2f: %d queries, %d with near-twins (%d twins); oracle nDCG@10 random %.3f, worst %.3f; engine %.3f (twins count %.3f), plain BM25 %.3f (twins count %.3f), goal BM25+0.10 = %.3f",
		label, theta, nq, withTwins, twinsTotal, sumRand/f, sumWorst/f, sumEng/f, sumEngTw/f, sumPlain/f, sumPlainTw/f, sumPlain/f+0.10)
	if strings.HasSuffix(label, "+dis") {
		t.Logf("%s: if the first distractor ranked above every label filled that slot: engine %.3f, plain BM25 %.3f", label, sumEngDis/f, sumPlainDis/f)
	}
	if dump > 0 {
		rng2 := rand.New(rand.NewSource(2))
		rng2.Shuffle(len(examples), func(i, j int) { examples[i], examples[j] = examples[j], examples[i] })
		for _, ex := range examples[:min(dump, len(examples))] {
			t.Logf("  twin  Q %s\n     L %s\n     T %s", clip(ex.q, 120), ex.l, ex.tw)
		}
		rng2.Shuffle(len(above), func(i, j int) { above[i], above[j] = above[j], above[i] })
		t.Logf("%s: %d queries with a distractor ranked above every label", label, len(above))
		for i, a := range above[:min(dump, len(above))] {
			t.Logf("  [%d] %s", i+1, a)
		}
	}
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func idealDCG(slots int) float64 {
	var d float64
	for j := 0; j < slots && j < 10; j++ {
		d += 1 / math.Log2(float64(j)+2)
	}
	return d
}

// oracleDCG places the groups' members round-robin (group after group,
// one member each), members of a group in random order (rng) or with the
// labels last (worst), and returns the DCG@10 of the slots filled.
func oracleDCG(groups [][]int, labels map[int]bool, rng *rand.Rand, worst bool) float64 {
	order := make([][]int, len(groups))
	for i, g := range groups {
		o := append([]int{}, g...)
		if worst {
			sort.SliceStable(o, func(a, b int) bool { return !labels[o[a]] && labels[o[b]] })
		} else if rng != nil {
			rng.Shuffle(len(o), func(a, b int) { o[a], o[b] = o[b], o[a] })
		}
		order[i] = o
	}
	var dcg float64
	pos := 0
	filled := make([]bool, len(groups))
	for round := 0; pos < 10; round++ {
		any := false
		for i, o := range order {
			if round >= len(o) || pos >= 10 {
				continue
			}
			any = true
			if !filled[i] && labels[o[round]] {
				filled[i] = true
				dcg += 1 / math.Log2(float64(pos)+2)
			}
			pos++
		}
		if !any {
			break
		}
	}
	return dcg
}
