package catalog

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"sort"
	"strings"
	"sync"
)

// The semantic signal (issue 15): a related-terms table built from WordNet
// 3.0 (Debian's wordnet-base; licence in LICENSE.wordnet beside this file)
// by scripts/semantic/gen.go, shipped in the binary (1.2 MB gzip). A query
// term adds its related terms that the index knows as derived query terms
// (kind termRelated) with weight table weight × RankParams.Semantic, so
// the final score is a linear mix of the lexical BM25F score and a BM25F
// score over the related terms. No network at run time.

//go:embed related_wordnet.gz
var relatedWordNet []byte

// relatedGloVe is the second table: each word's nearest words by the
// cosine similarity of GloVe word vectors (scripts/gen-wordvec.sh;
// licence in LICENSE.glove beside this file), words used in the same
// contexts (flight: airline, airport; diet: calorie, nutrition) that
// WordNet's synonyms and hypernyms do not reach.
//
//go:embed related_glove.gz
var relatedGloVe []byte

// gloveWeight scales the GloVe table's weights (cosine similarity) against
// WordNet's (1 for a synonym).
const gloveWeight = 0.5

type relTerm struct {
	term string
	w    float64
}

var (
	relatedOnce  sync.Once
	relatedTable map[string][]relTerm
)

// related returns the table, parsing it once (about 70,000 words).
func related() map[string][]relTerm {
	relatedOnce.Do(func() {
		relatedTable = map[string][]relTerm{}
		readRelated(relatedWordNet, 1)
		readRelated(relatedGloVe, gloveWeight)
		for w, rs := range relatedTable {
			// Strongest first: the expansion takes the first few.
			sort.SliceStable(rs, func(i, j int) bool { return rs[i].w > rs[j].w })
			relatedTable[w] = rs
		}
	})
	return relatedTable
}

// readRelated adds a gzip-compressed table ("word rel:weight …", weights
// in tenths, times scale) to relatedTable; a relation already there keeps
// its larger weight.
func readRelated(table []byte, scale float64) {
	{
		zr, err := gzip.NewReader(bytes.NewReader(table))
		if err != nil {
			return // a build without the table
		}
		sc := bufio.NewScanner(zr)
		for sc.Scan() {
			fs := strings.Fields(sc.Text())
			if len(fs) < 2 {
				continue
			}
			rs := relatedTable[fs[0]]
			for _, f := range fs[1:] {
				i := strings.LastIndexByte(f, ':')
				if i <= 0 {
					continue
				}
				w := 0
				for _, c := range f[i+1:] {
					w = w*10 + int(c-'0')
				}
				rs = addRel(rs, relTerm{f[:i], float64(w) / 10 * scale})
			}
			relatedTable[fs[0]] = rs
		}
	}
}

// addRel adds r to rs, or raises the weight of the same term in rs.
func addRel(rs []relTerm, r relTerm) []relTerm {
	for i := range rs {
		if rs[i].term == r.term {
			rs[i].w = max(rs[i].w, r.w)
			return rs
		}
	}
	return append(rs, r)
}

// Bounds of the expansion, for latency: related terms per query term and
// per query, and the largest share of documents a related term may have
// (a related term as common as "get" adds cost and no meaning).
const (
	maxRelatedPerTerm  = 4
	maxRelatedPerQuery = 16
	maxRelatedDFShare  = 0.05
)

// expandRelated adds, for each base term of the query, up to
// maxRelatedPerTerm related terms of the table that live documents have
// (read lock held).
func (ix *Index) expandRelated(aq *analyzedQuery) {
	tab := related()
	nbase := len(aq.terms)
	maxDF := int32(max(1, float64(ix.live)*maxRelatedDFShare))
	total := 0
	for i := 0; i < nbase && total < maxRelatedPerQuery; i++ {
		t := aq.terms[i]
		if t.kind != termWord {
			continue
		}
		added := 0
		for _, r := range tab[t.term] {
			if added == maxRelatedPerTerm || total == maxRelatedPerQuery {
				break
			}
			if _, ok := aq.seen[r.term]; ok {
				continue
			}
			ti := ix.terms[r.term]
			if ti == nil || ti.df <= 0 || ti.df > maxDF {
				continue
			}
			total++
			added++
			aq.derive(r.term, t.qw*r.w, termRelated, i, ti)
		}
	}
}
