package catalog

import (
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// UpstreamInfo is what the catalog needs to know of one configured upstream.
type UpstreamInfo struct {
	Name       string
	Prefix     string   // exposed-name prefix; "" allowed
	Trusted    bool     // SPEC §4: trusted sources get signatures and output hints
	DirectOnly []string // original tool names kept out of the catalog and always visible (SPEC §2)
}

// Catalog is the merged, concurrency-safe set of entries of all upstreams.
// Every change produces a new immutable Snapshot with its own immutable
// search index view (Index.With), published atomically: readers
// (Snapshot) never wait for a rebuild and never see a half-applied change.
// Writers are serialized.
type Catalog struct {
	snap atomic.Pointer[Snapshot]

	mu       sync.Mutex
	sep      string // set by New, read-only after
	reserved []string
	ups      map[string]UpstreamInfo // set by New, read-only after
	tools    map[string][]*Entry     // upstream -> entries as last listed (ID/Exposed filled)
	down     map[string]string       // upstream -> reason it is unavailable
	version  uint64
	index    *Index // the latest snapshot's index; never changed, only replaced
	onPub    []func(*Snapshot)
	maxName  int // longest exposed name; 0 = MaxNameLen (SetMaxNameLen)
}

// Snapshot is one immutable state of the catalog.
type Snapshot struct {
	// Version grows by one with every change.
	Version uint64
	// Entries holds every entry (direct-only ones included), sorted by ID.
	Entries []*Entry
	// Unavailable maps an upstream name to the reason it is down. Its last
	// known tools stay in Entries (never silently gone); calls to them fail
	// naming the upstream and the reason.
	Unavailable map[string]string
	// Index is the search index over Entries.
	Index *Index
	// Clashes are the tools that wanted the same exposed name (or a
	// reserved one) and got hashed names instead (NameClashes).
	Clashes []Clash

	cat       *Catalog // the catalog that published it
	hits      sync.Map // hitKey -> Hit without score (Snapshot.Hit)
	byID      map[string]*Entry
	byExposed map[string]*Entry   // lower-case exposed name
	byName    map[string][]*Entry // lower-case original name
}

// New returns an empty catalog. sep joins prefix and tool name in exposed
// names (default "__"); reserved names (the modes' own tools) are never
// given to an upstream tool.
func New(sep string, reserved []string, ups []UpstreamInfo) *Catalog {
	if sep == "" {
		sep = "__"
	}
	c := &Catalog{sep: sep, reserved: reserved, ups: map[string]UpstreamInfo{}, tools: map[string][]*Entry{}, down: map[string]string{}, index: NewIndex(nil)}
	for _, u := range ups {
		c.ups[u.Name] = u
	}
	c.rebuildLocked(nil)
	return c
}

// SetMaxNameLen sets the longest exposed name (n < MaxNameLen leaves room
// for a prefix the client adds itself, config server.client_prefix_room);
// 0 means MaxNameLen. Call it before the first SetTools.
func (c *Catalog) SetMaxNameLen(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.maxName = n
	c.rebuildLocked(nil)
}

func (c *Catalog) maxNameLen() int {
	if c.maxName <= 0 || c.maxName > MaxNameLen {
		return MaxNameLen
	}
	return c.maxName
}

// SetSignals switches the search index's semantic and dense signals
// ([tool_search] semantic and dense): on at DefaultSemanticWeight and
// DefaultDenseWeight, off at 0; nil leaves a signal as it is. One rebuild
// for both.
func (c *Catalog) SetSignals(semantic, dense *bool) {
	if semantic == nil && dense == nil {
		return
	}
	weight := func(on bool, w float64) float64 {
		if on {
			return w
		}
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if semantic != nil {
		c.index = c.index.withSemantic(weight(*semantic, DefaultSemanticWeight))
	}
	if dense != nil {
		c.index = c.index.withDense(weight(*dense, DefaultDenseWeight))
	}
	c.rebuildLocked(nil)
}

// Snapshot returns the current state. It never returns nil and never
// waits: a rebuild in progress publishes its snapshot when it is done.
func (c *Catalog) Snapshot() *Snapshot {
	return c.snap.Load()
}

// OnPublish registers f to be called with every snapshot the catalog
// publishes from now on, in order, right after it is published (on the
// writer's goroutine, with the catalog's write lock held: f must be quick
// and must not call back into the catalog's writers; hand work to another
// goroutine).
func (c *Catalog) OnPublish(f func(*Snapshot)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.onPub = append(c.onPub, f)
}

// SetTools replaces the tools of one upstream and marks it available.
// Each given entry needs Name, and may carry Title, Description,
// InputSchema, OutputSchema, Annotations and Meta; the catalog fills ID,
// Exposed, Upstream, Trusted and DirectOnly. Exposed names of other
// upstreams change only where a new clash requires it (see AssignNames).
// An unknown upstream name is ignored.
func (c *Catalog) SetTools(upstream string, tools []*Entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	u, ok := c.ups[upstream]
	if !ok {
		return
	}
	direct := map[string]bool{}
	for _, d := range u.DirectOnly {
		direct[d] = true
	}
	seen := map[string]bool{}
	es := make([]*Entry, 0, len(tools))
	for _, t := range tools {
		if seen[t.Name] { // an upstream listing a name twice: the first wins
			continue
		}
		seen[t.Name] = true
		e := *t
		e.ID = ToolID(upstream, t.Name)
		e.Upstream = upstream
		e.Trusted = u.Trusted
		e.DirectOnly = direct[t.Name]
		es = append(es, &e)
	}
	c.tools[upstream] = es
	delete(c.down, upstream)
	c.rebuildLocked([]string{upstream})
}

// SetUnavailable records that an upstream is down and why; its last known
// tools stay listed. Passing reason "" clears the mark.
func (c *Catalog) SetUnavailable(upstream, reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if reason == "" {
		delete(c.down, upstream)
	} else {
		c.down[upstream] = reason
	}
	c.rebuildLocked(nil)
}

// rebuildLocked recomputes names and the snapshot. changed lists upstreams
// whose tools changed; the index is updated for them and for any upstream
// whose exposed names moved.
func (c *Catalog) rebuildLocked(changed []string) {
	var inputs []NameInput
	for up, es := range c.tools {
		for _, e := range es {
			inputs = append(inputs, NameInput{ID: e.ID, Prefix: c.ups[up].Prefix, Tool: e.Name})
		}
	}
	names := AssignNamesMax(inputs, c.sep, c.reserved, c.maxNameLen())
	clashes := NameClashes(inputs, c.sep, c.reserved)
	dirty := map[string]bool{}
	for _, up := range changed {
		dirty[up] = true
	}
	for up, es := range c.tools {
		for i, e := range es {
			if n := names[e.ID]; e.Exposed != n {
				ne := *e // entries are shared with old snapshots: copy on write
				ne.Exposed = n
				ne.Base = BaseName(c.ups[up].Prefix, c.sep, e.Name)
				es[i] = &ne
				dirty[up] = true
			}
		}
	}
	s := &Snapshot{Unavailable: map[string]string{}, Clashes: clashes, byID: map[string]*Entry{}, byExposed: map[string]*Entry{}, byName: map[string][]*Entry{}}
	for up, r := range c.down {
		s.Unavailable[up] = r
	}
	for _, es := range c.tools {
		s.Entries = append(s.Entries, es...)
	}
	sort.Slice(s.Entries, func(i, j int) bool { return s.Entries[i].ID < s.Entries[j].ID })
	for _, e := range s.Entries {
		s.byID[e.ID] = e
		s.byExposed[strings.ToLower(e.Exposed)] = e
		ln := strings.ToLower(e.Name)
		s.byName[ln] = append(s.byName[ln], e)
	}
	ups := make([]string, 0, len(dirty))
	for up := range dirty {
		ups = append(ups, up)
	}
	sort.Strings(ups)
	for _, up := range ups {
		c.index = c.index.With(up, c.tools[up])
	}
	c.version++
	s.Version = c.version
	s.Index = c.index
	s.cat = c
	c.snap.Store(s)
	for _, f := range c.onPub {
		f(s)
	}
}

// Catalog returns the catalog that published this snapshot.
func (s *Snapshot) Catalog() *Catalog { return s.cat }

// ByID returns the entry with this exact id, or nil.
func (s *Snapshot) ByID(id string) *Entry { return s.byID[id] }

// ByExposed returns the entry whose exposed name equals name
// (case-insensitively), or nil.
func (s *Snapshot) ByExposed(name string) *Entry { return s.byExposed[strings.ToLower(name)] }

// Resolve finds the entry a reference names: an exact id, an exposed name
// (case-insensitive), or an original tool name that is unique in the
// catalog. keep filters the candidates (policy); nil keeps all. When ref
// matches several tools, the candidates come back sorted by id and the
// entry is nil; when it matches none, both are nil.
func (s *Snapshot) Resolve(ref string, keep func(*Entry) bool) (*Entry, []*Entry) {
	ok := func(e *Entry) bool { return e != nil && (keep == nil || keep(e)) }
	if e := s.byID[ref]; ok(e) {
		return e, nil
	}
	if e := s.byExposed[strings.ToLower(ref)]; ok(e) {
		return e, nil
	}
	var cands []*Entry
	for _, e := range s.byName[strings.ToLower(ref)] {
		if ok(e) {
			cands = append(cands, e)
		}
	}
	if len(cands) == 1 {
		return cands[0], nil
	}
	return nil, cands
}

// UpstreamOf is the configured upstream that ref names by its form,
// whether or not such a tool is in the catalog: an id "mcp:<upstream>:…"
// (ToolID), or an exposed name "<prefix><sep>…" of an upstream with a
// non-empty prefix (case-insensitive, as exposed names resolve). "" when
// ref names none. For answers about a tool that is not there yet (its
// upstream still starting).
func (s *Snapshot) UpstreamOf(ref string) string {
	c := s.cat
	if c == nil {
		return ""
	}
	// c.ups and c.sep are set by New and only read afterwards, so no lock:
	// c.mu is the writers' (a rebuild holds it), and snapshot readers
	// never wait.
	if rest, ok := strings.CutPrefix(ref, "mcp:"); ok {
		if up, _, ok := strings.Cut(rest, ":"); ok {
			if _, known := c.ups[up]; known {
				return up
			}
		}
	}
	lr := strings.ToLower(ref)
	best := ""
	bestLen := 0
	for name, u := range c.ups {
		if u.Prefix == "" {
			continue
		}
		p := strings.ToLower(u.Prefix + c.sep)
		if len(p) > bestLen && strings.HasPrefix(lr, p) {
			best, bestLen = name, len(p)
		}
	}
	return best
}

// Suggest returns up to n entries whose id or exposed name is closest to
// ref (edit distance on lower-case strings, ties by id), for "unknown tool"
// errors. keep filters the candidates (policy).
func (s *Snapshot) Suggest(ref string, n int, keep func(*Entry) bool) []*Entry {
	type sc struct {
		e *Entry
		d int
	}
	lr := strings.ToLower(ref)
	var all []sc
	for _, e := range s.Entries {
		if keep != nil && !keep(e) {
			continue
		}
		d := min(editDistance(lr, strings.ToLower(e.Exposed)), editDistance(lr, strings.ToLower(e.ID)), editDistance(lr, strings.ToLower(e.Name)))
		if strings.Contains(strings.ToLower(e.Exposed), lr) && lr != "" {
			d = min(d, 1)
		}
		all = append(all, sc{e, d})
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].d != all[j].d {
			return all[i].d < all[j].d
		}
		return all[i].e.ID < all[j].e.ID
	})
	var out []*Entry
	for _, x := range all {
		if len(out) == n || x.d > max(3, len(lr)/2) {
			break
		}
		out = append(out, x.e)
	}
	return out
}

func editDistance(a, b string) int {
	if len(a) > 128 || len(b) > 128 { // bounded cost on hostile input
		if a == b {
			return 0
		}
		return 1 << 20
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
