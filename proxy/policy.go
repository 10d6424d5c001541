package proxy

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
	"github.com/mcp-toolsearch/mcp-toolsearch/config"
	"github.com/mcp-toolsearch/mcp-toolsearch/policy"
)

// compilePolicy compiles the config's [tools], [profiles], [groups] and
// [endpoints] rules (SPEC §6) with package policy, the same code that
// validated them when the config was loaded.
func (p *Proxy) compilePolicy() error {
	pol, err := policy.Compile(p.conf().PolicySpec())
	if err != nil {
		return fmt.Errorf("policy: %w", err)
	}
	p.polOpen.Store(pol)
	p.polP.Store(pol)
	return nil
}

// view is the policy view of a session's subject.
func (p *Proxy) view(client, endpoint string) *policy.View {
	return p.pol().View(policy.Subject{ClientName: client, Endpoint: endpoint})
}

// toolOf is what the policy looks at in a catalog entry.
func toolOf(e *catalog.Entry) policy.Tool {
	return policy.Tool{ID: e.ID, Exposed: e.Exposed, Base: e.Base, Name: e.Name, Upstream: e.Upstream, DirectOnly: e.DirectOnly}
}

// policyView is a policy view as a catalog.View (the key of its search
// index: the same *policy.View, the same index).
type policyView struct{ v *policy.View }

func (pv policyView) Allows(e *catalog.Entry) bool { return pv.v.Allowed(toolOf(e)) }

// toolsOf converts catalog entries for policy.Check.
func toolsOf(es []*catalog.Entry) []policy.Tool {
	out := make([]policy.Tool, len(es))
	for i, e := range es {
		out[i] = toolOf(e)
	}
	return out
}

// CheckPolicy runs the fail-closed check (SPEC §6) for every subject the
// config names (the main endpoint, each endpoint, each by_client pattern)
// against the current catalog. Warnings (entries matching nothing) are
// logged; the error names every allow entry of a list that resolves to no
// callable tool.
//
// A deny entry that names no tool fails closed too (policy.CheckPending),
// once every enabled upstream's tools are known: pending are the enabled
// upstreams that are down or starting with no tools listed yet. This is
// the check of `check` and of a start that waited for the upstreams:
// the error stops them. Once the proxy serves, such an entry closes the
// upstream it names instead (closeDeadDenies).
func (p *Proxy) CheckPolicy() error {
	misses, err := p.checkPolicy(p.polOpen.Load(), p.conf(), p.catalog().Snapshot(), true)
	if len(misses) > 0 {
		err = errors.Join(err, &policy.DenyMissError{Misses: misses})
	}
	if err != nil {
		return fmt.Errorf("policy fails closed: %w", err)
	}
	return nil
}

// checkPolicy runs pol's fail-closed check for every subject against snap
// (cfg names the enabled upstreams) and returns the deny entries that
// match no tool apart from the other errors (allow lists resolving to no
// callable tool), each once. Warnings are logged when warn is set.
func (p *Proxy) checkPolicy(pol *policy.Policy, cfg *config.Config, snap *catalog.Snapshot, warn bool) ([]policy.DenyMiss, error) {
	tools := toolsOf(snap.Entries)
	listed := map[string]bool{}
	for _, e := range snap.Entries {
		listed[e.Upstream] = true
	}
	var pending []string
	for _, u := range cfg.EnabledUpstreams() {
		if _, down := snap.Unavailable[u.Name]; down && !listed[u.Name] {
			pending = append(pending, u.Name)
		}
	}
	seen := map[string]bool{}
	var errs []error
	var misses []policy.DenyMiss
	for _, s := range pol.Subjects() {
		warns, err := pol.CheckPending(s, tools, pending)
		for _, w := range warns {
			if warn && !seen[w] {
				p.log.Warn("policy: " + w)
			}
			seen[w] = true
		}
		var dm *policy.DenyMissError
		switch {
		case errors.As(err, &dm):
			for _, m := range dm.Misses { // a layer's deny misses read the same for every subject
				if !seen[m.String()] {
					seen[m.String()] = true
					misses = append(misses, m)
				}
			}
		case err != nil && !seen[err.Error()]:
			seen[err.Error()] = true
			errs = append(errs, err)
		}
	}
	// An entry for a tool of a disabled upstream keeps nothing away while
	// it is off; it is checked once the upstream is enabled (a reload).
	misses = slices.DeleteFunc(misses, func(m policy.DenyMiss) bool {
		u, ok := cfg.Upstreams[m.Upstream]
		off := m.Upstream != "" && ok && u != nil && !u.IsEnabled()
		if off && warn {
			p.log.Warn(fmt.Sprintf("policy: %s: %q names a tool of upstream %q, which is disabled: it is checked once the upstream is enabled", m.Field, m.Entry, m.Upstream))
		}
		return off
	})
	return misses, errors.Join(errs...)
}

// closedBy maps each upstream that misses name to why it is closed: the
// one a miss names by its form, or every enabled upstream of cfg for a
// miss that names none (a tool's name on its upstream may be any
// upstream's). The reason is shown to the sessions that may see the
// upstream (session.Unavailable), so it names the entry but not the tools
// it may have meant: those are what the operator meant to keep away.
func closedBy(misses []policy.DenyMiss, cfg *config.Config) map[string]string {
	if len(misses) == 0 {
		return nil
	}
	out := map[string]string{}
	for _, m := range misses {
		ups := []string{m.Upstream}
		if m.Upstream == "" {
			ups = ups[:0]
			for _, u := range cfg.EnabledUpstreams() {
				ups = append(ups, u.Name)
			}
		}
		r := fmt.Sprintf("closed: the config's deny entry %q (%s) matches none of its tools; the operator must fix the config", m.Entry, m.Field)
		for _, up := range ups {
			if prev, ok := out[up]; ok {
				out[up] = prev + "; " + r
			} else {
				out[up] = r
			}
		}
	}
	return out
}

// closeDeadDenies runs the config's policy check against the current
// catalog once the proxy serves and applies what it finds: the upstreams
// the deny entries that match no tool name are closed
// (policy.Policy.Closed: their tools neither listed nor callable, their
// resources and prompts hidden, the reason told to the sessions that may
// see them), each miss logged as an error with the tools it may have
// meant; the other upstreams reopen. It returns the check's other error
// (an allow list resolving to no callable tool). Warnings are logged when
// warn is set. It holds p.reloadMu (recheckDeniesLocked).
//
// Trust: the operator's config is trusted, but a deny entry that names no
// tool may be one whose tool the upstream renamed; serving that upstream
// would expose what the entry was written to keep away, and stopping the
// proxy would take every other upstream down and leave the client with a
// server that died after answering it.
func (p *Proxy) closeDeadDenies(warn bool) error {
	p.reloadMu.Lock()
	defer p.reloadMu.Unlock()
	_, err := p.recheckDeniesLocked(warn, true)
	return err
}

// recheckDeniesLocked is closeDeadDenies with p.reloadMu held. The misses
// are logged when logAlways is set, else only when what is closed
// changes (a new listing of an upstream: applyListing). changed reports
// whether it did.
func (p *Proxy) recheckDeniesLocked(warn, logAlways bool) (changed bool, err error) {
	pol, cfg := p.polOpen.Load(), p.conf()
	misses, err := p.checkPolicy(pol, cfg, p.catalog().Snapshot(), warn)
	closed := closedBy(misses, cfg)
	was := p.polP.Load()
	changed = !sameClosed(was, closed, cfg)
	if logAlways || changed {
		for _, m := range misses {
			up := m.Upstream
			if up == "" {
				up = "every upstream (the entry names none)"
			}
			p.log.Error("policy: a deny entry matches no tool; the upstream it names is closed (its tools neither listed nor callable) until a reload with a fixed config", "upstream", up, "detail", m.String())
		}
	}
	if !changed {
		return false, err
	}
	p.polP.Store(pol.Closed(closed))
	p.pt.policyChanged()
	p.logReopened(was, closed, cfg)
	p.notifyToolsChanged()
	p.pt.listChanged("resources")
	p.pt.listChanged("prompts")
	return true, err
}

// sameClosed reports whether pol closes exactly the upstreams of closed,
// for the same reasons.
func sameClosed(pol *policy.Policy, closed map[string]string, cfg *config.Config) bool {
	for _, u := range cfg.EnabledUpstreams() {
		if pol.ClosedReason(u.Name) != closed[u.Name] {
			return false
		}
	}
	return true
}

// logReopened logs each upstream was closed that closed does not.
func (p *Proxy) logReopened(was *policy.Policy, closed map[string]string, cfg *config.Config) {
	for _, u := range cfg.EnabledUpstreams() {
		if was.ClosedReason(u.Name) != "" && closed[u.Name] == "" {
			p.log.Info("policy: upstream reopened: no deny entry that matches no tool names it any more", "upstream", u.Name)
		}
	}
}

// ExplainRow is one line of `mcp-toolsearch list`.
type ExplainRow struct {
	ID       string `json:"id"`
	Exposed  string `json:"exposed"`
	Upstream string `json:"upstream"`
	Status   string `json:"status"` // "ok" or "unavailable: <reason>"
	Allowed  bool   `json:"allowed"`
	Rule     string `json:"rule"` // which rule allowed or denied it
	Approval string `json:"approval,omitempty"`
	Direct   bool   `json:"directOnly,omitempty"`
}

// Explain lists every catalog entry with the policy decision for a client
// named client on endpoint ("" = main), sorted by id.
func (p *Proxy) Explain(client, endpoint string) []ExplainRow {
	snap := p.catalog().Snapshot()
	v := p.view(client, endpoint)
	rows := make([]ExplainRow, 0, len(snap.Entries))
	for _, e := range snap.Entries {
		d := v.Decide(toolOf(e))
		st := "ok"
		if r, down := snap.Unavailable[e.Upstream]; down {
			st = "unavailable: " + strings.TrimSpace(r)
		}
		rows = append(rows, ExplainRow{ID: e.ID, Exposed: e.Exposed, Upstream: e.Upstream, Status: st, Allowed: d.Allowed, Rule: d.Rule, Approval: d.ApprovalRule, Direct: e.DirectOnly})
	}
	return rows
}
