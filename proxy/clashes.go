package proxy

// Exposed-name clashes between upstreams. Two tools that want the same
// exposed name (an upstream with prefix = "", upstream names that nest,
// "alpha" and "alpha__x", or one upstream listing "Echo" and "echo") both
// get a hashed name (catalog.AssignNames), so a tool the model knew as
// "alpha__echo" is renamed when another upstream's tool arrives. Policy
// still holds (rules match the base name and the id), but the operator is
// told, at load and in `check`, naming both upstreams.

import (
	"fmt"
	"strings"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
)

// NameClashes describes each clash of the current catalog in one sentence,
// e.g. `upstreams "alpha" and "beta" both want the exposed name
// "alpha__echo" (mcp:alpha:echo, mcp:beta:alpha__echo); they are exposed
// as "alpha__echo_1a2b3c" and "alpha__echo_4d5e6f": give one of them
// another prefix`. For `check` and the log.
func (p *Proxy) NameClashes() []string {
	snap := p.catalog().Snapshot()
	var out []string
	for _, c := range snap.Clashes {
		out = append(out, clashText(snap, c))
	}
	return out
}

func clashText(snap *catalog.Snapshot, c catalog.Clash) string {
	var ups, exposed []string
	seen := map[string]bool{}
	for _, id := range c.IDs {
		e := snap.ByID(id)
		if e == nil {
			continue
		}
		if !seen[e.Upstream] {
			seen[e.Upstream] = true
			ups = append(ups, fmt.Sprintf("%q", e.Upstream))
		}
		exposed = append(exposed, fmt.Sprintf("%q", e.Exposed))
	}
	ids := strings.Join(c.IDs, ", ")
	switch {
	case c.Reserved && len(c.IDs) == 1:
		return fmt.Sprintf("tool %s of upstream %s wants the exposed name %q, which is one of the proxy's own; it is exposed as %s", ids, strings.Join(ups, ""), c.Name, strings.Join(exposed, ""))
	case len(ups) == 1:
		return fmt.Sprintf("tools of upstream %s want the same exposed name %q (%s); they are exposed as %s", ups[0], c.Name, ids, strings.Join(exposed, " and "))
	}
	return fmt.Sprintf("upstreams %s both want the exposed name %q (%s); they are exposed as %s: give one of them another prefix (upstreams.NAME.prefix) so that names stay put", strings.Join(ups, " and "), c.Name, ids, strings.Join(exposed, " and "))
}

// warnClashes logs each clash once per process (a re-listing does not
// repeat it).
func (p *Proxy) warnClashes() {
	for _, msg := range p.NameClashes() {
		p.mu.Lock()
		if p.refWarned == nil {
			p.refWarned = map[string]bool{}
		}
		seen := p.refWarned[msg]
		p.refWarned[msg] = true
		p.mu.Unlock()
		if !seen {
			p.log.Warn("exposed-name clash: " + msg)
		}
	}
}
