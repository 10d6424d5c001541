package proxy

// Reload without restart. The CLI re-reads the config
// file on SIGHUP (Unix) and, with [server] watch_config, when the file
// changes; an invalid file never gets here (config.Load refuses it with
// the same file:line problems as at start, and the running config stays).
//
// Reload applies a valid config at once; it never waits for an upstream
// (a reload that waited for an added upstream's first
// listing held back a new [tools] deny, and every later reload, for
// minutes, silently):
//
//  1. at once (under reloadMu), the new catalog (unchanged upstreams keep
//     their tools and states), the policy, the surface (mode) and the
//     config are swapped; added upstreams get a manager that starts in the
//     background right after, as at the proxy's start (listed as starting;
//     their tools appear with notifications/tools/list_changed once
//     listed; a call of them meanwhile says the server is still starting);
//  2. a changed upstream whose old instance is ready keeps serving on it,
//     while its new instance starts in the background; once the new one's
//     first attempt settled (ready or failed, bounded by its
//     startup_timeout), it replaces the old one (switchWhenStarted) — a
//     later reload that changes or removes that upstream again drops the
//     pending start instead of waiting for it. A changed upstream whose
//     old instance is not ready is replaced at once, like an added one;
//  3. removed upstreams and the old sessions of changed ones take no new
//     call from their switch on (new calls go to the new session) and are
//     stopped once their calls in flight are done, at most their
//     call_timeout (+1s) later (upstream.Set.Retire); clients get
//     notifications/tools/list_changed (and resources and prompts
//     list_changed).
//
// Calls to upstreams whose config did not change never notice: their
// upstream managers are not touched. What a reload cannot change (it needs
// a restart, and is logged as such): [server] (transport, listen, tokens,
// limits), endpoint paths and tokens, endpoints added or removed,
// [telemetry], and [auth], [rate_limits], [audit] and
// upstreams' [credential] tables. Every reload, applied or refused, is a
// line of the audit log.

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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
	p.reloadSeq.Lock()
	defer p.reloadSeq.Unlock()
	var rep ReloadReport
	prev := p.conf()
	next = p.keepRunning(prev, next, &rep)

	pol, err := policy.Compile(next.PolicySpec())
	if err != nil {
		p.AuditReload(false, "policy: "+err.Error()) // the audit log
		return rep, fmt.Errorf("policy: %w", err)
	}
	rep.Policy = !reflect.DeepEqual(prev.PolicySpec(), next.PolicySpec())

	d := p.ups.Diff(next)
	rep.Added, rep.Removed, rep.Changed = d.Added, d.Removed, d.Changed
	pl := p.ups.Plan(p.life, next, d)
	// Changed back to the config its instance runs with: nothing restarts.
	rep.Changed = slices.DeleteFunc(slices.Clone(rep.Changed), func(n string) bool { return slices.Contains(pl.Back, n) })

	var surf *surfaceState
	if !p.fixedSurface && (!reflect.DeepEqual(prev.ToolSearch, next.ToolSearch) || !reflect.DeepEqual(alwaysLoadSettings(prev), alwaysLoadSettings(next))) {
		surf = p.surfaceFor(next)
	}

	if !p.reloadMu.TryLock() {
		// onToolsChanged holds it while it puts a listing in the catalog.
		p.log.Info("reload: waiting for an upstream's new tool listing to be put in the catalog before switching")
		p.reloadMu.Lock()
	}
	p.removedP.Store(newRemovedTools(p.catalog().Snapshot(), d.Removed)) // removed.go
	cat := p.carryCatalog(next, d, pl.Now)
	cat.OnPublish(p.viewIx.Published) // view indexes follow off the request path
	old, dropped := p.ups.Swap(next, d, pl)
	for _, m := range pl.Now {
		m.Launch() // after the swap: its listings reach the catalog (newManager)
	}
	p.cfgP.Store(next)
	p.polOpen.Store(pol)
	// Upstreams a deny entry of next names in vain stay closed from the
	// switch on; those whose tools are not known yet are checked once
	// they are (checkReloadedPolicy).
	misses, _ := p.checkPolicy(pol, next, cat.Snapshot(), false)
	closed := closedBy(misses, next)
	p.logReopened(p.polP.Swap(pol.Closed(closed)), closed, next)
	p.catP.Store(cat)
	var oldSurf *surfaceState
	if surf != nil {
		oldSurf = p.surfP.Swap(surf)
		rep.ModeChanged = oldSurf.surface.Mode() != surf.surface.Mode()
	}
	p.pt.policyChanged()
	p.reloadMu.Unlock()
	rep.Mode = p.Mode()

	for _, name := range d.Removed {
		p.metrics.DeleteUpstream(name)
	}
	// The old managers of changed and removed upstreams finish the calls
	// in flight on them, then stop (upstream.Set.Retire).
	p.retireOld(old)
	if oldSurf != nil && oldSurf.pool != nil {
		// Runs in flight finish on the old pool; it is closed after the
		// longest a run may take.
		grace := time.Duration(prev.ToolSearch.CodeTimeoutMS)*time.Millisecond + 5*time.Second
		time.AfterFunc(grace, oldSurf.pool.Close)
	}
	for _, m := range dropped {
		closeUnserved(m) // a pending start a later reload superseded
	}
	for name, ps := range pl.Later {
		go p.switchWhenStarted(name, ps)
	}
	p.logStarts(pl, d)
	p.pt.forgetSubscriptions(d.Removed)
	p.warnToolRefs() // toolrefs.go: entries the new config added
	p.notifyToolsChanged()
	p.pt.listChanged("resources")
	p.pt.listChanged("prompts")
	if len(pl.Now)+len(pl.Later) == 0 {
		p.checkReloadedPolicy()
	} else {
		go p.checkPolicyWhenStarted(pl)
	}
	sort.Strings(rep.NeedsRestart)
	p.AuditReload(true, rep.String()) // the audit log
	return rep, nil
}

// changedKeys names the keys of one config section (a and b: two values
// of its struct, whose fields are all exported) whose values differ, as
// "section.key" (the toml name).
func changedKeys(section string, a, b any) []string {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	var out []string
	for i := range va.NumField() {
		if reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			continue
		}
		f := va.Type().Field(i)
		key, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if key == "" {
			key = f.Name
		}
		out = append(out, section+"."+key)
	}
	return out
}

// keepRunning is next with the parts a reload cannot change (they need a
// restart) at their running values from prev, each named in
// rep.NeedsRestart: [server] (but a bearer token that stays set rotates),
// [telemetry], the identity tables (identity.go), endpoints added or
// removed, and an endpoint's path or a token set or removed.
func (p *Proxy) keepRunning(prev, next *config.Config, rep *ReloadReport) *config.Config {
	keep := *next
	next = &keep
	next.Upstreams = maps.Clone(next.Upstreams) // keepIdentity may edit it
	// server.bearer_token rotates without a restart (front_auth.go
	// liveToken) when it stays set; setting or removing one changes what
	// the routes check, which is fixed at start.
	ps, ns := prev.Server, next.Server
	ps.BearerToken, ns.BearerToken = "", ""
	rep.NeedsRestart = append(rep.NeedsRestart, changedKeys("server", ps, ns)...)
	tok := next.Server.BearerToken
	next.Server = prev.Server
	if (tok == "") == (prev.Server.BearerToken == "") {
		next.Server.BearerToken = tok
	} else {
		rep.NeedsRestart = append(rep.NeedsRestart, "server.bearer_token (set or removed)")
	}
	rep.NeedsRestart = append(rep.NeedsRestart, changedKeys("telemetry", prev.Telemetry, next.Telemetry)...)
	next.Telemetry = prev.Telemetry
	p.keepIdentity(prev, next, rep) // [auth], [rate_limits], [audit], credentials (identity.go)
	eps := map[string]*config.Endpoint{}
	for name, e := range next.Endpoints {
		old, ok := prev.Endpoints[name]
		if !ok {
			rep.NeedsRestart = append(rep.NeedsRestart, "endpoints."+name+" (added)")
			continue
		}
		ne := *e
		// A token that stays set rotates at once (liveToken); a path, or a
		// token set or removed, needs a restart (the routes are fixed).
		if ne.Path != old.Path || (ne.Token == "") != (old.Token == "") {
			rep.NeedsRestart = append(rep.NeedsRestart, "endpoints."+name+" (path, or token set or removed)")
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
	return next
}

// switchWhenStarted starts ps, the new instance of the restarted upstream
// name, waits until its first attempt settled (ready or failed; bounded by
// its startup_timeout), and then replaces the old instance with it, as
// the reload would have at once: the catalog gets its listing (or its
// failure), the old instance drains and stops (retire), clients get
// list_changed. Nothing happens when a later reload dropped ps (it
// changed or removed the upstream again) or the proxy closed.
func (p *Proxy) switchWhenStarted(name string, ps *upstream.PendingStart) {
	defer close(ps.Done)
	defer ps.Cancel()
	start := time.Now()
	ps.M.Launch()
	if !ps.M.WaitSettled(ps.Ctx) {
		return
	}
	if p.keepOldInstance(name, ps) { // reloadkeep.go: the new one failed to start
		return
	}
	p.reloadMu.Lock()
	old, ok := p.ups.SwitchPending(name, ps)
	if !ok {
		p.reloadMu.Unlock()
		return
	}
	ps.Switched = true
	st, _ := ps.M.Status(name)
	if st.State == upstream.StateReady {
		tools := ps.M.Tools(name)
		if tools == nil {
			tools = []*mcp.Tool{} // ready with no tool; nil means down
		}
		p.applyListing(name, tools)
	} else {
		p.applyListing(name, nil)
	}
	p.reloadMu.Unlock()
	p.retireOld(old)
	p.pt.listChanged("resources")
	p.pt.listChanged("prompts")
	p.log.Info("reload: switched the restarted upstream to its new instance", "upstream", name, "state", st.State, "waited_ms", time.Since(start).Milliseconds())
}

// logStarts says what a reload left starting in the background.
func (p *Proxy) logStarts(pl upstream.Plan, d upstream.Diff) {
	var added, restarted []string
	for name := range pl.Now {
		if slices.Contains(d.Added, name) {
			added = append(added, name)
		} else {
			restarted = append(restarted, name)
		}
	}
	sort.Strings(added)
	sort.Strings(restarted)
	if len(added) > 0 {
		p.log.Info("reload: added upstreams are starting in the background; their tools appear once listed", "upstreams", strings.Join(added, ","))
	}
	if len(restarted) > 0 {
		p.log.Info("reload: restarted upstreams that were not ready are starting anew in the background", "upstreams", strings.Join(restarted, ","))
	}
	later := slices.Sorted(maps.Keys(pl.Later))
	if len(later) > 0 {
		p.log.Info("reload: restarted upstreams keep serving on their old instance until the new one has started (at most its startup_timeout); then they switch", "upstreams", strings.Join(later, ","))
	}
	if len(pl.Back) > 0 {
		p.log.Info("reload: the pending restart of these upstreams was dropped: their config is again the one they run with", "upstreams", strings.Join(pl.Back, ","))
	}
}

// checkPolicyWhenStarted runs the fail-closed policy check once the
// upstreams a reload started have settled (their first attempt) and the
// restarted ones switched, as Start does with the upstreams of the start.
func (p *Proxy) checkPolicyWhenStarted(pl upstream.Plan) {
	for _, m := range pl.Now {
		if !m.WaitSettled(p.life) {
			return
		}
	}
	for _, ps := range pl.Later {
		<-ps.Done
		if !ps.Switched && !ps.Kept {
			return // dropped by a later reload, which checks again, or closed
		}
	}
	p.checkReloadedPolicy()
}

func (p *Proxy) checkReloadedPolicy() {
	if err := p.closeDeadDenies(true); err != nil {
		p.log.Error("reload: the new policy fails closed; the subjects it names see no tool", "err", fmt.Errorf("policy fails closed: %w", err))
	}
}

// carryCatalog builds the catalog of next: unchanged upstreams, and
// restarted ones still on their old instance, keep the tools and state
// they have now; the ones started now (fresh, not started yet) are
// listed as starting.
func (p *Proxy) carryCatalog(next *config.Config, d upstream.Diff, fresh map[string]*upstream.Manager) *catalog.Catalog {
	cat := newCatalog(next)
	snap := p.catalog().Snapshot()
	byUp := map[string][]*catalog.Entry{}
	for _, e := range snap.Entries {
		byUp[e.Upstream] = append(byUp[e.Upstream], e)
	}
	for _, u := range next.EnabledUpstreams() {
		name := u.Name
		if _, ok := fresh[name]; ok {
			cat.SetUnavailable(name, startingReason)
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

// forgetSubscriptions forgets the clients' resource subscriptions held on
// the shared sessions of upstreams a reload removed, so that a client
// subscribing again after the upstream comes back is not taken for
// already subscribed. Those of restarted upstreams move to the new
// session when it lists its tools (applyListing: resubscribe). Per-client
// sessions keep theirs until they end with the old instance.
func (pt *passthrough) forgetSubscriptions(removed []string) {
	if len(removed) == 0 {
		return
	}
	pt.mu.Lock()
	defer pt.mu.Unlock()
	for r := range pt.subs {
		if slices.Contains(removed, r.up) {
			delete(pt.subs, r)
			delete(pt.subOn, r)
		}
	}
}

// retireOld hands the old managers of restarted and removed upstreams to
// upstream.Set.Retire (they finish their calls in flight, then stop),
// logging a failure to stop.
func (p *Proxy) retireOld(old map[string]upstream.Retiree) {
	p.ups.Retire(old, func(name string, err error) {
		p.log.Warn("reload: stopping the old upstream session", "upstream", name, "err", err)
	}, nil)
}

// closeUnserved closes m, a manager that never served (a pending start a
// later reload dropped, or a new instance that failed to start), in the
// background, bounded by a minute.
func closeUnserved(m *upstream.Manager) {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = m.Close(ctx)
	}()
}
