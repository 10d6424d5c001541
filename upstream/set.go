package upstream

// Set holds one Manager per upstream, so that a config reload can start,
// stop or restart one upstream without touching the others: calls to an
// upstream whose config did not change never see the reload. It offers the
// Manager methods the proxy uses.

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
	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
)

type Set struct {
	opts    func(*config.Config) Options                            // options of a manager built for a config
	onTools func(up string, tools []*mcp.Tool, current func() bool) // OnToolsChanged of the CURRENT manager of up; current asks again

	mu       sync.RWMutex
	m        map[string]*Manager
	cfgs     map[string]*config.Upstream // the config each manager of m was built with
	retiring map[*Manager]bool           // replaced or removed by a reload, draining (retire)
	// pending are the new instances of upstreams a reload restarted while
	// their old instance (in m) was ready: each is starting, and the old
	// one serves until the new one's first attempt settled (the proxy's
	// reload switches it); a later reload that changes or removes the
	// upstream again drops it.
	pending map[string]*PendingStart
	// notApplied are the upstreams whose new instance (a reload's change)
	// failed to start while the old one was ready: the old one serves on,
	// with its config before the reload; value: why (KeepOld).
	notApplied map[string]string
}

// PendingStart is the new instance of a restarted upstream, starting in
// the background while the old one serves.
type PendingStart struct {
	M        *Manager
	Cfg      *config.Upstream // its config (the upstream's config after the reload)
	Ctx      context.Context  // ends when a later reload drops it, or at the proxy's Close
	Cancel   context.CancelFunc
	Done     chan struct{} // closed when the proxy is done with it (switched, dropped or closed)
	Switched bool          // set before Done is closed: it replaced the old instance
	Kept     bool          // set before Done is closed: it failed to start, the old instance serves on
}

func NewSet(cfg *config.Config, opts func(*config.Config) Options, onTools func(string, []*mcp.Tool, func() bool)) *Set {
	u := &Set{opts: opts, onTools: onTools, m: map[string]*Manager{}, cfgs: map[string]*config.Upstream{}, retiring: map[*Manager]bool{}, pending: map[string]*PendingStart{}}
	for _, up := range cfg.EnabledUpstreams() {
		u.m[up.Name] = u.newManager(cfg, up)
		u.cfgs[up.Name] = up
	}
	return u
}

// newManager builds the manager of up. Its tool listings reach onTools
// only while it is the current manager of up: a manager being started by a
// reload, or stopped after one, cannot touch the catalog.
func (u *Set) newManager(cfg *config.Config, up *config.Upstream) *Manager {
	var self atomic.Pointer[Manager]
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
			// the new instance's.
			u.onTools(name, tools, func() bool { return current(name) })
		}
	}
	m := NewManager([]*config.Upstream{up}, o)
	self.Store(m)
	return m
}

func (u *Set) Get(name string) (*Manager, error) {
	u.mu.RLock()
	m, ok := u.m[name]
	u.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("upstream %q: %w", name, ErrUnknownUpstream)
	}
	return m, nil
}

func (u *Set) all() map[string]*Manager {
	u.mu.RLock()
	defer u.mu.RUnlock()
	out := make(map[string]*Manager, len(u.m))
	for k, v := range u.m {
		out[k] = v
	}
	return out
}

// startAll starts managers concurrently and returns when each is ready,
// failed or past its startup_timeout.
func startAll(ctx context.Context, ms map[string]*Manager) {
	var wg sync.WaitGroup
	for _, m := range ms {
		wg.Add(1)
		go func() { defer wg.Done(); m.Start(ctx) }()
	}
	wg.Wait()
}

func closeAll(ctx context.Context, ms map[string]*Manager) error {
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

func (u *Set) Start(ctx context.Context) { startAll(ctx, u.all()) }

// Launch starts every manager in the background (Manager.Launch).
func (u *Set) Launch() {
	for _, m := range u.all() {
		m.Launch()
	}
}

// WaitSettled waits until every upstream's first attempt settled or ctx
// ends; it reports whether all settled (Manager.WaitSettled).
func (u *Set) WaitSettled(ctx context.Context) bool {
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
func (u *Set) Close(ctx context.Context) error {
	ms := u.all()
	u.mu.RLock()
	for m := range u.retiring {
		ms[fmt.Sprintf("retiring %p", m)] = m
	}
	for name, ps := range u.pending {
		ps.Cancel()
		ms["pending "+name] = ps.M
	}
	u.mu.RUnlock()
	return closeAll(ctx, ms)
}

// Names are the upstream names, sorted.
func (u *Set) Names() []string {
	u.mu.RLock()
	defer u.mu.RUnlock()
	out := make([]string, 0, len(u.m))
	for k := range u.m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (u *Set) Status(name string) (Status, bool) {
	m, err := u.Get(name)
	if err != nil {
		return Status{}, false
	}
	return m.Status(name)
}

// Statuses are every upstream's status, sorted by name.
func (u *Set) Statuses() []Status {
	var out []Status
	for _, name := range u.Names() {
		if st, ok := u.Status(name); ok {
			out = append(out, st)
		}
	}
	return out
}

func (u *Set) SessionFor(name string) (*mcp.ClientSession, error) {
	m, err := u.Get(name)
	if err != nil {
		return nil, err
	}
	return m.SessionFor(name)
}

func (u *Set) OpenSession(ctx context.Context, name string, opts *mcp.ClientOptions, mw mcp.Middleware, onTools func([]*mcp.Tool)) (*ClientConn, error) {
	m, err := u.Get(name)
	if err != nil {
		return nil, err
	}
	return m.OpenSession(ctx, name, opts, mw, onTools)
}

// CallToolWith is Manager.CallToolWith on the current manager of
// name. A call that reached a manager a reload had just replaced (it was
// not sent: ErrRetired) is sent once more to the new one; when
// the upstream was removed, the retired manager's error says so.
func (u *Set) CallToolWith(ctx context.Context, name string, params *mcp.CallToolParams, o CallOptions) (*mcp.CallToolResult, error) {
	m, err := u.Get(name)
	if err != nil {
		return nil, err
	}
	return u.CallOn(ctx, m, name, params, o)
}

// CallOn is CallToolWith on m, a manager of name that Get returned: when
// a reload retired m before the call reached it, the call goes to the
// manager that replaced it.
func (u *Set) CallOn(ctx context.Context, m *Manager, name string, params *mcp.CallToolParams, o CallOptions) (*mcp.CallToolResult, error) {
	res, err := m.CallToolWith(ctx, name, params, o)
	if err != nil && errors.Is(err, ErrRetired) {
		if next, gerr := u.Get(name); gerr == nil && next != m {
			return next.CallToolWith(ctx, name, params, o)
		}
	}
	return res, err
}

// Settle is Manager.Settle on name's manager (no manager: no wait).
func (u *Set) Settle(name string, cc *ClientConn, wait time.Duration) {
	if m, err := u.Get(name); err == nil {
		m.Settle(name, cc, wait)
	}
}

// Capability is Manager.Capability for the shared session of
// upstream name (nil when unknown or not ready).
func (u *Set) Capability(name, capName string) json.RawMessage {
	m, err := u.Get(name)
	if err != nil {
		return nil
	}
	return m.Capability(name, nil, capName)
}

// Request is Manager.Request (tasks.go).
func (u *Set) Request(ctx context.Context, name string, cc *ClientConn, method string, params json.RawMessage) (json.RawMessage, error) {
	m, err := u.Get(name)
	if err != nil {
		return nil, err
	}
	return m.Request(ctx, name, cc, method, params)
}

// Diff is what a reload changes: names added, removed, and whose
// config changed (restarted).
type Diff struct{ Added, Removed, Changed []string }

// Diff compares the upstreams in force (a restarted upstream still on its
// old instance counts with its new config) with the enabled ones of cfg.
func (u *Set) Diff(cfg *config.Config) Diff {
	u.mu.RLock()
	defer u.mu.RUnlock()
	var d Diff
	next := map[string]*config.Upstream{}
	for _, up := range cfg.EnabledUpstreams() {
		next[up.Name] = up
		old, ok := u.cfgs[up.Name]
		if ps := u.pending[up.Name]; ps != nil {
			old = ps.Cfg
		}
		switch {
		case !ok:
			d.Added = append(d.Added, up.Name)
		case !reflect.DeepEqual(old, up):
			d.Changed = append(d.Changed, up.Name)
		}
	}
	for name := range u.cfgs {
		if _, ok := next[name]; !ok {
			d.Removed = append(d.Removed, name)
		}
	}
	sort.Strings(d.Added)
	sort.Strings(d.Removed)
	sort.Strings(d.Changed)
	return d
}

// Plan is how a reload brings in the upstreams it adds or restarts.
// Nothing in it waits for an upstream: a reload switches everything else
// at once.
type Plan struct {
	// now are installed at the switch and started right after it, in the
	// background, as at the proxy's start: the added upstreams, and the
	// restarted ones whose old instance is not ready (it serves nothing
	// worth keeping).
	Now map[string]*Manager
	// later are the restarted upstreams whose old instance is ready: the
	// new one starts in the background and replaces the old one once its
	// first attempt settled (the proxy switches it: SwitchPending).
	Later map[string]*PendingStart
	// back are restarted upstreams whose new config is again the one their
	// serving instance has: only their pending start is dropped.
	Back []string
}

// Plan builds (does not start) the managers of the added and changed
// upstreams of cfg. life bounds the pending starts (the proxy's life).
func (u *Set) Plan(life context.Context, cfg *config.Config, d Diff) Plan {
	pl := Plan{Now: map[string]*Manager{}, Later: map[string]*PendingStart{}}
	u.mu.RLock()
	defer u.mu.RUnlock()
	for _, up := range cfg.EnabledUpstreams() {
		switch {
		case slices.Contains(d.Added, up.Name):
			pl.Now[up.Name] = u.newManager(cfg, up)
		case slices.Contains(d.Changed, up.Name):
			if reflect.DeepEqual(u.cfgs[up.Name], up) {
				pl.Back = append(pl.Back, up.Name)
				continue
			}
			if m := u.m[up.Name]; m != nil && readyManager(m, up.Name) {
				ctx, cancel := context.WithCancel(life)
				pl.Later[up.Name] = &PendingStart{M: u.newManager(cfg, up), Cfg: up, Ctx: ctx, Cancel: cancel, Done: make(chan struct{})}
				continue
			}
			pl.Now[up.Name] = u.newManager(cfg, up)
		}
	}
	return pl
}

// Swap installs the plan's managers: the ones to start now replace the
// old ones (or are new), the later ones become pending, and the removed
// ones are dropped. It returns the managers to retire (removed, and the
// old ones of upstreams restarted now), each with its config before the
// reload, and the pending starts the reload dropped (the caller closes
// them: they never served).
func (u *Set) Swap(cfg *config.Config, d Diff, pl Plan) (map[string]Retiree, []*Manager) {
	u.mu.Lock()
	defer u.mu.Unlock()
	var dropped []*Manager
	for _, name := range append(append([]string{}, d.Removed...), d.Changed...) {
		if ps := u.pending[name]; ps != nil {
			ps.Cancel()
			dropped = append(dropped, ps.M)
			delete(u.pending, name)
		}
	}
	old := map[string]Retiree{}
	for _, name := range d.Removed {
		old[name] = u.dropLocked(name, "removed by a config reload")
	}
	for name, m := range pl.Now {
		if _, ok := u.m[name]; ok {
			old[name] = u.dropLocked(name, "restarted by a config reload")
		}
		u.m[name] = m
	}
	for name, ps := range pl.Later {
		u.pending[name] = ps
	}
	u.forgetNotAppliedLocked(pl.Later)
	for _, up := range cfg.EnabledUpstreams() {
		if _, later := pl.Later[up.Name]; !later {
			u.cfgs[up.Name] = up
		}
	}
	return old, dropped
}

// dropLocked takes the manager of name out of the set (u.mu held) and
// returns it as a Retiree: it drains and stops (retire).
func (u *Set) dropLocked(name, why string) Retiree {
	r := Retiree{m: u.m[name], cfg: u.cfgs[name], why: why}
	u.retiring[r.m] = true
	delete(u.m, name)
	delete(u.cfgs, name)
	return r
}

func readyManager(m *Manager, name string) bool {
	st, ok := m.Status(name)
	return ok && st.State == StateReady
}

// SwitchPending makes ps, the pending start of name, its current manager
// and returns the old ones to retire; false when a later reload dropped
// ps.
func (u *Set) SwitchPending(name string, ps *PendingStart) (map[string]Retiree, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.pending[name] != ps {
		return nil, false
	}
	delete(u.pending, name)
	delete(u.notApplied, name)
	old := map[string]Retiree{}
	if _, ok := u.m[name]; ok {
		old[name] = u.dropLocked(name, "restarted by a config reload")
	}
	u.m[name] = ps.M
	u.cfgs[name] = ps.Cfg
	return old, true
}

// Retiree is a manager a reload replaced or removed.
type Retiree struct {
	m   *Manager
	cfg *config.Upstream // its config before the reload
	why string           // "restarted by a config reload" or "removed by a config reload"
}

// drainSlack is added to an old upstream's call_timeout to bound the
// drain, so that a call without progress ends by its own call_timeout
// (with that error) rather than being cut.
const drainSlack = time.Second

// Retire drains and closes the managers a reload replaced or removed, in
// the background (each takes no new call once retire returns): calls in flight on each finish on it, for at most its
// call_timeout (default 60s) plus drainSlack; calls still running then
// (a call that reported progress may run up to 10 × call_timeout) are
// cut with an error saying the upstream was restarted or removed by a
// config reload. done is called when all are closed.
func (u *Set) Retire(old map[string]Retiree, log func(name string, err error), done func()) {
	var wg sync.WaitGroup
	for name, r := range old {
		bound := r.cfg.CallTimeout.Duration
		if bound <= 0 {
			bound = DefaultCallTimeout
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

// KeepOld drops ps, the pending start of name, and marks the reload's
// change of name as not applied, when ps is still pending and the current
// (old) manager of name is ready.
func (u *Set) KeepOld(name string, ps *PendingStart, reason string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.pending[name] != ps {
		return false
	}
	if m := u.m[name]; m == nil || !readyManager(m, name) {
		return false
	}
	delete(u.pending, name)
	if u.notApplied == nil {
		u.notApplied = map[string]string{}
	}
	u.notApplied[name] = "the reload's change was not applied: its new instance failed to start (" + reason + "); the old instance serves with the config before the reload"
	return true
}

// forgetNotAppliedLocked (u.mu held, at a reload's swap) clears the mark
// of every upstream the reload does not start again: its config is the
// running one again, it was removed, or it was replaced at once. Those
// being started again (later) keep it until their new instance switches
// or fails again.
func (u *Set) forgetNotAppliedLocked(later map[string]*PendingStart) {
	for name := range u.notApplied {
		if _, ok := later[name]; !ok {
			delete(u.notApplied, name)
		}
	}
}

// NotApplied returns, by upstream name, why a reload's change of it is not
// applied (its old instance serves); nil when there is none.
func (u *Set) NotApplied() map[string]string {
	u.mu.RLock()
	defer u.mu.RUnlock()
	if len(u.notApplied) == 0 {
		return nil
	}
	out := make(map[string]string, len(u.notApplied))
	for k, v := range u.notApplied {
		out[k] = v
	}
	return out
}

// notAppliedDesc is mcp_toolsearch_upstream_reload_not_applied{upstream}.
var notAppliedDesc = prometheus.NewDesc("mcp_toolsearch_upstream_reload_not_applied",
	"1 while a config reload's change of the upstream is not applied because its new instance failed to start; the old instance serves with the config before the reload (the next reload tries again).",
	[]string{"upstream"}, nil)

// NotAppliedCollector reads the marks at each scrape.
type NotAppliedCollector struct{ U *Set }

func (c NotAppliedCollector) Describe(ch chan<- *prometheus.Desc) { ch <- notAppliedDesc }

func (c NotAppliedCollector) Collect(ch chan<- prometheus.Metric) {
	for name := range c.U.NotApplied() {
		ch <- prometheus.MustNewConstMetric(notAppliedDesc, prometheus.GaugeValue, 1, name)
	}
}
