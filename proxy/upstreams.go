package proxy

// upstreamSet holds one upstream.Manager per upstream, so that a reload
// (reload.go) can start, stop or restart one upstream without touching the
// others: calls to an upstream whose config did not change never see the
// reload. It offers the Manager methods the proxy uses.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
	"github.com/mcp-toolsearch/mcp-toolsearch/upstream"
)

type upstreamSet struct {
	opts    func(*config.Config) upstream.Options                   // options of a manager built for a config
	onTools func(up string, tools []*mcp.Tool, current func() bool) // OnToolsChanged of the CURRENT manager of up; current asks again

	mu       sync.RWMutex
	m        map[string]*upstream.Manager
	cfgs     map[string]*config.Upstream // the config each manager of m was built with
	retiring map[*upstream.Manager]bool  // replaced or removed by a reload, draining (retire)
	// pending are the new instances of upstreams a reload restarted while
	// their old instance (in m) was ready: each is starting, and the old
	// one serves until the new one's first attempt settled (reload.go
	// switchWhenStarted); a later reload that changes or removes the
	// upstream again drops it.
	pending map[string]*pendingStart
	// notApplied are the upstreams whose new instance (a reload's change)
	// failed to start while the old one was ready: the old one serves on,
	// with its config before the reload; value: why (reloadkeep.go).
	notApplied map[string]string
}

// pendingStart is the new instance of a restarted upstream, starting in
// the background while the old one serves.
type pendingStart struct {
	m        *upstream.Manager
	cfg      *config.Upstream // its config (the upstream's config after the reload)
	ctx      context.Context  // ends when a later reload drops it, or at the proxy's Close
	cancel   context.CancelFunc
	done     chan struct{} // closed when switchWhenStarted returns (switched, dropped or closed)
	switched bool          // set before done is closed: it replaced the old instance
	kept     bool          // set before done is closed: it failed to start, the old instance serves on (reloadkeep.go)
}

func newUpstreamSet(cfg *config.Config, opts func(*config.Config) upstream.Options, onTools func(string, []*mcp.Tool, func() bool)) *upstreamSet {
	u := &upstreamSet{opts: opts, onTools: onTools, m: map[string]*upstream.Manager{}, cfgs: map[string]*config.Upstream{}, retiring: map[*upstream.Manager]bool{}, pending: map[string]*pendingStart{}}
	for _, up := range cfg.EnabledUpstreams() {
		u.m[up.Name] = u.newManager(cfg, up)
		u.cfgs[up.Name] = up
	}
	return u
}

// newManager builds the manager of up. Its tool listings reach onTools
// only while it is the current manager of up: a manager being started by a
// reload, or stopped after one, cannot touch the catalog.
func (u *upstreamSet) newManager(cfg *config.Config, up *config.Upstream) *upstream.Manager {
	var self atomic.Pointer[upstream.Manager]
	o := u.opts(cfg)
	current := func(name string) bool {
		u.mu.RLock()
		defer u.mu.RUnlock()
		return u.m[name] == self.Load()
	}
	o.OnToolsChanged = func(name string, tools []*mcp.Tool) {
		if current(name) {
			// onTools asks again once it holds the reload lock: a
			// reload's switch (under that lock) may have replaced this
			// manager in between, and its listing would then overwrite
			// the new instance's (review round 7).
			u.onTools(name, tools, func() bool { return current(name) })
		}
	}
	m := upstream.NewManager([]*config.Upstream{up}, o)
	self.Store(m)
	return m
}

func (u *upstreamSet) get(name string) (*upstream.Manager, error) {
	u.mu.RLock()
	m, ok := u.m[name]
	u.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("upstream %q: %w", name, upstream.ErrUnknownUpstream)
	}
	return m, nil
}

func (u *upstreamSet) all() map[string]*upstream.Manager {
	u.mu.RLock()
	defer u.mu.RUnlock()
	out := make(map[string]*upstream.Manager, len(u.m))
	for k, v := range u.m {
		out[k] = v
	}
	return out
}

// startAll starts managers concurrently and returns when each is ready,
// failed or past its startup_timeout.
func startAll(ctx context.Context, ms map[string]*upstream.Manager) {
	var wg sync.WaitGroup
	for _, m := range ms {
		wg.Add(1)
		go func() { defer wg.Done(); m.Start(ctx) }()
	}
	wg.Wait()
}

func closeAll(ctx context.Context, ms map[string]*upstream.Manager) error {
	var wg sync.WaitGroup
	errs := make([]error, 0, len(ms))
	var mu sync.Mutex
	for _, m := range ms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := m.Close(ctx); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (u *upstreamSet) Start(ctx context.Context) { startAll(ctx, u.all()) }

// Launch starts every manager in the background (upstream.Manager.Launch).
func (u *upstreamSet) Launch() {
	for _, m := range u.all() {
		m.Launch()
	}
}

// WaitSettled waits until every upstream's first attempt settled or ctx
// ends; it reports whether all settled (upstream.Manager.WaitSettled).
func (u *upstreamSet) WaitSettled(ctx context.Context) bool {
	ms := u.all()
	var wg sync.WaitGroup
	var missing atomic.Bool
	for _, m := range ms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !m.WaitSettled(ctx) {
				missing.Store(true)
			}
		}()
	}
	wg.Wait()
	return !missing.Load()
}

// Close closes every manager, the current ones and those a reload is
// still draining (their calls in flight are cut).
func (u *upstreamSet) Close(ctx context.Context) error {
	ms := u.all()
	u.mu.RLock()
	for m := range u.retiring {
		ms[fmt.Sprintf("retiring %p", m)] = m
	}
	for name, ps := range u.pending {
		ps.cancel()
		ms["pending "+name] = ps.m
	}
	u.mu.RUnlock()
	return closeAll(ctx, ms)
}

// Names are the upstream names, sorted.
func (u *upstreamSet) Names() []string {
	u.mu.RLock()
	defer u.mu.RUnlock()
	out := make([]string, 0, len(u.m))
	for k := range u.m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (u *upstreamSet) Status(name string) (upstream.Status, bool) {
	m, err := u.get(name)
	if err != nil {
		return upstream.Status{}, false
	}
	return m.Status(name)
}

// Statuses are every upstream's status, sorted by name.
func (u *upstreamSet) Statuses() []upstream.Status {
	var out []upstream.Status
	for _, name := range u.Names() {
		if st, ok := u.Status(name); ok {
			out = append(out, st)
		}
	}
	return out
}

func (u *upstreamSet) SessionFor(name string) (*mcp.ClientSession, error) {
	m, err := u.get(name)
	if err != nil {
		return nil, err
	}
	return m.SessionFor(name)
}

func (u *upstreamSet) OpenSession(ctx context.Context, name string, opts *mcp.ClientOptions, mw mcp.Middleware, onTools func([]*mcp.Tool)) (*upstream.ClientConn, error) {
	m, err := u.get(name)
	if err != nil {
		return nil, err
	}
	return m.OpenSession(ctx, name, opts, mw, onTools)
}

// CallToolWith is upstream.Manager.CallToolWith on the current manager of
// name. A call that reached a manager a reload had just replaced (it was
// not sent: upstream.ErrRetired) is sent once more to the new one; when
// the upstream was removed, the retired manager's error says so.
func (u *upstreamSet) CallToolWith(ctx context.Context, name string, params *mcp.CallToolParams, o upstream.CallOptions) (*mcp.CallToolResult, error) {
	m, err := u.get(name)
	if err != nil {
		return nil, err
	}
	return u.callOn(ctx, m, name, params, o)
}

// callOn is CallToolWith on m, a manager of name that get returned.
func (u *upstreamSet) callOn(ctx context.Context, m *upstream.Manager, name string, params *mcp.CallToolParams, o upstream.CallOptions) (*mcp.CallToolResult, error) {
	res, err := m.CallToolWith(ctx, name, params, o)
	if err != nil && errors.Is(err, upstream.ErrRetired) {
		if next, gerr := u.get(name); gerr == nil && next != m {
			return next.CallToolWith(ctx, name, params, o)
		}
	}
	return res, err
}

// Settle is upstream.Manager.Settle on name's manager (no manager: no wait).
func (u *upstreamSet) Settle(name string, cc *upstream.ClientConn, wait time.Duration) {
	if m, err := u.get(name); err == nil {
		m.Settle(name, cc, wait)
	}
}

// Capability is upstream.Manager.Capability for the shared session of
// upstream name (nil when unknown or not ready).
func (u *upstreamSet) Capability(name, capName string) json.RawMessage {
	m, err := u.get(name)
	if err != nil {
		return nil
	}
	return m.Capability(name, nil, capName)
}

// Request is upstream.Manager.Request (tasks.go).
func (u *upstreamSet) Request(ctx context.Context, name string, cc *upstream.ClientConn, method string, params json.RawMessage) (json.RawMessage, error) {
	m, err := u.get(name)
	if err != nil {
		return nil, err
	}
	return m.Request(ctx, name, cc, method, params)
}

// upstreamDiff is what a reload changes: names added, removed, and whose
// config changed (restarted).
type upstreamDiff struct{ added, removed, changed []string }

func (d upstreamDiff) empty() bool { return len(d.added)+len(d.removed)+len(d.changed) == 0 }

// diff compares the upstreams in force (a restarted upstream still on its
// old instance counts with its new config) with the enabled ones of cfg.
func (u *upstreamSet) diff(cfg *config.Config) upstreamDiff {
	u.mu.RLock()
	defer u.mu.RUnlock()
	var d upstreamDiff
	next := map[string]*config.Upstream{}
	for _, up := range cfg.EnabledUpstreams() {
		next[up.Name] = up
		old, ok := u.cfgs[up.Name]
		if ps := u.pending[up.Name]; ps != nil {
			old = ps.cfg
		}
		switch {
		case !ok:
			d.added = append(d.added, up.Name)
		case !reflect.DeepEqual(old, up):
			d.changed = append(d.changed, up.Name)
		}
	}
	for name := range u.cfgs {
		if _, ok := next[name]; !ok {
			d.removed = append(d.removed, name)
		}
	}
	sort.Strings(d.added)
	sort.Strings(d.removed)
	sort.Strings(d.changed)
	return d
}

// reloadPlan is how a reload brings in the upstreams it adds or restarts.
// Nothing in it waits for an upstream: a reload switches everything else
// at once.
type reloadPlan struct {
	// now are installed at the switch and started right after it, in the
	// background, as at the proxy's start: the added upstreams, and the
	// restarted ones whose old instance is not ready (it serves nothing
	// worth keeping).
	now map[string]*upstream.Manager
	// later are the restarted upstreams whose old instance is ready: the
	// new one starts in the background and replaces the old one once its
	// first attempt settled (reload.go switchWhenStarted).
	later map[string]*pendingStart
	// back are restarted upstreams whose new config is again the one their
	// serving instance has: only their pending start is dropped.
	back []string
}

// plan builds (does not start) the managers of the added and changed
// upstreams of cfg. life bounds the pending starts (the proxy's life).
func (u *upstreamSet) plan(life context.Context, cfg *config.Config, d upstreamDiff) reloadPlan {
	pl := reloadPlan{now: map[string]*upstream.Manager{}, later: map[string]*pendingStart{}}
	u.mu.RLock()
	defer u.mu.RUnlock()
	for _, up := range cfg.EnabledUpstreams() {
		switch {
		case slices.Contains(d.added, up.Name):
			pl.now[up.Name] = u.newManager(cfg, up)
		case slices.Contains(d.changed, up.Name):
			if reflect.DeepEqual(u.cfgs[up.Name], up) {
				pl.back = append(pl.back, up.Name)
				continue
			}
			if m := u.m[up.Name]; m != nil && readyManager(m, up.Name) {
				ctx, cancel := context.WithCancel(life)
				pl.later[up.Name] = &pendingStart{m: u.newManager(cfg, up), cfg: up, ctx: ctx, cancel: cancel, done: make(chan struct{})}
				continue
			}
			pl.now[up.Name] = u.newManager(cfg, up)
		}
	}
	return pl
}

// swap installs the plan's managers: the ones to start now replace the
// old ones (or are new), the later ones become pending, and the removed
// ones are dropped. It returns the managers to retire (removed, and the
// old ones of upstreams restarted now), each with its config before the
// reload, and the pending starts the reload dropped (the caller closes
// them: they never served).
func (u *upstreamSet) swap(cfg *config.Config, d upstreamDiff, pl reloadPlan) (map[string]retiree, []*upstream.Manager) {
	u.mu.Lock()
	defer u.mu.Unlock()
	var dropped []*upstream.Manager
	for _, name := range append(append([]string{}, d.removed...), d.changed...) {
		if ps := u.pending[name]; ps != nil {
			ps.cancel()
			dropped = append(dropped, ps.m)
			delete(u.pending, name)
		}
	}
	old := map[string]retiree{}
	for _, name := range d.removed {
		old[name] = u.dropLocked(name, "removed by a config reload")
	}
	for name, m := range pl.now {
		if _, ok := u.m[name]; ok {
			old[name] = u.dropLocked(name, "restarted by a config reload")
		}
		u.m[name] = m
	}
	for name, ps := range pl.later {
		u.pending[name] = ps
	}
	u.forgetNotAppliedLocked(pl.later) // reloadkeep.go
	for _, up := range cfg.EnabledUpstreams() {
		if _, later := pl.later[up.Name]; !later {
			u.cfgs[up.Name] = up
		}
	}
	return old, dropped
}

// dropLocked takes the manager of name out of the set (u.mu held) and
// returns it as a retiree: it drains and stops (retire).
func (u *upstreamSet) dropLocked(name, why string) retiree {
	r := retiree{m: u.m[name], cfg: u.cfgs[name], why: why}
	u.retiring[r.m] = true
	delete(u.m, name)
	delete(u.cfgs, name)
	return r
}

func readyManager(m *upstream.Manager, name string) bool {
	st, ok := m.Status(name)
	return ok && st.State == upstream.StateReady
}

// switchPending makes ps, the pending start of name, its current manager
// and returns the old ones to retire; false when a later reload dropped
// ps.
func (u *upstreamSet) switchPending(name string, ps *pendingStart) (map[string]retiree, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.pending[name] != ps {
		return nil, false
	}
	delete(u.pending, name)
	delete(u.notApplied, name)
	old := map[string]retiree{}
	if _, ok := u.m[name]; ok {
		old[name] = u.dropLocked(name, "restarted by a config reload")
	}
	u.m[name] = ps.m
	u.cfgs[name] = ps.cfg
	return old, true
}

// retiree is a manager a reload replaced or removed.
type retiree struct {
	m   *upstream.Manager
	cfg *config.Upstream // its config before the reload
	why string           // "restarted by a config reload" or "removed by a config reload"
}

// drainSlack is added to an old upstream's call_timeout to bound the
// drain, so that a call without progress ends by its own call_timeout
// (with that error) rather than being cut.
const drainSlack = time.Second

// retire drains and closes the managers a reload replaced or removed, in
// the background (each takes no new call once retire returns): calls in flight on each finish on it, for at most its
// call_timeout (default 60s) plus drainSlack; calls still running then
// (a call that reported progress may run up to 10 × call_timeout) are
// cut with an error saying the upstream was restarted or removed by a
// config reload. done is called when all are closed.
func (u *upstreamSet) retire(old map[string]retiree, log func(name string, err error), done func()) {
	var wg sync.WaitGroup
	for name, r := range old {
		bound := r.cfg.CallTimeout.Duration
		if bound <= 0 {
			bound = upstream.DefaultCallTimeout
		}
		bound += drainSlack
		ctx, cancel := context.WithTimeout(context.Background(), bound+time.Minute)
		done := r.m.Retire(ctx, r.why, bound) // takes no new call from here on
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer cancel()
			if err := <-done; err != nil {
				log(name, err)
			}
			u.mu.Lock()
			delete(u.retiring, r.m)
			u.mu.Unlock()
		}()
	}
	go func() {
		wg.Wait()
		if done != nil {
			done()
		}
	}()
}
