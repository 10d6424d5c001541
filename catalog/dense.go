package catalog

import (
	"bytes"
	_ "embed"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"strings"
	"sync"
)

// The dense signal: a static embedding table, one vector per
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
func (t *denseTable) addTerm(acc *[denseDims]float64, term string, w float64) bool {
	id, ok := t.ids[term]
	if !ok {
		return false
	}
	w *= float64(t.weight(id))
	v := t.row(id)
	for k := range acc {
		acc[k] += w * float64(int8(v[k]))
	}
	return true
}

// weight is a term's weight divided by its quantisation scale.
func (t *denseTable) weight(id int32) float32 {
	return math.Float32frombits(binary.LittleEndian.Uint32(t.mult[4*id:]))
}

// row is a term's int8 components.
func (t *denseTable) row(id int32) *[denseDims]byte {
	return (*[denseDims]byte)(t.vec[int(id)*denseDims : int(id+1)*denseDims])
}

// denseVec is one tool's (or query's) vector: normalised, then int8 with
// a scale (cosine = dot(a.q, b.q) × a.scale × b.scale), and its signs.
type denseVec struct {
	q     [denseDims]int8
	scale float32 // 0: no vector (no term in the table)
	sig   [denseSigWords]uint64
}

// quantise fills v from the vector acc (any scale): int8 components
// scaled so the largest is ±127, rounded to nearest, and scale = 1/|q|, so
// that dot × scale × scale is the cosine of the quantised vectors.
func (v *denseVec) quantise(acc *[denseDims]float64) {
	var big float64
	for _, x := range acc {
		big = max(big, x, -x)
	}
	*v = denseVec{}
	if big == 0 {
		return
	}
	s := 127 / big
	var n2 int32
	for k, x := range acc {
		q := int32(roundHalfEven(x * s))
		v.q[k] = int8(q)
		n2 += q * q
		if x > 0 {
			v.sig[k>>6] |= 1 << (k & 63)
		}
	}
	v.scale = float32(1 / math.Sqrt(float64(n2)))
}

// noDense is the vector of a document none of whose terms is in the
// table (idxDoc.dense nil means not computed yet).
var noDense = &denseVec{}

// A tool's vector is summed in integers (the index build computes one per
// tool: ~20 table rows of 128 components each): each term's weight is
// rounded to an integer (denseWScale × its float weight, 1 to ~40,000 on
// this table), each component biased to 0..255, and eight components at a
// time are multiplied and added as 32-bit lanes of four uint64 words (two
// lanes each). A lane holds up to denseLaneCap × 255; past that the lanes
// are flushed into 64-bit sums.
const (
	denseWScale  = 1 << 20
	denseLaneCap = (1<<32 - 1) / 255
	denseM16     = 0x00FF00FF00FF00FF
	denseM32     = 0x0000FFFF0000FFFF
)

// denseAcc sums a tool's weighted term vectors (see denseWScale).
type denseAcc struct {
	// lanes[4j+L] holds components 8j+o (low half) and 8j+o+4 (high
	// half), o = 0, 2, 1, 3 for L = 0..3, biased by +128 each.
	lanes [denseDims / 2]uint64
	wsum  uint64 // Σ weights added to lanes since the last flush
	wtot  int64  // Σ weights added in all
	wide  [denseDims]int64
	found bool
}

// termWeight is a document term's weight in its vector: the field-weighted
// log(1+tf) (denseFieldWeight), times the table's weight for the term, as
// an integer (0: leave the term out).
func (t *denseTable) termWeight(id int32, tf *[numFields]uint16) uint32 {
	var w float32
	for f, n := range tf {
		if n > 0 && denseFieldWeight[f] > 0 {
			w += denseFieldWeight[f] * log1pTF(n)
		}
	}
	if w <= 0 {
		return 0
	}
	return max(1, uint32(w*t.weight(id)*denseWScale+0.5))
}

// log1pTF is log(1+n), from a table for small n.
func log1pTF(n uint16) float32 {
	if int(n) < len(log1pSmall) {
		return log1pSmall[n]
	}
	return float32(math.Log1p(float64(n)))
}

var log1pSmall = func() (t [32]float32) {
	for i := range t {
		t[i] = float32(math.Log1p(float64(i)))
	}
	return
}()

// add adds w × the row of term id.
func (a *denseAcc) add(t *denseTable, id int32, w uint32) {
	if a.wsum+uint64(w) > denseLaneCap {
		a.flush()
	}
	a.wsum += uint64(w)
	a.wtot += int64(w)
	a.found = true
	v := t.row(id)
	w64 := uint64(w)
	for j := 0; j < denseDims/8; j++ {
		x := binary.LittleEndian.Uint64(v[8*j:]) ^ 0x8080808080808080
		e, o := x&denseM16, (x>>8)&denseM16
		l := a.lanes[4*j : 4*j+4 : 4*j+4]
		l[0] += (e & denseM32) * w64
		l[1] += ((e >> 16) & denseM32) * w64
		l[2] += (o & denseM32) * w64
		l[3] += ((o >> 16) & denseM32) * w64
	}
}

// flush moves the lanes into the 64-bit sums.
func (a *denseAcc) flush() {
	for j := 0; j < denseDims/8; j++ {
		l := a.lanes[4*j : 4*j+4 : 4*j+4]
		w := a.wide[8*j : 8*j+8 : 8*j+8]
		w[0] += int64(l[0] & 0xFFFFFFFF)
		w[4] += int64(l[0] >> 32)
		w[2] += int64(l[1] & 0xFFFFFFFF)
		w[6] += int64(l[1] >> 32)
		w[1] += int64(l[2] & 0xFFFFFFFF)
		w[5] += int64(l[2] >> 32)
		w[3] += int64(l[3] & 0xFFFFFFFF)
		w[7] += int64(l[3] >> 32)
	}
	a.lanes = [denseDims / 2]uint64{}
	a.wsum = 0
}

// finish writes the summed vector into v (zero when no term was added)
// and resets a.
func (a *denseAcc) finish(v *denseVec) {
	if !a.found {
		*v = denseVec{}
		return
	}
	a.flush()
	bias := 128 * a.wtot
	for k := range a.wide {
		a.wide[k] -= bias
	}
	v.quantiseInt(&a.wide)
	a.wide = [denseDims]int64{}
	a.wtot, a.found = 0, false
}

// quantiseInt is quantise for integer sums.
func (v *denseVec) quantiseInt(acc *[denseDims]int64) {
	var big int64
	for _, x := range acc {
		m := x >> 63
		big = max(big, (x^m)-m)
	}
	*v = denseVec{}
	if big == 0 {
		return
	}
	s := 127 / float64(big)
	var n2 int32
	for k, x := range acc {
		q := int32(roundHalfEven(float64(x) * s))
		v.q[k] = int8(q)
		n2 += q * q
	}
	for w := range v.sig {
		var sig uint64
		for k := 63; k >= 0; k-- {
			sig = sig<<1 | uint64(-acc[64*w+k])>>63 // acc > 0
		}
		v.sig[w] = sig
	}
	// The cosine of the quantised vectors (their own norm).
	v.scale = float32(1 / math.Sqrt(float64(n2)))
}

// roundHalfEven rounds |x| < 2^51 to the nearest integer (ties to even):
// adding and subtracting 1.5 × 2^52 drops the fraction in float64's
// round-to-nearest (math.Round's bit handling costs more).
func roundHalfEven(x float64) float64 {
	const magic = 1.5 * (1 << 52)
	return (x + magic) - magic
}

// denseDoc computes an analysed tool's vector from its terms (noDense
// when none of them is in the table).
func denseDoc(terms []termTF) *denseVec {
	t := denseVectors()
	if t == nil {
		return noDense
	}
	var a denseAcc
	for i := range terms {
		id, ok := t.ids[terms[i].term]
		if !ok {
			continue
		}
		if w := t.termWeight(id, &terms[i].tf); w > 0 {
			a.add(t, id, w)
		}
	}
	if !a.found {
		return noDense
	}
	v := &denseVec{}
	a.finish(v)
	return v
}

// denseBulk computes the vectors of a bulk add's documents into ix.dvec
// and ix.dsig (both of the added count's length): docs and skip as
// bulkAddLocked's, tis the termInfo of each (document, term) pair in
// order. Each distinct term is looked up in the table once (its id kept
// in termInfo.did); the vectors are summed in integers, with no
// allocation per document. Run while bulkAddLocked fills the postings:
// it reads only docs' terms and writes only termInfo.did, dvec and dsig.
func (ix *Index) denseBulk(docs []idxDoc, skip []bool, tis []*termInfo) {
	t := denseVectors()
	if t == nil {
		return
	}
	var a denseAcc
	k, off := 0, 0
	for i := range docs {
		if skip != nil && skip[i] {
			continue
		}
		terms := docs[i].terms
		ts := tis[off : off+len(terms)]
		off += len(terms)
		for j, ti := range ts {
			if ti.did == 0 {
				ti.did = -1
				if id, ok := t.ids[terms[j].term]; ok {
					ti.did = id + 1
				}
			}
			if ti.did < 0 {
				continue
			}
			if w := t.termWeight(ti.did-1, &terms[j].tf); w > 0 {
				a.add(t, ti.did-1, w)
			}
		}
		a.finish(&ix.dvec[k])
		ix.dsig[k] = ix.dvec[k].sig
		k++
	}
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
			c = max(c, denseCoverage*float64(k.cos))
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
	if ix.params.Dense <= 0 {
		return
	}
	t := denseVectors()
	if t == nil || len(ix.dvec) != len(ix.docs) {
		return
	}
	if sc.aq.nseg > 1 {
		// One vector for several tasks is near none of their tools (a
		// vector per clause: +0.0006 nDCG@10 held-out for ~1.1 ms more
		// CPU per query at 10k tools; not kept).
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
	var qacc [denseDims]float64
	if !t.queryVec(&sc.aq, &qacc, 0xFF) {
		return
	}
	var qv denseVec
	qv.quantise(&qacc)
	if qv.scale != 0 {
		ix.denseNearest(sc, &qv, top, acc, mark, stride)
	}
}

// denseNearest adds the signal of one query vector qv: the denseKeep
// tools nearest it gain Dense × top × (cos - c0)/(c1 - c0), times the
// share of the top score the words left them, 1 − lexical/top (see denseMix).
func (ix *Index) denseNearest(sc *scratch, qv *denseVec, top float32, acc []float32, mark []uint64, stride int) {
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
	for _, c := range cand[:min(keep, denseKeep)] {
		if c.cos <= c0 {
			break
		}
		share := (c.cos - c0) / (c1 - c0)
		// The signal complements the words: a tool the request's words
		// already rank at the top gains nothing, one they miss gains the
		// whole share. Two tools alike in meaning (one server's tool and
		// its copy in a registry) keep the order the words give them.
		if mark[c.doc>>6]&(1<<(c.doc&63)) != 0 {
			share *= max(0, 1-acc[int(c.doc)*stride]/top)
		}
		acc[int(c.doc)*stride] += float32(ix.params.Dense) * top * share
		mark[c.doc>>6] |= 1 << (c.doc & 63)
		ds.kept = append(ds.kept, denseCand{c.doc, share})
	}
}

// queryVec sums the query's vector into acc: its words' rows weighted by
// their query weights. Two adjacent words the index knows joined as one
// term ("zip codes" -> zipcode, Index.expand) are that one word: they
// count by the joined term's row, or not at all when the table lacks it
// (as any word it lacks) — never by their parts' rows, whose meanings
// alone are others' ("zip" leans to compression, "codes" is stemmed to
// cod, the fish). It reports whether any row was added.
func (t *denseTable) queryVec(aq *analyzedQuery, acc *[denseDims]float64, segs uint8) bool {
	// Base terms that a joined compound stands for (bit i: term i).
	var inCompound uint64
	found := false
	for i := range aq.terms {
		qt := &aq.terms[i]
		if qt.kind != termCompound || qt.src2 == 0 || qt.src >= 64 || qt.src2-1 >= 64 || qt.segs&segs == 0 {
			continue
		}
		inCompound |= 1<<qt.src | 1<<(qt.src2-1)
		w := max(aq.terms[qt.src].qw, aq.terms[qt.src2-1].qw)
		if t.addTerm(acc, qt.term, w) {
			found = true
		}
	}
	for i := range aq.terms {
		qt := &aq.terms[i]
		if qt.kind != termWord || qt.whole || qt.segs&segs == 0 || i < 64 && inCompound&(1<<i) != 0 {
			continue
		}
		if t.addTerm(acc, qt.term, qt.qw) {
			found = true
		}
	}
	return found
}

// appendDense appends a document's vector and signs (zero for none).
func (ix *Index) appendDense(v *denseVec) {
	if v == nil {
		v = noDense
	}
	ix.dvec = append(ix.dvec, *v)
	ix.dsig = append(ix.dsig, v.sig)
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

// DefaultDenseWeight is RankParams.Dense when the signal is on (the
// default; [tool_search] dense = false switches it off: docs/design.md
// "Search").
const DefaultDenseWeight = 0.6
