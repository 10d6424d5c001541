package policy

import (
	"fmt"
	"iter"
	"strconv"
	"strings"
	"sync"
)

// Subject identifies whose policy applies: the MCP client's clientInfo.name
// from initialize, and the named HTTP endpoint it connected through ("" for
// the main endpoint, and for stdio).
//
// Trust: clientInfo.name is chosen by the client, so by_client rules keyed
// on it separate well-behaved clients and may only narrow what the endpoint
// allows (narrow.go: a client lying about its name gets no more than its
// token grants). Endpoints (their own path and token) are the boundary.
type Subject struct {
	ClientName string
	Endpoint   string
	// User, Groups and Scopes are the identity the HTTP front verified from
	// an OAuth access token (empty otherwise). They are matched
	// only by tools.by_client keys "user:…", "group:…" and "scope:…"
	// (identity.go).
	User   string
	Groups []string
	Scopes []string
}

// String describes the subject for messages, e.g. `client "cursor" on
// endpoint "team-a"` or `the main endpoint`.
func (s Subject) String() string {
	var parts []string
	if s.User != "" {
		parts = append(parts, fmt.Sprintf("user %q", s.User))
	}
	if s.ClientName != "" {
		parts = append(parts, fmt.Sprintf("client %q", s.ClientName))
	}
	if s.Endpoint != "" {
		parts = append(parts, fmt.Sprintf("endpoint %q", s.Endpoint))
	} else {
		parts = append(parts, "the main endpoint")
	}
	return strings.Join(parts, " on ")
}

// Tool is what the policy looks at in one catalog entry.
type Tool struct {
	ID      string // "mcp:github:create_issue"
	Exposed string // "github__create_issue"
	// Base is the exposed name before any clash or length suffix, so a rule
	// written for "gh__delete_repo" keeps holding after a clash renames it.
	Base string
	// Name is the tool's name on its upstream ("delete_repository"). Only
	// deny lists (and require_approval) match it: an entry the operator
	// wrote to keep a tool away holds whatever name it used, while an
	// allow entry never widens to every upstream's tool of that name.
	Name       string
	Upstream   string
	DirectOnly bool
}

// Layer is one table of rules as it applies to a subject, with the name
// used in Decision.Rule: "tools", "endpoints.NAME.tools" or
// `tools.by_client."PATTERN"`.
type Layer struct {
	Name string
	Rules
}

// Decision is the outcome of the policy for one tool (or one upstream's
// features) and one subject.
type Decision struct {
	Allowed bool
	// Rule says, for humans, which rule decided, e.g.
	// `allowed by tools.allow "github__*"` (formats in the package notes).
	Rule string
	// NeedsApproval is true for allowed tools matched by tools.require_approval;
	// ApprovalRule then names the entry, e.g. `tools.require_approval "*__delete_*"`.
	NeedsApproval bool
	ApprovalRule  string
}

// cand is a tool (or a whole upstream) prepared for matching: lower-cased
// once per decision.
type cand struct {
	exposed, base, id, upstream string
	name                        string // the name on the upstream (Tool.Name), lower case
	// byName: entries also match name (deny and require_approval lists:
	// asSafe).
	byName     bool
	directOnly bool
	// whole is set for an upstream as a whole: entries match it only if
	// they cover every tool it can have (see matcher.match).
	whole        bool
	nsName, nsID string
}

func toolCand(t Tool) *cand {
	return &cand{
		exposed:    strings.ToLower(t.Exposed),
		base:       strings.ToLower(t.Base),
		name:       strings.ToLower(t.Name),
		id:         strings.ToLower(t.ID),
		upstream:   strings.ToLower(t.Upstream),
		directOnly: t.DirectOnly,
	}
}

// match reports whether m matches c and, for a group, the innermost member
// entry that matched ("" when m itself is not a group).
//
// For a whole upstream: "group:<upstream>" matches it; a literal never does
// (it names one tool); a glob does when it covers the upstream's exposed-name
// or id namespace ("github__*", "mcp:github:*", "*"; not "github__get_*").
func (m *matcher) match(c *cand) (bool, string) {
	switch m.kind {
	case kindLiteral:
		if c.whole {
			return false, ""
		}
		return c.exposed == m.pat || c.id == m.pat || c.base != "" && c.base == m.pat || c.byName && c.name != "" && c.name == m.pat, ""
	case kindGlob:
		if c.whole {
			return c.nsName != "" && coversLower(m.pat, c.nsName) || c.nsID != "" && coversLower(m.pat, c.nsID), ""
		}
		return matchLower(m.pat, c.exposed) || matchLower(m.pat, c.id) || c.base != "" && matchLower(m.pat, c.base) ||
			c.byName && c.name != "" && matchLower(m.pat, c.name), ""
	case kindUpstream:
		return c.upstream == m.pat, ""
	}
	for _, mm := range m.members {
		if ok, via := mm.match(c); ok {
			if via == "" {
				via = mm.raw
			}
			return true, via
		}
	}
	return false, ""
}

// asSafe is c for the lists whose matches only take away (deny lists) or
// ask first (require_approval): their entries also match the tool's name
// on its upstream.
func asSafe(c *cand) *cand {
	if c.byName || c.whole {
		return c
	}
	sc := *c
	sc.byName = true
	return &sc
}

// firstMatch returns the first matcher of list that matches c.
func firstMatch(list []*matcher, c *cand) (*matcher, string) {
	for _, m := range list {
		if ok, via := m.match(c); ok {
			return m, via
		}
	}
	return nil, ""
}

func ruleText(verb, field string, m *matcher, via string) string {
	s := fmt.Sprintf("%s by %s %q", verb, field, m.raw)
	if via != "" {
		s += fmt.Sprintf(" (via %q)", via)
	}
	return s
}

// viewCache holds one View per distinct set of layers.
type viewCache struct{ m sync.Map } // key (string) -> *View

// View is the policy for one subject, with a cache of decisions. It is safe
// for concurrent use. After the first decision for a tool (keyed by its id,
// exposed name and direct-only flag) Allowed and Decide are one map lookup.
type View struct {
	p       *Policy
	subject Subject
	layers  []*layer // application order
	badEP   bool     // unknown endpoint: everything denied
	grant   *View    // the endpoint's grant when by_client layers apply: they only narrow (narrow.go)

	mu    sync.RWMutex
	cache map[toolKey]Decision
}

type toolKey struct {
	id, exposed, name string
	directOnly        bool
}

// viewCacheMax bounds a view's decision cache; past it the cache is dropped
// and refilled (tools churn when upstreams change their lists).
const viewCacheMax = 1 << 16

// View returns the cached view for subject s. Subjects whose endpoint and
// set of matching by_client patterns are the same share one view, so the
// number of views is bounded by the config, not by the client names seen.
// An unknown endpoint yields a (non-cached) view that denies everything.
func (p *Policy) View(s Subject) *View {
	if s.Endpoint != "" {
		if _, ok := p.endpoints[s.Endpoint]; !ok {
			return &View{p: p, subject: s, badEP: true, cache: map[toolKey]Decision{}}
		}
	}
	name := strings.ToLower(s.ClientName)
	// The key: the endpoint, then "\x00<index>" per matching pattern, built
	// on the stack (a strings.Builder passed to fmt escaped: one allocation
	// per call).
	var kb [64]byte
	key := append(kb[:0], s.Endpoint...)
	var matched []*clientLayer
	for i, cl := range p.byClient {
		if cl.matches(s, name) {
			key = strconv.AppendInt(append(key, 0), int64(i), 10)
			matched = append(matched, cl)
		}
	}
	if v, ok := p.views.m.Load(string(key)); ok {
		return v.(*View)
	}
	v := &View{p: p, subject: s, cache: map[toolKey]Decision{}}
	v.layers = append(v.layers, p.base)
	if s.Endpoint != "" {
		v.layers = append(v.layers, p.endpoints[s.Endpoint])
	}
	for i := len(matched) - 1; i >= 0; i-- { // least specific first
		v.layers = append(v.layers, matched[i].layer)
	}
	// Client-name layers only narrow (narrow.go); verified-identity layers
	// (identity.go) are part of the grant, like the endpoint's.
	var verified []*clientLayer
	clientNamed := false
	for i := len(matched) - 1; i >= 0; i-- {
		if matched[i].Verified() {
			verified = append(verified, matched[i])
		} else {
			clientNamed = true
		}
	}
	if clientNamed {
		v.grant = p.grantView(s.Endpoint, verified)
	}
	actual, _ := p.views.m.LoadOrStore(string(key), v)
	return actual.(*View)
}

// Decide returns the decision for tool t under subject s (p.View(s).Decide(t)).
func (p *Policy) Decide(s Subject, t Tool) Decision { return p.View(s).Decide(t) }

// Rules returns the layers that apply to subject s, in application order.
func (p *Policy) Rules(s Subject) []Layer { return p.View(s).Rules() }

// Subjects returns representative subjects for checking a deployment: the
// main endpoint with no client name, each endpoint, and each by_client
// pattern (its key used as the client name, on the main endpoint). The
// order is stable: main, endpoints by name, patterns by specificity.
func (p *Policy) Subjects() []Subject {
	out := []Subject{{}}
	for _, name := range sortedKeys(p.endpoints) {
		out = append(out, Subject{Endpoint: name})
	}
	for _, cl := range p.byClient {
		out = append(out, cl.subjectFor())
	}
	return out
}

// Subject returns the subject the view was first built for (other subjects
// sharing the view may have other client names).
func (v *View) Subject() Subject { return v.subject }

// Rules returns the layers of this view in application order (copies of the
// config lists; nil for an unknown endpoint).
func (v *View) Rules() []Layer {
	var out []Layer
	for _, l := range v.layers {
		out = append(out, Layer{Name: l.name, Rules: l.src})
	}
	return out
}

// Allowed reports whether t is visible and callable for this view's subject.
func (v *View) Allowed(t Tool) bool { return v.Decide(t).Allowed }

// Decide returns the decision for tool t, from the cache when possible.
func (v *View) Decide(t Tool) Decision {
	k := toolKey{id: t.ID, exposed: t.Exposed, name: t.Name, directOnly: t.DirectOnly}
	v.mu.RLock()
	d, ok := v.cache[k]
	v.mu.RUnlock()
	if ok {
		return d
	}
	d = v.decide(toolCand(t))
	v.mu.Lock()
	if len(v.cache) >= viewCacheMax {
		v.cache = map[toolKey]Decision{}
	}
	v.cache[k] = d
	v.mu.Unlock()
	return d
}

// decide evaluates the layers (see the package notes) without the cache.
func (v *View) decide(c *cand) Decision {
	if v.badEP {
		return Decision{Rule: fmt.Sprintf("denied: unknown endpoint %q", v.subject.Endpoint)}
	}
	if d, denied := v.denied(c); denied {
		return d
	}
	d := v.narrow(c, v.allow(c))
	if d.Allowed {
		if m, via := firstMatch(v.p.approval, asSafe(c)); m != nil {
			d.NeedsApproval = true
			d.ApprovalRule = fmt.Sprintf("tools.require_approval %q", m.raw)
			if via != "" {
				d.ApprovalRule += fmt.Sprintf(" (via %q)", via)
			}
		}
	}
	return d
}

// denied applies step 1: a closed upstream (Policy.Closed) or a deny
// entry of any layer wins.
func (v *View) denied(c *cand) (Decision, bool) {
	if r, ok := v.p.closed[c.upstream]; ok {
		return Decision{Rule: fmt.Sprintf("denied: upstream %q is closed: %s", v.p.upstreams[c.upstream].Name, r)}, true
	}
	for _, l := range v.layers {
		if m, via := firstMatch(l.deny, asSafe(c)); m != nil {
			return Decision{Rule: ruleText("denied", l.name+".deny", m, via)}, true
		}
	}
	return Decision{}, false
}

// allow applies steps 2 and 3 (no deny matched).
func (v *View) allow(c *cand) Decision {
	var allowL *layer
	prof := &profile{name: ProfileFull}
	for _, l := range v.layers {
		if l.allowSet {
			allowL = l
		}
		if l.profile != nil {
			prof = l.profile
		}
	}
	also := func() (Decision, bool) {
		for _, l := range v.layers {
			if m, via := firstMatch(l.alsoAllow, c); m != nil {
				return Decision{Allowed: true, Rule: ruleText("allowed", l.name+".also_allow", m, via)}, true
			}
		}
		return Decision{}, false
	}
	// 2. An explicit allow list replaces the profile.
	if allowL != nil {
		if m, via := firstMatch(allowL.allow, c); m != nil {
			return Decision{Allowed: true, Rule: ruleText("allowed", allowL.name+".allow", m, via)}
		}
		if d, ok := also(); ok {
			return d
		}
		return Decision{Rule: "denied: not matched by " + allowL.name + ".allow"}
	}
	// 3. The profile is the base allow list; also_allow adds to it.
	field := "profile"
	suffix := " (default)"
	if prof.field != "" {
		field, suffix = prof.field, ""
	}
	switch strings.ToLower(prof.name) {
	case ProfileFull:
		return Decision{Allowed: true, Rule: fmt.Sprintf("allowed by %s %q%s", field, prof.name, suffix)}
	case ProfileMinimal:
		if c.directOnly {
			return Decision{Allowed: true, Rule: fmt.Sprintf("allowed by %s %q (direct-only tool)", field, prof.name)}
		}
		if d, ok := also(); ok {
			return d
		}
		return Decision{Rule: fmt.Sprintf("denied: not in %s %q (only direct-only tools)", field, prof.name)}
	}
	pfx := "profiles." + prof.name
	if m, via := firstMatch(prof.deny, asSafe(c)); m != nil {
		if d, ok := also(); ok {
			return d
		}
		return Decision{Rule: ruleText("denied", pfx+".deny", m, via)}
	}
	if m, via := firstMatch(prof.allow, c); m != nil {
		return Decision{Allowed: true, Rule: ruleText("allowed", pfx+".allow", m, via)}
	}
	if d, ok := also(); ok {
		return d
	}
	return Decision{Rule: fmt.Sprintf("denied: not matched by %s.allow (%s %q)", pfx, field, prof.name)}
}

// Features decides whether this view's subject may see and use the
// resources, resource templates, prompts and completions of upstream up
// (and receive its log messages); tools are the upstream's current catalog
// entries. The rule, in order:
//
//  1. an unknown endpoint, or an upstream the config does not name: denied;
//  2. a deny entry of any layer that covers the whole upstream
//     ("group:<up>", a [groups] group holding one, or a glob covering its
//     exposed names or ids: "gitlab__*", "mcp:gitlab:*", "*"): denied;
//  3. any of its tools allowed for the subject: allowed (whoever may use an
//     upstream's tools may read its resources and prompts);
//  4. else the tool rules applied to the upstream as a whole, where only
//     entries covering it match (so an upstream without tools is visible
//     under profile "full", or when an allow list names "group:<up>").
//
// Denied features are answered exactly as unknown ones (SPEC §6).
func (v *View) Features(up string, tools iter.Seq[Tool]) Decision {
	if v.badEP {
		return Decision{Rule: fmt.Sprintf("denied: unknown endpoint %q", v.subject.Endpoint)}
	}
	u, ok := v.p.upstreams[strings.ToLower(up)]
	if !ok {
		return Decision{Rule: fmt.Sprintf("denied: unknown upstream %q", up)}
	}
	c := &cand{upstream: strings.ToLower(u.Name), whole: true, nsName: u.NamePrefix, nsID: u.IDPrefix}
	if d, denied := v.denied(c); denied {
		return d
	}
	if tools != nil {
		for t := range tools {
			if d := v.Decide(t); d.Allowed {
				return Decision{Allowed: true, Rule: fmt.Sprintf("allowed: its tool %q is (%s)", t.Exposed, d.Rule)}
			}
		}
	}
	d := v.narrow(c, v.allow(c))
	if !d.Allowed && d.Rule != "" {
		d.Rule += " (no tool of it allowed)"
	}
	return d
}
