package catalog

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"
)

// This file is the search-quality bench (issue 3; data format in
// shared/bench/README.md). It is the one part of the catalog package that
// reads files; it is used by the CLI `mcp-toolsearch bench search` and by
// tests, never by the proxy.

// BenchTool is one line of a bench tools.jsonl file.
type BenchTool struct {
	ID          string          `json:"id"`
	Server      string          `json:"server"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// BenchQuery is one line of a bench queries.jsonl file.
type BenchQuery struct {
	QID      string   `json:"qid"`
	Query    string   `json:"query"`
	Relevant []string `json:"relevant"`
}

// BenchReport holds the figures of one bench run. Recall@k is the share of
// a query's relevant tools found in its top k, averaged over queries;
// NDCG is nDCG@K with binary relevance; MRR is the mean reciprocal rank of
// the first relevant tool (0 when none is in the top max(K,10)). Latencies
// are per Search call, in milliseconds.
type BenchReport struct {
	Dataset     string // base name of the tools file's folder ("sealtools", "bfcl", ...)
	Tools       int    // labelled tools indexed
	Distractors int    // distractor tools indexed besides them
	Queries     int
	K           int
	Recall1     float64
	Recall5     float64
	Recall10    float64
	RecallK     float64
	NDCG        float64 // nDCG@K
	MRR         float64
	P50ms       float64
	P99ms       float64
	BuildMs     float64 // index build time for all tools, in ms
}

// benchBaselines are the plain BM25 figures of shared/bench/README.md:
// nDCG@10 and recall@5 of a BM25 (k1 1.2, b 0.75) over name, server,
// description and top-level property names, on all queries.
var benchBaselines = map[string][2]float64{
	"sealtools": {0.870, 0.834},
	"bfcl":      {0.831, 0.889},
}

// LoadBenchTools reads a tools.jsonl file. Errors name the file and line.
func LoadBenchTools(path string) ([]BenchTool, error) {
	var out []BenchTool
	err := readJSONL(path, func(line int, raw []byte) error {
		var t BenchTool
		if err := json.Unmarshal(raw, &t); err != nil {
			return err
		}
		if t.ID == "" {
			return fmt.Errorf(`missing "id"`)
		}
		out = append(out, t)
		return nil
	})
	return out, err
}

// LoadBenchQueries reads a queries.jsonl file. Errors name the file and
// line.
func LoadBenchQueries(path string) ([]BenchQuery, error) {
	var out []BenchQuery
	err := readJSONL(path, func(line int, raw []byte) error {
		var q BenchQuery
		if err := json.Unmarshal(raw, &q); err != nil {
			return err
		}
		if len(q.Relevant) == 0 {
			return fmt.Errorf(`query %q has no "relevant" ids`, q.QID)
		}
		out = append(out, q)
		return nil
	})
	return out, err
}

func readJSONL(path string, f func(line int, raw []byte) error) error {
	fh, err := os.Open(path)
	if err != nil {
		return err
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		raw := sc.Bytes()
		if len(strings.TrimSpace(string(raw))) == 0 {
			continue
		}
		if err := f(line, raw); err != nil {
			return fmt.Errorf("%s:%d: %w", path, line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// BenchEntries turns bench tools into catalog entries: ID is the data
// set's id (so relevance labels match), Upstream the server, Name the
// name, Exposed a simple sanitized "<server>__<name>" (the real naming is
// AssignNames'), Trusted true. idPrefix is prepended to every ID (used to
// keep distractor ids apart).
func BenchEntries(tools []BenchTool, idPrefix string) []*Entry {
	es := make([]*Entry, len(tools))
	for i, t := range tools {
		es[i] = &Entry{
			ID:          idPrefix + t.ID,
			Name:        t.Name,
			Exposed:     benchSanitize(t.Server + "__" + t.Name),
			Upstream:    t.Server,
			Trusted:     true,
			Description: t.Description,
			InputSchema: t.InputSchema,
		}
	}
	return es
}

// benchSanitize maps a name onto ^[a-zA-Z0-9_-]{1,64}$ simply: other bytes
// become "_", and the result is cut to 64 bytes.
func benchSanitize(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '_'
		}
	}
	if len(b) > 64 {
		b = b[:64]
	}
	if len(b) == 0 {
		return "_"
	}
	return string(b)
}

// RunBench indexes the tools of toolsPath (plus, when distractorsPath is not
// "", the tools of that file as distractors, their ids prefixed with
// "distractor:"), runs every query of queriesPath with limit max(k, 10) and
// returns the figures. k <= 0 means 10. Errors come from reading the files
// (named with the line) or from a relevant id missing from the tools.
func RunBench(toolsPath, queriesPath, distractorsPath string, k int) (*BenchReport, error) {
	return runBench(toolsPath, queriesPath, distractorsPath, k, DefaultRankParams())
}

func runBench(toolsPath, queriesPath, distractorsPath string, k int, p RankParams) (*BenchReport, error) {
	if k <= 0 {
		k = 10
	}
	tools, err := LoadBenchTools(toolsPath)
	if err != nil {
		return nil, err
	}
	queries, err := LoadBenchQueries(queriesPath)
	if err != nil {
		return nil, err
	}
	entries := BenchEntries(tools, "")
	known := make(map[string]bool, len(tools))
	for _, t := range tools {
		known[t.ID] = true
	}
	for _, q := range queries {
		for _, id := range q.Relevant {
			if !known[id] {
				return nil, fmt.Errorf("%s: query %q: relevant id %q is not in %s", queriesPath, q.QID, id, toolsPath)
			}
		}
	}
	nd := 0
	if distractorsPath != "" {
		ds, err := LoadBenchTools(distractorsPath)
		if err != nil {
			return nil, err
		}
		nd = len(ds)
		entries = append(entries, BenchEntries(ds, "distractor:")...)
	}
	t0 := time.Now()
	ix := NewIndexWithParams(entries, p)
	build := time.Since(t0)
	rep := &BenchReport{
		Dataset: filepath.Base(filepath.Dir(toolsPath)), Tools: len(tools), Distractors: nd,
		Queries: len(queries), K: k, BuildMs: float64(build.Microseconds()) / 1000,
	}
	runtime.GC() // keep the build's garbage out of the query latencies
	evalQueries(ix, queries, k, rep)
	return rep, nil
}

// evalQueries runs queries against ix and fills the quality and latency
// figures of rep.
func evalQueries(ix *Index, queries []BenchQuery, k int, rep *BenchReport) {
	limit := max(k, 10)
	lat := make([]float64, 0, len(queries))
	for _, q := range queries {
		t := time.Now()
		res := ix.Search(q.Query, limit, nil)
		lat = append(lat, float64(time.Since(t).Nanoseconds())/1e6)
		rel := make(map[string]bool, len(q.Relevant))
		for _, id := range q.Relevant {
			rel[id] = true
		}
		nrel := float64(len(rel))
		recallAt := func(n int) float64 {
			hit := 0
			for i := 0; i < n && i < len(res); i++ {
				if rel[res[i].Entry.ID] {
					hit++
				}
			}
			return float64(hit) / nrel
		}
		rep.Recall1 += recallAt(1)
		rep.Recall5 += recallAt(5)
		rep.Recall10 += recallAt(10)
		rep.RecallK += recallAt(k)
		var dcg, idcg float64
		seen := map[string]bool{}
		for i := 0; i < k && i < len(res); i++ {
			if id := res[i].Entry.ID; rel[id] && !seen[id] {
				seen[id] = true
				dcg += 1 / math.Log2(float64(i)+2)
			}
		}
		for i := 0; i < k && i < len(rel); i++ {
			idcg += 1 / math.Log2(float64(i)+2)
		}
		rep.NDCG += dcg / idcg
		for i, r := range res {
			if rel[r.Entry.ID] {
				rep.MRR += 1 / float64(i+1)
				break
			}
		}
	}
	if n := float64(len(queries)); n > 0 {
		rep.Recall1 /= n
		rep.Recall5 /= n
		rep.Recall10 /= n
		rep.RecallK /= n
		rep.NDCG /= n
		rep.MRR /= n
	}
	sort.Float64s(lat)
	rep.P50ms = percentile(lat, 0.50)
	rep.P99ms = percentile(lat, 0.99)
}

// percentile of sorted values (nearest rank); 0 for none.
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// Print writes the report as aligned text, with the plain BM25 baseline of
// shared/bench/README.md beside it when the data set is sealtools or bfcl.
func (r *BenchReport) Print(w io.Writer) {
	fmt.Fprintf(w, "data set     %s (%d tools + %d distractors, %d queries, all splits)\n", r.Dataset, r.Tools, r.Distractors, r.Queries)
	fmt.Fprintf(w, "index build  %.1f ms\n", r.BuildMs)
	base, hasBase := benchBaselines[r.Dataset]
	row := func(name string, v float64, b float64, has bool) {
		if has {
			fmt.Fprintf(w, "%-12s %.3f   (plain BM25 baseline %.3f, %+.3f)\n", name, v, b, v-b)
		} else {
			fmt.Fprintf(w, "%-12s %.3f\n", name, v)
		}
	}
	row("recall@1", r.Recall1, 0, false)
	row("recall@5", r.Recall5, base[1], hasBase)
	row("recall@10", r.Recall10, 0, false)
	if r.K != 1 && r.K != 5 && r.K != 10 {
		row(fmt.Sprintf("recall@%d", r.K), r.RecallK, 0, false)
	}
	row(fmt.Sprintf("nDCG@%d", r.K), r.NDCG, base[0], hasBase && r.K == 10)
	row("MRR", r.MRR, 0, false)
	fmt.Fprintf(w, "latency      p50 %.3f ms, p99 %.3f ms per query\n", r.P50ms, r.P99ms)
}
