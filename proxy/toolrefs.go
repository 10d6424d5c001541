package proxy

// Config entries that name tools ([upstreams.X] direct_only, [tool_search]
// pinned) are checked against the tools the upstreams list: the config
// loader cannot, since the tools are known only once an upstream answered
// tools/list. A typo used to be ignored without a word:
// the tool was simply not listed directly, or not pinned.

import (
	"fmt"
	"strings"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
	"github.com/mcp-toolsearch/mcp-toolsearch/config"
)

// ToolRefProblems are the direct_only entries and pinned references of
// the running config that name no tool, one sentence each, e.g.
// `direct_only "slo" of upstream "fake": no such tool; did you mean "slow"?`.
// An entry is checked only once the tools it could name are in the
// catalog snapshot checked against (its upstream's tools; for a pinned
// reference that names no upstream by its form, every enabled upstream's),
// so an upstream still starting or down since start gets no false
// warning. Whether tools are known is read from that same snapshot, not
// from the upstream's state: an upstream turns ready before its tools are
// published, and a check in between would warn about tools that
// exist. For `check`.
func (p *Proxy) ToolRefProblems() []string {
	snap := p.catalog().Snapshot()
	listed := map[string]bool{}
	for _, e := range snap.Entries {
		listed[e.Upstream] = true
	}
	return toolRefProblems(p.conf(), snap, func(up string) bool { return listed[up] })
}

// warnToolRefs logs each problem of ToolRefProblems once per process (a
// re-listing or a reload that keeps the entry does not repeat it).
func (p *Proxy) warnToolRefs() {
	for _, msg := range p.ToolRefProblems() {
		p.mu.Lock()
		if p.refWarned == nil {
			p.refWarned = map[string]bool{}
		}
		seen := p.refWarned[msg]
		p.refWarned[msg] = true
		p.mu.Unlock()
		if !seen {
			p.log.Warn("config names a tool the upstream does not list: " + msg)
		}
	}
	p.warnClashes() // clashes.go
}

// toolRefProblems is ToolRefProblems for cfg over snap; known says whether
// an upstream's tools are known.
func toolRefProblems(cfg *config.Config, snap *catalog.Snapshot, known func(string) bool) []string {
	var out []string
	allKnown := true
	for _, u := range cfg.EnabledUpstreams() {
		if !known(u.Name) {
			allKnown = false
		}
	}
	for _, u := range cfg.EnabledUpstreams() {
		if len(u.DirectOnly) == 0 || !known(u.Name) {
			continue
		}
		names := map[string]bool{}
		for _, e := range snap.Entries {
			if e.Upstream == u.Name {
				names[e.Name] = true
			}
		}
		ofUp := func(e *catalog.Entry) bool { return e.Upstream == u.Name }
		for _, d := range u.DirectOnly {
			if names[d] {
				continue
			}
			msg := fmt.Sprintf("direct_only %q of upstream %q: no such tool", d, u.Name)
			if s := snap.Suggest(d, 1, ofUp); len(s) > 0 {
				msg += fmt.Sprintf("; did you mean %q?", s[0].Name)
			}
			out = append(out, msg)
		}
	}
	for _, ref := range cfg.ToolSearch.Pinned {
		e, cands := snap.Resolve(ref, nil)
		if e != nil {
			continue
		}
		if len(cands) > 1 {
			ids := make([]string, len(cands))
			for i, c := range cands {
				ids[i] = c.Exposed
			}
			out = append(out, fmt.Sprintf("pinned %q: names several tools (%s); use the exposed name", ref, strings.Join(ids, ", ")))
			continue
		}
		up := snap.UpstreamOf(ref)
		var keep func(*catalog.Entry) bool
		switch {
		case up != "" && !known(up), up == "" && !allKnown:
			continue
		case up != "":
			keep = func(e *catalog.Entry) bool { return e.Upstream == up }
		}
		msg := fmt.Sprintf("pinned %q: no such tool", ref)
		if up != "" {
			msg = fmt.Sprintf("pinned %q: upstream %q has no such tool", ref, up)
		}
		if s := snap.Suggest(ref, 1, keep); len(s) > 0 {
			msg += fmt.Sprintf("; did you mean %q?", s[0].Exposed)
		}
		out = append(out, msg)
	}
	return out
}
