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
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"
)

// This file is the search-quality bench (data format in
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
//
// Relevance comes in slots: each slot is a group of interchangeable tools,
// and finding any one of them fills the slot once (recall and nDCG count
// slots, not ids). The labels may be written as
//
//	"relevant": ["a", "b"]                 two slots, one id each
//	"relevant": ["a", ["b", "b2"]]         an inner array is one slot
//	"relevant_alt": [["a", "a2"]]          groups: merged into the slot that
//	                                       holds one of their ids (or into the
//	                                       only slot, when there is one)
//	"relevant_alt": ["a2", "a3"]           alternatives of the only slot
//	"relevant_alt": {"a": ["a2"]}          alternatives of a's slot
//
// A query with no label at all is skipped by the bench and counted.
type BenchQuery struct {
	QID      string     `json:"qid"`
	Query    string     `json:"query"`
	Relevant []string   `json:"relevant"` // every labelled id, slots flattened
	Slots    [][]string `json:"-"`
}

// UnmarshalJSON reads the label forms described on BenchQuery.
func (q *BenchQuery) UnmarshalJSON(b []byte) error {
	var raw struct {
		QID         string            `json:"qid"`
		Query       string            `json:"query"`
		Relevant    []json.RawMessage `json:"relevant"`
		RelevantAlt json.RawMessage   `json:"relevant_alt"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	q.QID, q.Query, q.Slots, q.Relevant = raw.QID, raw.Query, nil, nil
	for i, r := range raw.Relevant {
		var id string
		if json.Unmarshal(r, &id) == nil {
			q.Slots = append(q.Slots, []string{id})
			continue
		}
		var group []string
		if err := json.Unmarshal(r, &group); err != nil || len(group) == 0 {
			return fmt.Errorf(`query %q: "relevant"[%d] must be an id or a non-empty array of ids`, raw.QID, i)
		}
		q.Slots = append(q.Slots, group)
	}
	if alt := strings.TrimSpace(string(raw.RelevantAlt)); alt != "" && alt != "null" {
		if err := q.mergeAlt(raw.RelevantAlt); err != nil {
			return fmt.Errorf(`query %q: "relevant_alt": %w`, raw.QID, err)
		}
	}
	for i := range q.Slots {
		q.Slots[i] = dedupe(q.Slots[i])
		q.Relevant = append(q.Relevant, q.Slots[i]...)
	}
	return nil
}

// mergeAlt adds alternative ids to the slots (see BenchQuery).
func (q *BenchQuery) mergeAlt(raw json.RawMessage) error {
	slotOf := func(id string) int {
		for i, s := range q.Slots {
			if slices.Contains(s, id) {
				return i
			}
		}
		return -1
	}
	var byID map[string][]string
	if json.Unmarshal(raw, &byID) == nil {
		for _, id := range sortedKeys(byID) {
			i := slotOf(id)
			if i < 0 {
				return fmt.Errorf("%q is not a relevant id", id)
			}
			q.Slots[i] = append(q.Slots[i], byID[id]...)
		}
		return nil
	}
	var flat []string
	if json.Unmarshal(raw, &flat) == nil {
		if len(q.Slots) != 1 {
			return fmt.Errorf("a flat list of alternatives needs exactly one relevant slot (found %d); use groups or an object", len(q.Slots))
		}
		q.Slots[0] = append(q.Slots[0], flat...)
		return nil
	}
	var groups [][]string
	if err := json.Unmarshal(raw, &groups); err != nil {
		return fmt.Errorf("want an array of ids, an array of arrays of ids or an object of id to ids")
	}
	for _, g := range groups {
		i := -1
		for _, id := range g {
			if i = slotOf(id); i >= 0 {
				break
			}
		}
		if i < 0 && len(q.Slots) == 1 {
			i = 0
		}
		if i < 0 {
			return fmt.Errorf("group %q names no relevant id", g)
		}
		q.Slots[i] = append(q.Slots[i], g...)
	}
	return nil
}

func dedupe(ids []string) []string {
	out := ids[:0:0]
	for _, id := range ids {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// BenchMetrics are the quality figures of one set of queries. Recall@n is
// the share of a query's relevant slots filled in its top n, averaged over
// queries; NDCG is nDCG@K with binary relevance per slot; MRR is the mean
// reciprocal rank of the first relevant tool (0 when none is in the top
// max(K,10)).
type BenchMetrics struct {
	N int // queries
	// Top1 is the share of queries whose first result is a relevant tool.
	Top1     float64
	Recall1  float64
	Recall5  float64
	Recall10 float64
	RecallK  float64
	NDCG     float64 // nDCG@K
	MRR      float64
}

// BenchRow is one bucket of a breakdown: the engine's and plain BM25's
// figures over the queries of that bucket.
type BenchRow struct {
	By     string // "query words", "language" or "description tokens"
	Bucket string
	Engine BenchMetrics
	Plain  BenchMetrics
	// Lexical is the engine without the semantic signal (equal to Engine
	// when the signal is off).
	Lexical BenchMetrics
}

// BenchReport holds the figures of one bench run. Latencies are per Search
// call of the engine, in milliseconds.
type BenchReport struct {
	Dataset     string // base name of the tools file's folder ("sealtools", "bfcl", ...)
	Tools       int    // labelled tools indexed
	Distractors int    // distractor tools indexed besides them
	Queries     int    // queries run
	Skipped     int    // queries without any label (not run)
	K           int
	Semantic    bool // the engine ran with the semantic signal
	BenchMetrics
	// Lexical is the engine with the semantic signal off.
	Lexical BenchMetrics
	// Dense tells whether the engine ran with the dense signal; NoDense
	// is the engine with it off (the semantic signal as the engine ran).
	Dense   bool
	NoDense BenchMetrics
	// Plain is a plain BM25 (k1 1.2, b 0.75) over name, server,
	// description and top-level property names with case/snake splitting
	// and nothing else, run on the same tools and queries (the baseline
	// of shared/bench/README.md).
	Plain BenchMetrics
	// Codex is the Codex CLI's tool_search re-implemented (codexBM25: BM25
	// with an English stemmer and stop words, at most 8 results); Claude
	// is Claude Code's ToolSearch keyword scoring re-implemented
	// (claudeSearch, at most 5 results), ClaudeHint the same with each
	// tool's search hint (Index.SearchHint) as the hint it scores.
	Codex, Claude, ClaudeHint BenchMetrics
	// CatalogSize is the catalog size asked for (BenchOptions.CatalogSize;
	// 0: every distractor); the catalog has Tools + Distractors tools.
	CatalogSize int
	// Half is the half of the queries run ("" all, "tune" or "held").
	Half      string
	Breakdown []BenchRow
	P50ms     float64
	P99ms     float64
	BuildMs   float64 // index build time for all tools, in ms
}

// BenchOptions tune a bench run. The zero value means k = 10, no
// distractors, DefaultRankParams.
type BenchOptions struct {
	K int
	// Distractors names tools.jsonl files of unlabelled tools added to the
	// index (several: separated by commas).
	Distractors string
	// Pool names further tools files drawn on after Distractors when
	// CatalogSize asks for more tools than they hold (bench search --dir
	// passes the other labelled sets').
	Pool []string
	// CatalogSize, when > 0, fills the catalog with distractors up to this
	// many tools (the labelled set's own tools included), chosen by a hash
	// of their ids so they spread over servers; a set larger than it gets
	// none.
	CatalogSize int
	// Half runs every other query only: "tune" the 1st, 3rd, 5th, …
	// (TestTuneRankParams's tuning half), "held" the 2nd, 4th, … (its
	// held-out half), "" all.
	Half   string
	Params *RankParams
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

// LoadBenchQueries reads a queries.jsonl file (label forms: BenchQuery).
// Queries without labels are returned too (with no Slots): the bench skips
// and counts them. Errors name the file and line.
func LoadBenchQueries(path string) ([]BenchQuery, error) {
	var out []BenchQuery
	err := readJSONL(path, func(line int, raw []byte) error {
		var q BenchQuery
		if err := json.Unmarshal(raw, &q); err != nil {
			return err
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
// "distractor:"), runs every labelled query of queriesPath with limit
// max(k, 10) and returns the figures. k <= 0 means 10. Errors come from
// reading the files (named with the line) or from a relevant id missing
// from the tools.
func RunBench(toolsPath, queriesPath, distractorsPath string, k int) (*BenchReport, error) {
	return RunBenchOptions(toolsPath, queriesPath, BenchOptions{K: k, Distractors: distractorsPath})
}

// RunBenchOptions is RunBench with options.
func RunBenchOptions(toolsPath, queriesPath string, o BenchOptions) (*BenchReport, error) {
	k := o.K
	if k <= 0 {
		k = 10
	}
	p := DefaultRankParams()
	if o.Params != nil {
		p = *o.Params
	}
	tools, err := LoadBenchTools(toolsPath)
	if err != nil {
		return nil, err
	}
	all, err := LoadBenchQueries(queriesPath)
	if err != nil {
		return nil, err
	}
	known := make(map[string]*BenchTool, len(tools))
	for i := range tools {
		known[tools[i].ID] = &tools[i]
	}
	switch o.Half {
	case "", "tune", "held":
	default:
		return nil, fmt.Errorf("half %q: want tune or held", o.Half)
	}
	var queries []BenchQuery
	for i, q := range all {
		if o.Half == "tune" && i%2 == 1 || o.Half == "held" && i%2 == 0 {
			continue
		}
		if len(q.Slots) == 0 {
			continue
		}
		for _, id := range q.Relevant {
			if known[id] == nil {
				return nil, fmt.Errorf("%s: query %q: relevant id %q is not in %s", queriesPath, q.QID, id, toolsPath)
			}
		}
		queries = append(queries, q)
	}
	entries := BenchEntries(tools, "")
	ds, err := benchDistractors(o, len(tools))
	if err != nil {
		return nil, err
	}
	nd := len(ds)
	entries = append(entries, ds...)
	t0 := time.Now()
	ix := NewIndexWithParams(entries, p)
	build := time.Since(t0)
	rep := &BenchReport{
		Dataset: filepath.Base(filepath.Dir(toolsPath)), Tools: len(tools), Distractors: nd,
		Queries: len(queries), Skipped: len(all) - len(queries), K: k, Semantic: p.Semantic > 0,
		BuildMs: float64(build.Microseconds()) / 1000, CatalogSize: o.CatalogSize, Half: o.Half,
	}
	if o.Half != "" {
		rep.Skipped = 0
		for i, q := range all {
			if len(q.Slots) == 0 && (o.Half == "tune") == (i%2 == 0) {
				rep.Skipped++
			}
		}
	}
	limit := max(k, 10)
	runtime.GC() // keep the build's garbage out of the query latencies
	lat := make([]float64, 0, len(queries))
	engine := make([][]string, len(queries))
	for i, q := range queries {
		t := time.Now()
		res := ix.Search(q.Query, limit, nil)
		lat = append(lat, float64(time.Since(t).Nanoseconds())/1e6)
		engine[i] = scoredIDs(res)
	}
	sort.Float64s(lat)
	rep.P50ms = percentile(lat, 0.50)
	rep.P99ms = percentile(lat, 0.99)
	lexical := engine
	if p.Semantic > 0 {
		lexical = make([][]string, len(queries))
		for i, q := range queries {
			lexical[i] = scoredIDs(ix.search(q.Query, limit, nil, false))
		}
	}
	noDense := engine
	if p.Dense > 0 {
		rep.Dense = true
		nd := ix.withDense(0)
		noDense = make([][]string, len(queries))
		for i, q := range queries {
			noDense[i] = scoredIDs(nd.search(q.Query, limit, nil, p.Semantic > 0))
		}
	}
	plainIx := newPlainBM25(entries)
	plain := make([][]string, len(queries))
	for i, q := range queries {
		plain[i] = plainIx.search(q.Query, limit)
	}
	codexIx := newCodexBM25(entries)
	claudeIx := newClaudeSearch(entries, nil)
	hints := make([]string, len(entries))
	for i, e := range entries {
		hints[i] = ix.SearchHint(e.ID)
	}
	claudeHintIx := newClaudeSearch(entries, hints)
	codex := make([][]string, len(queries))
	claude := make([][]string, len(queries))
	claudeHint := make([][]string, len(queries))
	for i, q := range queries {
		codex[i] = codexIx.search(q.Query, codexDefaultLimit)
		claude[i] = claudeIx.search(q.Query, claudeDefaultLimit)
		claudeHint[i] = claudeHintIx.search(q.Query, claudeDefaultLimit)
	}
	rep.Codex = scoreRuns(queries, codex, k)
	rep.Claude = scoreRuns(queries, claude, k)
	rep.ClaudeHint = scoreRuns(queries, claudeHint, k)
	descLen := func(q BenchQuery) int {
		n := 0
		for _, id := range q.Relevant {
			n = max(n, len(Tokenize(known[id].Description)))
		}
		return n
	}
	type bucketKey struct{ by, bucket string }
	buckets := map[bucketKey][]int{}
	for i, q := range queries {
		for _, b := range []bucketKey{{"query words", queryLengthBucket(q.Query)}, {"language", QueryLanguage(q.Query)}, {"description tokens", descLengthBucket(descLen(q))}} {
			buckets[b] = append(buckets[b], i)
		}
	}
	sel := func(all [][]string, idx []int) ([][]string, []BenchQuery) {
		rs := make([][]string, len(idx))
		qs := make([]BenchQuery, len(idx))
		for j, i := range idx {
			rs[j], qs[j] = all[i], queries[i]
		}
		return rs, qs
	}
	rep.BenchMetrics = scoreRuns(queries, engine, k)
	rep.Lexical = scoreRuns(queries, lexical, k)
	rep.NoDense = scoreRuns(queries, noDense, k)
	rep.Plain = scoreRuns(queries, plain, k)
	keys := make([]bucketKey, 0, len(buckets))
	for b := range buckets {
		keys = append(keys, b)
	}
	order := map[string]int{"query words": 0, "description tokens": 1, "language": 2}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].by != keys[j].by {
			return order[keys[i].by] < order[keys[j].by]
		}
		return bucketLess(keys[i].bucket, keys[j].bucket)
	})
	for _, b := range keys {
		idx := buckets[b]
		row := BenchRow{By: b.by, Bucket: b.bucket}
		rs, qs := sel(engine, idx)
		row.Engine = scoreRuns(qs, rs, k)
		rs, _ = sel(lexical, idx)
		row.Lexical = scoreRuns(qs, rs, k)
		rs, _ = sel(plain, idx)
		row.Plain = scoreRuns(qs, rs, k)
		rep.Breakdown = append(rep.Breakdown, row)
	}
	return rep, nil
}

// benchDistractors loads the distractors of a run (BenchOptions): every
// tool of the Distractors files, or, with CatalogSize, as many as fill the
// catalog to that size (the set has own tools already), taken from the
// Distractors files and then the Pool files, each file's tools in the
// order of a hash of their ids. Ids are prefixed "distractor:" (the first
// file) or "distractor<n>:" (the n-th, from 2), so they never collide.
func benchDistractors(o BenchOptions, own int) ([]*Entry, error) {
	var files []string
	for _, f := range strings.Split(o.Distractors, ",") {
		if f = strings.TrimSpace(f); f != "" {
			files = append(files, f)
		}
	}
	if o.CatalogSize > 0 {
		files = append(files, o.Pool...)
	}
	need := -1 // every tool
	if o.CatalogSize > 0 {
		need = max(0, o.CatalogSize-own)
	}
	var out []*Entry
	for n, f := range files {
		if need == 0 {
			break
		}
		ts, err := LoadBenchTools(f)
		if err != nil {
			return nil, err
		}
		prefix := "distractor:"
		if n > 0 {
			prefix = fmt.Sprintf("distractor%d:", n+1)
		}
		es := BenchEntries(ts, prefix)
		if need > 0 {
			h := func(id string) uint64 {
				x := uint64(14695981039346656037)
				for i := 0; i < len(id); i++ {
					x = (x ^ uint64(id[i])) * 1099511628211
				}
				return x
			}
			sort.SliceStable(es, func(i, j int) bool { return h(es[i].ID) < h(es[j].ID) })
			es = es[:min(need, len(es))]
			need -= len(es)
		}
		out = append(out, es...)
	}
	return out, nil
}

func scoredIDs(res []Scored) []string {
	ids := make([]string, len(res))
	for i, r := range res {
		ids[i] = r.Entry.ID
	}
	return ids
}

// queryLengthBucket buckets a query by its length in words (a CJK or Thai
// run counts one word per two characters).
func queryLengthBucket(q string) string {
	n := 0
	for _, w := range strings.Fields(q) {
		c := 0
		for _, r := range w {
			if isCJK(r) || unicode.Is(unicode.Thai, r) {
				c++
			}
		}
		n += max(1, (c+1)/2)
	}
	switch {
	case n <= 3:
		return "1-3"
	case n <= 10:
		return "4-10"
	case n <= 25:
		return "11-25"
	}
	return "26+"
}

// descLengthBucket buckets a query by the longest description (in index
// tokens) of its relevant tools, to show how tools with long
// descriptions (over 60 tokens) fare.
func descLengthBucket(n int) string {
	switch {
	case n == 0:
		return "0 (empty)"
	case n <= 20:
		return "1-20"
	case n <= 60:
		return "21-60"
	}
	return "61+"
}

func bucketLess(a, b string) bool {
	na, nb := leadingInt(a), leadingInt(b)
	if na != nb {
		return na < nb
	}
	return a < b
}

func leadingInt(s string) int {
	n, ok := 0, false
	for _, c := range s {
		if c < '0' || c > '9' {
			break
		}
		n, ok = n*10+int(c-'0'), true
	}
	if !ok {
		return math.MaxInt
	}
	return n
}

// QueryLanguage names the script family of a query for the bench's
// per-language breakdown: "ja" (any kana), "ko" (Hangul), "zh" (Han without
// kana), "ru" (Cyrillic), "th" (Thai), "latin" (everything else that has
// letters, English in the shared sets), or "none".
func QueryLanguage(q string) string {
	var kana, hangul, han, cyr, thai, latin int
	for _, r := range q {
		switch {
		case unicode.In(r, unicode.Hiragana, unicode.Katakana):
			kana++
		case unicode.Is(unicode.Hangul, r):
			hangul++
		case unicode.Is(unicode.Han, r):
			han++
		case unicode.Is(unicode.Cyrillic, r):
			cyr++
		case unicode.Is(unicode.Thai, r):
			thai++
		case unicode.IsLetter(r):
			latin++
		}
	}
	switch {
	case kana > 0:
		return "ja"
	case hangul > 0:
		return "ko"
	case han > 0:
		return "zh"
	case cyr > 0:
		return "ru"
	case thai > 0:
		return "th"
	case latin > 0:
		return "latin"
	}
	return "none"
}

// scoreRuns scores ranked id lists against the queries' slots.
func scoreRuns(queries []BenchQuery, runs [][]string, k int) BenchMetrics {
	var m BenchMetrics
	for i, q := range queries {
		res := runs[i]
		slotOf := map[string]int{}
		for s, ids := range q.Slots {
			for _, id := range ids {
				if _, ok := slotOf[id]; !ok {
					slotOf[id] = s
				}
			}
		}
		nslots := float64(len(q.Slots))
		filledAt := func(n int) float64 {
			filled := map[int]bool{}
			for j := 0; j < n && j < len(res); j++ {
				if s, ok := slotOf[res[j]]; ok {
					filled[s] = true
				}
			}
			return float64(len(filled)) / nslots
		}
		if len(res) > 0 {
			if _, ok := slotOf[res[0]]; ok {
				m.Top1++
			}
		}
		m.Recall1 += filledAt(1)
		m.Recall5 += filledAt(5)
		m.Recall10 += filledAt(10)
		m.RecallK += filledAt(k)
		var dcg, idcg float64
		filled := map[int]bool{}
		for j := 0; j < k && j < len(res); j++ {
			if s, ok := slotOf[res[j]]; ok && !filled[s] {
				filled[s] = true
				dcg += 1 / math.Log2(float64(j)+2)
			}
		}
		for j := 0; j < k && j < len(q.Slots); j++ {
			idcg += 1 / math.Log2(float64(j)+2)
		}
		m.NDCG += dcg / idcg
		for j, id := range res {
			if _, ok := slotOf[id]; ok {
				m.MRR += 1 / float64(j+1)
				break
			}
		}
	}
	m.N = len(queries)
	if n := float64(len(queries)); n > 0 {
		m.Top1 /= n
		m.Recall1 /= n
		m.Recall5 /= n
		m.Recall10 /= n
		m.RecallK /= n
		m.NDCG /= n
		m.MRR /= n
	}
	return m
}

// percentile of sorted values (nearest rank); 0 for none.
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// Print writes the report as aligned text: the engine's figures with the
// plain BM25 baseline computed on the same tools and queries beside them,
// then the breakdowns by query length, relevant-description length and
// query language.
func (r *BenchReport) Print(w io.Writer) {
	fmt.Fprintf(w, "data set     %s (%d tools + %d distractors, %d queries", r.Dataset, r.Tools, r.Distractors, r.Queries)
	if r.Skipped > 0 {
		fmt.Fprintf(w, ", %d skipped: no labels", r.Skipped)
	}
	sem := "off"
	if r.Semantic {
		sem = "on"
	}
	dense := "off"
	if r.Dense {
		dense = "on"
	}
	half := "all queries"
	switch r.Half {
	case "tune":
		half = "tuning half (queries 1, 3, 5, …)"
	case "held":
		half = "held-out half (queries 2, 4, 6, …)"
	}
	fmt.Fprintf(w, ", %s, all splits; semantic signal %s, dense signal %s)\n", half, sem, dense)
	if r.CatalogSize > 0 && r.Tools+r.Distractors < r.CatalogSize {
		fmt.Fprintf(w, "catalog      %d tools asked for, %d reached: the distractor files hold no more\n", r.CatalogSize, r.Tools+r.Distractors)
	}
	fmt.Fprintf(w, "index build  %.1f ms\n", r.BuildMs)
	row := func(name string, v, b float64) {
		fmt.Fprintf(w, "%-12s %.3f   (plain BM25 %.3f, %+.3f)\n", name, v, b, v-b)
	}
	row("top-1", r.Top1, r.Plain.Top1)
	row("recall@1", r.Recall1, r.Plain.Recall1)
	row("recall@5", r.Recall5, r.Plain.Recall5)
	row("recall@10", r.Recall10, r.Plain.Recall10)
	if r.K != 1 && r.K != 5 && r.K != 10 {
		row(fmt.Sprintf("recall@%d", r.K), r.RecallK, r.Plain.RecallK)
	}
	row(fmt.Sprintf("nDCG@%d", r.K), r.NDCG, r.Plain.NDCG)
	row("MRR", r.MRR, r.Plain.MRR)
	base := func(name string, m BenchMetrics) {
		fmt.Fprintf(w, "%-12s nDCG@%d %.3f, recall@5 %.3f, top-1 %.3f\n", name, r.K, m.NDCG, m.Recall5, m.Top1)
	}
	base("Codex-style", r.Codex)
	base("Claude Code", r.Claude)
	base("  + hints", r.ClaudeHint)
	if r.Semantic {
		fmt.Fprintf(w, "%-12s nDCG@%d %.3f, recall@5 %.3f\n", "no semantic", r.K, r.Lexical.NDCG, r.Lexical.Recall5)
	}
	if r.Dense {
		fmt.Fprintf(w, "%-12s nDCG@%d %.3f, recall@5 %.3f\n", "no dense", r.K, r.NoDense.NDCG, r.NoDense.Recall5)
	}
	fmt.Fprintf(w, "latency      p50 %.3f ms, p99 %.3f ms per query\n", r.P50ms, r.P99ms)
	if len(r.Breakdown) > 0 {
		fmt.Fprintf(w, "breakdown    %-20s %-10s %6s  %-13s %-13s\n", "by", "bucket", "n", "nDCG@"+fmt.Sprint(r.K)+" (BM25)", "recall@5 (BM25)")
		for _, b := range r.Breakdown {
			fmt.Fprintf(w, "             %-20s %-10s %6d  %.3f (%.3f)  %.3f (%.3f)\n", b.By, b.Bucket, b.Engine.N, b.Engine.NDCG, b.Plain.NDCG, b.Engine.Recall5, b.Plain.Recall5)
		}
	}
}

// BenchSets lists the labelled sets of a bench folder: every sub-folder
// holding both tools.jsonl and queries.jsonl, sorted by name.
func BenchSets(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		d := filepath.Join(dir, e.Name())
		if fileExists(filepath.Join(d, "tools.jsonl")) && fileExists(filepath.Join(d, "queries.jsonl")) {
			out = append(out, d)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no sub-folder with tools.jsonl and queries.jsonl", dir)
	}
	return out, nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// PrintBenchSummary writes one line per report: nDCG@K, recall@5 and
// top-1 of the engine, of plain BM25, of the Codex-style and the Claude
// Code-style searches (the latter with and without the engine's search
// hints), and the engine without its semantic and dense signals; then the
// engine's lead over plain BM25 and over Codex-style in nDCG@K.
func PrintBenchSummary(w io.Writer, reps []*BenchReport) {
	fmt.Fprintf(w, "nDCG@k / recall@5 / top-1 per run\n")
	fmt.Fprintf(w, "%-16s %6s %6s  %-17s %-17s %-17s %-17s %-17s %-11s %-11s %s\n", "set", "tools", "queries", "engine", "plain BM25", "Codex-style", "Claude Code", "  + hints", "no semantic", "no dense", "engine-BM25 engine-Codex")
	trio := func(m BenchMetrics) string { return fmt.Sprintf("%.3f %.3f %.3f", m.NDCG, m.Recall5, m.Top1) }
	duo := func(m BenchMetrics) string { return fmt.Sprintf("%.3f %.3f", m.NDCG, m.Recall5) }
	for _, r := range reps {
		fmt.Fprintf(w, "%-16s %6d %6d  %s %s %s %s %s %s %s %+.3f %+.3f\n", r.Dataset, r.Tools+r.Distractors, r.Queries,
			trio(r.BenchMetrics), trio(r.Plain), trio(r.Codex), trio(r.Claude), trio(r.ClaudeHint), duo(r.Lexical), duo(r.NoDense), r.NDCG-r.Plain.NDCG, r.NDCG-r.Codex.NDCG)
	}
}

// evalIndex runs labelled queries against ix (the tuning harness's entry).
func evalIndex(ix *Index, queries []BenchQuery, k int, semantic bool) BenchMetrics {
	runs := make([][]string, len(queries))
	for i, q := range queries {
		runs[i] = scoredIDs(ix.search(q.Query, max(k, 10), nil, semantic))
	}
	return scoreRuns(queries, runs, k)
}
