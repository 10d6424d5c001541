package catalog

import (
	"math"
	"math/bits"
	"slices"
)

// This file is the per-entry analysis of the index build (DESIGN "Search",
// "Index build"): the terms of each entry counted per field through a
// table of the terms met so far, instead of collecting every occurrence
// and sorting them (the per-entry sort was the largest
// single cost of the 10,000-tool build).

// termTable interns the terms met by one analysis worker: each distinct
// term gets a number, and per number what the build needs more than once
// (its sort key, its FNV-1a hash for the word pairs, and where it is in
// the entry being analyzed). The table is open-addressed by that FNV-1a
// hash (one hash per occurrence serves both; a Go map hashed each
// occurrence again, ~130 instructions a look-up).
type termTable struct {
	slots []int32 // 1 + a term's number; 0: empty. A power of two long.
	shift uint    // 32 - log2(len(slots))
	terms []termRec
}

// termRec is one term of a termTable.
type termRec struct {
	t    string
	key  uint64 // sortKey(t)
	fnv  uint32 // fnv32(t): pairHash's first half
	seen int32  // the stamp of the last entry that had it
	slot int32  // its place in that entry's list
}

// termAcc is one distinct term of the entry being analyzed and its
// frequency per field.
type termAcc struct {
	key uint64
	id  int32
	tf  [numFields]uint16
}

// analyzer is the working memory of one analysis worker, reused from
// entry to entry.
type analyzer struct {
	tab   termTable
	stamp int32     // number of entries analyzed; seen[id] == stamp: in this entry
	cur   []termAcc // distinct terms of the entry being analyzed
	hs    []uint32  // its word-pair hashes
	// ids, when kept (keepIDs), holds the term numbers of every entry
	// analyzed, each entry's in the order of its idxDoc.terms.
	ids     []int32
	keepIDs bool
}

// newAnalyzer returns an analyzer sized for about n entries (about 4
// new terms and 20 distinct terms per entry at 10,000 tools).
func newAnalyzer(n int, keepIDs bool) *analyzer {
	a := &analyzer{keepIDs: keepIDs}
	a.tab.init(min(5*n, 1<<16))
	if keepIDs {
		a.ids = make([]int32, 0, 24*n)
	}
	return a
}

// init empties the table, sized for about n terms.
func (tab *termTable) init(n int) {
	size := 64
	for size < 2*n {
		size *= 2
	}
	tab.slots = make([]int32, size)
	tab.shift = uint(32 - bits.Len(uint(size-1)))
	tab.terms = make([]termRec, 0, n)
}

// find returns the slot of term t (hash h = fnv32(t)) and its number, or
// the empty slot where it would go and -1.
func (tab *termTable) find(t string, h uint32) (slot int, id int32) {
	mask := len(tab.slots) - 1
	for i := int((h * 0x9E3779B1) >> tab.shift); ; i = (i + 1) & mask {
		s := tab.slots[i]
		if s == 0 {
			return i, -1
		}
		if r := &tab.terms[s-1]; r.fnv == h && r.t == t {
			return i, s - 1
		}
	}
}

// intern returns the number of term t, adding it when new.
func (tab *termTable) intern(t string) int32 {
	if tab.slots == nil {
		tab.init(0)
	}
	h := fnv32(t)
	slot, id := tab.find(t, h)
	if id >= 0 {
		return id
	}
	id = int32(len(tab.terms))
	tab.terms = append(tab.terms, termRec{t: t, key: sortKey(t), fnv: h})
	tab.slots[slot] = id + 1
	if 2*len(tab.terms) > len(tab.slots) {
		tab.grow()
	}
	return id
}

// grow doubles the table.
func (tab *termTable) grow() {
	tab.slots = make([]int32, 2*len(tab.slots))
	tab.shift--
	for id := range tab.terms {
		slot, _ := tab.find(tab.terms[id].t, tab.terms[id].fnv)
		tab.slots[slot] = int32(id) + 1
	}
}

// begin starts the analysis of the next entry.
func (a *analyzer) begin() {
	a.stamp++
	a.cur = a.cur[:0]
	a.hs = a.hs[:0]
}

// count adds one occurrence of term id in field f.
func (a *analyzer) count(id int32, f uint8) {
	r := &a.tab.terms[id]
	if r.seen != a.stamp {
		r.seen = a.stamp
		r.slot = int32(len(a.cur))
		a.cur = append(a.cur, termAcc{key: r.key, id: id})
	}
	if tf := &a.cur[r.slot].tf[f]; *tf < math.MaxUint16 {
		*tf++
	}
}

// terms returns the entry's distinct terms with their frequencies, in the
// order of (sortKey, term): the order the dense vector sums them in
// (denseDoc), so it does not depend on how they were counted. With
// keepIDs, their numbers are appended to a.ids in the same order.
func (a *analyzer) terms() []termTF {
	tab := &a.tab
	sortAcc(a.cur, tab.terms, 0)
	out := make([]termTF, len(a.cur))
	for i, c := range a.cur {
		out[i] = termTF{term: tab.terms[c.id].t, tf: c.tf}
		if a.keepIDs {
			a.ids = append(a.ids, c.id)
		}
	}
	return out
}

// pairs returns the entry's sorted, distinct word-pair hashes (nil for
// none), in one allocation of the exact size.
func (a *analyzer) pairs() []uint32 {
	if len(a.hs) == 0 {
		return nil
	}
	slices.Sort(a.hs)
	hs := slices.Compact(a.hs)
	return append(make([]uint32, 0, len(hs)), hs...)
}

// lexicon is what analyzeAll learnt about the terms of a batch, for the
// bulk add: every distinct term once, and per document (in order) the
// numbers of its terms in the order of its idxDoc.terms: ids is the
// concatenation of chunks, and docs[i].terms[k].term == terms[id] for the
// id at place off+k of it (off: the number of terms of the documents
// before i). The bulk add then hashes each distinct term once instead of
// each (document, term) pair.
type lexicon struct {
	terms []string
	ids   [][]int32
}

// mergeLexicon joins the tables of workers that analyzed consecutive
// ranges of one batch into one lexicon; the workers' ids are renumbered in
// place. A worker's terms are distinct, so only those of workers before
// the last are added to the first worker's map (with two workers: none).
func mergeLexicon(ws []*analyzer) *lexicon {
	base := ws[0]
	lex := &lexicon{terms: make([]string, len(base.tab.terms), len(base.tab.terms)+len(base.tab.terms)/2)}
	for i := range base.tab.terms {
		lex.terms[i] = base.tab.terms[i].t
	}
	lex.ids = append(lex.ids, base.ids)
	for k, w := range ws[1:] {
		last := k == len(ws)-2
		remap := make([]int32, len(w.tab.terms))
		for local := range w.tab.terms {
			r := &w.tab.terms[local]
			_, id := base.tab.find(r.t, r.fnv)
			if id < 0 {
				id = int32(len(lex.terms))
				lex.terms = append(lex.terms, r.t)
				if !last {
					base.tab.intern(r.t) // number id: base's terms are lex's so far
				}
			}
			remap[local] = id
		}
		for i, id := range w.ids {
			w.ids[i] = remap[id]
		}
		lex.ids = append(lex.ids, w.ids)
	}
	return lex
}

// fnv32 is the 32-bit FNV-1a hash of s.
func fnv32(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint32(s[i])) * 16777619
	}
	return h
}

// pairHashFrom is pairHash(a, b) given ha = fnv32(a).
func pairHashFrom(ha uint32, b string) uint32 {
	h := (ha ^ 0xff) * 16777619 // no term has the byte 0xff (UTF-8)
	for i := 0; i < len(b); i++ {
		h = (h ^ uint32(b[i])) * 16777619
	}
	return h
}

// accLess orders the terms of an entry by (sortKey, term).
func accLess(x, y *termAcc, terms []termRec) bool {
	if x.key != y.key {
		return x.key < y.key
	}
	return terms[x.id].t < terms[y.id].t
}

// sortAcc sorts an entry's distinct terms by (sortKey, term): quicksort
// with a median-of-three pivot and the comparison inline, insertion sort
// for short runs, and slices.SortFunc past a depth of 48 (so no input is
// quadratic). The terms are distinct, so no two elements are equal.
func sortAcc(a []termAcc, terms []termRec, depth int) {
	for len(a) > 12 {
		if depth > 48 {
			slices.SortFunc(a, func(x, y termAcc) int {
				if accLess(&x, &y, terms) {
					return -1
				}
				return 1
			})
			return
		}
		depth++
		m, last := len(a)/2, len(a)-1
		if accLess(&a[m], &a[0], terms) {
			a[m], a[0] = a[0], a[m]
		}
		if accLess(&a[last], &a[m], terms) {
			a[last], a[m] = a[m], a[last]
			if accLess(&a[m], &a[0], terms) {
				a[m], a[0] = a[0], a[m]
			}
		}
		// a[0] <= a[m] <= a[last]: the pivot goes to a[last-1], and the
		// scan runs between the sentinels a[0] and a[last].
		a[m], a[last-1] = a[last-1], a[m]
		p := a[last-1]
		i, j := 0, last-1
		for {
			for i++; accLess(&a[i], &p, terms); i++ {
			}
			for j--; accLess(&p, &a[j], terms); j-- {
			}
			if i >= j {
				break
			}
			a[i], a[j] = a[j], a[i]
		}
		a[i], a[last-1] = a[last-1], a[i]
		// a[:i] < pivot = a[i] < a[i+1:]; recurse into the shorter side.
		if i < len(a)-1-i {
			sortAcc(a[:i], terms, depth)
			a = a[i+1:]
		} else {
			sortAcc(a[i+1:], terms, depth)
			a = a[:i]
		}
	}
	for i := 1; i < len(a); i++ {
		x := a[i]
		j := i
		for ; j > 0 && accLess(&x, &a[j-1], terms); j-- {
			a[j] = a[j-1]
		}
		a[j] = x
	}
}
