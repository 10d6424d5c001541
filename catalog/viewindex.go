package catalog

import (
	"slices"
	"sync"
)

// A View is what one client may see of a catalog (its policy view).
// ViewIndexes keys its indexes by View, so a View must be comparable and
// two Views are the same view exactly when they are ==.
type View interface {
	Allows(e *Entry) bool
}

// ViewIndexes keeps, per policy view, a search index built over only the
// entries that view allows. BM25 statistics (document frequencies,
// lengths) then come from what the client may see, so a tool denied to it
// cannot even shift the scores of its hits (SPEC §6: no hint that a
// denied tool exists). A view that allows every entry uses the snapshot's
// own index; nothing is built for it.
//
// View indexes are kept up to date off the request path.
// When a catalog publishes a snapshot (Catalog.OnPublish for the shared
// catalog; a search that finds its view's index older than its snapshot
// for a client's own catalog), a background goroutine derives each
// affected view's index for the catalog's newest snapshot from the view's
// previous index (Index.With for the upstreams whose allowed entries
// changed: O(change), not a full build). A search meanwhile uses the
// view's latest index, possibly a catalog change old; modes.API.Search
// maps its hits onto the current snapshot's entries (a tool gone since is
// dropped). Only a view's first search builds its index on the request
// path. At most maxViewIndexes views are kept; the least recently used is
// dropped.
type ViewIndexes struct {
	mu      sync.Mutex
	views   map[viewKey]*viewEntry
	clock   uint64
	running bool // a refresh goroutine is at work
	dirty   bool // work arrived since it started its pass
}

// viewKey is one view over one catalog: the proxy's shared catalog, or a
// client's own (per-client upstream sessions).
type viewKey struct {
	v   View
	cat *Catalog
}

type viewEntry struct {
	snap *Snapshot // the snapshot ix is built for
	ix   *Index
	byUp map[string][]*Entry // allowed entries per upstream at snap
	all  bool                // the view allowed every entry of snap: ix is snap.Index
	used uint64
}

// maxViewIndexes bounds the views kept.
const maxViewIndexes = 32

// Index returns the index to search for view v over snap.
func (vi *ViewIndexes) Index(v View, snap *Snapshot) *Index {
	key := viewKey{v, snap.Catalog()}
	vi.mu.Lock()
	vi.clock++
	if e := vi.views[key]; e != nil {
		e.used = vi.clock
		if e.snap == snap {
			vi.mu.Unlock()
			return e.ix
		}
		ix := e.ix
		if e.all {
			ix = snap.Index // a newer full index beats an old one; the refresh decides anew
		}
		vi.kickLocked()
		vi.mu.Unlock()
		return ix
	}
	vi.mu.Unlock()
	// A view's first search: built on the request path, once per view.
	e := buildView(v, snap, nil)
	vi.mu.Lock()
	defer vi.mu.Unlock()
	if old := vi.views[key]; old != nil {
		return old.ix // built by another request meanwhile
	}
	if vi.views == nil {
		vi.views = map[viewKey]*viewEntry{}
	}
	if len(vi.views) >= maxViewIndexes {
		var lru viewKey
		first := true
		for k, x := range vi.views {
			if first || x.used < vi.views[lru].used {
				lru, first = k, false
			}
		}
		delete(vi.views, lru)
	}
	e.used = vi.clock
	vi.views[key] = e
	return e.ix
}

// buildView returns v's index over snap, derived from prev when given.
func buildView(v View, snap *Snapshot, prev *viewEntry) *viewEntry {
	e := &viewEntry{snap: snap, byUp: map[string][]*Entry{}}
	n := 0
	for _, x := range snap.Entries {
		if v.Allows(x) {
			e.byUp[x.Upstream] = append(e.byUp[x.Upstream], x)
			n++
		}
	}
	if n == len(snap.Entries) {
		e.all, e.ix = true, snap.Index
		return e
	}
	if prev == nil || prev.all {
		allowed := make([]*Entry, 0, n)
		for _, x := range snap.Entries {
			if v.Allows(x) {
				allowed = append(allowed, x)
			}
		}
		e.ix = NewIndexWithParams(allowed, snap.Index.Params())
		return e
	}
	ix := prev.ix
	if ix.Params() != snap.Index.Params() {
		return buildView(v, snap, nil)
	}
	for up, es := range e.byUp {
		if !slices.Equal(es, prev.byUp[up]) {
			ix = ix.With(up, es)
		}
	}
	for up := range prev.byUp {
		if _, ok := e.byUp[up]; !ok {
			ix = ix.With(up, nil)
		}
	}
	e.ix = ix
	return e
}

// Published is the shared catalog's OnPublish hook: refresh the views of
// that catalog in the background.
func (vi *ViewIndexes) Published(*Snapshot) {
	vi.mu.Lock()
	defer vi.mu.Unlock()
	if len(vi.views) > 0 {
		vi.kickLocked()
	}
}

// kickLocked makes sure a refresh goroutine runs (vi.mu held). The
// goroutine ends when a pass finds no more work, so nothing lingers.
func (vi *ViewIndexes) kickLocked() {
	vi.dirty = true
	if vi.running {
		return
	}
	vi.running = true
	go vi.refresh()
}

// refresh brings every kept view's index to its catalog's newest
// snapshot, most recently used first, until no new snapshot arrived
// during a pass.
func (vi *ViewIndexes) refresh() {
	for {
		vi.mu.Lock()
		if !vi.dirty {
			vi.running = false
			vi.mu.Unlock()
			return
		}
		vi.dirty = false
		type job struct {
			k    viewKey
			e    *viewEntry
			used uint64
		}
		var jobs []job
		for k, e := range vi.views {
			jobs = append(jobs, job{k, e, e.used})
		}
		vi.mu.Unlock()
		slices.SortFunc(jobs, func(a, b job) int {
			if a.used > b.used {
				return -1
			}
			if a.used < b.used {
				return 1
			}
			return 0
		})
		for _, j := range jobs {
			snap := j.k.cat.Snapshot()
			if snap == j.e.snap {
				continue
			}
			ne := buildView(j.k.v, snap, j.e)
			vi.mu.Lock()
			if cur := vi.views[j.k]; cur == j.e { // not evicted or replaced meanwhile
				ne.used = cur.used
				vi.views[j.k] = ne
			}
			vi.mu.Unlock()
		}
	}
}
