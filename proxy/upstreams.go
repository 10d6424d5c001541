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

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
	"github.com/mcp-toolsearch/mcp-toolsearch/upstream"
)

type upstreamSet struct {
	opts    func(*config.Config) upstream.Options // options of a manager built for a config
	onTools func(up string, tools []*mcp.Tool)    // OnToolsChanged of the CURRENT manager of up

	mu   sync.RWMutex
	m    map[string]*upstream.Manager
	cfgs map[string]*config.Upstream
}

func newUpstreamSet(cfg *config.Config, opts func(*config.Config) upstream.Options, onTools func(string, []*mcp.Tool)) *upstreamSet {
	u := &upstreamSet{opts: opts, onTools: onTools, m: map[string]*upstream.Manager{}, cfgs: map[string]*config.Upstream{}}
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
	o.OnToolsChanged = func(name string, tools []*mcp.Tool) {
		u.mu.RLock()
		current := u.m[name] == self.Load()
		u.mu.RUnlock()
		if current {
			u.onTools(name, tools)
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

func (u *upstreamSet) Close(ctx context.Context) error { return closeAll(ctx, u.all()) }

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

func (u *upstreamSet) CallToolWith(ctx context.Context, name string, params *mcp.CallToolParams, o upstream.CallOptions) (*mcp.CallToolResult, error) {
	m, err := u.get(name)
	if err != nil {
		return nil, err
	}
	return m.CallToolWith(ctx, name, params, o)
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

// diff compares the running upstreams with the enabled ones of cfg.
func (u *upstreamSet) diff(cfg *config.Config) upstreamDiff {
	u.mu.RLock()
	defer u.mu.RUnlock()
	var d upstreamDiff
	next := map[string]*config.Upstream{}
	for _, up := range cfg.EnabledUpstreams() {
		next[up.Name] = up
		old, ok := u.cfgs[up.Name]
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

// prepare builds and starts the managers of the added and changed
// upstreams of cfg (the running ones keep serving meanwhile).
func (u *upstreamSet) prepare(ctx context.Context, cfg *config.Config, d upstreamDiff) map[string]*upstream.Manager {
	fresh := map[string]*upstream.Manager{}
	for _, up := range cfg.EnabledUpstreams() {
		if slices.Contains(d.added, up.Name) || slices.Contains(d.changed, up.Name) {
			fresh[up.Name] = u.newManager(cfg, up)
		}
	}
	startAll(ctx, fresh)
	return fresh
}

// swap installs the fresh managers and drops the removed ones; it returns
// the managers to close (removed, and the old ones of changed upstreams).
func (u *upstreamSet) swap(cfg *config.Config, d upstreamDiff, fresh map[string]*upstream.Manager) map[string]*upstream.Manager {
	u.mu.Lock()
	defer u.mu.Unlock()
	old := map[string]*upstream.Manager{}
	for _, name := range append(append([]string{}, d.removed...), d.changed...) {
		if m, ok := u.m[name]; ok {
			old[name] = m
		}
		delete(u.m, name)
		delete(u.cfgs, name)
	}
	for name, m := range fresh {
		u.m[name] = m
	}
	for _, up := range cfg.EnabledUpstreams() {
		u.cfgs[up.Name] = up
	}
	return old
}
