package catalog

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
)

// Built-in profile names (seed "Tool プロファイル"; coding and messaging are
// OpenClaw built-in tool bundles that have no meaning for upstream MCP tools).
const (
	ProfileFull    = "full"
	ProfileMinimal = "minimal"
)

// Subject identifies whose policy applies: the MCP client's clientInfo.name
// from initialize, and the named HTTP endpoint it connected through ("" for
// the main endpoint, and for stdio).
type Subject struct {
	ClientName string
	Endpoint   string
}

// String describes the subject for messages, e.g. `client "cursor" on
// endpoint "team-a"` or `the main endpoint`.
func (s Subject) String() string {
	var parts []string
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

// Layer is one table of rules as written in the config, with the name used in
// Decision.Rule and messages: "tools", "endpoints.NAME.tools" or
// `tools.by_client."PATTERN"`.
type Layer struct {
	Name      string
	Profile   string   // "" inherits
	Allow     []string // nil: not set
	Deny      []string
	AlsoAllow []string
}

// Rules is the stack of layers that applies to one subject, in application
// order (see the package notes on policy layers).
type Rules struct{ Layers []Layer }

// Decision is the outcome of the policy for one entry and one subject.
type Decision struct {
	Allowed bool
	// Rule says, for humans, which rule decided, e.g.
	// `allowed by tools.allow "github__*"` (formats in the policy notes).
	Rule string
	// NeedsApproval is true for allowed tools matched by tools.require_approval;
	// ApprovalRule then names the entry, e.g. `tools.require_approval "*__delete_*"`.
	NeedsApproval bool
	ApprovalRule  string
}

// Policy is a compiled set of rules. It is immutable apart from its internal
// caches and safe for concurrent use. Build a new one with Compile when the
// config changes; per-entry decisions are cached per View and are keyed by the
// entry's id, exposed name and direct-only flag, so a changed catalog never
// sees a stale decision.
//
// Policy resolution (SPEC §6; seed tools-and-plugins.ja.txt, sections
// "許可リストと拒否リスト", "Tool プロファイル", "Tool グループ" and
// "プロバイダー固有の制限" (tools.byProvider), mapped onto upstream MCP tools).
//
// # Entries
//
// Every list (allow, deny, also_allow, require_approval, a profile's allow and
// deny, a group's members) holds entries of four kinds:
//
//   - an exposed name ("github__create_issue") or a catalog id
//     ("mcp:github:create_issue"), matched literally;
//   - a glob pattern: an entry containing '*' or '?' (see GlobMatch), matched
//     against the exposed name and the id ("github__*", "*__delete_*",
//     "mcp:github:*");
//   - "group:<upstream>": every tool of that upstream (Entry.Upstream);
//   - "group:<name>": a group defined under [groups]; its members are entries
//     of the same kinds and may name other groups. A cycle is an error.
//
// Matching is case-insensitive and looks at Entry.Exposed, Entry.Base (the
// exposed name before a clash or length suffix) and Entry.ID, never at the
// original tool name alone (it may collide across upstreams), so patterns
// follow the exposed names the catalog assigned (prefix and name_separator
// included), and a rule written for "gh__delete_repo" keeps holding when a
// later clash renames that tool "gh__delete_repo_4d3cee".
// Group and profile names are case-insensitive too; two [groups] or
// [profiles] keys that differ only in case, a group named like an upstream,
// and a profile named "full" or "minimal" are compile errors.
//
// # Layers
//
// The rules for one client are a stack of layers, applied in this order:
//
//  1. "tools": the deployment's [tools] table;
//  2. "endpoints.NAME.tools": the HTTP endpoint the client came through, if any;
//  3. `tools.by_client."PATTERN"`: every by_client table whose key matches the
//     client's clientInfo.name from initialize (glob, case-insensitive), from
//     the least specific to the most specific. Specificity: an exact key (no
//     '*' or '?') beats any glob; among globs a longer key beats a shorter
//     one; equal lengths are ordered by key. Because later layers override,
//     the most specific matching key wins for profile and allow.
//
// A layer's profile, if set, replaces the profile chosen so far; its allow
// list, if non-nil (even empty), replaces the allow list chosen so far; its
// deny and also_allow entries add to those of earlier layers.
//
// # Decision for one entry
//
//  1. If any deny entry of any layer matches, the tool is denied. Deny always
//     wins (seed: 拒否は常に許可より優先されます).
//  2. Else, if some layer set an allow list, the tool is allowed iff the
//     effective allow list or any also_allow entry matches it. The profile is
//     then not consulted, so direct-only tools must be allowed explicitly too.
//  3. Else the effective profile (default "full", the seed's widest surface)
//     is the base allow list: "full" allows every tool; "minimal" allows only
//     direct-only tools (Entry.DirectOnly); a [profiles.NAME] allows what its
//     allow list matches minus what its own deny list matches (that deny only
//     trims the base: also_allow can add such a tool back, unlike tools.deny).
//     also_allow adds to the profile.
//
// A tool that is allowed and matches [tools] require_approval needs approval
// (Decision.NeedsApproval). Denied tools never need approval: they are hidden.
//
// # Fail closed
//
// Check refuses a subject whose explicit allow list resolves to no callable
// tool (seed: フェイルクローズ), naming each allow/also_allow entry that
// matched nothing; for a subject that resolves, it returns warnings naming the
// entries that matched nothing.
//
// Decision.Rule strings have the form
//
//	allowed by tools.allow "github__*"
//	denied by tools.by_client."cursor*".deny "*__delete_*"
//	allowed by tools.allow "group:readonly" (via "github__get_*")
//	allowed by tools.profile "minimal" (direct-only tool)
//	allowed by profile "full" (default)
//	denied: not matched by endpoints.team-a.tools.allow
//
// so `mcp-toolsearch list` can print, for each tool, the rule that decided it.
type Policy struct {
	base      *polLayer
	endpoints map[string]*polLayer // key: endpoint name as configured
	byClient  []*polClientLayer    // most specific first
	approval  []*polMatcher

	views sync.Map // view key (string) -> *View
}

// polClientLayer is one by_client table.
type polClientLayer struct {
	key     string // as configured
	pattern string // lower case
	exact   bool
	layer   *polLayer
}

// polLayer is one compiled Layer.
type polLayer struct {
	src       Layer
	profile   *polProfile // nil: not set
	allow     []*polMatcher
	allowSet  bool
	deny      []*polMatcher
	alsoAllow []*polMatcher
}

// polProfile is a compiled profile: built-in or from [profiles.NAME].
type polProfile struct {
	name  string // as configured (built-ins in lower case)
	field string // where it was chosen, e.g. `tools.profile`; "" for the default
	allow []*polMatcher
	deny  []*polMatcher
}

type polKind uint8

const (
	polLiteral  polKind = iota // pat: lower-case exposed name or id
	polGlob                    // pat: lower-case glob
	polUpstream                // pat: lower-case upstream name
	polGroup                   // members
)

// polMatcher is one compiled list entry.
type polMatcher struct {
	raw     string // the entry as written
	kind    polKind
	pat     string
	members []*polMatcher
}

// polCand is an entry prepared for matching: lower-cased once per decision.
type polCand struct {
	exposed, base, id, upstream string
	directOnly                  bool
}

func newPolCand(e *Entry) *polCand {
	return &polCand{
		exposed:    strings.ToLower(e.Exposed),
		base:       strings.ToLower(e.Base),
		id:         strings.ToLower(e.ID),
		upstream:   strings.ToLower(e.Upstream),
		directOnly: e.DirectOnly,
	}
}

// match reports whether m matches c and, for a group, the innermost member
// entry that matched ("" when m itself is not a group).
func (m *polMatcher) match(c *polCand) (bool, string) {
	switch m.kind {
	case polLiteral:
		return c.exposed == m.pat || c.id == m.pat || c.base != "" && c.base == m.pat, ""
	case polGlob:
		return globMatchLower(m.pat, c.exposed) || globMatchLower(m.pat, c.id) || c.base != "" && globMatchLower(m.pat, c.base), ""
	case polUpstream:
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

// firstMatch returns the first matcher of list that matches c.
func polFirstMatch(list []*polMatcher, c *polCand) (*polMatcher, string) {
	for _, m := range list {
		if ok, via := m.match(c); ok {
			return m, via
		}
	}
	return nil, ""
}

func polRule(verb, field string, m *polMatcher, via string) string {
	s := fmt.Sprintf("%s by %s %q", verb, field, m.raw)
	if via != "" {
		s += fmt.Sprintf(" (via %q)", via)
	}
	return s
}

// polCompiler holds the name tables while Compile runs.
type polCompiler struct {
	upstreams map[string]bool          // lower-case names
	groupSrc  map[string][]string      // lower-case name -> members
	groupKey  map[string]string        // lower-case name -> key as configured
	groupDone map[string][]*polMatcher // compiled members
	visiting  []string                 // group DFS stack (lower case)
}

// Compile checks and compiles the policy of one deployment.
//
// Inputs: the [tools] table, [profiles.NAME], [groups] (name -> members),
// [endpoints.NAME] (only their Tools rules are used; nil values are skipped)
// and the names of all configured upstreams (for "group:<upstream>"; include
// disabled ones so their groups stay valid).
//
// Errors name the offending place, e.g. `tools.by_client."cursor*".profile:
// unknown profile "codng" (known: full, minimal, readonly)`,
// `tools.allow[2]: unknown group "group:nosuch"`, `groups: cycle
// group:a -> group:b -> group:a`, `tools.deny[0]: empty entry`. Every group is
// compiled, so errors in unused groups are reported too.
func Compile(tools config.Tools, profiles map[string]*config.Profile, groups map[string][]string, endpoints map[string]*config.Endpoint, upstreams []string) (*Policy, error) {
	c := &polCompiler{
		upstreams: map[string]bool{},
		groupSrc:  map[string][]string{},
		groupKey:  map[string]string{},
		groupDone: map[string][]*polMatcher{},
	}
	for _, u := range upstreams {
		c.upstreams[strings.ToLower(u)] = true
	}
	for _, name := range polSortedKeys(groups) {
		low := strings.ToLower(name)
		if name == "" {
			return nil, fmt.Errorf("groups: empty group name")
		}
		if prev, dup := c.groupKey[low]; dup {
			return nil, fmt.Errorf("groups.%s: same name as groups.%s (group names are case-insensitive)", name, prev)
		}
		if c.upstreams[low] {
			return nil, fmt.Errorf("groups.%s: an upstream has the same name, so group:%s would be ambiguous", name, name)
		}
		c.groupKey[low] = name
		c.groupSrc[low] = groups[name]
	}
	for _, name := range polSortedKeys(groups) {
		if _, err := c.group(strings.ToLower(name)); err != nil {
			return nil, err
		}
	}

	// Profiles: built-ins plus [profiles.NAME].
	profs := map[string]*polProfile{
		ProfileFull:    {name: ProfileFull},
		ProfileMinimal: {name: ProfileMinimal},
	}
	for _, name := range polSortedKeys(profiles) {
		low := strings.ToLower(name)
		if low == ProfileFull || low == ProfileMinimal {
			return nil, fmt.Errorf("profiles.%s: %q is a built-in profile and cannot be redefined", name, low)
		}
		if prev, dup := profs[low]; dup {
			return nil, fmt.Errorf("profiles.%s: same name as profiles.%s (profile names are case-insensitive)", name, prev.name)
		}
		pr := &polProfile{name: name}
		if src := profiles[name]; src != nil {
			var err error
			if pr.allow, err = c.list("profiles."+name+".allow", src.Allow); err != nil {
				return nil, err
			}
			if pr.deny, err = c.list("profiles."+name+".deny", src.Deny); err != nil {
				return nil, err
			}
		}
		profs[low] = pr
	}
	knownProfiles := make([]string, 0, len(profs))
	for _, pr := range profs {
		knownProfiles = append(knownProfiles, pr.name)
	}
	sort.Strings(knownProfiles)

	layer := func(name string, r config.ToolRules) (*polLayer, error) {
		l := &polLayer{src: Layer{Name: name, Profile: r.Profile, Allow: r.Allow, Deny: r.Deny, AlsoAllow: r.AlsoAllow}}
		if r.Profile != "" {
			pr, ok := profs[strings.ToLower(r.Profile)]
			if !ok {
				return nil, fmt.Errorf("%s.profile: unknown profile %q (known: %s)", name, r.Profile, strings.Join(knownProfiles, ", "))
			}
			cp := *pr
			cp.field = name + ".profile"
			l.profile = &cp
		}
		var err error
		if r.Allow != nil {
			l.allowSet = true
			if l.allow, err = c.list(name+".allow", r.Allow); err != nil {
				return nil, err
			}
		}
		if l.deny, err = c.list(name+".deny", r.Deny); err != nil {
			return nil, err
		}
		if l.alsoAllow, err = c.list(name+".also_allow", r.AlsoAllow); err != nil {
			return nil, err
		}
		return l, nil
	}

	p := &Policy{endpoints: map[string]*polLayer{}}
	var err error
	if p.base, err = layer("tools", tools.ToolRules); err != nil {
		return nil, err
	}
	if p.approval, err = c.list("tools.require_approval", tools.RequireApproval); err != nil {
		return nil, err
	}
	for _, name := range polSortedKeys(endpoints) {
		ep := endpoints[name]
		if ep == nil {
			continue
		}
		if p.endpoints[name], err = layer("endpoints."+name+".tools", ep.Tools); err != nil {
			return nil, err
		}
	}
	seen := map[string]string{}
	for _, key := range polSortedKeys(tools.ByClient) {
		low := strings.ToLower(key)
		if prev, dup := seen[low]; dup {
			return nil, fmt.Errorf("tools.by_client.%q: same pattern as tools.by_client.%q (client patterns are case-insensitive)", key, prev)
		}
		seen[low] = key
		r := tools.ByClient[key]
		if r == nil {
			r = &config.ToolRules{}
		}
		l, err := layer(fmt.Sprintf("tools.by_client.%q", key), *r)
		if err != nil {
			return nil, err
		}
		p.byClient = append(p.byClient, &polClientLayer{key: key, pattern: low, exact: !IsGlob(key), layer: l})
	}
	sort.SliceStable(p.byClient, func(i, j int) bool { return polMoreSpecific(p.byClient[i], p.byClient[j]) })
	return p, nil
}

// polMoreSpecific orders by_client patterns: exact before glob, then longer
// first, then by pattern.
func polMoreSpecific(a, b *polClientLayer) bool {
	if a.exact != b.exact {
		return a.exact
	}
	if len(a.pattern) != len(b.pattern) {
		return len(a.pattern) > len(b.pattern)
	}
	return a.pattern < b.pattern
}

// list compiles the entries of one config list; field names the list for
// errors, e.g. "tools.allow".
func (c *polCompiler) list(field string, entries []string) ([]*polMatcher, error) {
	out := make([]*polMatcher, 0, len(entries))
	for i, raw := range entries {
		m, err := c.entry(raw)
		if err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", field, i, err)
		}
		out = append(out, m)
	}
	return out, nil
}

func (c *polCompiler) entry(raw string) (*polMatcher, error) {
	if strings.TrimSpace(raw) == "" {
		return nil, fmt.Errorf("empty entry")
	}
	if strings.TrimSpace(raw) != raw {
		return nil, fmt.Errorf("entry %q has leading or trailing spaces", raw)
	}
	low := strings.ToLower(raw)
	if name, ok := strings.CutPrefix(low, "group:"); ok {
		if name == "" {
			return nil, fmt.Errorf("entry %q: empty group name", raw)
		}
		if IsGlob(name) {
			return nil, fmt.Errorf("entry %q: group names cannot be patterns", raw)
		}
		if _, ok := c.groupSrc[name]; ok {
			members, err := c.group(name)
			if err != nil {
				return nil, err
			}
			return &polMatcher{raw: raw, kind: polGroup, members: members}, nil
		}
		if c.upstreams[name] {
			return &polMatcher{raw: raw, kind: polUpstream, pat: name}, nil
		}
		return nil, fmt.Errorf("unknown group %q (not a [groups] entry nor an upstream name)", raw)
	}
	if IsGlob(raw) {
		return &polMatcher{raw: raw, kind: polGlob, pat: low}, nil
	}
	return &polMatcher{raw: raw, kind: polLiteral, pat: low}, nil
}

// group compiles the members of the [groups] entry with lower-case name low,
// detecting cycles.
func (c *polCompiler) group(low string) ([]*polMatcher, error) {
	if done, ok := c.groupDone[low]; ok {
		return done, nil
	}
	for i, v := range c.visiting {
		if v == low {
			path := make([]string, 0, len(c.visiting)-i+1)
			for _, g := range c.visiting[i:] {
				path = append(path, "group:"+c.groupKey[g])
			}
			path = append(path, "group:"+c.groupKey[low])
			return nil, fmt.Errorf("groups: cycle %s", strings.Join(path, " -> "))
		}
	}
	c.visiting = append(c.visiting, low)
	members, err := c.list("groups."+c.groupKey[low], c.groupSrc[low])
	c.visiting = c.visiting[:len(c.visiting)-1]
	if err != nil {
		return nil, err
	}
	c.groupDone[low] = members
	return members, nil
}

func polSortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// View is the policy for one subject, with a cache of decisions. It is safe
// for concurrent use. After the first decision for an entry (keyed by its id,
// exposed name and direct-only flag) Allowed and Decide are one map lookup.
type View struct {
	p       *Policy
	subject Subject
	layers  []*polLayer // application order
	badEP   bool        // unknown endpoint: everything denied

	mu    sync.RWMutex
	cache map[polKey]Decision
}

type polKey struct {
	id, exposed string
	directOnly  bool
}

// polViewCacheMax bounds a view's decision cache; past it the cache is
// dropped and refilled (tools churn when upstreams change their lists).
const polViewCacheMax = 1 << 16

// View returns the cached view for subject s. Subjects whose endpoint and set
// of matching by_client patterns are the same share one view, so the number
// of views is bounded by the config, not by the client names seen. An
// unknown endpoint yields a (non-cached) view that denies every tool.
func (p *Policy) View(s Subject) *View {
	if s.Endpoint != "" {
		if _, ok := p.endpoints[s.Endpoint]; !ok {
			return &View{p: p, subject: s, badEP: true, cache: map[polKey]Decision{}}
		}
	}
	name := strings.ToLower(s.ClientName)
	var key strings.Builder
	key.WriteString(s.Endpoint)
	var matched []*polClientLayer
	for i, cl := range p.byClient {
		if polClientMatch(cl, name) {
			fmt.Fprintf(&key, "\x00%d", i)
			matched = append(matched, cl)
		}
	}
	if v, ok := p.views.Load(key.String()); ok {
		return v.(*View)
	}
	v := &View{p: p, subject: s, cache: map[polKey]Decision{}}
	v.layers = append(v.layers, p.base)
	if s.Endpoint != "" {
		v.layers = append(v.layers, p.endpoints[s.Endpoint])
	}
	for i := len(matched) - 1; i >= 0; i-- { // least specific first
		v.layers = append(v.layers, matched[i].layer)
	}
	actual, _ := p.views.LoadOrStore(key.String(), v)
	return actual.(*View)
}

func polClientMatch(cl *polClientLayer, lowName string) bool {
	if cl.exact {
		return cl.pattern == lowName
	}
	return globMatchLower(cl.pattern, lowName)
}

// Decide returns the decision for entry e under subject s (p.View(s).Decide(e)).
func (p *Policy) Decide(s Subject, e *Entry) Decision { return p.View(s).Decide(e) }

// Rules returns the layers that apply to subject s, in application order.
func (p *Policy) Rules(s Subject) Rules { return p.View(s).Rules() }

// Subjects returns representative subjects for checking a deployment: the
// main endpoint with no client name, each endpoint, and each by_client
// pattern (its key used as the client name, on the main endpoint). The
// order is stable: main, endpoints by name, patterns by specificity.
func (p *Policy) Subjects() []Subject {
	out := []Subject{{}}
	for _, name := range polSortedKeys(p.endpoints) {
		out = append(out, Subject{Endpoint: name})
	}
	for _, cl := range p.byClient {
		out = append(out, Subject{ClientName: cl.key})
	}
	return out
}

// Subject returns the subject the view was first built for (other subjects
// sharing the view may have other client names).
func (v *View) Subject() Subject { return v.subject }

// Rules returns the layers of this view in application order (copies of the
// config lists; nil for an unknown endpoint).
func (v *View) Rules() Rules {
	r := Rules{}
	for _, l := range v.layers {
		r.Layers = append(r.Layers, l.src)
	}
	return r
}

// Allowed reports whether e is visible and callable for this view's subject.
func (v *View) Allowed(e *Entry) bool { return v.Decide(e).Allowed }

// Filter returns the allowed entries of entries, in order.
func (v *View) Filter(entries []*Entry) []*Entry {
	out := make([]*Entry, 0, len(entries))
	for _, e := range entries {
		if v.Allowed(e) {
			out = append(out, e)
		}
	}
	return out
}

// Decide returns the decision for e, from the cache when possible.
func (v *View) Decide(e *Entry) Decision {
	k := polKey{id: e.ID, exposed: e.Exposed, directOnly: e.DirectOnly}
	v.mu.RLock()
	d, ok := v.cache[k]
	v.mu.RUnlock()
	if ok {
		return d
	}
	d = v.decide(newPolCand(e))
	v.mu.Lock()
	if len(v.cache) >= polViewCacheMax {
		v.cache = map[polKey]Decision{}
	}
	v.cache[k] = d
	v.mu.Unlock()
	return d
}

// decide evaluates the layers (see the package notes) without the cache.
func (v *View) decide(c *polCand) Decision {
	if v.badEP {
		return Decision{Rule: fmt.Sprintf("denied: unknown endpoint %q", v.subject.Endpoint)}
	}
	d := v.allow(c)
	if d.Allowed {
		if m, via := polFirstMatch(v.p.approval, c); m != nil {
			d.NeedsApproval = true
			d.ApprovalRule = fmt.Sprintf("tools.require_approval %q", m.raw)
			if via != "" {
				d.ApprovalRule += fmt.Sprintf(" (via %q)", via)
			}
		}
	}
	return d
}

func (v *View) allow(c *polCand) Decision {
	// 1. Deny from any layer wins.
	for _, l := range v.layers {
		if m, via := polFirstMatch(l.deny, c); m != nil {
			return Decision{Rule: polRule("denied", l.src.Name+".deny", m, via)}
		}
	}
	var allowL *polLayer
	prof := &polProfile{name: ProfileFull}
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
			if m, via := polFirstMatch(l.alsoAllow, c); m != nil {
				return Decision{Allowed: true, Rule: polRule("allowed", l.src.Name+".also_allow", m, via)}, true
			}
		}
		return Decision{}, false
	}
	// 2. An explicit allow list replaces the profile.
	if allowL != nil {
		if m, via := polFirstMatch(allowL.allow, c); m != nil {
			return Decision{Allowed: true, Rule: polRule("allowed", allowL.src.Name+".allow", m, via)}
		}
		if d, ok := also(); ok {
			return d
		}
		return Decision{Rule: "denied: not matched by " + allowL.src.Name + ".allow"}
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
	if m, via := polFirstMatch(prof.deny, c); m != nil {
		if d, ok := also(); ok {
			return d
		}
		return Decision{Rule: polRule("denied", pfx+".deny", m, via)}
	}
	if m, via := polFirstMatch(prof.allow, c); m != nil {
		return Decision{Allowed: true, Rule: polRule("allowed", pfx+".allow", m, via)}
	}
	if d, ok := also(); ok {
		return d
	}
	return Decision{Rule: fmt.Sprintf("denied: not matched by %s.allow (%s %q)", pfx, field, prof.name)}
}

// Check is the fail-closed start-up check for subject s against the current
// catalog entries (SPEC §6; seed: an explicit allow list that resolves to no
// callable tool stops the run).
//
// If some layer of s sets an allow list and no entry is allowed, Check
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
func (p *Policy) Check(s Subject, entries []*Entry) (warnings []string, err error) {
	v := p.View(s)
	if v.badEP {
		return nil, fmt.Errorf("%s: unknown endpoint %q", s, s.Endpoint)
	}
	cands := make([]*polCand, len(entries))
	for i, e := range entries {
		cands[i] = newPolCand(e)
	}
	allowed := 0
	for _, e := range entries {
		if v.Allowed(e) {
			allowed++
		}
	}
	unmatched := func(field string, list []*polMatcher) []string {
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
	var allowL *polLayer
	for _, l := range v.layers {
		if l.allowSet {
			allowL = l
		}
	}
	var allowMisses []string
	if allowL != nil {
		allowMisses = unmatched(allowL.src.Name+".allow", allowL.allow)
	}
	for _, l := range v.layers {
		allowMisses = append(allowMisses, unmatched(l.src.Name+".also_allow", l.alsoAllow)...)
	}
	if allowL != nil && allowed == 0 {
		msg := fmt.Sprintf("%s: explicit allow list resolves to no callable tool", s)
		switch {
		case len(allowL.allow) == 0 && len(allowMisses) == 0:
			msg += fmt.Sprintf(": %s.allow is empty", allowL.src.Name)
		case len(allowMisses) > 0:
			msg += ": " + strings.Join(allowMisses, "; ")
		default:
			msg += ": every tool it matches is denied"
		}
		return nil, fmt.Errorf("%s", msg)
	}
	warnings = allowMisses
	for _, l := range v.layers {
		warnings = append(warnings, unmatched(l.src.Name+".deny", l.deny)...)
	}
	warnings = append(warnings, unmatched("tools.require_approval", p.approval)...)
	if allowed == 0 && len(entries) > 0 {
		warnings = append(warnings, fmt.Sprintf("%s: no tool is allowed", s))
	}
	return warnings, nil
}
