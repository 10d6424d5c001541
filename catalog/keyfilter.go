package catalog

import (
	"hash/maphash"
	"math/bits"
)

// keyFilter is a Bloom filter over string keys: mayHave is false for every
// key never added and true for every key added (and, rarely, for others).
// The index keeps one beside a large map that queries probe many times
// with keys it mostly does not hold (the runs of query words looked up as
// tool names), so that most probes stay in a small bit array (a few tens
// of KB at 10,000 tools, cache-resident) instead of missing in the map's
// memory. Keys are never removed (a removed key stays a false positive);
// the filter is rebuilt with the index.
type keyFilter struct {
	bits []uint64
	mask uint64 // number of bits - 1 (a power of two minus one)
}

// filterSeed is the hash seed of every keyFilter of this process.
var filterSeed = maphash.MakeSeed()

// newKeyFilter returns a filter sized for about n keys (8 bits per key,
// two probes: ~5% false positives at n keys).
func newKeyFilter(n int) keyFilter {
	nb := uint64(1) << bits.Len64(uint64(max(n, 64)*8-1))
	return keyFilter{bits: make([]uint64, nb/64), mask: nb - 1}
}

func (f *keyFilter) set(h uint64) {
	a, b := h&f.mask, (h>>32|h<<32)&f.mask
	f.bits[a/64] |= 1 << (a % 64)
	f.bits[b/64] |= 1 << (b % 64)
}

func (f *keyFilter) test(h uint64) bool {
	if f.bits == nil {
		return true // no filter: every key may be there
	}
	a, b := h&f.mask, (h>>32|h<<32)&f.mask
	return f.bits[a/64]&(1<<(a%64)) != 0 && f.bits[b/64]&(1<<(b%64)) != 0
}

// add adds key k.
func (f *keyFilter) add(k string) { f.set(maphash.String(filterSeed, k)) }

// mayHaveBytes reports whether key string(k) may have been added.
func (f *keyFilter) mayHaveBytes(k []byte) bool { return f.test(maphash.Bytes(filterSeed, k)) }

// mayHave reports whether key k may have been added.
func (f *keyFilter) mayHave(k string) bool { return f.test(maphash.String(filterSeed, k)) }

// clone returns a copy that can be added to without changing f.
func (f keyFilter) clone() keyFilter {
	return keyFilter{bits: append([]uint64(nil), f.bits...), mask: f.mask}
}
