package proxy

import (
	"sync"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
	"github.com/mcp-toolsearch/mcp-toolsearch/policy"
)

// viewIndexes keeps, per policy view and catalog snapshot, a search index
// built over only the entries that view allows. BM25 statistics (document
// frequencies, lengths) then come from what the client may see, so a tool
// denied to it cannot even shift the scores of its hits (SPEC §6: no hint
// that a denied tool exists). A view that allows every entry uses the
// snapshot's own index; nothing is built for it.
type viewIndexes struct {
	mu sync.Mutex
	m  map[viewSnap]*catalog.Index
}

type viewSnap struct {
	v    *policy.View
	snap *catalog.Snapshot
}

// maxViewIndexes bounds the cache; past it, it is emptied and refilled
// (catalog snapshots change on every upstream list change).
const maxViewIndexes = 32

// index returns the index to search for view v over snap. Building one
// costs about 15 ms per 1,000 allowed tools (catalog BenchmarkIndexBuild),
// once per view and snapshot.
func (vi *viewIndexes) index(v *policy.View, snap *catalog.Snapshot) *catalog.Index {
	key := viewSnap{v, snap}
	vi.mu.Lock()
	ix, ok := vi.m[key]
	vi.mu.Unlock()
	if ok {
		return ix
	}
	allowed := make([]*catalog.Entry, 0, len(snap.Entries))
	for _, e := range snap.Entries {
		if v.Allowed(toolOf(e)) {
			allowed = append(allowed, e)
		}
	}
	ix = snap.Index
	if len(allowed) < len(snap.Entries) {
		ix = catalog.NewIndexWithParams(allowed, snap.Index.Params())
	}
	vi.mu.Lock()
	if vi.m == nil || len(vi.m) >= maxViewIndexes {
		vi.m = map[viewSnap]*catalog.Index{}
	}
	vi.m[key] = ix
	vi.mu.Unlock()
	return ix
}
