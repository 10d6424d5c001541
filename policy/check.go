package policy

import (
	"fmt"
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
			hit := false
			for _, c := range cands {
				if ok, _ := m.match(c); ok {
					hit = true
					break
				}
			}
			if !hit {
				out = append(out, fmt.Sprintf("%s: no tool matches %q", field, m.raw))
			}
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
	for _, l := range v.layers {
		warnings = append(warnings, unmatched(l.name+".deny", l.deny)...)
	}
	warnings = append(warnings, unmatched("tools.require_approval", p.approval)...)
	if w := v.wideningWarning(tools); w != "" {
		warnings = append(warnings, w)
	}
	if allowed == 0 && len(tools) > 0 {
		warnings = append(warnings, fmt.Sprintf("%s: no tool is allowed", s))
	}
	return warnings, nil
}
