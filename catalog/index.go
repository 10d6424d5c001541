package catalog

import (
	"bytes"
	"encoding/json"
	"maps"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// This file is the search index (DESIGN "Search"; SPEC §4 search()).
//
// Ranking is BM25F over five fields of each entry:
//
//	name        the original tool name (whole identifier and its parts, split
//	            on case, "_", "-", "."), the whole exposed name, the title
//	description the tool description
//	upstream    the upstream (server) name
//	param       the names of the input parameters (bounded schema walk)
//	paramdesc   the descriptions of the input parameters
//
// A term's pseudo frequency in a document is Σ_f w_f·tf_f / (1 - b_f +
// b_f·len_f/avglen_f) and its score idf·tf~/(k1 + tf~), with
// idf = ln(1 + (N - df + 0.5)/(df + 0.5)). The weights were tuned on the
// labelled sets of shared/bench (sealtools, bfcl); see DefaultRankParams.
// A query equal to an entry's id, exposed name or original name
// (case-insensitive, trimmed) puts that entry first (ExactBoost). Equal
// scores are ordered by id, so results are deterministic.

// Field numbers of the BM25F fields.
const (
	fieldName = iota
	fieldDesc
	fieldUpstream
	fieldParam
	fieldParamDesc
	numFields
)

// Bounds of the parameter walk done for indexing (not for signatures).
const (
	// maxIndexSchemaBytes: input schemas larger than this (256 KiB) are not
	// walked for parameter names; the entry is still indexed by its name
	// and description.
	maxIndexSchemaBytes = 256 << 10
	// maxIndexParamDepth is how deep nested "properties" are followed.
	maxIndexParamDepth = 3
	// maxIndexParams caps the parameters taken from one tool.
	maxIndexParams = 64
	// maxIndexEnum caps the "enum" values taken from one parameter: the
	// allowed values of a parameter say what a tool works on ("celsius",
	// "fahrenheit"; "open", "closed", "merged").
	maxIndexEnum = 8
	// maxFieldTokens caps the terms taken from one field of one entry, so a
	// hostile description cannot make an entry arbitrarily expensive.
	maxFieldTokens = 4096
)

// RankParams are the BM25F parameters. Zero values are not defaulted: use
// DefaultRankParams and change what you need.
type RankParams struct {
	K1     float64
	B      [numFields]float64
	Weight [numFields]float64
	// ExactBoost is added to the score of an entry whose id, exposed name
	// or original name equals the whole query (case-insensitive).
	ExactBoost float64
	// NameBoost is added to the score of an entry whose name (folded to
	// letters and digits) the query spells out as a run of 2 to 4 words
	// ("using the Get IP API" names get_ip) or as one identifier-like word.
	NameBoost float64
	// LenPow bends the length normalization: a field's length ratio
	// len_f/avglen_f enters as (len_f/avglen_f)^LenPow (0 or 1: plain
	// BM25F). Below 1 a long description (real MCP servers write 60+
	// words) is no longer punished in proportion to its length while a
	// short one still gains.
	LenPow float64
	// Semantic is the weight of the semantic signal (0 = off).
	Semantic float64
	// ClauseMix is the weight of the per-clause signal of a query that
	// asks for several things (0 = off): each clause is also scored on
	// its own, and an entry gains ClauseMix × (the top score of the whole
	// query) × its best share of a clause's top score, so the best tool
	// for each task reaches the first hits, not only near-duplicates of
	// the task with the most words.
	ClauseMix float64
	// VerbMismatch multiplies the score of an entry whose name starts
	// with an operation verb (toolVerbGroups: create, delete, search, …)
	// that the query does not ask for, when the query asks for one
	// ("find entities in the knowledge graph" and create_entities); 1 or
	// 0 = off.
	VerbMismatch float64
	// ReadWriteMismatch is VerbMismatch for the case where every verb
	// the query asks for only reads or looks up (find, get, show) and the
	// entry's name verb changes something (create, delete, send, …):
	// calling it for a look-up is the costly mistake. A one-task query
	// that asks for no operation verb at all scores a tool whose name
	// verb deletes or stops something (destructiveVerb) by the same
	// factor: it asks for nothing destructive either.
	ReadWriteMismatch float64
	// Coverage is the power of the coverage factor of a single-task
	// query (0 = off): each of the first coverageDepth hits' scores is
	// multiplied by (0.2 + c)^Coverage, where c is the idf-weighted
	// share of the query's words the entry has (Scored.Strength without
	// the named-entry rule), and they are ranked again. Among many
	// specialised tools (a registry), one that matches the whole request
	// beats one that matches a single rare word of it strongly.
	Coverage float64
	// Bag is the weight of a second opinion on the first hits (0 = off):
	// a plain BM25 score over one bag of the entry's name, description,
	// server and parameter names (no field weights; k1 1.2, b 0.75; see
	// bagMix). Each of the first coverageDepth hits gains Bag × (the top
	// score) × its share of the best bag score among them (for a query of
	// several clauses, the mean of that share and its best share of a
	// clause's best bag score), and they are ranked again. Near-identical
	// tools are then ordered by the evidence the fields split up.
	Bag float64
	// Pairs is the weight of the word-pair signal (0 = off): each of the
	// first coverageDepth hits gains Pairs × (the top score) × its share
	// of the best pair score among them, where an entry's pair score sums
	// idf(a)+idf(b) over the pairs of adjacent query terms a b that are
	// adjacent in its name or its description ("lawsuit cases" in
	// "Retrieve all lawsuit cases …", "air quality index" in
	// get_air_quality_index). Near-identical tools share the words; the
	// one whose wording the request follows shares their order too.
	Pairs float64
	// Dense is the weight of the dense signal (0 = off; dense.go): the
	// tools nearest the query by the cosine of static-embedding vectors
	// gain up to Dense × (the best lexical score) before the top-k
	// selection.
	Dense float64
	// Diverse orders the first hits of a request of three or more tasks
	// (0 = off; see diversify): a task's own best tool moves up past
	// hits of tasks already served when it scores at least Diverse ×
	// theirs, so each task has a tool near the top rather than the
	// near-duplicates of one task filling it.
	Diverse float64
	// DiverseTwin is diversify's ratio (used when below Diverse) for a
	// hit that repeats the hits above it: it matches no query word they
	// do not (scratch.novelty 0; getRevPar after calculateRevPAR). Such a
	// hit shows the model nothing new for the request, so an unserved
	// task's best tool moves past it already at DiverseTwin × its score
	// (0 = off: Diverse for every hit).
	DiverseTwin float64
	// EnglishPrior (0 = off) weighs the coverage factor's share of the
	// query (RankParams.Coverage; not the BM25F scores, not
	// Scored.Strength) with each query term's idf times
	// englishWeight(term)^EnglishPrior: a word frequent in general English
	// ("most", "best", "new", "think") says less about which tool is meant
	// than its rarity in the catalog suggests. Off by default: at 3 the
	// held-out half gains on metatool (+0.004, +0.003 with distractors)
	// and bfcl with distractors (+0.002) but loses on bfcl alone (−0.003)
	// and stabletoolbench (−0.001 alone and with distractors). The
	// weights are english_words.gz's (engprior.go).
	EnglishPrior float64
	// GenericDamp (0 = off) multiplies the BM25F weight of each query
	// term that is no operation verb (toolVerbGroups) by
	// englishWeight(term)^GenericDamp: a word English uses everywhere
	// ("facts", "up", "today", "best") but a catalog rarely has gets less
	// of the score its idf alone would give it, so it does not carry a hit
	// past one that matches the request's topic ("look up facts about
	// oolong tea").
	GenericDamp float64
	// NameCover (0 = off) orders siblings, the first hits of a one-task
	// query that come from one upstream: each one's score is multiplied
	// by 1 − NameCover × (c_best − c), where c is the share of the words
	// of its name (its operation verb left out) that the query has and
	// c_best the largest c among its siblings. Of a server's tools that
	// match the request's words alike, the one named for them passes the
	// ones that have them beside other things ("issue": create_issue
	// before add_issue_comment; "list directory": list_directory before
	// list_directory_with_sizes).
	NameCover float64
	// Deprecated multiplies, last, the score of an entry whose own name,
	// title or description marks it deprecated ("DEPRECATED: Use
	// read_text_file instead.", "(Deprecated)"; deprecated.go); 1 or 0 =
	// off. Its replacement, which matches the request alike, comes first,
	// and the deprecated tool is still found (an exact name query is
	// boosted past it).
	Deprecated float64
	// ServerNamed (0 = off) multiplies by 1 + ServerNamed the score of
	// each tool of an upstream the request names by a word of its own
	// ("create a GitHub issue": the github upstream's tools), so that a
	// copy of one of its tools elsewhere (a registry's create_issue with
	// the same name and description) does not pass it on signals that
	// cannot tell the two apart.
	ServerNamed float64
}

// DefaultRankParams returns the parameters tuned on shared/bench: a
// coordinate search (TestTuneRankParams in tune_test.go, MCPTS_TUNE=1)
// maximizing the mean nDCG@10 over all queries of sealtools and bfcl, each
// alone and with the 8,010 toolsdk_registry tools as distractors.
func DefaultRankParams() RankParams {
	return RankParams{
		K1: 1.2,
		//               name desc upstream param paramdesc
		B:                 [numFields]float64{0.8, 1, 1, 0.5, 0.5},
		Weight:            [numFields]float64{1.5, 0.6, 0.3, 0.3, 0.6},
		ExactBoost:        1000,
		NameBoost:         3,
		LenPow:            0.85,
		Semantic:          DefaultSemanticWeight,
		ClauseMix:         1,
		VerbMismatch:      0.9,
		ReadWriteMismatch: 0.5,
		Coverage:          0.7,
		Pairs:             0.1,
		Bag:               0.3,
		Dense:             DefaultDenseWeight,
		Diverse:           0.95,
		DiverseTwin:       0.8,
		NameCover:         0.1,
		Deprecated:        0.7,
		ServerNamed:       0.05,
	}
}

// Scored is one search result: the entry and its score (higher is better;
// the scale is BM25F and has no fixed upper bound).
type Scored struct {
	Entry *Entry
	Score float64
	// Strength is the share of the query the entry matches, 0..1: the
	// idf- and weight-weighted share of the query's words found in its
	// text (a word matched only through a misspelling repair or a compound
	// counts 0.8, through the semantic table 0.5), or 1 when the query
	// names the entry. MatchLevel turns it into a band.
	Strength float64
	// Matched lists the query words (as written) that the entry matches
	// itself or through a misspelling repair or a compound, in query order.
	Matched []string
	// Related lists the query words (as written) that the entry matches
	// only through the semantic table (a related word, not the word
	// itself: "write" reaching a read_file tool through a neighbour), in
	// query order; a word is in Matched or Related, never both (else a
	// read tool would show "matched: write").
	Related []string
	doc     int32
	seg     int8  // cand.seg
	near    uint8 // cand.near
}

// posting is one document's frequencies of one term, per field.
type posting struct {
	doc int32
	tf  [numFields]uint16
}

// termInfo is one term's postings (live and tombstoned) and its live
// document frequency.
type termInfo struct {
	df int32
	// did is the term's row in the dense table + 1 (-1: not in it; 0:
	// not looked up yet), cached by denseBulk (dense.go).
	did  int32
	post []posting
}

type termTF struct {
	term string
	tf   [numFields]uint16
}

type idxDoc struct {
	e     *Entry
	lens  [numFields]float32
	terms []termTF // distinct terms, kept for removal and re-weighting
	keys  []string // exact-match keys (lower-case id, exposed, name)
	nkeys []string // name keys (nameKey of name, exposed name, title)
	verb  uint8    // nameVerb of the name
	// deprecated: the tool's own name, title or description marks it
	// deprecated (deprecated.go; RankParams.Deprecated).
	deprecated bool
	// pairs are the hashes (pairHash) of the pairs of adjacent terms of
	// the name and of the description, sorted, without repeats
	// (RankParams.Pairs).
	pairs []uint32
	// dense is the entry's static-embedding vector (dense.go; nil when
	// none of its terms is in the table).
	dense *denseVec
}

// Index is a BM25F search index over catalog entries. It is safe for
// concurrent use: Search and Get take a read lock, Replace a write lock,
// and the tokenization of new entries happens before the lock is taken.
//
// Replace is incremental: the replaced entries are tombstoned, their
// document frequencies and field lengths subtracted, and the new entries
// appended, so its cost is O(terms of the old and new entries of that
// upstream), plus, when the average field lengths changed, O(N·fields)
// float operations to refresh the per-entry length normalization
// w_f/(1 - b_f + b_f·len_f/avglen_f) of all N live entries (about 0.1 ms
// for 10,000 entries), so results always equal a full rebuild's. The posting lists are rebuilt from the kept per-entry
// term counts (O(total terms), no re-tokenizing) when tombstones outnumber
// live entries, which amortizes to O(1) per replaced entry.
type Index struct {
	mu     sync.RWMutex
	params RankParams
	docs   []idxDoc
	dead   []bool
	norm   [][numFields]float32 // per doc: w_f/(1 - b_f + b_f·len_f/avglen_f)
	verb   []uint8              // per doc: its idxDoc.verb
	// Per doc, while the dense signal is on (params.Dense > 0; else
	// nil): its idxDoc.dense (zero: none; dense.go) and its signs.
	dvec []denseVec
	dsig [][denseSigWords]uint64
	// denseInBulk is set while bulkAddLocked computes dvec and dsig
	// (denseBulk) and addTermsLocked must not append to them.
	denseInBulk bool
	// normAvg holds the average field lengths norm was computed with.
	normAvg [numFields]float64
	terms   map[string]*termInfo
	byID    map[string]int32
	byUp    map[string][]int32
	exact   map[string][]int32 // lower-case key -> docs (may include dead)
	names   map[string][]int32 // nameKey -> docs (may include dead)
	// nameFilter holds every key of names: most runs of query words that
	// namedDocs tries are no tool's name, and the filter answers those
	// without touching the map.
	nameFilter keyFilter
	// termFilter holds every key of terms: the query's derived forms
	// (misspellings one edit away, joined words, word-form variants) are
	// hundreds of probes per query that mostly miss, and each miss in the
	// 37,000-term map costs cache misses.
	termFilter keyFilter
	live       int
	ndead      int
	sumLen     [numFields]float64
	pool       sync.Pool // *scratch
	// owned, while With builds a new index, holds the termInfos that
	// index already copied; a termInfo not in it is shared with the
	// index With started from and is copied before it is changed. nil
	// outside With: everything is owned.
	owned map[*termInfo]bool
	// dropped is set when removeDocLocked deletes a term from terms
	// (its last live posting went); a bulk add then re-attaches terms.
	dropped bool
	// idSlab, during a bulk add, holds one-id slices for the first
	// document of each exact/name/upstream key (one allocation for all
	// instead of one per key); each is capped at 1, so a second document
	// of that key appends to a copy.
	idSlab []int32
	// hints holds the search hints made (hint.go) and what they are
	// made from, built on the first SearchHint and dropped by Replace.
	hints atomic.Pointer[hintData]
	// nameWordsCache holds docNameWords by document; Replace empties it.
	nameWordsCache sync.Map
}

// NewIndex builds an index over entries (nil entries are skipped). Entries
// must have ID set; when two entries share an ID the later one wins. The
// entries are not copied: callers must not mutate an entry after handing
// it to the index (replace it instead).
func NewIndex(entries []*Entry) *Index {
	return NewIndexWithParams(entries, DefaultRankParams())
}

// NewIndexWithParams is NewIndex with explicit ranking parameters (used by
// the bench to tune them).
func NewIndexWithParams(entries []*Entry, p RankParams) *Index {
	docs, lex := analyzeAllLex(entries, true)
	return newIndexFromLex(docs, lex, p)
}

// newIndexFromDocs builds an index from analyzed documents (the tuning
// harness reuses one analysis for many parameter sets).
func newIndexFromDocs(docs []idxDoc, p RankParams) *Index {
	return newIndexFromLex(docs, nil, p)
}

// newIndexFromLex is newIndexFromDocs given the documents' lexicon (or
// nil).
func newIndexFromLex(docs []idxDoc, lex *lexicon, p RankParams) *Index {
	if p.Semantic > 0 {
		go related() // parse the table (~0.1 s) before the first query needs it
	}
	ix := &Index{params: p}
	ix.bulkAddLocked(docs, nil, lex)
	ix.renormLocked(0)
	return ix
}

// bulkAddLocked resets the index to the given documents (those with
// skip[i] set are left out). It sizes every posting list first, so each
// term costs one map operation. lex, when not nil, is the documents'
// lexicon (analyzeAllLex; skip must then be nil): each distinct term is
// then hashed once.
func (ix *Index) bulkAddLocked(docs []idxDoc, skip []bool, lex *lexicon) {
	n := 0
	for i := range docs {
		if skip == nil || !skip[i] {
			n++
		}
	}
	ix.docs = make([]idxDoc, 0, n)
	ix.dead = make([]bool, 0, n)
	ix.norm = make([][numFields]float32, 0, n)
	ix.verb = make([]uint8, 0, n)
	ix.dvec, ix.dsig = nil, nil
	if ix.params.Dense > 0 {
		// Filled by denseBulk below; addTermsLocked leaves them alone
		// while denseInBulk is set.
		ix.dvec = make([]denseVec, n)
		ix.dsig = make([][denseSigWords]uint64, n)
		ix.denseInBulk = true
		defer func() { ix.denseInBulk = false }()
	}
	total := 0
	for i := range docs {
		if skip == nil || !skip[i] {
			total += len(docs[i].terms)
		}
	}
	ix.byID = make(map[string]int32, n)
	ix.byUp = make(map[string][]int32, n/8)
	// Up to 3 keys per document (id, exposed name, name; name, exposed
	// name, title), mostly distinct.
	ix.exact = make(map[string][]int32, 3*n)
	ix.names = make(map[string][]int32, 2*n)
	ix.nameFilter = newKeyFilter(2 * n)
	ix.live, ix.ndead = 0, 0
	ix.sumLen = [numFields]float64{}
	ix.dropped = false
	ix.idSlab = make([]int32, 0, 6*n)
	defer func() { ix.idSlab = nil }()
	// termInfos and posting lists are carved out of two slabs (two
	// allocations instead of two per term); each list is capped at its
	// size, so a later append (Replace, With) copies it out.
	var tis []*termInfo
	if lex != nil {
		tis = ix.termsFromLex(lex, total)
	} else {
		tis = ix.termsFromDocs(docs, skip, total)
	}
	// With no repeated id (the usual case), the key maps are filled by a
	// second goroutine while this one fills the posting lists; with one,
	// in order, as addLocked replaces the earlier document.
	var wg sync.WaitGroup
	unique := ix.uniqueIDs(docs, skip)
	if ix.denseInBulk {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ix.denseBulk(docs, skip, tis)
		}()
	}
	if unique {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := int32(0)
			for i := range docs {
				if skip == nil || !skip[i] {
					ix.addKeysLocked(&docs[i], id)
					id++
				}
			}
		}()
	}
	k := 0
	for i := range docs {
		if skip != nil && skip[i] {
			continue
		}
		nt := len(docs[i].terms)
		if unique {
			ix.addTermsLocked(docs[i], tis[k:k+nt])
		} else {
			ix.addLocked(docs[i], tis[k:k+nt])
		}
		k += nt
	}
	wg.Wait()
}

// termsFromDocs fills ix.terms (empty) with the terms of the documents
// not skipped, with posting lists sized for them (total: the number of
// (document, term) pairs), and returns the termInfo of each pair in
// order.
func (ix *Index) termsFromDocs(docs []idxDoc, skip []bool, total int) []*termInfo {
	// About one distinct term per five (document, term) pairs on real
	// catalogs (36,968 of 199,169 at 10,000 tools): sized so the map does
	// not grow (a rehash of every key) while it is filled.
	ix.terms = make(map[string]*termInfo, max(len(ix.terms), total/4))
	tis := make([]*termInfo, 0, total)
	var slab []termInfo
	for i := range docs {
		if skip != nil && skip[i] {
			continue
		}
		for _, t := range docs[i].terms {
			ti := ix.terms[t.term]
			if ti == nil {
				if len(slab) == cap(slab) {
					slab = make([]termInfo, 0, max(1024, (total-len(tis))/4))
				}
				slab = append(slab, termInfo{})
				ti = &slab[len(slab)-1]
				ix.terms[t.term] = ti
			}
			ti.df++ // a count for sizing; reset below
			tis = append(tis, ti)
		}
	}
	posts := make([]posting, total)
	off := 0
	ix.termFilter = newKeyFilter(len(ix.terms))
	for t, ti := range ix.terms {
		ti.post = posts[off : off : off+int(ti.df)]
		off += int(ti.df)
		ti.df = 0
		ix.termFilter.add(t)
	}
	return tis
}

// termsFromLex is termsFromDocs for every document of lex: one map
// insertion per distinct term and none per (document, term) pair.
func (ix *Index) termsFromLex(lex *lexicon, total int) []*termInfo {
	infos := make([]termInfo, len(lex.terms))
	for _, ids := range lex.ids {
		for _, id := range ids {
			infos[id].df++ // a count for sizing; reset below
		}
	}
	posts := make([]posting, total)
	off := 0
	ix.terms = make(map[string]*termInfo, len(lex.terms))
	ix.termFilter = newKeyFilter(len(lex.terms))
	for id, t := range lex.terms {
		ti := &infos[id]
		ti.post = posts[off : off : off+int(ti.df)]
		off += int(ti.df)
		ti.df = 0
		ix.terms[t] = ti
		ix.termFilter.add(t)
	}
	tis := make([]*termInfo, 0, total)
	for _, ids := range lex.ids {
		for _, id := range ids {
			tis = append(tis, &infos[id])
		}
	}
	return tis
}

// uniqueIDs fills ix.byID (empty) with the documents' ids numbered in
// order and reports whether they are all distinct; if not, it empties
// byID again (addLocked fills it).
func (ix *Index) uniqueIDs(docs []idxDoc, skip []bool) bool {
	id := int32(0)
	for i := range docs {
		if skip != nil && skip[i] {
			continue
		}
		if _, ok := ix.byID[docs[i].e.ID]; ok {
			clear(ix.byID)
			return false
		}
		ix.byID[docs[i].e.ID] = id
		id++
	}
	return true
}

// analyzeAll tokenizes entries, in parallel for large inputs.
func analyzeAll(entries []*Entry) []idxDoc {
	docs, _ := analyzeAllLex(entries, false)
	return docs
}

// analyzeAllLex is analyzeAll that also returns the batch's lexicon when
// withLex is set (nil otherwise).
func analyzeAllLex(entries []*Entry, withLex bool) ([]idxDoc, *lexicon) {
	var es []*Entry
	for _, e := range entries {
		if e != nil {
			es = append(es, e)
		}
	}
	docs := make([]idxDoc, len(es))
	workers := runtime.GOMAXPROCS(0)
	if len(es) < 256 || workers < 2 {
		a := newAnalyzer(len(es), withLex)
		for i, e := range es {
			docs[i] = analyze(e, a)
		}
		if !withLex {
			return docs, nil
		}
		return docs, mergeLexicon([]*analyzer{a})
	}
	var wg sync.WaitGroup
	chunk := (len(es) + workers - 1) / workers
	var ws []*analyzer
	for w := 0; w < workers; w++ {
		lo, hi := w*chunk, min((w+1)*chunk, len(es))
		if lo >= hi {
			break
		}
		a := newAnalyzer(hi-lo, withLex)
		ws = append(ws, a)
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				docs[i] = analyze(es[i], a)
			}
		}(lo, hi)
	}
	wg.Wait()
	if !withLex {
		return docs, nil
	}
	return docs, mergeLexicon(ws)
}

// sortKey packs the first 8 bytes of t into an integer whose order is
// the order of those bytes, so most comparisons of the per-entry term
// sort are one integer comparison (equal terms still get equal keys).
func sortKey(t string) uint64 {
	if len(t) >= 8 {
		_ = t[7]
		return uint64(t[0])<<56 | uint64(t[1])<<48 | uint64(t[2])<<40 | uint64(t[3])<<32 |
			uint64(t[4])<<24 | uint64(t[5])<<16 | uint64(t[6])<<8 | uint64(t[7])
	}
	var k uint64
	for i := 0; i < 8; i++ {
		k <<= 8
		if i < len(t) {
			k |= uint64(t[i])
		}
	}
	return k
}

// analyze turns one entry into its per-field term frequencies, counted
// through a's term table (a is reused from entry to entry by one
// goroutine).
func analyze(e *Entry, a *analyzer) idxDoc {
	d := idxDoc{e: e}
	a.begin()
	var field uint8
	var n [numFields]int
	// The previous term of the name or description, for the word pairs
	// (RankParams.Pairs): adjacent terms of one field, not equal.
	prev, prevField := int32(-1), uint8(0)
	sink := func(t string) {
		if n[field] >= maxFieldTokens {
			return
		}
		n[field]++
		id := a.tab.intern(t)
		a.count(id, field)
		if field <= fieldDesc {
			if prev >= 0 && prevField == field && prev != id {
				a.hs = append(a.hs, pairHashFrom(a.tab.terms[prev].fnv, t))
			}
			prev, prevField = id, field
		}
	}
	field = fieldName
	// nameTokens, keeping the first term of the name's text (its verb:
	// nameVerb without tokenizing the name again).
	if whole, ok := nameWhole(e.Name); ok {
		sink(whole)
	}
	var verb0 uint8
	first := true
	tokenizeText(e.Name, func(t string) {
		if first {
			verb0 = toolVerbGroup[t]
			first = false
		}
		sink(t)
	})
	if e.Exposed != "" && !strings.EqualFold(e.Exposed, e.Name) {
		// Only the whole exposed name: its parts (prefix, tool name) are
		// already indexed from Upstream and Name.
		sink(toLower(e.Exposed))
	}
	if e.Title != "" {
		tokenizeText(e.Title, sink)
	}
	field = fieldDesc
	tokenizeText(e.Description, sink)
	emitLatinDesc(e.Description, sink)
	field = fieldUpstream
	nameTokens(e.Upstream, sink)
	walkParamsEnum(e.InputSchema, func(name, desc string, enum []string) {
		field = fieldParam
		nameTokens(name, sink)
		field = fieldParamDesc
		rest, examples := splitExamples(desc)
		tokenizeText(rest, sink)
		// Example values count as a parameter name does, half a
		// description word (RankParams.Weight).
		field = fieldParam
		tokenizeText(examples, sink)
		// Allowed values too: they say what the tool works on
		// ("fahrenheit", "merged"), as a parameter's name does.
		for k, v := range enum {
			if k == maxIndexEnum {
				break
			}
			tokenizeText(v, sink)
		}
	})
	for f := range n {
		d.lens[f] = float32(n[f])
	}
	d.pairs = a.pairs()
	d.verb = nameVerbFirst(e.Name, verb0)
	d.deprecated = deprecated(e.Name, e.Title, e.Description)
	d.terms = a.terms()
	// The up to 3 + 3 keys share one backing array (one allocation, not
	// up to six), and a name key is folded on the stack and copied out
	// only when it is kept (name, exposed name and title mostly fold
	// alike).
	kb := make([]string, 0, 6)
	d.keys, d.nkeys = kb[0:0:3], kb[3:3:6]
	for _, k := range [...]string{e.ID, e.Exposed, e.Name} {
		k = toLower(strings.TrimSpace(k))
		if k != "" && !slices.Contains(d.keys, k) {
			d.keys = append(d.keys, k)
		}
	}
	var nb [64]byte
	for _, k := range [...]string{e.Name, e.Exposed, e.Title} {
		if b := appendNameKey(nb[:0], k); b != nil && !containsBytes(d.nkeys, b) {
			d.nkeys = append(d.nkeys, string(b))
		}
	}
	if len(d.keys) == 0 {
		d.keys = nil
	}
	if len(d.nkeys) == 0 {
		d.nkeys = nil
	}
	return d
}

// containsBytes reports whether ss holds the string b (no conversion
// allocated).
func containsBytes(ss []string, b []byte) bool {
	for _, s := range ss {
		if s == string(b) {
			return true
		}
	}
	return false
}

// splitExamples splits a parameter description into its text without
// its example values and those values: the text after "e.g.", "for
// example", "for instance", "such as" or "example:" up to the end of that
// sentence or parenthesis. The examples are indexed with less weight than
// the description: an example shows the format of a value ("City and
// state, e.g. Chicago, IL"), and its words reach requests that name that
// value ("weather in Chicago") before the tools they ask for; but it often
// also shows what the tool is about ("cuisine, e.g. Italian"), so they are
// damped, not dropped.
func splitExamples(desc string) (rest, examples string) {
	if s, _ := nextExample(desc); s < 0 {
		return desc, "" // most descriptions: nothing to build
	}
	var r, ex strings.Builder
	for desc != "" {
		start, end := nextExample(desc)
		if start < 0 {
			r.WriteString(desc)
			break
		}
		r.WriteString(desc[:start])
		r.WriteByte(' ')
		ex.WriteString(desc[start:end])
		ex.WriteByte(' ')
		desc = desc[end:]
	}
	if ex.Len() == 0 {
		return r.String(), ""
	}
	return r.String(), ex.String()
}

// withoutExamples returns a parameter description without its example
// values (splitExamples).
func withoutExamples(desc string) string {
	rest, _ := splitExamples(desc)
	return rest
}

// nextExample returns the span of the first example value of desc
// (splitExamples), start -1 for none.
func nextExample(desc string) (start, end int) {
	lower := ""
	start = -1
	for k, m := range exampleMarks {
		if !strings.Contains(desc, m) && !strings.Contains(desc, exampleMarksCap[k]) {
			continue // neither "for example" nor "For example" (other cases: not marks)
		}
		if lower == "" {
			lower = strings.ToLower(desc)
		}
		for from := 0; ; {
			i := strings.Index(lower[from:], m)
			if i < 0 {
				break
			}
			i += from
			if i == 0 || !isWordRune(rune(lower[i-1])) { // not "nutmeg." or "regex:"
				if start < 0 || i < start {
					start = i
				}
				break
			}
			from = i + 1
		}
	}
	if start < 0 {
		return -1, -1
	}
	end = len(desc)
	for j := start; j < len(desc); j++ {
		c := desc[j]
		if c == ')' || c == ']' || c == ';' || c == '\n' || c == '.' && j+1 < len(desc) && desc[j+1] == ' ' && !isAbbrevDot(desc, j) {
			end = j
			break
		}
	}
	return start, end
}

// exampleMarks are the lower-case words that start an example value.
var exampleMarks = [...]string{"e.g.", "eg.", "for example", "for instance", "such as", "example:", "examples:", "ex:"}

// exampleMarksCap are exampleMarks with a capital first letter.
var exampleMarksCap = func() (c [len(exampleMarks)]string) {
	for i, m := range exampleMarks {
		c[i] = strings.ToUpper(m[:1]) + m[1:]
	}
	return c
}()

// isAbbrevDot reports whether the "." at desc[j] ends a one- or
// two-letter abbreviation ("e.g.", "i.e.", "U.S.") rather than a sentence.
func isAbbrevDot(desc string, j int) bool {
	k := j
	for k > 0 && isWordRune(rune(desc[k-1])) {
		k--
	}
	return j-k <= 2
}

// The parameter walk decodes a schema once into these typed levels
// (maxIndexParamDepth = 3 of them); anything deeper is skipped by the
// decoder without being built. A type mismatch (a non-string description,
// a tuple "items") leaves that field empty and the rest is still used.
type (
	paramLeaf struct {
		Description string   `json:"description"`
		Enum        []string `json:"enum"`
	}
	paramL2 struct {
		Description string               `json:"description"`
		Enum        []string             `json:"enum"`
		Properties  map[string]paramLeaf `json:"properties"`
		Items       *struct {
			Properties map[string]paramLeaf `json:"properties"`
		} `json:"items"`
	}
	paramL1 struct {
		Description string             `json:"description"`
		Enum        []string           `json:"enum"`
		Properties  map[string]paramL2 `json:"properties"`
		Items       *struct {
			Properties map[string]paramL2 `json:"properties"`
		} `json:"items"`
	}
	paramRoot struct {
		Properties map[string]paramL1 `json:"properties"`
	}
)

// walkParams calls f for the parameters of an input schema, breadth first
// (level by level, names sorted within each object), at most
// maxIndexParams of them, following nested objects and arrays of objects
// to maxIndexParamDepth levels. Schemas over maxIndexSchemaBytes or that
// are not JSON objects are skipped.
func walkParams(schema json.RawMessage, f func(name, desc string)) {
	walkParamsEnum(schema, func(name, desc string, _ []string) { f(name, desc) })
}

// walkParamsEnum is walkParams that also gives each parameter's "enum"
// values (the strings of it; nil for none).
func walkParamsEnum(schema json.RawMessage, f func(name, desc string, enum []string)) {
	var root paramRoot
	if !decodeParamRoot(schema, &root) {
		return
	}
	count := 0
	emit := func(name, desc string, enum []string) bool {
		if count >= maxIndexParams {
			return false
		}
		count++
		f(name, desc, enum)
		return true
	}
	var level2 []map[string]paramL2
	for _, k := range sortedKeys(root.Properties) {
		p := root.Properties[k]
		if !emit(k, p.Description, p.Enum) {
			return
		}
		if len(p.Properties) > 0 {
			level2 = append(level2, p.Properties)
		} else if p.Items != nil && len(p.Items.Properties) > 0 {
			level2 = append(level2, p.Items.Properties)
		}
	}
	var level3 []map[string]paramLeaf
	for _, m := range level2 {
		for _, k := range sortedKeys(m) {
			p := m[k]
			if !emit(k, p.Description, p.Enum) {
				return
			}
			if len(p.Properties) > 0 {
				level3 = append(level3, p.Properties)
			} else if p.Items != nil && len(p.Items.Properties) > 0 {
				level3 = append(level3, p.Items.Properties)
			}
		}
	}
	for _, m := range level3 {
		for _, k := range sortedKeys(m) {
			if !emit(k, m[k].Description, m[k].Enum) {
				return
			}
		}
	}
}

// decodeParamRoot decodes the bounded parameter levels of an input schema;
// it reports false for a schema over maxIndexSchemaBytes, one that is not a
// JSON object, or invalid JSON (a type mismatch inside still counts as
// decoded: the rest is used).
func decodeParamRoot(schema json.RawMessage, root *paramRoot) bool {
	raw := bytes.TrimSpace(schema)
	if len(raw) == 0 || len(raw) > maxIndexSchemaBytes || raw[0] != '{' || noParams(raw) {
		return false
	}
	if fastParamRoot(raw, root) {
		return true
	}
	*root = paramRoot{} // what the reader left: encoding/json decides
	if err := json.Unmarshal(raw, root); err != nil {
		if _, ok := err.(*json.UnmarshalTypeError); !ok {
			return false
		}
	}
	return true
}

// noParams reports whether a schema plainly has no parameters: no
// "properties" key, or one whose value is {} and no other. It saves the
// JSON decoding of the empty schemas most registries send for tools
// without parameters (all 8,010 of toolsdk_registry).
func noParams(raw []byte) bool {
	key := []byte(`"properties"`)
	i := bytes.Index(raw, key)
	if i < 0 {
		return true
	}
	rest := raw[i+len(key):]
	for _, want := range []byte(":{}") {
		rest = bytes.TrimLeft(rest, " \t\r\n")
		if len(rest) == 0 || rest[0] != want {
			return false
		}
		rest = rest[1:]
	}
	return !bytes.Contains(rest, key)
}

// sortedKeys returns the keys of m in ascending order.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// addLocked appends an analyzed document. tis, when not nil, holds the
// termInfo of each of d.terms. The caller holds the write lock (or owns the
// index exclusively).
func (ix *Index) addLocked(d idxDoc, tis []*termInfo) {
	if old, ok := ix.byID[d.e.ID]; ok {
		ix.removeDocLocked(old)
	}
	id := ix.addTermsLocked(d, tis)
	ix.byID[d.e.ID] = id
	ix.addKeysLocked(&d, id)
}

// addTermsLocked appends an analyzed document and its postings (tis: see
// addLocked) and returns its number; addKeysLocked adds its keys.
func (ix *Index) addTermsLocked(d idxDoc, tis []*termInfo) int32 {
	id := int32(len(ix.docs))
	if ix.params.Dense > 0 && !ix.denseInBulk {
		if d.dense == nil {
			d.dense = denseDoc(d.terms)
		}
		ix.appendDense(d.dense)
	}
	ix.docs = append(ix.docs, d)
	ix.dead = append(ix.dead, false)
	ix.norm = append(ix.norm, [numFields]float32{})
	ix.verb = append(ix.verb, d.verb)
	for i, t := range d.terms {
		var ti *termInfo
		if tis != nil {
			ti = tis[i]
			if ti.df == 0 && ix.dropped {
				// Re-attach: a duplicate id removed earlier in this bulk
				// add may have dropped the term from the map.
				ix.terms[t.term] = ti
			}
		} else if ti = ix.terms[t.term]; ti == nil {
			ti = &termInfo{}
			ix.terms[t.term] = ti
			ix.termFilter.add(t.term)
			if ix.owned != nil {
				ix.owned[ti] = true
			}
		} else {
			ti = ix.ownTerm(t.term, ti)
		}
		ti.post = append(ti.post, posting{doc: id, tf: t.tf})
		ti.df++
	}
	for f := range d.lens {
		ix.sumLen[f] += float64(d.lens[f])
	}
	ix.live++
	return id
}

// addKeysLocked adds document id's upstream, exact-match and name keys.
func (ix *Index) addKeysLocked(d *idxDoc, id int32) {
	ix.byUp[d.e.Upstream] = ix.appendID(ix.byUp[d.e.Upstream], id)
	for _, k := range d.keys {
		ix.exact[k] = ix.appendID(ix.exact[k], id)
	}
	for _, k := range d.nkeys {
		ix.names[k] = ix.appendID(ix.names[k], id)
		ix.nameFilter.add(k)
	}
}

// removeDocLocked tombstones one document.
func (ix *Index) removeDocLocked(id int32) {
	if ix.dead[id] {
		return
	}
	d := &ix.docs[id]
	ix.dead[id] = true
	// A zero norm row gives the tombstone's postings a zero pseudo
	// frequency: the posting loops skip them without reading dead.
	ix.norm[id] = [numFields]float32{}
	for _, t := range d.terms {
		if ti := ix.terms[t.term]; ti != nil {
			ti = ix.ownTerm(t.term, ti)
			if ti.df--; ti.df <= 0 {
				// Only tombstoned postings are left.
				delete(ix.terms, t.term)
				ix.dropped = true
			}
		}
	}
	for f := range d.lens {
		ix.sumLen[f] -= float64(d.lens[f])
	}
	if ix.byID[d.e.ID] == id {
		delete(ix.byID, d.e.ID)
	}
	ix.live--
	ix.ndead++
}

// With returns a new index equal to ix with every entry of upstream
// replaced by entries (see Replace); ix itself is not changed, so readers
// of ix never wait for the change and never see it (each
// catalog snapshot has its own immutable index view). The new index
// shares ix's posting lists and per-entry analysis; it copies ix's maps
// and per-entry slices (pointer copies, O(entries + terms): a few ms at
// 10,000 tools) and the posting lists of the terms the change touches.
// The tokenization of entries happens before ix is read-locked.
func (ix *Index) With(upstream string, entries []*Entry) *Index {
	docs := analyzeAll(entries)
	ix.mu.RLock()
	nx := ix.cloneLocked()
	ix.mu.RUnlock()
	nx.replaceLocked(upstream, docs)
	nx.owned = nil
	return nx
}

// cloneLocked returns a copy of ix that shares its posting lists and
// per-entry analysis (owned set: see Index.owned). ix is read-locked.
func (ix *Index) cloneLocked() *Index {
	return &Index{
		params:  ix.params,
		docs:    slices.Clip(ix.docs),
		dead:    slices.Clone(ix.dead),
		norm:    slices.Clone(ix.norm),
		verb:    slices.Clip(ix.verb),
		dvec:    slices.Clip(ix.dvec),
		dsig:    slices.Clip(ix.dsig),
		normAvg: ix.normAvg,
		terms:   maps.Clone(ix.terms),
		byID:    maps.Clone(ix.byID),
		byUp:    maps.Clone(ix.byUp),
		exact:   maps.Clone(ix.exact),
		names:   maps.Clone(ix.names),
		// Copied: With adds the new entries' keys. Removed keys stay
		// (false positives only) until a compaction rebuilds it.
		nameFilter: ix.nameFilter.clone(),
		termFilter: ix.termFilter.clone(),
		live:       ix.live,
		ndead:      ix.ndead,
		sumLen:     ix.sumLen,
		owned:      map[*termInfo]bool{},
	}
}

// ownTerm returns the termInfo of term t that this index may change: ti
// itself, or (inside With) a copy that replaces the shared one.
func (ix *Index) ownTerm(t string, ti *termInfo) *termInfo {
	if ix.owned == nil || ix.owned[ti] {
		return ti
	}
	c := &termInfo{df: ti.df, post: slices.Clip(ti.post)}
	ix.owned[c] = true
	ix.terms[t] = c
	return c
}

// appendID appends id to a slice that may be shared with the index With
// started from (then the slice is copied first).
func (ix *Index) appendID(s []int32, id int32) []int32 {
	if ix.owned != nil {
		s = slices.Clip(s)
	}
	if s == nil && len(ix.idSlab) < cap(ix.idSlab) {
		i := len(ix.idSlab)
		ix.idSlab = append(ix.idSlab, id)
		return ix.idSlab[i : i+1 : i+1]
	}
	return append(s, id)
}

// Replace replaces every entry of one upstream with entries (which may be
// empty, removing the upstream). Entries whose Upstream field differs from
// upstream are still indexed, but under their own Upstream. Cost: O(terms
// of the removed and added entries), plus an occasional compaction (see
// Index). Concurrent Search calls see either the old or the new state.
func (ix *Index) Replace(upstream string, entries []*Entry) {
	docs := analyzeAll(entries) // outside the lock: the expensive part
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.replaceLocked(upstream, docs)
}

func (ix *Index) replaceLocked(upstream string, docs []idxDoc) {
	ix.hints.Store(nil)
	ix.nameWordsCache.Clear() // a compaction renumbers the documents
	for _, id := range ix.byUp[upstream] {
		ix.removeDocLocked(id)
	}
	delete(ix.byUp, upstream)
	from := len(ix.docs)
	for i := range docs {
		ix.addLocked(docs[i], nil)
	}
	if ix.ndead > 64 && ix.ndead > ix.live {
		ix.owned = nil // compaction builds every structure anew
		ix.compactLocked()
		from = 0
	}
	ix.renormLocked(from)
}

// renormLocked computes the length normalization of the entries from
// index from on, or of every live entry (O(N·fields)) when the average
// field lengths changed since the last call.
func (ix *Index) renormLocked(from int) {
	p := &ix.params
	var avg [numFields]float64
	for f := range avg {
		avg[f] = ix.sumLen[f] / float64(max(ix.live, 1))
		if avg[f] <= 0 {
			avg[f] = 1
		}
	}
	if avg != ix.normAvg {
		ix.normAvg = avg
		from = 0
	}
	for i := from; i < len(ix.docs); i++ {
		if ix.dead[i] {
			continue
		}
		for f := 0; f < numFields; f++ {
			l := float64(ix.docs[i].lens[f])
			if l == 0 {
				// No terms in this field: nothing to weigh (and with b = 1
				// the formula would divide by zero).
				ix.norm[i][f] = 0
				continue
			}
			ratio := l / avg[f]
			if p.LenPow > 0 && p.LenPow != 1 {
				ratio = math.Pow(ratio, p.LenPow)
			}
			ix.norm[i][f] = float32(p.Weight[f] / (1 - p.B[f] + p.B[f]*ratio))
		}
	}
}

// compactLocked drops tombstones and renumbers documents; the caller then
// calls renormLocked.
func (ix *Index) compactLocked() {
	ix.bulkAddLocked(ix.docs, ix.dead, nil)
}

// Params returns the index's ranking parameters.
func (ix *Index) Params() RankParams {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.params
}

// withSemantic returns an index equal to ix with the semantic signal's
// weight set to w (ix is not changed).
func (ix *Index) withSemantic(w float64) *Index {
	ix.mu.RLock()
	nx := ix.cloneLocked()
	ix.mu.RUnlock()
	nx.owned = nil // nothing is changed but the parameters
	nx.params.Semantic = w
	return nx
}

// Len returns the number of live entries.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.live
}

// Get returns the live entry with this exact id, or nil.
func (ix *Index) Get(id string) *Entry {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if i, ok := ix.byID[id]; ok {
		return ix.docs[i].e
	}
	return nil
}

// scratch is per-query working memory, pooled.
type scratch struct {
	// acc holds the scores of the query being answered, stride floats
	// per document: acc[d*stride] is document d's whole-query score and,
	// for a query scored per clause (RankParams.ClauseMix), acc[d*stride+1+j]
	// its score for clause j. Keeping a document's scores side by side
	// makes each posting touch one cache line. mark has bit d set when
	// document d was touched (a bit set costs the posting loops less than
	// a list of touched documents, and the top-k selection then reads
	// the rows in document order). Both are zeroed after each query.
	acc    []float32
	mark   []uint64
	aq     analyzedQuery
	idfs   []float64
	idfsEn []float64 // idfs kept while englishIDFs' weights stand in
	credit []float64
	// Per query word (queryTerm.unit): its weight and, while one
	// document's coverage is computed, the credit of its parts and of
	// its best alternative; per term, its share of its word's parts; and
	// the sum of the words' weights (see weighUnits).
	unitW, partGot, altGot, partShare []float64
	unitTotal                         float64
	bags                              []float64 // bag scores of the first hits (bagMix), then their pair scores (pairMix)
	bagNorm                           []float64 // their length normalisation (bagMix)
	// The first hits' query-term frequencies, documents and document
	// order (hitTerms).
	hitTF          []float64
	hitDoc, hitOrd []int32
	heap           topHeap // the top-k selection's candidates
	named          []int32 // documents the query names (NameBoost)
	// The hits' Matched and Related words (matchInfo), how many of each
	// per hit, and one hit's Related words while they are gathered.
	words, rel []string
	spans      []int32
	dense      denseScratch
}

// Search returns up to limit entries ranked for query, best first, ties
// broken by ascending id. allow, when not nil, is the policy filter (SPEC
// §6: search never returns a tool outside the effective policy): entries it
// rejects are never returned. allow is called with the index read-locked,
// so it must not call back into this Index. An empty query, a query with
// no indexable term, or limit <= 0 returns nil. Queries longer than 4096
// bytes are cut. Search never fails.
func (ix *Index) Search(query string, limit int, allow func(*Entry) bool) []Scored {
	return ix.search(query, limit, allow, ix.params.Semantic > 0)
}

// search is Search with the semantic signal switched on or off.
func (ix *Index) search(query string, limit int, allow func(*Entry) bool, semantic bool) []Scored {
	if limit <= 0 || strings.TrimSpace(query) == "" {
		return nil
	}
	if len(query) > 4096 { // a query is a sentence, not a document
		query = query[:4096]
	}
	sc, _ := ix.pool.Get().(*scratch)
	if sc == nil {
		sc = &scratch{}
	}
	defer ix.pool.Put(sc)
	aq := &sc.aq
	aq.analyze(query)
	exactKey := strings.TrimSpace(query)
	if !isLowerASCII(exactKey) {
		exactKey = strings.ToLower(exactKey)
	}

	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.live == 0 {
		return nil
	}
	ix.resolve(aq)
	ix.expandLatin(aq)
	ix.expand(aq)
	ix.expandVariants(aq)
	if semantic {
		ix.expandRelated(aq)
		ix.expandQuestions(aq)
	}
	nseg := 0
	if p := ix.params.ClauseMix; p > 0 && aq.nseg > 1 {
		nseg = aq.nseg
	}
	stride := 1 + nseg
	nw := (len(ix.docs) + 63) / 64
	if len(sc.acc) < len(ix.docs)*stride || len(sc.mark) < nw {
		// Sized for the largest stride, so it is allocated once per
		// scratch (and again only when the index grows by a quarter).
		nd := len(ix.docs) + len(ix.docs)/4 + 16
		sc.acc = make([]float32, nd*(1+maxSegs))
		sc.mark = make([]uint64, (nd+63)/64)
	}
	acc, mark := sc.acc, sc.mark[:nw]
	ntouched := 0 // set once the scores are summed
	defer func() {
		// A query touches a third of the documents on average: one
		// clear of every row then costs less than one per touched row
		// (those rows cover most cache lines anyway).
		if ntouched*16 > len(ix.docs) {
			clear(acc[:len(ix.docs)*stride])
		} else {
			for wi, m := range mark {
				for ; m != 0; m &= m - 1 {
					d := wi<<6 | bits.TrailingZeros64(m)
					clear(acc[d*stride : (d+1)*stride])
				}
			}
		}
		clear(mark)
	}()

	p := &ix.params
	n := float64(ix.live)
	k1 := float32(p.K1)
	sc.idfs = slices.Grow(sc.idfs[:0], len(aq.terms))[:len(aq.terms)]
	idfs := sc.idfs
	var top float32 // best whole-query score, kept when clauses are scored
	var segMax [maxSegs]float32
	for i := range aq.terms {
		qt := &aq.terms[i]
		ti := qt.ti
		df := 0.0
		if ti != nil {
			df = float64(ti.df)
		}
		idfs[i] = math.Log(1 + (n-df+0.5)/(df+0.5))
		if ti == nil || qt.translated {
			continue
		}
		qw := qt.qw
		if qt.kind == termRelated {
			qw *= p.Semantic
		}
		if p.GenericDamp > 0 && toolVerbGroup[qt.term] == 0 {
			if ew := englishWeight(qt.term); ew < 1 {
				qw *= math.Pow(ew, p.GenericDamp)
			}
		}
		w := float32(qw * idfs[i])
		if nseg == 0 {
			scorePostings(ti.post, ix.norm, acc, mark, w, k1)
			continue
		}
		// The clauses the term is in, as offsets into a document's row.
		var cls [maxSegs]int
		ncl := 0
		for m, j := qt.segs, 0; m != 0; m, j = m>>1, j+1 {
			if m&1 != 0 {
				cls[ncl] = 1 + j
				ncl++
			}
		}
		if ncl == 1 {
			scorePostingsClause(ti.post, ix.norm, acc, mark, stride, cls[0], w, k1, &top, &segMax[cls[0]-1])
		} else {
			scorePostingsClauses(ti.post, ix.norm, acc, mark, stride, cls[:ncl], w, k1, &top, &segMax)
		}
	}
	weighUnits(sc)
	ix.denseMix(sc, acc, mark, stride)
	// The per-clause signal (RankParams.ClauseMix): entry d gains
	// mixTop × max over clauses j of seg_j(d)/segMax[j], added during the
	// top-k selection, where an entry that cannot enter the heap even
	// with the whole gain is skipped without reading its clause scores.
	var inv [maxSegs]float32
	mixTop := top * float32(p.ClauseMix)
	// invMax = 1/(the smallest clause top score): a clause's score of an
	// entry is part of its whole score s, so its gain is at most
	// mixTop·min(1, s·invMax), a bound tighter than mixTop for the many
	// entries with a small s.
	var invMax float64
	for j := 0; j < nseg; j++ {
		if segMax[j] > 0 {
			inv[j] = 1 / segMax[j]
			invMax = max(invMax, float64(inv[j]))
		}
	}
	// Operation verbs the query asks for (RankParams.VerbMismatch).
	var verbs uint16
	mismatch := float32(p.VerbMismatch)
	if mismatch > 0 && mismatch != 1 && aq.nseg <= 1 {
		verbs = aq.verbMask()
	}
	// A one-task request that names no operation at all ("a luxury hotel
	// with a spa") asks for nothing destructive either: a delete_* or
	// stop_* tool sharing its object word is the costly wrong call.
	if verbs == 0 && aq.nseg <= 1 && p.ReadWriteMismatch > 0 && p.ReadWriteMismatch < 1 {
		verbs = noVerbAsked
	}
	boost := func(id int32, b float64) {
		if b <= 0 || ix.dead[id] {
			return
		}
		mark[id>>6] |= 1 << (id & 63)
		acc[int(id)*stride] += float32(b)
	}
	for _, id := range ix.exact[exactKey] {
		boost(id, p.ExactBoost)
	}
	sc.named = sc.named[:0]
	ix.namedDocs(aq, func(ids []int32) {
		for _, id := range ids {
			if !ix.dead[id] && !slices.Contains(sc.named, id) {
				sc.named = append(sc.named, id)
				boost(id, p.NameBoost)
			}
		}
	})

	if p.ServerNamed > 0 {
		ix.serverNamed(aq, acc, mark, stride, float32(1+p.ServerNamed))
	}

	// Top-k selection with a bounded min-heap; allow is called only for
	// candidates that would enter the heap, and the entry itself (another
	// cache line) is read only for a score that can enter it.
	// A single-task query selects coverageDepth candidates for the
	// coverage factor (RankParams.Coverage), then keeps limit of them.
	want := limit
	cover := p.Coverage > 0 && aq.nseg <= 1
	if cover || p.Bag > 0 {
		limit = max(limit, coverageDepth)
	}
	for _, m := range mark {
		ntouched += bits.OnesCount64(m)
	}
	h := sc.heap[:0]
	// gate: once the heap is full, an entry whose whole-query score is
	// below it cannot enter (the exact tests below say the same for the
	// entries it lets through), so most entries cost one load and one
	// comparison. It is the score s at which s + mixTop·min(1, s·invMax)
	// (the largest clause gain, see above) reaches the worst kept score,
	// lowered by 1e-5 against rounding; without clauses the worst kept
	// score itself, when a verb mismatch can only lower a score.
	var gate float32
	canGate := nseg > 0 || verbs == 0 || (mismatch <= 1 && p.ReadWriteMismatch <= 1)
	gm := float64(mixTop) * (1 + 1e-6)
	gr := 1 / (1 + gm*invMax)
	setGate := func() {
		if len(h) < limit || !canGate {
			return
		}
		t := h[0].s
		if nseg > 0 {
			if t2 := t * gr; invMax == 0 || t2*invMax < 1 {
				t = t2
			} else {
				t -= gm
			}
		}
		gate = float32(max(t*(1-1e-5), 0))
	}
	for wi, m := range mark {
		for ; m != 0; m &= m - 1 {
			id := int32(wi<<6 | bits.TrailingZeros64(m))
			at := int(id) * stride
			if acc[at] < gate {
				continue
			}
			row := acc[at : at+stride]
			s := float64(row[0])
			if s <= 0 {
				continue
			}
			seg := int8(-1)
			var near uint8
			if nseg > 0 {
				if len(h) == limit && s+float64(mixTop)*min(1, s*invMax)*(1+1e-6) < h[0].s {
					continue
				}
				var best float32
				for j, v := range row[1:] {
					x := v * inv[j]
					if x > best {
						best, seg = x, int8(j)
					}
					if x >= diverseCover {
						near |= 1 << j
					}
				}
				s = float64(row[0] + mixTop*best)
				if best < diverseShare {
					seg = -1
				}
			}
			if verbs == noVerbAsked {
				if destructiveVerb(ix.verb[id]) {
					s *= p.ReadWriteMismatch
				}
			} else if verbs != 0 && verbMismatch(ix.verb[id], verbs) {
				if verbs&^readVerbs == 0 && ix.verb[id] > readVerbGroups {
					s *= p.ReadWriteMismatch
				} else {
					s *= float64(mismatch)
				}
			}
			if len(h) == limit && s < h[0].s {
				continue
			}
			e := ix.docs[id].e
			if len(h) == limit && !better(s, e, h[0].s, ix.docs[h[0].doc].e) {
				continue
			}
			if allow != nil && !allow(e) {
				continue
			}
			if len(h) < limit {
				h = h.push(cand{s: s, doc: id, seg: seg, near: near}, ix.docs)
			} else {
				h[0] = cand{s: s, doc: id, seg: seg, near: near}
				h.down(0, ix.docs)
			}
			setGate()
		}
	}
	out := make([]Scored, len(h))
	for i, c := range h {
		out[i] = Scored{Entry: ix.docs[c.doc].e, Score: c.s, doc: c.doc, seg: c.seg, near: c.near}
	}
	sc.heap = h[:0]
	ix.hitTerms(out, sc)
	if cover {
		if p.EnglishPrior > 0 {
			englishIDFs(sc, p.EnglishPrior)
		}
		for i := range out {
			c, _ := ix.coverage(i, sc)
			c = sc.dense.coverage(out[i].doc, c)
			out[i].Score *= math.Pow(0.2+c, p.Coverage)
		}
		if p.NameCover > 0 {
			ix.siblingNameCover(out, &sc.aq, p.NameCover)
		}
		if p.EnglishPrior > 0 {
			plainIDFs(sc)
		}
	}
	if p.Bag > 0 && len(out) > 1 {
		ix.bagMix(out, sc)
	}
	if p.Pairs > 0 && len(out) > 1 {
		ix.pairMix(out, sc)
	}
	if d := p.Deprecated; d > 0 && d != 1 {
		for i := range out {
			if ix.docs[out[i].doc].deprecated {
				out[i].Score *= d
			}
		}
	}
	slices.SortFunc(out, func(a, b Scored) int { // sort.Slice allocated twice
		if better(a.Score, a.Entry, b.Score, b.Entry) {
			return -1
		}
		if better(b.Score, b.Entry, a.Score, a.Entry) {
			return 1
		}
		return 0
	})
	if nseg > 1 && p.Diverse > 0 {
		diversify(out, sc, min(len(out), want), p.Diverse, p.DiverseTwin)
	}
	out = out[:min(len(out), want)]
	// The hits' Matched and Related words are gathered in sc.words and
	// then share one allocation (a hit's lists are capped at their length).
	sc.words, sc.spans = sc.words[:0], sc.spans[:0]
	for i := range out {
		m, r := ix.matchInfo(&out[i], sc, slices.Contains(sc.named, out[i].doc) || ix.isExact(out[i].doc, exactKey))
		sc.spans = append(sc.spans, int32(m), int32(r))
	}
	if len(sc.words) > 0 {
		words := slices.Clone(sc.words)
		at := 0
		for i := range out {
			if m := int(sc.spans[2*i]); m > 0 {
				out[i].Matched = words[at : at+m : at+m]
				at += m
			}
			if r := int(sc.spans[2*i+1]); r > 0 {
				out[i].Related = words[at : at+r : at+r]
				at += r
			}
		}
	}
	clear(sc.words) // the scratch is pooled: drop the strings
	return out
}

// pseudoTF returns a posting's BM25F pseudo frequency Σ_f norm_f·tf_f
// (summed in field order, as the rankings were tuned with).
func pseudoTF(nm *[numFields]float32, tf *[numFields]uint16) float32 {
	return nm[0]*float32(tf[0]) + nm[1]*float32(tf[1]) + nm[2]*float32(tf[2]) + nm[3]*float32(tf[3]) + nm[4]*float32(tf[4])
}

// scorePostings adds one query term's BM25F contribution w·tf~/(k1+tf~)
// to acc[doc] for each posting of post with a positive pseudo frequency
// (a tombstoned document's norm row is zero) and sets the document's bit
// in mark. A small function of its own, so the compiler keeps the loop in
// registers.
func scorePostings(post []posting, norm [][numFields]float32, acc []float32, mark []uint64, w, k1 float32) {
	for i := range post {
		pst := &post[i]
		d := uint32(pst.doc)
		tf := pseudoTF(&norm[d], &pst.tf)
		if tf <= 0 {
			continue // a zero-weight field or a tombstone: not touched
		}
		mark[d>>6] |= 1 << (d & 63)
		acc[d] += w * tf / (k1 + tf)
	}
}

// scorePostingsClauses is scorePostings for a query scored per clause:
// acc has stride floats per document (whole query, then each clause), the
// contribution also goes to the row offsets in cls (the term's clauses),
// and the best whole-query score and each clause's best score are kept in
// top and segMax (scores only grow, so the running maxima are the final
// ones).
func scorePostingsClauses(post []posting, norm [][numFields]float32, acc []float32, mark []uint64, stride int, cls []int, w, k1 float32, top *float32, segMax *[maxSegs]float32) {
	best := *top
	sm := *segMax
	for i := range post {
		pst := &post[i]
		d := uint32(pst.doc)
		tf := pseudoTF(&norm[d], &pst.tf)
		if tf <= 0 {
			continue
		}
		mark[d>>6] |= 1 << (d & 63)
		at := int(d) * stride
		row := acc[at : at+stride : at+stride]
		c := w * tf / (k1 + tf)
		row[0] += c
		// Scores are positive and finite: a comparison is max (and
		// cheaper than the builtin, which handles NaN and signed zeros).
		if row[0] > best {
			best = row[0]
		}
		for _, o := range cls {
			row[o] += c
			if row[o] > sm[o-1] {
				sm[o-1] = row[o]
			}
		}
	}
	*top = best
	*segMax = sm
}

// scorePostingsClause is scorePostingsClauses for a term of one clause
// (most terms): its row offset is o and that clause's best score *segMax.
func scorePostingsClause(post []posting, norm [][numFields]float32, acc []float32, mark []uint64, stride, o int, w, k1 float32, top, segMax *float32) {
	best, sm := *top, *segMax
	for i := range post {
		pst := &post[i]
		d := uint32(pst.doc)
		tf := pseudoTF(&norm[d], &pst.tf)
		if tf <= 0 {
			continue
		}
		mark[d>>6] |= 1 << (d & 63)
		at := int(d) * stride
		c := w * tf / (k1 + tf)
		s0 := acc[at] + c
		acc[at] = s0
		if s0 > best {
			best = s0
		}
		so := acc[at+o] + c
		acc[at+o] = so
		if so > sm {
			sm = so
		}
	}
	*top, *segMax = best, sm
}

// Every byte's low bit and every byte's top bit of a uint64.
const (
	loBits = 0x0101010101010101
	hiBits = 0x8080808080808080
)

// toLower is strings.ToLower(s), returning s itself, after one pass of
// 8 bytes at a time, when s has no upper-case letter (the usual ids and
// names; strings.ToLower checks a byte at a time).
func toLower(s string) string {
	if isLowerASCII(s) {
		return s
	}
	return strings.ToLower(s)
}

// isLowerASCII reports whether s has no upper-case ASCII letter and no
// non-ASCII byte (then strings.ToLower(s) == s).
func isLowerASCII(s string) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 { // 8 bytes at a time
		x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		if x&hiBits != 0 {
			return false // a non-ASCII byte
		}
		// With every byte below 0x80 the sums carry into no other byte:
		// a byte's top bit is set in ge by c >= 'A', in gt by c > 'Z'.
		ge := x + (0x80-'A')*loBits
		gt := x + (0x80-'Z'-1)*loBits
		if ge&^gt&hiBits != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || c >= 'A' && c <= 'Z' {
			return false
		}
	}
	return true
}

// Credit a derived term gives its query word in the match strength.
var derivedCredit = [...]float64{termWord: 1, termFuzzy: 0.8, termCompound: 0.8, termRelated: 0.5, termVariant: 0.8}

// lowerBound returns the index of the first posting of post (sorted by
// document) whose document is not below doc (len(post) when none is).
func lowerBound(post []posting, doc int32) int {
	lo, hi := 0, len(post)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if post[m].doc < doc {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// Plain BM25 parameters of the bag score (RankParams.Bag), those of the
// bench's baseline (shared/bench/README.md).
const bagK1, bagB = 1.2, 0.75

// bagMix adds the bag score (RankParams.Bag) to the first hits in out:
// plain BM25 over one bag of each entry's name, description, server and
// parameter names (the index's terms, without field weights), from the
// query's own words and the forms derived from them (misspelling repairs,
// compounds, word forms; not the semantic table's related words). Field-weighted BM25F and the bag disagree on
// near-identical tools (calculate_bmi and calculate_BMI, air_quality and
// get_air_quality_index), where the bag's single length normalisation
// and its parameter names carry what the fields split up. For a query of
// several clauses an entry's bag share is the mean of its share of the
// whole query's best bag score and its best share of one clause's, so
// the bag does not undo the per-clause signal (RankParams.ClauseMix).
// It reads the frequencies hitTerms left in sc.
func (ix *Index) bagMix(out []Scored, sc *scratch) {
	aq, idfs := &sc.aq, sc.idfs
	var sum float64
	for f := fieldName; f <= fieldParam; f++ {
		sum += ix.sumLen[f]
	}
	avg := max(sum/float64(max(ix.live, 1)), 1)
	// Columns per hit: the whole query, then each clause.
	cols := 1
	if aq.nseg > 1 {
		cols += aq.nseg
	}
	sc.bags = slices.Grow(sc.bags[:0], len(out)*cols)[:len(out)*cols]
	bags := sc.bags
	clear(bags)
	var top float64
	var bmax [1 + maxSegs]float64
	sc.bagNorm = slices.Grow(sc.bagNorm[:0], len(out))[:len(out)]
	norm := sc.bagNorm
	for i := range out {
		top = max(top, out[i].Score)
		d := &ix.docs[out[i].doc]
		l := float64(d.lens[fieldName] + d.lens[fieldDesc] + d.lens[fieldUpstream] + d.lens[fieldParam])
		norm[i] = bagK1 * (1 - bagB + bagB*l/avg)
	}
	nt := len(aq.terms)
	for j := range aq.terms {
		qt := &aq.terms[j]
		if (qt.kind != termWord && (qt.kind != termCompound || qt.src2 == 0)) || qt.ti == nil {
			continue
		}
		w := qt.qw * idfs[j] * (bagK1 + 1)
		for i := range out {
			tf := sc.hitTF[i*nt+j]
			if tf <= 0 { // not in the entry (-1), or only in fields the bag leaves out
				continue
			}
			v := w * tf / (tf + norm[i])
			row := bags[i*cols : (i+1)*cols]
			row[0] += v
			for m, c := qt.segs, 1; m != 0 && cols > 1; m, c = m>>1, c+1 {
				if m&1 != 0 {
					row[c] += v
				}
			}
		}
	}
	for i := range out {
		for c, v := range bags[i*cols : (i+1)*cols] {
			bmax[c] = max(bmax[c], v)
		}
	}
	if bmax[0] <= 0 {
		return
	}
	addShares(out, bags, cols, &bmax, ix.params.Bag*top)
}

// addShares adds w × share to each hit of out, its share being its
// score in vals (cols per hit: the whole query, then each clause) over
// the best (bmax); with clauses, the mean of the whole-query share and
// its best clause share (bagMix, pairMix).
func addShares(out []Scored, vals []float64, cols int, bmax *[1 + maxSegs]float64, w float64) {
	for i := range out {
		row := vals[i*cols : (i+1)*cols]
		b := row[0] / bmax[0]
		if cols > 1 {
			var cl float64
			for c := 1; c < cols; c++ {
				if bmax[c] > 0 {
					cl = max(cl, row[c]/bmax[c])
				}
			}
			b = (b + cl) / 2
		}
		out[i].Score += w * b
	}
}

// hitTerms fills sc.hitTF for the hits in out: sc.hitTF[i*len(terms)+j]
// is -1 when the entry of hit i does not have query term j, else the
// term's frequency in its name, description, server and parameter names
// (the bag's fields, bagMix); sc.hitDoc[i] is hit i's document. Each term's
// posting list is searched once over the hits in document order, each
// search starting where the previous one ended; coverage, bagMix and
// matchInfo then read the table instead of searching per hit and term.
func (ix *Index) hitTerms(out []Scored, sc *scratch) {
	terms := sc.aq.terms
	nt := len(terms)
	sc.hitTF = slices.Grow(sc.hitTF[:0], len(out)*nt)[:len(out)*nt]
	tfs := sc.hitTF
	for k := range tfs {
		tfs[k] = -1
	}
	sc.hitDoc = sc.hitDoc[:0]
	// The hits in document order (few: insertion sort).
	sc.hitOrd = sc.hitOrd[:0]
	for i := range out {
		sc.hitDoc = append(sc.hitDoc, out[i].doc)
		j := len(sc.hitOrd)
		sc.hitOrd = append(sc.hitOrd, int32(i))
		for ; j > 0 && out[sc.hitOrd[j-1]].doc > out[i].doc; j-- {
			sc.hitOrd[j] = sc.hitOrd[j-1]
		}
		sc.hitOrd[j] = int32(i)
	}
	for j := range terms {
		if terms[j].ti == nil {
			continue
		}
		post := terms[j].ti.post
		for _, i := range sc.hitOrd {
			k := lowerBound(post, out[i].doc)
			if k == len(post) {
				break
			}
			post = post[k:]
			if post[0].doc != out[i].doc {
				continue
			}
			tf := &post[0].tf
			tfs[int(i)*nt+j] = float64(tf[fieldName]) + float64(tf[fieldDesc]) + float64(tf[fieldUpstream]) + float64(tf[fieldParam])
		}
	}
}

// pairHash hashes the pair of adjacent terms a b (FNV-1a, 32 bits; a
// collision only adds a small score to one of the first hits).
func pairHash(a, b string) uint32 { return pairHashFrom(fnv32(a), b) }

// pairMix adds the word-pair score (RankParams.Pairs) to the first hits
// in out: for each pair of adjacent query terms (analyzedQuery.seq) an
// entry whose name or description has the two terms side by side gains
// idf(a)+idf(b). For a query of several clauses an entry's share is the
// mean of its share of the whole query's best pair score and its best
// share of one clause's (a pair is in the clauses both its terms are in),
// as in bagMix. Cost per hit: one merge walk of the query's sorted pair
// hashes and the entry's.
func (ix *Index) pairMix(out []Scored, sc *scratch) {
	aq, idfs := &sc.aq, sc.idfs
	if len(aq.seq) < 2 {
		return
	}
	// The query's distinct pairs, sorted by hash (insertion sort: at most
	// maxSeq-1, mostly a handful), so each hit's sorted hashes are matched
	// in one merge walk.
	var pbuf [maxSeq]queryPair
	ps := pbuf[:0]
	for k := 1; k < len(aq.seq); k++ {
		a, b := &aq.terms[aq.seq[k-1]], &aq.terms[aq.seq[k]]
		if a == b || a.ti == nil || b.ti == nil {
			continue
		}
		p := queryPair{pairHash(a.term, b.term), a.segs & b.segs, idfs[aq.seq[k-1]] + idfs[aq.seq[k]]}
		j := len(ps)
		ps = append(ps, p)
		for ; j > 0 && ps[j-1].h > p.h; j-- {
			ps[j] = ps[j-1]
		}
		if j > 0 && ps[j-1].h == p.h { // a repeated pair counts once
			copy(ps[j:], ps[j+1:])
			ps = ps[:len(ps)-1]
			continue
		}
		ps[j] = p
	}
	if len(ps) == 0 {
		return
	}
	// Columns per hit: the whole query, then each clause.
	cols := 1
	if aq.nseg > 1 {
		cols += aq.nseg
	}
	sc.bags = slices.Grow(sc.bags[:0], len(out)*cols)[:len(out)*cols]
	vals := sc.bags
	clear(vals)
	var bmax [1 + maxSegs]float64
	var top float64
	for i := range out {
		top = max(top, out[i].Score)
		dp := ix.docs[out[i].doc].pairs
		if len(dp) == 0 {
			continue
		}
		row := vals[i*cols : (i+1)*cols]
		for k, m := 0, 0; k < len(ps) && m < len(dp); {
			switch {
			case ps[k].h < dp[m]:
				k++
			case ps[k].h > dp[m]:
				m++
			default:
				row[0] += ps[k].w
				for sg, c := ps[k].segs, 1; sg != 0 && cols > 1; sg, c = sg>>1, c+1 {
					if sg&1 != 0 {
						row[c] += ps[k].w
					}
				}
				k++
				m++
			}
		}
		for c, v := range row {
			bmax[c] = max(bmax[c], v)
		}
	}
	if bmax[0] <= 0 {
		return
	}
	addShares(out, vals, cols, &bmax, ix.params.Pairs*top)
}

// queryPair is a pair of adjacent query terms (pairMix): its hash, the
// clauses it is in and its weight idf(a)+idf(b).
type queryPair struct {
	h    uint32
	segs uint8
	w    float64
}

// coverageDepth is how many first hits of a single-task query the
// coverage factor ranks again (RankParams.Coverage).
const coverageDepth = 20

// coverage returns the share of the query that document doc matches
// (Scored.Strength before the named-entry rule) and how many query terms
// it matches, leaving each base term's credit in sc.credit (needs
// weighUnits). The share is idf-weighted over the query's words
// (queryTerm.unit), each counted once however many terms it gave: a word
// is matched by any one of its alternatives (创建 by "create" or by the
// bigram itself; GitHub by "github"), or in the weighted share of its
// parts it has (getURLs: get, url); a term matched through a misspelling
// repair, compound or word form counts derivedCredit. An identifier whole
// ("create_issue") counts only when matched (its parts are words too), and
// so does a CJK character standing alone (unitOptional). It allocates
// nothing.
func (ix *Index) coverage(hit int, sc *scratch) (float64, int) {
	aq, idfs := &sc.aq, sc.idfs
	nt := len(aq.terms)
	sc.credit = slices.Grow(sc.credit[:0], nt)[:nt]
	credit := sc.credit
	clear(credit)
	tfs := sc.hitTF[hit*nt : (hit+1)*nt]
	for i := range aq.terms { // base terms first: derived ones only for words not matched
		if qt := &aq.terms[i]; qt.kind == termWord && tfs[i] >= 0 {
			credit[qt.src] = 1
		}
	}
	for i := range aq.terms {
		qt := &aq.terms[i]
		if qt.kind == termWord || (credit[qt.src] >= derivedCredit[qt.kind] && (qt.src2 == 0 || credit[qt.src2-1] >= derivedCredit[qt.kind])) || tfs[i] < 0 {
			continue
		}
		c := derivedCredit[qt.kind]
		if qt.pair > 0 && tfs[qt.pair-1] < 0 {
			// One half of a split word without the other: its share of
			// the word ("zip" of zipcode in a compress tool).
			c *= idfs[i] / (idfs[i] + idfs[qt.pair-1])
		}
		credit[qt.src] = max(credit[qt.src], c)
		if qt.src2 > 0 {
			credit[qt.src2-1] = max(credit[qt.src2-1], derivedCredit[qt.kind])
		}
	}
	partGot, altGot := sc.partGot, sc.altGot
	clear(partGot)
	clear(altGot)
	var got float64
	total := sc.unitTotal
	nm := 0
	for i := range aq.terms {
		qt := &aq.terms[i]
		if credit[i] == 0 || qt.kind != termWord {
			continue
		}
		if qt.word != "" {
			nm++
		}
		switch u := qt.unit; {
		case u >= 0 && qt.alt:
			altGot[u] = max(altGot[u], credit[i])
		case u >= 0:
			partGot[u] += sc.partShare[i] * credit[i]
		case qt.whole || qt.opt:
			w := qt.qw * idfs[i]
			total += w
			got += w * credit[i]
		}
	}
	for u, w := range sc.unitW {
		got += w * max(altGot[u], partGot[u])
	}
	if total == 0 {
		return 0, nm
	}
	return got / total, nm
}

// weighUnits sets the weights of the query's words (queryTerm.unit) in
// sc from the terms' idfs: a word weighs as much as its cheapest spelling
// in the index, min(Σ qw·idf of its parts, qw·idf of each alternative),
// so 创建 weighs like "create" (not like create + found + establish + the
// unknown bigram), GitHub like "github" (not github + git + hub), and a
// word no spelling of which is in the index like an unknown word.
func weighUnits(sc *scratch) {
	aq := &sc.aq
	nu := aq.nunits
	grow := func(b []float64, n int) []float64 { return slices.Grow(b[:0], n)[:n] }
	sc.unitW, sc.partGot, sc.altGot = grow(sc.unitW, nu), grow(sc.partGot, nu), grow(sc.altGot, nu)
	sc.partShare = grow(sc.partShare, len(aq.terms))
	partW := sc.partGot // the parts' weight, per word, until the shares are known
	for u := range sc.unitW {
		sc.unitW[u], partW[u] = math.Inf(1), 0
	}
	for i := range aq.terms {
		qt := &aq.terms[i]
		if qt.kind != termWord || qt.unit < 0 {
			continue
		}
		w := qt.qw * sc.idfs[i]
		if qt.alt {
			sc.unitW[qt.unit] = min(sc.unitW[qt.unit], w)
		} else {
			partW[qt.unit] += w
		}
	}
	for i := range aq.terms {
		sc.partShare[i] = 0
		if qt := &aq.terms[i]; qt.kind == termWord && qt.unit >= 0 && !qt.alt && partW[qt.unit] > 0 {
			sc.partShare[i] = qt.qw * sc.idfs[i] / partW[qt.unit]
		}
	}
	sc.unitTotal = 0
	for u := range sc.unitW {
		if partW[u] > 0 {
			sc.unitW[u] = min(sc.unitW[u], partW[u])
		}
		if math.IsInf(sc.unitW[u], 1) {
			sc.unitW[u] = 0
		}
		sc.unitTotal += sc.unitW[u]
	}
}

// matchInfo computes s.Strength (see Scored) for one hit, from the query
// analysed in sc, and appends its Matched words and then its Related words
// (see Scored) to sc.words, returning how many of each. Identifier wholes
// ("create_issue") count only when matched: their parts are query terms
// too.
func (ix *Index) matchInfo(s *Scored, sc *scratch, named bool) (matched, related int) {
	aq := &sc.aq
	share, nm := ix.coverage(slices.Index(sc.hitDoc, s.doc), sc)
	credit := sc.credit
	if nm > 0 {
		from := len(sc.words)
		sc.rel = sc.rel[:0]
		for i := range aq.terms {
			qt := &aq.terms[i]
			if qt.kind != termWord || credit[i] == 0 || qt.word == "" || slices.Contains(sc.words[from:], qt.word) || slices.Contains(sc.rel, qt.word) {
				continue
			}
			if credit[i] > derivedCredit[termRelated] {
				sc.words = append(sc.words, qt.word)
			} else {
				sc.rel = append(sc.rel, qt.word)
			}
		}
		matched, related = len(sc.words)-from, len(sc.rel)
		sc.words = append(sc.words, sc.rel...)
		clear(sc.rel)
	}
	s.Strength = share
	if named {
		s.Strength = 1
	} else if share >= strongStrength && !ix.strongFit(s.doc, sc) {
		s.Strength = belowStrong
	}
	return matched, related
}

// Bounds of the match strength's calibration (strongFit).
const (
	// genericWeight: a query word whose englishWeight is below it is
	// generic (look, up, fact, today, best) unless it is a word of the
	// hit's name.
	genericWeight = 0.93
	// strongWords: a hit matching this many informative query words
	// restates the request and may be strong whatever its name.
	strongWords = 3
	// strongNameCover: the least share of the hit's name words (its
	// operation verb left out) the query must have for a hit matching
	// fewer informative words to be strong.
	strongNameCover = 0.6
	// strongDescCover: the least share of the non-generic terms of the
	// hit's description the query must have, failing the name.
	strongDescCover = 0.6
	// belowStrong is the strength of a hit strongFit turns down: the top
	// of the partial band.
	belowStrong = strongStrength - 0.01
)

// strongFit reports whether hit doc, whose share of the query is in the
// strong band, fits the request as well as that says (matchInfo left the
// hit's word credits in sc.credit). A share alone over-rates two kinds of
// hit: one that matches only generic words ("look" in "a file to look
// in", "up" in "up to ten links": never strong), and one that matches the
// one informative word of a short request as a side word of its own:
// "tell me the weather" and get_activity_weather (the weather of a
// recorded workout) or a space-weather tool. So it is strong only when it
// matches strongWords informative words, or the query has at least
// strongNameCover of its name's words: get_weather for "tell me the
// weather", not get_activity_weather.
func (ix *Index) strongFit(doc int32, sc *scratch) bool {
	aq := &sc.aq
	name := ix.docNameWords(doc)
	informative := 0
	for i := range aq.terms {
		qt := &aq.terms[i]
		if qt.kind != termWord || sc.credit[i] <= derivedCredit[termRelated] || qt.qw < 1 || qt.whole {
			continue
		}
		if englishWeight(qt.term) >= genericWeight || slices.Contains(name, qt.term) {
			informative++
		}
	}
	if informative == 0 {
		return false
	}
	if informative >= strongWords || ix.nameCovered(doc, name, sc) {
		return true
	}
	// Or the query has much of what the description says: its terms
	// that are not generic English ("List the repositories of a user"
	// for "the user's repositories", not "Get the weather conditions
	// recorded during a workout activity" for "tell me the weather").
	all, covered := 0, 0
	for _, tt := range ix.docs[doc].terms {
		if tt.tf[fieldDesc] == 0 || englishWeight(tt.term) < genericWeight {
			continue
		}
		all++
		if j, ok := aq.seen[tt.term]; ok && aq.terms[j].kind != termRelated && !aq.terms[j].translated {
			covered++
		}
	}
	return all > 0 && float64(covered) >= strongDescCover*float64(all)
}

// nameCovered reports whether the query has strongNameCover of hit doc's
// name words (name: docNameWords, the operation verbs left out, so that
// "get the weather" does not make get_activity_weather strong). A verb
// of the name counts like its other words when the query has it as an
// informative word ("read a file": read_text_file's read, text, file has
// two of three; read_comments' read, comment one of two), and a name of
// verbs only is judged by them (write_query, whose write and query are
// both verbs, has one of two for "write a file"; a tool named search has
// all of its name for "search the web"). A name with no word at all
// passes.
func (ix *Index) nameCovered(doc int32, name []string, sc *scratch) bool {
	aq := &sc.aq
	if len(name) > 0 && coveredShare(name, aq) >= strongNameCover {
		return true
	}
	var buf [16]string
	all := nameWords(ix.docs[doc].e.Name, buf[:0], true)
	if len(all) == 0 {
		return true
	}
	if len(all) == len(name) {
		return false
	}
	if len(name) > 0 {
		verb := false
		for _, t := range all {
			if slices.Contains(name, t) {
				continue
			}
			if j, ok := aq.seen[t]; ok && aq.terms[j].kind == termWord && sc.credit[j] > derivedCredit[termRelated] && englishWeight(t) >= genericWeight {
				verb = true
				break
			}
		}
		if !verb {
			return false
		}
	}
	return coveredShare(all, aq) >= strongNameCover
}

// nameWords appends to buf the distinct terms of a tool name's words
// (camelCase and snake_case split, stopwords left out, and operation verbs
// unless verbs is set), at most cap(buf) of them.
func nameWords(name string, buf []string, verbs bool) []string {
	forEachRun(name, func(run string) {
		splitCamel(run, func(p string) {
			var lb [32]byte
			b := lowerInto(lb[:], p)
			if len(b) < 3 || b == nil || !isASCIILetters(string(b)) || isStopword(string(b)) {
				return
			}
			t := stem(string(b))
			if (verbs || toolVerbGroup[t] == 0) && !slices.Contains(buf, t) && len(buf) < cap(buf) {
				buf = append(buf, t)
			}
		})
	})
	return buf
}

// coveredShare returns the share of terms the query has (not through the
// semantic table); 0 for none.
func coveredShare(terms []string, aq *analyzedQuery) float64 {
	if len(terms) == 0 {
		return 0
	}
	covered := 0
	for _, t := range terms {
		if j, ok := aq.seen[t]; ok && aq.terms[j].kind != termRelated && !aq.terms[j].translated {
			covered++
		}
	}
	return float64(covered) / float64(len(terms))
}

// siblingNameCover applies RankParams.NameCover (weight w) to the hits in
// out.
func (ix *Index) siblingNameCover(out []Scored, aq *analyzedQuery, w float64) {
	var nc [coverageDepth]float64
	n := min(len(out), coverageDepth)
	for i := 0; i < n; i++ {
		nc[i] = ix.nameCover(out[i].doc, aq)
	}
	for i := 0; i < n; i++ {
		up := out[i].Entry.Upstream
		best, siblings := nc[i], 0
		for j := 0; j < n; j++ {
			if j != i && out[j].Entry.Upstream == up {
				best = max(best, nc[j])
				siblings++
			}
		}
		if siblings > 0 {
			out[i].Score *= 1 - w*(best-nc[i])
		}
	}
}

// nameCover returns the share of the words of doc's name that the query
// has (RankParams.NameCover).
func (ix *Index) nameCover(doc int32, aq *analyzedQuery) float64 {
	return coveredShare(ix.docNameWords(doc), aq)
}

// docNameWords returns nameWords of doc's name, made once per index and
// document (the first hits of every query read them).
func (ix *Index) docNameWords(doc int32) []string {
	if w, ok := ix.nameWordsCache.Load(doc); ok {
		return w.([]string)
	}
	w := slices.Clip(nameWords(ix.docs[doc].e.Name, make([]string, 0, 16), false))
	ix.nameWordsCache.Store(doc, w)
	return w
}

// isExact reports whether doc is an exact match of the whole query.
func (ix *Index) isExact(doc int32, key string) bool {
	return slices.Contains(ix.exact[key], doc)
}

// better reports whether (s1, e1) ranks before (s2, e2): higher score, then
// smaller id.
func better(s1 float64, e1 *Entry, s2 float64, e2 *Entry) bool {
	if s1 != s2 {
		return s1 > s2
	}
	return e1.ID < e2.ID
}

// cand is a candidate of the top-k selection: its score and document.
// No pointer: moving it in the heap needs no write barrier.
type cand struct {
	s   float64
	doc int32
	seg int8 // the clause the entry's clause gain came from (-1: none)
	// near is the mask of the clauses where the entry has at least
	// diverseCover of the clause's top score (diversify).
	near uint8
}

// topHeap is a min-heap on rank (better, with the entries of docs): h[0]
// is the worst kept candidate.
type topHeap []cand

// before reports whether a ranks before b.
func (a cand) before(b cand, docs []idxDoc) bool {
	if a.s != b.s {
		return a.s > b.s
	}
	return docs[a.doc].e.ID < docs[b.doc].e.ID
}

func (h topHeap) push(x cand, docs []idxDoc) topHeap {
	h = append(h, x)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h[p].before(h[i], docs) {
			break
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
	return h
}

func (h topHeap) down(i int, docs []idxDoc) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && h[l].before(h[r], docs) {
			m = r
		}
		if !h[i].before(h[m], docs) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// DefaultSemanticWeight is the weight of the semantic signal when it is
// switched on ([tool_search] semantic = true).
const DefaultSemanticWeight = 0.4 // tuned on shared/bench: docs/design.md "Search"

// Bounds of diversify (RankParams.Diverse):
const (
	// diverseShare: a hit with at least this share of a clause's top
	// score is that clause's own best (Scored.seg).
	diverseShare float32 = 0.999
	// diverseCover: a placed hit with at least this share of a clause's
	// top score already serves that clause (Scored.near).
	diverseCover float32 = 0.8
	// diverseTasks: the fewest task clauses with a best hit among the
	// hits. Two clauses are often one task asked twice ("the BMI of John
	// … and of Sarah"), where each clause's best is a near-twin of the
	// other's; three or more are separate tasks.
	diverseTasks = 3
)

// diversify reorders the first n of out (sorted best first) for a query
// of several task clauses: each place goes to the best hit not yet
// placed, unless the hit there serves no clause that is still
// unserved and a clause's own best hit for an unserved task clause
// scores at least minRatio × its score; then that one moves up. A clause
// is served once a placed hit has diverseCover of its top score. A hit
// that repeats the hits above it (scratch.novelty 0: it matches no query
// word they do not) gives way already at twinRatio × its score
// (RankParams.DiverseTwin). Once
// every task clause of the hits is served, the rest keep their order.
func diversify(out []Scored, sc *scratch, n int, minRatio, twinRatio float64) {
	aq := &sc.aq
	var served, present uint16
	for i := range out {
		if j := out[i].seg; j >= 0 && aq.task[j] {
			present |= 1 << j
		}
	}
	if bits.OnesCount16(present) < diverseTasks {
		return
	}
	for i := 0; i < n; i++ {
		pick := i
		if served&present != present {
			if j := out[i].seg; j < 0 || !aq.task[j] || served&(1<<j) != 0 {
				ratio := minRatio
				if twinRatio > 0 && twinRatio < ratio && sc.novelty(out, i, i) == 0 {
					ratio = twinRatio
				}
				for k := i + 1; k < len(out) && out[k].Score >= ratio*out[i].Score; k++ {
					if j := out[k].seg; j >= 0 && aq.task[j] && served&(1<<j) == 0 {
						pick = k
						break
					}
				}
			}
		}
		if pick != i {
			x := out[pick]
			copy(out[i+1:pick+1], out[i:pick])
			out[i] = x
		}
		served |= uint16(out[i].near)
		if j := out[i].seg; j >= 0 {
			served |= 1 << j
		}
	}
}

// novelty returns the share (0..1, by idf × query weight) of the query
// terms hit k of out matches that none of the hits placed before place
// (out[:place]) matches (sc.hitTF); -1 when unknown. 0: to the request,
// the hit repeats tools already shown (getRevPar after calculateRevPAR:
// the same words of the same task), whatever its score.
func (sc *scratch) novelty(out []Scored, k, place int) float64 {
	nt := len(sc.aq.terms)
	row := func(doc int32) int {
		for r, d := range sc.hitDoc {
			if d == doc {
				return r
			}
		}
		return -1
	}
	rk := row(out[k].doc)
	if rk < 0 || nt == 0 {
		return -1
	}
	var all, fresh float64
	for j, tf := range sc.hitTF[rk*nt : (rk+1)*nt] {
		qt := &sc.aq.terms[j]
		if tf < 0 || qt.ti == nil || qt.kind != termWord {
			continue
		}
		w := qt.qw * sc.idfs[j]
		all += w
		found := false
		for p := 0; p < place && !found; p++ {
			if rp := row(out[p].doc); rp >= 0 && sc.hitTF[rp*nt+j] >= 0 {
				found = true
			}
		}
		if !found {
			fresh += w
		}
	}
	if all == 0 {
		return -1
	}
	return fresh / all
}

// serverNamed multiplies by f the whole-query scores of the touched tools
// of every upstream whose name is one of the request's words, once per
// upstream however often it is named (RankParams.ServerNamed). The clause
// scores stay as they are: a clause's share of its best stays ≤ 1, which
// the top-k selection's gate relies on.
func (ix *Index) serverNamed(aq *analyzedQuery, acc []float32, mark []uint64, stride int, f float32) {
	var done []string
	for i := range aq.terms {
		qt := &aq.terms[i]
		if qt.kind != termWord || qt.src != i || qt.whole || qt.word == "" {
			continue
		}
		up := strings.ToLower(qt.word)
		ids := ix.byUp[up]
		if len(ids) == 0 || slices.Contains(done, up) {
			continue
		}
		done = append(done, up)
		for _, id := range ids {
			if !ix.dead[id] && mark[id>>6]&(1<<(id&63)) != 0 {
				acc[int(id)*stride] *= f
			}
		}
	}
}
