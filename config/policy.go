package config

import (
	"fmt"

	"github.com/mcp-toolsearch/mcp-toolsearch/policy"
)

// PolicySpec returns the deployment's rules ([tools], [profiles], [groups],
// [endpoints.NAME].tools and every configured upstream, disabled ones
// included so that "group:<upstream>" stays valid) in the form the policy
// package validates and compiles. Parse reports its problems with file and
// line; the proxy compiles the same spec.
func (c *Config) PolicySpec() policy.Spec {
	sep := c.Server.NameSeparator
	if sep == "" {
		sep = DefaultNameSeparator
	}
	spec := policy.Spec{
		Tools:           rulesOf(c.Tools.ToolRules),
		RequireApproval: c.Tools.RequireApproval,
		ByClient:        map[string]policy.Rules{},
		Profiles:        map[string]policy.Profile{},
		Groups:          c.Groups,
		Endpoints:       map[string]policy.Rules{},
		NameSeparator:   sep,
	}
	for k, r := range c.Tools.ByClient {
		if r != nil {
			spec.ByClient[k] = rulesOf(*r)
		} else {
			spec.ByClient[k] = policy.Rules{}
		}
	}
	for k, pr := range c.Profiles {
		if pr != nil {
			spec.Profiles[k] = policy.Profile{Allow: pr.Allow, Deny: pr.Deny}
		} else {
			spec.Profiles[k] = policy.Profile{}
		}
	}
	for k, e := range c.Endpoints {
		if e != nil {
			spec.Endpoints[k] = rulesOf(e.Tools)
		}
	}
	for _, name := range sortedKeys(c.Upstreams) {
		u := policy.Upstream{Name: name, IDPrefix: "mcp:" + name + ":"}
		prefix := name
		if up := c.Upstreams[name]; up != nil {
			prefix = up.PrefixOrName()
		}
		if prefix != "" {
			u.NamePrefix = prefix + sep
		}
		spec.Upstreams = append(spec.Upstreams, u)
	}
	return spec
}

func rulesOf(r ToolRules) policy.Rules {
	return policy.Rules{Profile: r.Profile, Allow: r.Allow, Deny: r.Deny, AlsoAllow: r.AlsoAllow}
}

// validatePolicy reports the problems policy.Validate finds, each at its
// key's line, with a "did you mean" for a misspelt profile or group.
func (p *parser) validatePolicy() {
	c := p.cfg
	if len(c.Tools.ApprovalCommand) > 0 && c.Tools.ApprovalCommand[0] == "" {
		p.errf([]string{"tools", "approval_command"}, "", "the first element (the program) is empty")
	}
	for _, pr := range policy.Validate(c.PolicySpec()) {
		msg := pr.Msg
		if pr.Name != "" {
			if s := suggest(pr.Name, pr.Candidates); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			} else if pr.ListCandidates {
				msg += " (known: " + quoteList(pr.Candidates) + ")"
			}
		}
		if pr.Note != "" {
			msg += "; " + pr.Note
		}
		idx := ""
		if pr.Index >= 0 {
			idx = fmt.Sprintf("[%d]", pr.Index)
		}
		p.errf(pr.Path, idx, "%s", msg)
	}
	// Pinned tools are references (exposed names or ids), not rules.
	for i, e := range c.ToolSearch.Pinned {
		if msg := policy.CheckEntry(e); msg != "" {
			p.errf([]string{"tool_search", "pinned"}, fmt.Sprintf("[%d]", i), "%s", msg)
		}
	}
}
