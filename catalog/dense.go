package catalog

import (
	"bytes"
	_ "embed"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"strings"
	"sync"
)

// The dense signal (issue 15): a static embedding table, one vector per
// index term, distilled model2vec-style from word vectors by
// scripts/gen-embed.sh (scripts/embed/gen.go: mean and first principal
// component removed, PCA to denseDims dimensions, SIF weights, int8).
// A tool's vector is the weighted mean of its terms' vectors (name,
// description and parameter names), computed when the tool is analysed;
// a query's vector is the same over its words, weighted by their idf in
// the index. Tools and query are compared by cosine similarity: sign
// bits and popcount pick a shortlist among all tools, whose exact int8
// cosine then picks the nearest; those gain a share of the best lexical
// score (RankParams.Dense, a linear mix) before the top-k selection, so a
// tool that shares no word with a paraphrased request can still rank. No
// network at run time; the table is embedded in the binary.

//go:embed embed_use.bin
var embedTable []byte

// denseDims is the table's vector length: a multiple of 64, so each
// vector's signs fill whole words of denseSigWords.
const (
	denseDims     = 128
	denseSigWords = denseDims / 64
)

// Bounds of the dense scoring, per query (latency: a popcount per tool,
// an exact int8 cosine for the shortlist only).
const (
	// denseShortlist is how many tools, nearest by sign bits (Hamming
	// distance), get an exact cosine.
	denseShortlist = 256
	// denseKeep is how many of those, nearest by cosine, gain the signal.
	denseKeep = 40
)

// Field weights of a tool's vector: the name and the description say what
// the tool does, parameter names and descriptions less; the server name
// is left out (every tool of a server shares it).
var denseFieldWeight = [numFields]float32{fieldName: 1, fieldDesc: 1, fieldUpstream: 0, fieldParam: 0.3, fieldParamDesc: 0.3}

// denseTable is the parsed embedding table.
type denseTable struct {
	ids  map[string]int32
	mult []byte // per term: its weight / its quantisation scale, float32 little-endian
	vec  []byte // per term: denseDims int8 components
}

var (
	denseOnce sync.Once
	denseTab  *denseTable
)

// denseVectors returns the table, parsing it once (nil when the binary
// was built without one or it does not parse).
func denseVectors() *denseTable {
	denseOnce.Do(func() {
		t, err := parseDense(embedTable)
		if err == nil {
			denseTab = t
		}
	})
	return denseTab
}

// parseDense reads a table written by scripts/embed/gen.go (uncompressed)
// in place: the vectors and weights stay in b, the terms are substrings
// of one string.
func parseDense(b []byte) (*denseTable, error) {
	nl := bytes.IndexByte(b, '\n')
	if nl < 0 {
		return nil, fmt.Errorf("dense table: no header")
	}
	var n, d int
	if _, err := fmt.Sscanf(string(b[:nl]), "MTSEMB1 %d %d", &n, &d); err != nil || d != denseDims || n <= 0 || n > 1<<22 {
		return nil, fmt.Errorf("dense table: header %q (want %d dims)", b[:nl], denseDims)
	}
	b = b[nl+1:]
	end := 0
	for i := 0; i < n; i++ {
		j := bytes.IndexByte(b[end:], '\n')
		if j < 0 {
			return nil, fmt.Errorf("dense table: %d of %d terms", i, n)
		}
		end += j + 1
	}
	if len(b) != end+4*n+n*d {
		return nil, fmt.Errorf("dense table: %d bytes after the terms, want %d", len(b)-end, 4*n+n*d)
	}
	words := string(b[:end])
	t := &denseTable{ids: make(map[string]int32, n), mult: b[end : end+4*n], vec: b[end+4*n:]}
	at := 0
	for i := 0; i < n; i++ {
		j := at + strings.IndexByte(words[at:], '\n')
		t.ids[words[at:j]] = int32(i)
		at = j + 1
	}
	return t, nil
}

// addTerm adds w × term's vector to acc; it reports whether the table has
// the term.
func (t *denseTable) addTerm(acc *[denseDims]float32, term string, w float32) bool {
	id, ok := t.ids[term]
	if !ok {
		return false
	}
	w *= math.Float32frombits(binary.LittleEndian.Uint32(t.mult[4*id:]))
	v := t.vec[int(id)*denseDims : int(id+1)*denseDims : int(id+1)*denseDims]
	for k := range acc {
		acc[k] += w * float32(int8(v[k]))
	}
	return true
}

// denseVec is one tool's (or query's) vector: normalised, then int8 with
// a scale (cosine = dot(a.q, b.q) × a.scale × b.scale), and its signs.
type denseVec struct {
	q     [denseDims]int8
	scale float32 // 0: no vector (no term in the table)
	sig   [denseSigWords]uint64
}

// quantise fills v from the float vector acc.
func (v *denseVec) quantise(acc *[denseDims]float32) {
	var n2, big float32
	for _, x := range acc {
		n2 += x * x
		big = max(big, float32(math.Abs(float64(x))))
	}
	*v = denseVec{}
	if n2 == 0 || big == 0 {
		return
	}
	s := 127 / big
	for k, x := range acc {
		v.q[k] = int8(math.Round(float64(x * s)))
		if x > 0 {
			v.sig[k>>6] |= 1 << (k & 63)
		}
	}
	v.scale = 1 / (s * float32(math.Sqrt(float64(n2))))
}

// noDense is the vector of a document none of whose terms is in the
// table (idxDoc.dense nil means not computed yet).
var noDense = &denseVec{}

// denseDoc computes an analysed tool's vector from its terms (noDense
// when none of them is in the table).
func denseDoc(terms []termTF) *denseVec {
	t := denseVectors()
	if t == nil {
		return noDense
	}
	var acc [denseDims]float32
	found := false
	for i := range terms {
		var w float32
		for f, tf := range terms[i].tf {
			if tf > 0 {
				w += denseFieldWeight[f] * float32(math.Log1p(float64(tf)))
			}
		}
		if w > 0 && t.addTerm(&acc, terms[i].term, w) {
			found = true
		}
	}
	if !found {
		return noDense
	}
	v := &denseVec{}
	v.quantise(&acc)
	return v
}

// dot is the int8 dot product of two vectors.
func dot(a, b *[denseDims]int8) int32 {
	var s0, s1, s2, s3 int32
	for k := 0; k < denseDims; k += 4 {
		s0 += int32(a[k]) * int32(b[k])
		s1 += int32(a[k+1]) * int32(b[k+1])
		s2 += int32(a[k+2]) * int32(b[k+2])
		s3 += int32(a[k+3]) * int32(b[k+3])
	}
	return s0 + s1 + s2 + s3
}

// denseScratch is the dense signal's per-query working memory.
type denseScratch struct {
	ham  []uint8 // per document: Hamming distance of the signs
	cand []denseCand
	// kept are the documents that gained the signal, with their share
	// (c - c0)/(c1 - c0) in cos; empty when the signal did not run.
	kept []denseCand
}

// denseCoverage is the coverage (see Index.coverage) a tool near the query
// by its vector is credited with at least: denseCoverage × its share.
var denseCoverage = 0.5

// coverage returns c, or more for a document the dense signal lifted.
func (ds *denseScratch) coverage(doc int32, c float64) float64 {
	for _, k := range ds.kept {
		if k.doc == doc {
			return max(c, denseCoverage*float64(k.cos))
		}
	}
	return c
}

type denseCand struct {
	doc int32
	cos float32
}

// denseMix adds the dense signal to the whole-query scores in acc (one
// row of stride floats per document; mark: the touched documents): the
// query's vector is compared with every live tool's, and the denseKeep
// nearest gain Dense × (the best lexical score) × (cos - c0)/(c1 - c0),
// where c1 is the best cosine and c0 the (denseKeep+1)-th. Read lock held.
func (ix *Index) denseMix(sc *scratch, acc []float32, mark []uint64, stride int) {
	sc.dense.kept = sc.dense.kept[:0]
	if ix.params.Dense <= 0 || sc.aq.nseg > 1 {
		// A request for several things mixes their vectors into one
		// that is near none of the tools (measured: no gain on such
		// requests; they are also the longest, the most costly).
		return
	}
	t := denseVectors()
	if t == nil || len(ix.dvec) != len(ix.docs) {
		return
	}
	aq := &sc.aq
	var qacc [denseDims]float32
	found := false
	for i := range aq.terms {
		qt := &aq.terms[i]
		if qt.kind != termWord || qt.whole {
			continue
		}
		if t.addTerm(&qacc, qt.term, float32(qt.qw)) {
			found = true
		}
	}
	if !found {
		return
	}
	var qv denseVec
	qv.quantise(&qacc)
	if qv.scale == 0 {
		return
	}
	ds := &sc.dense
	n := len(ix.dvec)
	if cap(ds.ham) < n {
		ds.ham = make([]uint8, n+n/4+16)
	}
	ham := ds.ham[:n]
	var hist [denseDims + 2]int32
	for d := range ix.dsig {
		c := 0
		for w := 0; w < denseSigWords; w++ {
			c += bits.OnesCount64(ix.dsig[d][w] ^ qv.sig[w])
		}
		ham[d] = uint8(c)
		hist[c]++
	}
	// The largest distance still in the shortlist, and how many of the
	// documents at that distance fit (the first ones).
	limit, got := 0, int32(0)
	for limit = 0; limit <= denseDims; limit++ {
		if got+hist[limit] >= denseShortlist {
			break
		}
		got += hist[limit]
	}
	atLimit := denseShortlist - got
	cand := ds.cand[:0]
	for d, h := range ham {
		if int(h) > limit || ix.dead[d] {
			continue
		}
		if int(h) == limit {
			if atLimit == 0 {
				continue
			}
			atLimit--
		}
		dv := &ix.dvec[d]
		if dv.scale == 0 {
			continue // no vector
		}
		c := float32(dot(&qv.q, &dv.q)) * qv.scale * dv.scale
		cand = append(cand, denseCand{int32(d), c})
	}
	ds.cand = cand
	if len(cand) == 0 {
		return
	}
	// The denseKeep+1 nearest first (partial selection sort: the list is
	// a few hundred long).
	keep := min(denseKeep+1, len(cand))
	for i := 0; i < keep; i++ {
		b := i
		for j := i + 1; j < len(cand); j++ {
			if cand[j].cos > cand[b].cos || cand[j].cos == cand[b].cos && cand[j].doc < cand[b].doc {
				b = j
			}
		}
		cand[i], cand[b] = cand[b], cand[i]
	}
	c1 := cand[0].cos
	c0 := cand[keep-1].cos
	if keep <= denseKeep {
		c0 = 0
	}
	if c1 <= c0 || c1 <= 0 {
		return
	}
	var top float32
	for wi, m := range mark {
		for ; m != 0; m &= m - 1 {
			top = max(top, acc[(wi<<6|bits.TrailingZeros64(m))*stride])
		}
	}
	if top == 0 {
		// No word of the query is in the index: the nearest tools are
		// all there is (a weak match, Scored.Strength 0).
		top = 1
	}
	gain := float32(ix.params.Dense) * top / (c1 - c0)
	for _, c := range cand[:min(keep, denseKeep)] {
		if c.cos <= c0 {
			break
		}
		acc[int(c.doc)*stride] += gain * (c.cos - c0)
		mark[c.doc>>6] |= 1 << (c.doc & 63)
		ds.kept = append(ds.kept, denseCand{c.doc, (c.cos - c0) / (c1 - c0)})
	}
}

// appendDense appends a document's vector and signs (zero for none).
func (ix *Index) appendDense(v *denseVec) {
	if v == nil {
		v = noDense
	}
	ix.dvec = append(ix.dvec, *v)
	ix.dsig = append(ix.dsig, v.sig)
}

// fillDense computes the vectors of the documents that have none yet (not
// those with skip[i] set), in parallel for many.
func fillDense(docs []idxDoc, skip []bool) {
	workers := runtime.GOMAXPROCS(0)
	if len(docs) < 256 {
		workers = 1
	}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < len(docs); i += workers {
				if docs[i].dense == nil && (skip == nil || !skip[i]) {
					docs[i].dense = denseDoc(docs[i].terms)
				}
			}
		}(w)
	}
	wg.Wait()
}

// withDense returns an index equal to ix with the dense signal's weight
// set to w (ix is not changed); switched on, the vectors its documents
// lack are computed.
func (ix *Index) withDense(w float64) *Index {
	ix.mu.RLock()
	nx := ix.cloneLocked()
	ix.mu.RUnlock()
	nx.owned = nil // nothing is changed but the parameters and vectors
	nx.params.Dense = w
	if w <= 0 {
		nx.dvec, nx.dsig = nil, nil
		return nx
	}
	if len(nx.dvec) == len(nx.docs) {
		return nx // already on: the same vectors
	}
	// The documents' analyses are shared with ix: their vectors go into
	// nx's own arrays only.
	nx.dvec = make([]denseVec, len(nx.docs))
	nx.dsig = make([][denseSigWords]uint64, len(nx.docs))
	for i := range nx.docs {
		if nx.dead[i] {
			continue
		}
		v := nx.docs[i].dense
		if v == nil {
			v = denseDoc(nx.docs[i].terms)
		}
		nx.dvec[i], nx.dsig[i] = *v, v.sig
	}
	return nx
}

// DefaultDenseWeight is RankParams.Dense when the signal is switched on
// ([tool_search] dense = true; off by default: docs/design.md "Search").
const DefaultDenseWeight = 0.2
