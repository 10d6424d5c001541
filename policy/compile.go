package policy

import (
	"fmt"
	"sort"
	"strings"
)

// Built-in profile names (seed "Tool プロファイル"; coding and messaging are
// OpenClaw built-in tool bundles that have no meaning for upstream MCP tools).
const (
	ProfileFull    = "full"
	ProfileMinimal = "minimal"
)

// Policy is a compiled Spec. It is immutable apart from its caches and safe
// for concurrent use; a changed config compiles a new one. See the package
// notes for the rules.
type Policy struct {
	base      *layer
	endpoints map[string]*layer // key: endpoint name as configured
	byClient  []*clientLayer    // most specific first
	approval  []*matcher
	upstreams map[string]Upstream // lower-case name -> namespaces
	// closed maps a lower-case upstream name to why every tool and
	// feature of it is denied whatever the rules say (Closed).
	closed map[string]string

	views viewCache
}

// Closed returns a copy of p that also denies every tool, resource,
// prompt and completion of the upstreams in closed (upstream name ->
// reason), with the rule `denied: upstream "NAME" is closed: REASON`.
// The proxy closes the upstream a deny entry that matches no tool names
// (DenyMiss): what that entry was written to keep away may be one of its
// tools under a new name. Closed(nil) is p without closed upstreams.
func (p *Policy) Closed(closed map[string]string) *Policy {
	np := &Policy{base: p.base, endpoints: p.endpoints, byClient: p.byClient, approval: p.approval, upstreams: p.upstreams}
	if len(closed) > 0 {
		np.closed = make(map[string]string, len(closed))
		for up, r := range closed {
			np.closed[strings.ToLower(up)] = r
		}
	}
	return np
}

// ClosedReason is why upstream up is closed (Closed), "" when it is not.
func (p *Policy) ClosedReason(up string) string { return p.closed[strings.ToLower(up)] }

// clientLayer is one by_client table.
type clientLayer struct {
	key     string // as configured
	kind    string // "client", or a verified identity: "user", "group", "scope" (identity.go)
	pattern string // lower case, without the kind's prefix
	exact   bool
	layer   *layer
}

// layer is one compiled Rules table.
type layer struct {
	name      string // "tools", "endpoints.NAME.tools", `tools.by_client."PATTERN"`
	src       Rules
	profile   *profile // nil: not set
	allow     []*matcher
	allowSet  bool
	deny      []*matcher
	alsoAllow []*matcher
}

// profile is a compiled profile: built-in or from [profiles.NAME].
type profile struct {
	name  string // as configured (built-ins in lower case)
	field string // where it was chosen, e.g. `tools.profile`; "" for the default
	allow []*matcher
	deny  []*matcher
}

type kind uint8

const (
	kindLiteral  kind = iota // pat: lower-case exposed name or id
	kindGlob                 // pat: lower-case glob
	kindUpstream             // pat: lower-case upstream name
	kindGroup                // members
)

// matcher is one compiled list entry.
type matcher struct {
	raw     string // the entry as written
	kind    kind
	pat     string
	members []*matcher
}

// compiler holds the name tables while Compile runs.
type compiler struct {
	upstreams map[string]bool      // lower-case names
	names     []string             // upstream names as configured, sorted
	prefixes  map[string]bool      // lower-case exposed-name prefixes ("github" of "github__")
	prefixOf  []string             // those prefixes as configured, sorted
	sep       string               // lower-case name separator, "" when NAME__ entries are not checked
	groupSrc  map[string][]string  // lower-case name -> members
	groupKey  map[string]string    // lower-case name -> key as configured
	groupDone map[string]*groupRes // compiled (or failed) groups
	visiting  []string             // group DFS stack (lower case)
	known     []string             // "group:NAME" forms, for hints
	problems  Problems
}

type groupRes struct {
	members []*matcher
	failed  bool
}

func (c *compiler) add(path []string, index int, format string, args ...any) {
	c.problems = append(c.problems, Problem{Path: path, Index: index, Msg: fmt.Sprintf(format, args...)})
}

// Validate returns every problem of spec (nil when it compiles). It is the
// check `config` runs to report problems with file:line; Compile runs the
// same code.
func Validate(spec Spec) Problems {
	_, err := Compile(spec)
	if err == nil {
		return nil
	}
	return err.(Problems)
}

// Compile checks and compiles spec. The error, if any, is Problems: every
// problem found, each naming its key, e.g.
// `tools.by_client."cursor*".profile: unknown profile "codng" (known: "full", "minimal")`,
// `tools.allow[2]: "group:nosuch" names no upstream and no [groups] entry`,
// `groups.a: cycle group:a -> group:b -> group:a`, `tools.deny[0]: empty entry`.
// Every group is compiled, so problems in unused groups are reported too.
func Compile(spec Spec) (*Policy, error) {
	c := &compiler{
		upstreams: map[string]bool{},
		groupSrc:  map[string][]string{},
		groupKey:  map[string]string{},
		groupDone: map[string]*groupRes{},
	}
	p := &Policy{endpoints: map[string]*layer{}, upstreams: map[string]Upstream{}}
	c.prefixes = map[string]bool{}
	if len(spec.NameSeparator) >= 2 {
		c.sep = strings.ToLower(spec.NameSeparator)
	}
	for _, u := range spec.Upstreams {
		low := strings.ToLower(u.Name)
		c.upstreams[low] = true
		c.names = append(c.names, u.Name)
		if pre, ok := strings.CutSuffix(strings.ToLower(u.NamePrefix), c.sep); ok && c.sep != "" && pre != "" {
			c.prefixes[pre] = true
			c.prefixOf = append(c.prefixOf, u.NamePrefix[:len(pre)])
		} else {
			c.sep = "" // an upstream without a prefix: any "a__b" may be one of its tools
		}
		p.upstreams[low] = Upstream{Name: u.Name, NamePrefix: strings.ToLower(u.NamePrefix), IDPrefix: strings.ToLower(u.IDPrefix)}
		c.known = append(c.known, "group:"+u.Name)
	}
	for _, name := range sortedKeys(spec.Groups) {
		low := strings.ToLower(name)
		at := []string{"groups", name}
		switch prev, dup := c.groupKey[low]; {
		case name == "":
			c.add([]string{"groups"}, -1, "empty group name")
			continue
		case dup:
			c.add(at, -1, "same name as groups.%s (group names are case-insensitive)", prev)
			continue
		case c.upstreams[low]:
			c.add(at, -1, "group name %q is also an upstream name; group:%s would be ambiguous", name, name)
			continue
		case IsGlob(name):
			c.add(at, -1, "group name %q contains '*' or '?' (group names cannot be patterns)", name)
			continue
		}
		c.groupKey[low] = name
		c.groupSrc[low] = spec.Groups[name]
		c.known = append(c.known, "group:"+name)
	}
	sort.Strings(c.known)
	sort.Strings(c.names)
	sort.Strings(c.prefixOf)
	for _, name := range sortedKeys(spec.Groups) {
		if _, ok := c.groupSrc[strings.ToLower(name)]; ok {
			c.group(strings.ToLower(name))
		}
	}

	// Profiles: built-ins plus [profiles.NAME].
	profs := map[string]*profile{
		ProfileFull:    {name: ProfileFull},
		ProfileMinimal: {name: ProfileMinimal},
	}
	for _, name := range sortedKeys(spec.Profiles) {
		low := strings.ToLower(name)
		at := []string{"profiles", name}
		if low == ProfileFull || low == ProfileMinimal {
			c.add(at, -1, "%q is a built-in profile and cannot be redefined", low)
			continue
		}
		if prev, dup := profs[low]; dup {
			c.add(at, -1, "same name as profiles.%s (profile names are case-insensitive)", prev.name)
			continue
		}
		src := spec.Profiles[name]
		profs[low] = &profile{
			name:  name,
			allow: c.list(append(at, "allow"), src.Allow),
			deny:  c.list(append(at, "deny"), src.Deny),
		}
	}
	knownProfiles := make([]string, 0, len(profs))
	for _, pr := range profs {
		knownProfiles = append(knownProfiles, pr.name)
	}
	sort.Strings(knownProfiles)

	compileLayer := func(path []string, name string, r Rules) *layer {
		l := &layer{name: name, src: r}
		if r.Profile != "" {
			if pr, ok := profs[strings.ToLower(r.Profile)]; ok {
				cp := *pr
				cp.field = name + ".profile"
				l.profile = &cp
			} else {
				c.problems = append(c.problems, Problem{Path: append(path, "profile"), Index: -1,
					Msg: fmt.Sprintf("unknown profile %q", r.Profile), Name: r.Profile, Candidates: knownProfiles, ListCandidates: true})
			}
		}
		if r.Allow != nil {
			l.allowSet = true
			l.allow = c.list(append(path, "allow"), r.Allow)
		}
		l.deny = c.list(append(path, "deny"), r.Deny)
		l.alsoAllow = c.list(append(path, "also_allow"), r.AlsoAllow)
		return l
	}

	p.base = compileLayer([]string{"tools"}, "tools", spec.Tools)
	p.approval = c.list([]string{"tools", "require_approval"}, spec.RequireApproval)
	for _, name := range sortedKeys(spec.Endpoints) {
		path := []string{"endpoints", name, "tools"}
		p.endpoints[name] = compileLayer(path, "endpoints."+name+".tools", spec.Endpoints[name])
	}
	seen := map[string]string{}
	for _, key := range sortedKeys(spec.ByClient) {
		low := strings.ToLower(key)
		path := []string{"tools", "by_client", key}
		if prev, dup := seen[low]; dup {
			c.add(path, -1, "same pattern as tools.by_client.%q (client patterns are case-insensitive)", prev)
			continue
		}
		seen[low] = key
		l := compileLayer(path, fmt.Sprintf("tools.by_client.%q", key), spec.ByClient[key])
		kind, pat := keyKind(key)
		p.byClient = append(p.byClient, &clientLayer{key: key, kind: kind, pattern: pat, exact: !IsGlob(pat), layer: l})
	}
	sort.SliceStable(p.byClient, func(i, j int) bool { return moreSpecific(p.byClient[i], p.byClient[j]) })
	if len(c.problems) > 0 {
		return nil, c.problems
	}
	return p, nil
}

// moreSpecific orders by_client patterns: exact before glob, then longer
// first, then by pattern.
func moreSpecific(a, b *clientLayer) bool {
	if a.exact != b.exact {
		return a.exact
	}
	if len(a.pattern) != len(b.pattern) {
		return len(a.pattern) > len(b.pattern)
	}
	return a.pattern < b.pattern
}

// list compiles the entries of one list at path; bad entries are reported
// and left out.
func (c *compiler) list(path []string, entries []string) []*matcher {
	path = append([]string(nil), path...)
	out := make([]*matcher, 0, len(entries))
	for i, raw := range entries {
		if m := c.entry(path, i, raw); m != nil {
			out = append(out, m)
		}
	}
	return out
}

// CheckEntry reports what is wrong with one list entry in isolation ("" when
// nothing): empty, surrounded by spaces, or a group reference that is empty
// or a pattern. Whether a group exists needs the whole Spec (Compile).
func CheckEntry(raw string) string {
	if strings.TrimSpace(raw) == "" {
		return "empty entry"
	}
	if strings.TrimSpace(raw) != raw {
		return fmt.Sprintf("entry %q has leading or trailing spaces", raw)
	}
	if name, ok := strings.CutPrefix(strings.ToLower(raw), "group:"); ok {
		if name == "" {
			return fmt.Sprintf("entry %q: empty group name", raw)
		}
		if IsGlob(name) {
			return fmt.Sprintf("entry %q: group names cannot be patterns", raw)
		}
	}
	return ""
}

func (c *compiler) entry(path []string, i int, raw string) *matcher {
	if msg := CheckEntry(raw); msg != "" {
		c.add(path, i, "%s", msg)
		return nil
	}
	low := strings.ToLower(raw)
	if name, ok := strings.CutPrefix(low, "group:"); ok {
		if _, ok := c.groupSrc[name]; ok {
			g := c.group(name)
			if g.failed {
				return nil // reported at the group
			}
			return &matcher{raw: raw, kind: kindGroup, members: g.members}
		}
		if c.upstreams[name] {
			return &matcher{raw: raw, kind: kindUpstream, pat: name}
		}
		c.problems = append(c.problems, Problem{Path: path, Index: i,
			Msg: fmt.Sprintf("%q names no upstream and no [groups] entry", raw), Name: raw, Candidates: c.known})
		return nil
	}
	if pr, bad := c.unknownUpstream(raw); bad {
		pr.Path, pr.Index = path, i
		c.problems = append(c.problems, pr)
		return nil
	}
	if IsGlob(raw) {
		return &matcher{raw: raw, kind: kindGlob, pat: low}
	}
	return &matcher{raw: raw, kind: kindLiteral, pat: low}
}

// unknownUpstream reports an entry (literal or glob) that names an
// upstream the config does not have by its form: an id or id glob
// "mcp:NAME:…", or an exposed name or glob "NAME__…" (with a separator
// of two or more characters, and only when every upstream has a prefix:
// otherwise "a__b" may be a tool's own name). Such an entry can never
// match, so a typo in an upstream name ("gihub__create_issue") would
// leave a rule silently empty. A NAME with '*' or '?' is not checked.
func (c *compiler) unknownUpstream(raw string) (Problem, bool) {
	low := strings.ToLower(raw)
	if rest, ok := strings.CutPrefix(low, "mcp:"); ok {
		name, _, ok := strings.Cut(rest, ":")
		if !ok || name == "" || IsGlob(name) || c.upstreams[name] {
			return Problem{}, false
		}
		return Problem{Msg: fmt.Sprintf("%q names upstream %q, which is not configured", raw, rawPart(raw, len("mcp:"), len(name))),
			Name: name, Candidates: c.names, ListCandidates: true}, true
	}
	if c.sep == "" {
		return Problem{}, false
	}
	name, _, ok := strings.Cut(low, c.sep)
	if !ok || name == "" || IsGlob(name) || c.prefixes[name] {
		return Problem{}, false
	}
	return Problem{Msg: fmt.Sprintf("%q: no configured upstream has the prefix %q", raw, rawPart(raw, 0, len(name))),
		Name: name, Candidates: c.prefixOf, ListCandidates: true,
		Note: fmt.Sprintf("a tool whose own name contains %q is written as its id mcp:UPSTREAM:NAME", c.sep)}, true
}

// rawPart is raw[at:at+n] when lower-casing kept raw's byte offsets, else
// the lower-case part of it.
func rawPart(raw string, at, n int) string {
	if low := strings.ToLower(raw); len(low) == len(raw) {
		return raw[at : at+n]
	}
	return strings.ToLower(raw)[at : at+n]
}

// group compiles the members of the [groups] entry with lower-case name
// low, detecting cycles.
func (c *compiler) group(low string) *groupRes {
	if done, ok := c.groupDone[low]; ok {
		return done
	}
	for i, v := range c.visiting {
		if v == low {
			path := make([]string, 0, len(c.visiting)-i+1)
			for _, g := range c.visiting[i:] {
				path = append(path, "group:"+c.groupKey[g])
			}
			path = append(path, "group:"+c.groupKey[low])
			c.add([]string{"groups", c.groupKey[low]}, -1, "cycle %s", strings.Join(path, " -> "))
			for _, g := range c.visiting[i:] {
				c.groupDone[g] = &groupRes{failed: true}
			}
			return c.groupDone[low]
		}
	}
	c.visiting = append(c.visiting, low)
	before := len(c.problems)
	members := c.list([]string{"groups", c.groupKey[low]}, c.groupSrc[low])
	c.visiting = c.visiting[:len(c.visiting)-1]
	if done, ok := c.groupDone[low]; ok { // failed inside a cycle
		return done
	}
	res := &groupRes{members: members, failed: len(c.problems) > before}
	c.groupDone[low] = res
	return res
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
