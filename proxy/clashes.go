package proxy

// Exposed-name clashes. Two tools that want the same exposed name (an
// upstream with prefix = "", upstream names that nest, "alpha" and
// "alpha__x", or one upstream listing "Echo" and "echo") both get a hashed
// name (catalog.AssignNames), so a tool the model knew as "alpha__echo" is
// renamed when another upstream's tool arrives. Policy still holds (rules
// match the base name and the id), but the operator is told, at load and
// in `check`, naming both upstreams: a warning when two upstreams clash or
// a tool wants one of the proxy's own names (another prefix fixes it); a
// note, logged at info, when the tools of one upstream clash among
// themselves (its own names differ only in case or in characters an
// exposed name cannot hold): nothing in the config changes that, and the
// hashed names stay put while the upstream lists both.

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
	warn, _ := p.nameClashes()
	return warn
}

// NameClashNotes describes each clash among the tools of one upstream
// (e.g. `upstream "registry" lists tools whose names differ only in case
// …`), for `check` and the log at info: nothing the operator can act on.
func (p *Proxy) NameClashNotes() []string {
	_, notes := p.nameClashes()
	return notes
}

func (p *Proxy) nameClashes() (warn, notes []string) {
	snap := p.catalog().Snapshot()
	for _, c := range snap.Clashes {
		if msg, own := clashText(snap, c); own {
			notes = append(notes, msg)
		} else {
			warn = append(warn, msg)
		}
	}
	return warn, notes
}

// clashText describes clash c; own reports a clash among the tools of one
// upstream, not involving a reserved name.
func clashText(snap *catalog.Snapshot, c catalog.Clash) (msg string, own bool) {
	var ups, exposed, names []string
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
		names = append(names, e.Name)
	}
	ids := strings.Join(c.IDs, ", ")
	switch {
	case c.Reserved && len(c.IDs) == 1:
		return fmt.Sprintf("tool %s of upstream %s wants the exposed name %q, which is one of the proxy's own; it is exposed as %s", ids, strings.Join(ups, ""), c.Name, strings.Join(exposed, "")), false
	case len(ups) == 1 && !c.Reserved:
		how := "differ only in case"
		for _, n := range names[1:] {
			if !strings.EqualFold(n, names[0]) {
				how = "differ only in case or in characters an exposed name cannot hold"
			}
		}
		return fmt.Sprintf("upstream %s lists tools whose names %s (%s): exposed names are unique without regard to case, so they are exposed as %s (these names stay put while it lists them all)", ups[0], how, ids, strings.Join(exposed, " and ")), true
	case len(ups) == 1:
		return fmt.Sprintf("tools of upstream %s want the same exposed name %q (%s), which is one of the proxy's own; they are exposed as %s", ups[0], c.Name, ids, strings.Join(exposed, " and ")), false
	}
	return fmt.Sprintf("upstreams %s both want the exposed name %q (%s); they are exposed as %s: give one of them another prefix (upstreams.NAME.prefix) so that names stay put", strings.Join(ups, " and "), c.Name, ids, strings.Join(exposed, " and ")), false
}

// warnClashes logs each clash once per process (a re-listing does not
// repeat it): NameClashes as warnings, NameClashNotes at info.
func (p *Proxy) warnClashes() {
	warn, notes := p.nameClashes()
	for _, msg := range warn {
		if p.firstClash(msg) {
			p.log.Warn("exposed-name clash: " + msg)
		}
	}
	for _, msg := range notes {
		if p.firstClash(msg) {
			p.log.Info("exposed-name clash within one upstream: " + msg)
		}
	}
}

// firstClash reports whether msg was not logged before, and notes it.
func (p *Proxy) firstClash(msg string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.refWarned == nil {
		p.refWarned = map[string]bool{}
	}
	seen := p.refWarned[msg]
	p.refWarned[msg] = true
	return !seen
}
