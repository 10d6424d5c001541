package policy

import (
	"fmt"
	"sort"
	"strings"
)

// by_client may only narrow.
//
// Trust: clientInfo.name is chosen by the client. A client claiming the
// name of a more trusted one must not get more than its endpoint and token
// grant, so a by_client layer can take tools away (deny, a narrower allow
// or profile) but never add any: a tool is allowed for a subject only if
// it is allowed by the whole stack of layers AND by the grant — the
// "tools" layer and the endpoint's layer alone. Granting more needs an
// endpoint with its own token. The same holds for an upstream's features
// (View.Features).

// grantView is the view of the layers an endpoint's token grants: the
// "tools" layer and the endpoint's own, with no by_client layer. Cached
// like other views.
//
// Layers of verified identities (by_client keys "user:", "group:",
// "scope:"; identity.go) belong to the grant, in application order: the
// client cannot choose them, so they may widen like an endpoint.
func (p *Policy) grantView(endpoint string, verified []*clientLayer) *View {
	key := endpoint + "\x00grant"
	for _, cl := range verified {
		key += "\x00" + cl.key
	}
	if v, ok := p.views.m.Load(key); ok {
		return v.(*View)
	}
	v := &View{p: p, subject: Subject{Endpoint: endpoint}, cache: map[toolKey]Decision{}}
	v.layers = append(v.layers, p.base)
	if endpoint != "" {
		v.layers = append(v.layers, p.endpoints[endpoint])
	}
	for _, cl := range verified {
		v.layers = append(v.layers, cl.layer)
	}
	actual, _ := p.views.m.LoadOrStore(key, v)
	return actual.(*View)
}

// narrow turns an allowing decision d for c into a denial when the grant
// (v.grant) does not allow c. Deny entries of the grant's layers were
// already applied (they are layers of v too).
func (v *View) narrow(c *cand, d Decision) Decision {
	if !d.Allowed || v.grant == nil {
		return d
	}
	if g := v.grant.allow(c); !g.Allowed {
		return Decision{Rule: g.Rule + " (tools.by_client rules only narrow what the endpoint allows)"}
	}
	return d
}

// rawAllowed is the decision for c by the whole stack of layers, before
// narrowing: what the by_client layers would grant if they could.
func (v *View) rawAllowed(c *cand) bool {
	if _, denied := v.denied(c); denied {
		return false
	}
	return v.allow(c).Allowed
}

// wideningWarning names, for a view with by_client layers, the tools those
// layers would allow beyond the grant, or "" when there are none, e.g.
// `tools.by_client."trusted-agent" would allow 5 tools that the main
// endpoint does not (fs__write, …): by_client rules only narrow; …`.
func (v *View) wideningWarning(tools []Tool) string {
	if v.grant == nil {
		return ""
	}
	var wider []string
	for _, t := range tools {
		c := toolCand(t)
		if v.rawAllowed(c) && !v.grant.rawAllowed(c) {
			wider = append(wider, t.Exposed)
		}
	}
	if len(wider) == 0 {
		return ""
	}
	sort.Strings(wider)
	shown := wider
	if len(shown) > 5 {
		shown = append(shown[:5:5], "…")
	}
	var names []string
	for _, l := range v.layers {
		if strings.HasPrefix(l.name, "tools.by_client.") {
			names = append(names, l.name)
		}
	}
	where := "the main endpoint"
	if v.subject.Endpoint != "" {
		where = fmt.Sprintf("endpoint %q", v.subject.Endpoint)
	}
	return fmt.Sprintf("%s would allow %d tool(s) that %s does not (%s): by_client rules only narrow, since a client chooses its own name; give that client an [endpoints.NAME] with its own token instead",
		strings.Join(names, ", "), len(wider), where, strings.Join(shown, ", "))
}
