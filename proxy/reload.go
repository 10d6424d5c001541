package proxy

// Reload without restart (issue 11 item 5). The CLI re-reads the config
// file on SIGHUP (Unix) and, with [server] watch_config, when the file
// changes; an invalid file never gets here (config.Load refuses it with
// the same file:line problems as at start, and the running config stays).
//
// Reload applies a valid config:
//
//  1. upstreams added or changed are started first (bounded by their
//     startup_timeout) while everything keeps serving;
//  2. then, at once (under reloadMu), the new catalog (unchanged upstreams
//     keep their tools and states), the policy, the surface (mode) and the
//     config are swapped, and the upstream managers of added and changed
//     upstreams replace the old ones;
//  3. removed upstreams and the old sessions of changed ones take no new
//     call (new calls go to the new session) and are stopped once their
//     calls in flight are done, at most their call_timeout (+1s) later
//     (upstreamSet.retire); clients get notifications/tools/list_changed
//     (and resources and prompts list_changed).
//
// Calls to upstreams whose config did not change never notice: their
// upstream managers are not touched. What a reload cannot change (it needs
// a restart, and is logged as such): [server] (transport, listen, tokens,
// limits), endpoint paths and tokens, endpoints added or removed,
// [telemetry], and (issue 18) [auth], [rate_limits], [audit] and
// upstreams' [credential] tables. Every reload, applied or refused, is a
// line of the audit log.

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"time"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
	"github.com/mcp-toolsearch/mcp-toolsearch/config"
	"github.com/mcp-toolsearch/mcp-toolsearch/policy"
	"github.com/mcp-toolsearch/mcp-toolsearch/upstream"
)

// ReloadReport says what a reload changed.
type ReloadReport struct {
	Added, Removed, Changed []string // upstream names
	Policy                  bool     // the rules changed
	Mode                    string   // the mode after the reload
	ModeChanged             bool
	NeedsRestart            []string // config sections that changed but need a restart
}

// Reload applies next (a config loaded and validated by config.Load, with
// the command line's overrides applied) as described at the top of this
// file. It returns an error, and changes nothing, when next's policy does
// not compile. A fail-closed policy (an allow list resolving to no tool)
// is logged as an error after the switch: the subjects it names then see
// no tool, as the rule says.
func (p *Proxy) Reload(ctx context.Context, next *config.Config) (ReloadReport, error) {
	var rep ReloadReport
	prev := p.conf()
	// Parts that need a restart keep their running values.
	keep := *next
	next = &keep
	next.Upstreams = maps.Clone(next.Upstreams) // keepIdentity may edit it
	if !reflect.DeepEqual(prev.Server, next.Server) {
		rep.NeedsRestart = append(rep.NeedsRestart, "server")
	}
	next.Server = prev.Server
	if !reflect.DeepEqual(prev.Telemetry, next.Telemetry) {
		rep.NeedsRestart = append(rep.NeedsRestart, "telemetry")
	}
	next.Telemetry = prev.Telemetry
	p.keepIdentity(prev, next, &rep) // issue 18: [auth], [rate_limits], [audit], credentials (identity.go)
	eps := map[string]*config.Endpoint{}
	for name, e := range next.Endpoints {
		old, ok := prev.Endpoints[name]
		if !ok {
			rep.NeedsRestart = append(rep.NeedsRestart, "endpoints."+name+" (added)")
			continue
		}
		ne := *e
		if ne.Path != old.Path || ne.Token != old.Token {
			rep.NeedsRestart = append(rep.NeedsRestart, "endpoints."+name+" (path or token)")
			ne.Path, ne.Token = old.Path, old.Token
		}
		eps[name] = &ne
	}
	for name, e := range prev.Endpoints {
		if _, ok := next.Endpoints[name]; !ok {
			rep.NeedsRestart = append(rep.NeedsRestart, "endpoints."+name+" (removed)")
			eps[name] = e
		}
	}
	next.Endpoints = eps

	pol, err := policy.Compile(next.PolicySpec())
	if err != nil {
		p.AuditReload(false, "policy: "+err.Error()) // issue 18: the audit log
		return rep, fmt.Errorf("policy: %w", err)
	}
	rep.Policy = !reflect.DeepEqual(prev.PolicySpec(), next.PolicySpec())

	d := p.ups.diff(next)
	rep.Added, rep.Removed, rep.Changed = d.added, d.removed, d.changed
	fresh := p.ups.prepare(ctx, next, d)

	var surf *surfaceState
	if !p.fixedSurface && !reflect.DeepEqual(prev.ToolSearch, next.ToolSearch) {
		surf = p.surfaceFor(next)
	}

	p.reloadMu.Lock()
	p.removedP.Store(newRemovedTools(p.catalog().Snapshot(), d.removed)) // removed.go
	cat := p.carryCatalog(next, d, fresh)
	cat.OnPublish(p.viewIx.published) // view indexes follow off the request path
	old := p.ups.swap(next, d, fresh)
	p.cfgP.Store(next)
	p.polP.Store(pol)
	p.catP.Store(cat)
	var oldSurf *surfaceState
	if surf != nil {
		oldSurf = p.surfP.Swap(surf)
		rep.ModeChanged = oldSurf.surface.Mode() != surf.surface.Mode()
	}
	p.pt.policyChanged()
	p.reloadMu.Unlock()
	rep.Mode = p.Mode()

	for _, name := range d.removed {
		p.metrics.DeleteUpstream(name)
	}
	// The old managers of changed and removed upstreams finish the calls
	// in flight on them, then stop (upstreams.go retire).
	p.ups.retire(old, func(name string, err error) {
		p.log.Warn("reload: stopping the old upstream session", "upstream", name, "err", err)
	}, nil)
	if oldSurf != nil && oldSurf.pool != nil {
		// Runs in flight finish on the old pool; it is closed after the
		// longest a run may take.
		grace := time.Duration(prev.ToolSearch.CodeTimeoutMS)*time.Millisecond + 5*time.Second
		time.AfterFunc(grace, oldSurf.pool.Close)
	}
	p.pt.carrySubscriptions(d.changed, d.removed)
	p.warnToolRefs() // toolrefs.go: entries the new config added
	p.notifyToolsChanged()
	p.pt.listChanged("resources")
	p.pt.listChanged("prompts")
	if err := p.CheckPolicy(); err != nil {
		p.log.Error("reload: the new policy fails closed; the subjects it names see no tool", "err", err)
	}
	sort.Strings(rep.NeedsRestart)
	p.AuditReload(true, rep.String()) // issue 18: the audit log
	return rep, nil
}

// carryCatalog builds the catalog of next: unchanged upstreams keep the
// tools and state they have now; started ones (fresh) get what their
// manager listed.
func (p *Proxy) carryCatalog(next *config.Config, d upstreamDiff, fresh map[string]*upstream.Manager) *catalog.Catalog {
	cat := newCatalog(next)
	snap := p.catalog().Snapshot()
	byUp := map[string][]*catalog.Entry{}
	for _, e := range snap.Entries {
		byUp[e.Upstream] = append(byUp[e.Upstream], e)
	}
	for _, u := range next.EnabledUpstreams() {
		name := u.Name
		if m, ok := fresh[name]; ok {
			st, _ := m.Status(name)
			if st.State == upstream.StateReady {
				cat.SetTools(name, entriesFromListing(m.Tools(name), st.Diagnostics, st.Extra))
			} else {
				cat.SetUnavailable(name, next.Redact(st.Err))
			}
			continue
		}
		if es := byUp[name]; len(es) > 0 {
			cat.SetTools(name, es)
		}
		if reason, down := snap.Unavailable[name]; down {
			cat.SetUnavailable(name, reason)
		}
	}
	return cat
}

// policyChanged drops the routing tables of the old policy's views.
func (pt *passthrough) policyChanged() {
	pt.mu.Lock()
	pt.tables = map[*policy.View]*featureTables{}
	pt.mu.Unlock()
}

// carrySubscriptions moves the clients' resource subscriptions held on the
// shared sessions of upstreams a reload restarted to their new session
// (resubscribe: now if it is ready, else once it is), and forgets those of
// removed upstreams, so that a client subscribing again after the upstream
// comes back is not taken for already subscribed. Per-client sessions keep
// theirs until they end with the old instance.
func (pt *passthrough) carrySubscriptions(changed, removed []string) {
	if len(removed) > 0 {
		pt.mu.Lock()
		for r := range pt.subs {
			if slices.Contains(removed, r.up) {
				delete(pt.subs, r)
				delete(pt.subOn, r)
			}
		}
		pt.mu.Unlock()
	}
	for _, up := range changed {
		pt.resubscribe(up)
	}
}
