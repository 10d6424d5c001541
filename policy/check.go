package policy

import (
	"fmt"
	"sort"
	"strings"
)

// Check is the fail-closed start-up check for subject s against the current
// catalog (SPEC §6; seed: an explicit allow list that resolves to no
// callable tool stops the run).
//
// If some layer of s sets an allow list and no tool is allowed, Check
// returns an error that names every entry of the effective allow list and of
// the also_allow lists that matched no tool, e.g.
// `endpoint "x": explicit allow list resolves to no callable tool:
// tools.allow: no tool matches "nosuch__tool"` (or says that every match is
// denied). Otherwise it returns warnings, one per entry of the effective
// allow list, the also_allow and deny lists of s's layers, and
// tools.require_approval that matched no tool (format
// `tools.deny: no tool matches "x"`, identical across subjects that share a
// layer, so callers checking several subjects can de-duplicate them), plus
// one warning when a subject without an explicit allow list gets no tool.
func (p *Policy) Check(s Subject, tools []Tool) (warnings []string, err error) {
	return p.CheckPending(s, tools, nil)
}

// CheckPending is Check with pending naming the enabled upstreams whose
// tools are not known yet (down or starting since the start).
//
// A deny entry the operator wrote is never a no-op (fail closed): a
// literal deny entry (an exposed name, an id or a tool's name on its
// upstream, not a glob or a group) of any of s's layers that matches no
// tool is an error naming the tools it may have meant, e.g.
// `tools.deny: "delete_repo" matches no tool (by exposed name, id or name
// on its upstream); did you mean "github__delete_repository"
// (mcp:github:delete_repository)?`. While some upstream is pending, such an
// entry is only a warning (its tool may be one of those): a broken
// upstream never stops the others. Globs and groups that match nothing
// stay warnings: they may stand for tools an upstream adds later.
func (p *Policy) CheckPending(s Subject, tools []Tool, pending []string) (warnings []string, err error) {
	v := p.View(s)
	if v.badEP {
		return nil, fmt.Errorf("%s: unknown endpoint %q", s, s.Endpoint)
	}
	cands := make([]*cand, len(tools))
	for i, t := range tools {
		cands[i] = toolCand(t)
	}
	allowed, allowedRaw := 0, 0
	for i, t := range tools {
		if v.Allowed(t) {
			allowed++
		}
		if v.rawAllowed(cands[i]) { // before by_client narrowing (narrow.go)
			allowedRaw++
		}
	}
	unmatched := func(field string, list []*matcher) []string {
		var out []string
		for _, m := range list {
			if !anyMatch(m, cands, false) {
				out = append(out, fmt.Sprintf("%s: no tool matches %q", field, m.raw))
			}
			out = append(out, deadMembers(field, m, cands, false, tools)...)
		}
		return out
	}
	var allowL *layer
	for _, l := range v.layers {
		if l.allowSet {
			allowL = l
		}
	}
	var allowMisses []string
	if allowL != nil {
		allowMisses = unmatched(allowL.name+".allow", allowL.allow)
	}
	for _, l := range v.layers {
		allowMisses = append(allowMisses, unmatched(l.name+".also_allow", l.alsoAllow)...)
	}
	if allowL != nil && allowedRaw == 0 {
		msg := fmt.Sprintf("%s: explicit allow list resolves to no callable tool", s)
		switch {
		case len(allowL.allow) == 0 && len(allowMisses) == 0:
			msg += fmt.Sprintf(": %s.allow is empty", allowL.name)
		case len(allowMisses) > 0:
			msg += ": " + strings.Join(allowMisses, "; ")
		default:
			msg += ": every tool it matches is denied"
		}
		return nil, fmt.Errorf("%s", msg)
	}
	warnings = allowMisses
	if allowL == nil { // the profile is the base allow list (View.allow)
		var prof *profile
		for _, l := range v.layers {
			if l.profile != nil {
				prof = l.profile
			}
		}
		if prof != nil && prof.name != ProfileFull && prof.name != ProfileMinimal {
			pfx := "profiles." + prof.name
			warnings = append(warnings, unmatched(pfx+".allow", prof.allow)...)
			for _, m := range prof.deny {
				if !anyMatch(m, cands, true) {
					warnings = append(warnings, fmt.Sprintf("%s.deny: no tool matches %q", pfx, m.raw))
				}
				warnings = append(warnings, deadMembers(pfx+".deny", m, cands, true, tools)...)
			}
		}
	}
	var denyErrs []DenyMiss
	for _, l := range v.layers {
		for _, m := range l.deny {
			if anyMatch(m, cands, true) {
				continue
			}
			field := l.name + ".deny"
			switch {
			case m.kind != kindLiteral:
				warnings = append(warnings, fmt.Sprintf("%s: no tool matches %q", field, m.raw))
				warnings = append(warnings, deadMembers(field, m, cands, true, tools)...)
			case len(pending) > 0:
				warnings = append(warnings, fmt.Sprintf("%s: %q matches no tool of the upstreams listed so far (by exposed name, id or name on its upstream; not listed yet: %s)", field, m.raw, strings.Join(pending, ", ")))
			default:
				up := p.upstreamNamed(m.pat)
				mt := meant(m.pat, toolsOf(tools, up))
				denyErrs = append(denyErrs, DenyMiss{Field: field, Entry: m.raw, Upstream: up, Meant: mt,
					text: fmt.Sprintf("%s: %q matches no tool (by exposed name, id or name on its upstream)%s", field, m.raw, mt)})
			}
		}
	}
	for _, l := range v.layers {
		for _, m := range l.deny {
			if m.kind == kindGroup && anyMatch(m, cands, true) {
				warnings = append(warnings, deadMembers(l.name+".deny", m, cands, true, tools)...)
			}
		}
	}
	for _, m := range p.approval {
		if !anyMatch(m, cands, true) {
			warnings = append(warnings, fmt.Sprintf("tools.require_approval: no tool matches %q", m.raw))
		}
		warnings = append(warnings, deadMembers("tools.require_approval", m, cands, true, tools)...)
	}
	if w := v.wideningWarning(tools); w != "" {
		warnings = append(warnings, w)
	}
	if allowed == 0 && len(tools) > 0 {
		warnings = append(warnings, fmt.Sprintf("%s: no tool is allowed", s))
	}
	if len(denyErrs) > 0 {
		return warnings, &DenyMissError{Misses: denyErrs}
	}
	return warnings, nil
}

// DenyMissError is the fail-closed error of deny entries that match no
// tool; each miss reads the same for every subject that shares its layer,
// so callers checking several subjects can de-duplicate them.
type DenyMissError struct{ Misses []DenyMiss }

// DenyMiss is one literal deny entry that matches no tool.
type DenyMiss struct {
	Field string // the list, e.g. "tools.deny", `tools.by_client."cursor*".deny`
	Entry string // as written
	// Upstream is the configured upstream the entry names by its form (an
	// id "mcp:github:…" or an exposed name "github__…"), "" when it names
	// none (a tool's name on its upstream: it may be any upstream's).
	Upstream string
	// Meant names the tools the entry may have meant: "; did you mean
	// "github__delete_repository" (mcp:github:delete_repository)?" or
	// "; no tool has a name close to it".
	Meant string
	text  string
}

// String is the miss as a sentence, e.g. `tools.deny: "delete_repo"
// matches no tool (by exposed name, id or name on its upstream); did you
// mean …?`.
func (m DenyMiss) String() string { return m.text }

func (e *DenyMissError) Error() string {
	texts := make([]string, len(e.Misses))
	for i, m := range e.Misses {
		texts[i] = m.text
	}
	return "a deny entry matches no tool, so it keeps nothing away: " + strings.Join(texts, "; ") + " (write the tool's exposed name, its id mcp:UPSTREAM:NAME or its name on its upstream, or a glob)"
}

// toolsOf is the tools of upstream up ("": all of tools).
func toolsOf(tools []Tool, up string) []Tool {
	if up == "" {
		return tools
	}
	var out []Tool
	for _, t := range tools {
		if strings.EqualFold(t.Upstream, up) {
			out = append(out, t)
		}
	}
	return out
}

// upstreamNamed is the configured upstream whose id namespace
// ("mcp:github:") or exposed-name namespace ("github__") the lower-case
// literal pat is in (the longest when several are), "" for none.
func (p *Policy) upstreamNamed(pat string) string {
	best, bestLen := "", 0
	for _, u := range p.upstreams {
		for _, ns := range []string{u.IDPrefix, u.NamePrefix} {
			if ns != "" && len(ns) > bestLen && strings.HasPrefix(pat, ns) {
				best, bestLen = u.Name, len(ns)
			}
		}
	}
	return best
}

// deadMembers names the members of group entry m (of list field) that
// match no tool, nested groups' members included, one warning each, e.g.
// `tools.allow: "group:dev" member "github__creat_issue" matches no tool;
// did you mean "github__create_issue" (mcp:github:create_issue)?`; nil
// when m is not a group. A group that matches some tools may still hold a
// typo: naming only the group would hide which member it is.
func deadMembers(field string, m *matcher, cands []*cand, safe bool, tools []Tool) []string {
	if m.kind != kindGroup {
		return nil
	}
	var out []string
	for _, mm := range m.members {
		switch {
		case mm.kind == kindGroup:
			out = append(out, deadMembers(field, mm, cands, safe, tools)...)
		case anyMatch(mm, cands, safe):
		case mm.kind == kindLiteral:
			out = append(out, fmt.Sprintf("%s: %q member %q matches no tool%s", field, m.raw, mm.raw, meant(mm.pat, tools)))
		default:
			out = append(out, fmt.Sprintf("%s: %q member %q matches no tool", field, m.raw, mm.raw))
		}
	}
	return out
}

// anyMatch reports whether m matches one of cands; safe: as a deny or
// require_approval entry (asSafe).
func anyMatch(m *matcher, cands []*cand, safe bool) bool {
	for _, c := range cands {
		if safe {
			c = asSafe(c)
		}
		if ok, _ := m.match(c); ok {
			return true
		}
	}
	return false
}

// meant names up to three tools an entry that matched nothing may have
// meant: the ones whose exposed name, id or name on its upstream contains
// it, is contained in it, or is within a few edits of it.
func meant(pat string, tools []Tool) string {
	type hit struct {
		text string
		dist int // the closest of the tool's names to pat
	}
	var hits []hit
	for _, t := range tools {
		near, dist := false, -1
		for _, n := range []string{t.Exposed, t.Name, t.ID} {
			l := strings.ToLower(n)
			if l == "" {
				continue
			}
			d := editDistance(l, pat)
			if strings.Contains(l, pat) || strings.Contains(pat, l) || d <= max(2, len(pat)/4) {
				near = true
			}
			if dist < 0 || d < dist {
				dist = d
			}
		}
		if near {
			hits = append(hits, hit{fmt.Sprintf("%q (%s)", t.Exposed, t.ID), dist})
		}
	}
	// Closest first, so that "or N more" leaves out the least likely.
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].dist != hits[j].dist {
			return hits[i].dist < hits[j].dist
		}
		return hits[i].text < hits[j].text
	})
	texts := make([]string, len(hits))
	for i, h := range hits {
		texts[i] = h.text
	}
	switch {
	case len(texts) == 0:
		return "; no tool has a name close to it"
	case len(texts) > 3:
		return fmt.Sprintf("; did you mean %s or %d more?", strings.Join(texts[:3], ", "), len(texts)-3)
	}
	return "; did you mean " + strings.Join(texts, " or ") + "?"
}

// editDistance is the Levenshtein distance of a and b (bytes).
func editDistance(a, b string) int {
	if len(a) > 128 || len(b) > 128 {
		return max(len(a), len(b))
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
