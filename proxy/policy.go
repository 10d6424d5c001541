package proxy

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
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
// upstreams that are down or starting with no tools listed yet.
func (p *Proxy) CheckPolicy() error {
	snap := p.catalog().Snapshot()
	tools := toolsOf(snap.Entries)
	listed := map[string]bool{}
	for _, e := range snap.Entries {
		listed[e.Upstream] = true
	}
	var pending []string
	for _, u := range p.conf().EnabledUpstreams() {
		if _, down := snap.Unavailable[u.Name]; down && !listed[u.Name] {
			pending = append(pending, u.Name)
		}
	}
	seen := map[string]bool{}
	var errs []error
	for _, s := range p.pol().Subjects() {
		warns, err := p.pol().CheckPending(s, tools, pending)
		for _, w := range warns {
			if !seen[w] {
				seen[w] = true
				p.log.Warn("policy: " + w)
			}
		}
		if err != nil && !seen[err.Error()] { // a layer's deny misses read the same for every subject
			seen[err.Error()] = true
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("policy fails closed: %w", errors.Join(errs...))
	}
	return nil
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
