package catalog

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
)

// polEnt builds an entry the way the catalog does with the default "__"
// separator and no prefix override.
func polEnt(upstream, tool string) *Entry {
	return &Entry{ID: ToolID(upstream, tool), Name: tool, Exposed: upstream + "__" + tool, Upstream: upstream}
}

func polDirect(upstream, tool string) *Entry {
	e := polEnt(upstream, tool)
	e.DirectOnly = true
	return e
}

var polUpstreams = []string{"github", "slack", "fs"}

func polCatalog() []*Entry {
	return []*Entry{
		polEnt("github", "create_issue"),
		polEnt("github", "get_issue"),
		polEnt("github", "delete_repo"),
		polEnt("slack", "post_message"),
		polEnt("slack", "delete_message"),
		polEnt("fs", "read_file"),
		polDirect("fs", "status"),
	}
}

type polFixture struct {
	tools     config.Tools
	profiles  map[string]*config.Profile
	groups    map[string][]string
	endpoints map[string]*config.Endpoint
}

func (f polFixture) compile(t *testing.T) *Policy {
	t.Helper()
	p, err := Compile(f.tools, f.profiles, f.groups, f.endpoints, polUpstreams)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return p
}

// polDecisions returns exposed name -> decision for the test catalog.
func polDecisions(p *Policy, s Subject) map[string]Decision {
	out := map[string]Decision{}
	for _, e := range polCatalog() {
		out[e.Exposed] = p.Decide(s, e)
	}
	return out
}

// polAllowedSet returns the sorted exposed names allowed for s, joined by ",".
func polAllowedSet(p *Policy, s Subject) string {
	var names []string
	for _, e := range polCatalog() {
		if p.View(s).Allowed(e) {
			names = append(names, e.Exposed)
		}
	}
	return strings.Join(names, ",")
}

func polWant(t *testing.T, got map[string]Decision, name string, allowed bool, rule string) {
	t.Helper()
	d, ok := got[name]
	if !ok {
		t.Fatalf("no decision for %s", name)
	}
	if d.Allowed != allowed || d.Rule != rule {
		t.Errorf("%s: got {Allowed:%v Rule:%q}, want {Allowed:%v Rule:%q}", name, d.Allowed, d.Rule, allowed, rule)
	}
}

func TestPolicyDenyBeatsAllow(t *testing.T) {
	f := polFixture{tools: config.Tools{
		ToolRules: config.ToolRules{
			Allow:     []string{"github__delete_repo", "github__create_issue"},
			Deny:      []string{"github__delete_*"},
			AlsoAllow: []string{"github__delete_repo"},
		},
		ByClient: map[string]*config.ToolRules{
			"cursor": {Allow: []string{"*"}, AlsoAllow: []string{"slack__delete_message"}, Deny: []string{"slack__delete_message"}},
		},
	}}
	p := f.compile(t)
	got := polDecisions(p, Subject{})
	polWant(t, got, "github__delete_repo", false, `denied by tools.deny "github__delete_*"`)
	polWant(t, got, "github__create_issue", true, `allowed by tools.allow "github__create_issue"`)
	polWant(t, got, "slack__post_message", false, `denied: not matched by tools.allow`)

	// A later layer's allow "*" cannot undo an earlier deny, and its own deny
	// beats its own also_allow.
	got = polDecisions(p, Subject{ClientName: "cursor"})
	polWant(t, got, "github__delete_repo", false, `denied by tools.deny "github__delete_*"`)
	polWant(t, got, "slack__delete_message", false, `denied by tools.by_client."cursor".deny "slack__delete_message"`)
	polWant(t, got, "slack__post_message", true, `allowed by tools.by_client."cursor".allow "*"`)
}

func TestPolicyProfiles(t *testing.T) {
	t.Run("default full", func(t *testing.T) {
		p := polFixture{}.compile(t)
		got := polDecisions(p, Subject{})
		for name := range got {
			polWant(t, got, name, true, `allowed by profile "full" (default)`)
		}
	})
	t.Run("explicit full", func(t *testing.T) {
		p := polFixture{tools: config.Tools{ToolRules: config.ToolRules{Profile: "FULL"}}}.compile(t)
		got := polDecisions(p, Subject{})
		polWant(t, got, "slack__post_message", true, `allowed by tools.profile "full"`)
	})
	t.Run("minimal keeps direct-only tools", func(t *testing.T) {
		p := polFixture{tools: config.Tools{ToolRules: config.ToolRules{Profile: "minimal"}}}.compile(t)
		if got, want := polAllowedSet(p, Subject{}), "fs__status"; got != want {
			t.Fatalf("allowed = %q, want %q", got, want)
		}
		got := polDecisions(p, Subject{})
		polWant(t, got, "fs__status", true, `allowed by tools.profile "minimal" (direct-only tool)`)
		polWant(t, got, "fs__read_file", false, `denied: not in tools.profile "minimal" (only direct-only tools)`)
	})
	t.Run("minimal plus also_allow", func(t *testing.T) {
		p := polFixture{tools: config.Tools{ToolRules: config.ToolRules{Profile: "minimal", AlsoAllow: []string{"fs__read_file"}}}}.compile(t)
		if got, want := polAllowedSet(p, Subject{}), "fs__read_file,fs__status"; got != want {
			t.Fatalf("allowed = %q, want %q", got, want)
		}
		polWant(t, polDecisions(p, Subject{}), "fs__read_file", true, `allowed by tools.also_allow "fs__read_file"`)
	})
	t.Run("custom profile", func(t *testing.T) {
		f := polFixture{
			tools: config.Tools{ToolRules: config.ToolRules{Profile: "Triage", AlsoAllow: []string{"slack__post_message"}}},
			profiles: map[string]*config.Profile{
				"triage": {Allow: []string{"group:github"}, Deny: []string{"*__delete_*"}},
			},
		}
		p := f.compile(t)
		if got, want := polAllowedSet(p, Subject{}), "github__create_issue,github__get_issue,slack__post_message"; got != want {
			t.Fatalf("allowed = %q, want %q", got, want)
		}
		got := polDecisions(p, Subject{})
		polWant(t, got, "github__get_issue", true, `allowed by profiles.triage.allow "group:github"`)
		polWant(t, got, "github__delete_repo", false, `denied by profiles.triage.deny "*__delete_*"`)
		polWant(t, got, "fs__status", false, `denied: not matched by profiles.triage.allow (tools.profile "triage")`)
		polWant(t, got, "slack__post_message", true, `allowed by tools.also_allow "slack__post_message"`)

		// A profile's deny only trims its base: also_allow adds the tool back.
		f.tools.AlsoAllow = []string{"github__delete_repo"}
		p = f.compile(t)
		polWant(t, polDecisions(p, Subject{}), "github__delete_repo", true, `allowed by tools.also_allow "github__delete_repo"`)
	})
	t.Run("explicit allow replaces profile", func(t *testing.T) {
		p := polFixture{tools: config.Tools{ToolRules: config.ToolRules{Profile: "minimal", Allow: []string{"slack__*"}}}}.compile(t)
		// fs__status is direct-only but not in the allow list: policy governs it too.
		if got, want := polAllowedSet(p, Subject{}), "slack__post_message,slack__delete_message"; got != want {
			t.Fatalf("allowed = %q, want %q", got, want)
		}
	})
}

func TestPolicyAlsoAllowWithAllowList(t *testing.T) {
	p := polFixture{tools: config.Tools{ToolRules: config.ToolRules{
		Allow:     []string{"group:slack"},
		AlsoAllow: []string{"mcp:fs:read_file"},
	}}}.compile(t)
	if got, want := polAllowedSet(p, Subject{}), "slack__post_message,slack__delete_message,fs__read_file"; got != want {
		t.Fatalf("allowed = %q, want %q", got, want)
	}
	got := polDecisions(p, Subject{})
	polWant(t, got, "fs__read_file", true, `allowed by tools.also_allow "mcp:fs:read_file"`)
	polWant(t, got, "slack__post_message", true, `allowed by tools.allow "group:slack"`)
}

func TestPolicyGroups(t *testing.T) {
	f := polFixture{
		tools: config.Tools{ToolRules: config.ToolRules{Allow: []string{"group:Readers"}, Deny: []string{"group:dangerous"}}},
		groups: map[string][]string{
			"readers":   {"*__get_*", "group:files"},
			"files":     {"group:fs"},
			"dangerous": {"group:deleters"},
			"deleters":  {"*__delete_*"},
		},
	}
	p := f.compile(t)
	if got, want := polAllowedSet(p, Subject{}), "github__get_issue,fs__read_file,fs__status"; got != want {
		t.Fatalf("allowed = %q, want %q", got, want)
	}
	got := polDecisions(p, Subject{})
	polWant(t, got, "github__get_issue", true, `allowed by tools.allow "group:Readers" (via "*__get_*")`)
	polWant(t, got, "fs__read_file", true, `allowed by tools.allow "group:Readers" (via "group:fs")`)
	polWant(t, got, "github__delete_repo", false, `denied by tools.deny "group:dangerous" (via "*__delete_*")`)
	polWant(t, got, "slack__post_message", false, `denied: not matched by tools.allow`)
}

func TestPolicyCompileErrors(t *testing.T) {
	cases := []struct {
		name string
		f    polFixture
		want string
	}{
		{"cycle", polFixture{groups: map[string][]string{"a": {"group:b"}, "b": {"x", "group:c"}, "c": {"group:a"}}},
			`groups: cycle group:a -> group:b -> group:c -> group:a`},
		{"self cycle in unused group", polFixture{groups: map[string][]string{"loop": {"group:loop"}}},
			`groups: cycle group:loop -> group:loop`},
		{"unknown group", polFixture{tools: config.Tools{ToolRules: config.ToolRules{Deny: []string{"x", "group:nosuch"}}}},
			`tools.deny[1]: unknown group "group:nosuch"`},
		{"unknown group inside group", polFixture{groups: map[string][]string{"g": {"group:gone"}}},
			`groups.g[0]: unknown group "group:gone"`},
		{"unknown profile", polFixture{tools: config.Tools{ByClient: map[string]*config.ToolRules{"cursor*": {Profile: "codng"}}},
			profiles: map[string]*config.Profile{"coding": {}}},
			`tools.by_client."cursor*".profile: unknown profile "codng" (known: coding, full, minimal)`},
		{"built-in profile redefined", polFixture{profiles: map[string]*config.Profile{"Minimal": {}}},
			`profiles.Minimal: "minimal" is a built-in profile`},
		{"empty entry", polFixture{tools: config.Tools{ToolRules: config.ToolRules{Allow: []string{""}}}},
			`tools.allow[0]: empty entry`},
		{"spaces", polFixture{tools: config.Tools{RequireApproval: []string{"a", " github__*"}}},
			`tools.require_approval[1]: entry " github__*" has leading or trailing spaces`},
		{"empty group name", polFixture{endpoints: map[string]*config.Endpoint{"team": {Tools: config.ToolRules{AlsoAllow: []string{"group:"}}}}},
			`endpoints.team.tools.also_allow[0]: entry "group:": empty group name`},
		{"group pattern", polFixture{tools: config.Tools{ToolRules: config.ToolRules{Allow: []string{"group:git*"}}}},
			`group names cannot be patterns`},
		{"group shadows upstream", polFixture{groups: map[string][]string{"GitHub": {"x"}}},
			`groups.GitHub: an upstream has the same name`},
		{"duplicate client pattern", polFixture{tools: config.Tools{ByClient: map[string]*config.ToolRules{"Cursor": {}, "cursor": {}}}},
			`(client patterns are case-insensitive)`},
		{"profile entry", polFixture{profiles: map[string]*config.Profile{"p": {Deny: []string{"group:zzz"}}}},
			`profiles.p.deny[0]: unknown group "group:zzz"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compile(tc.f.tools, tc.f.profiles, tc.f.groups, tc.f.endpoints, polUpstreams)
			if err == nil {
				t.Fatalf("Compile succeeded, want error containing %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not contain %q", err, tc.want)
			}
		})
	}
}

func TestPolicyGlobAndCase(t *testing.T) {
	p := polFixture{tools: config.Tools{ToolRules: config.ToolRules{
		Allow: []string{"GitHub__Create_Issue", "*__delete_*", "MCP:FS:?ead_*"},
	}}}.compile(t)
	if got, want := polAllowedSet(p, Subject{}), "github__create_issue,github__delete_repo,slack__delete_message,fs__read_file"; got != want {
		t.Fatalf("allowed = %q, want %q", got, want)
	}
	// Entries whose own names are mixed case match lower-case patterns.
	e := &Entry{ID: "mcp:GitHub:Get_Issue", Name: "Get_Issue", Exposed: "GitHub__Get_Issue", Upstream: "GitHub"}
	p2 := polFixture{tools: config.Tools{ToolRules: config.ToolRules{Allow: []string{"github__get_issue"}, Deny: []string{"group:github"}}}}.compile(t)
	if d := p2.Decide(Subject{}, e); d.Allowed || d.Rule != `denied by tools.deny "group:github"` {
		t.Fatalf("mixed-case entry: %+v", d)
	}
	p3 := polFixture{tools: config.Tools{ToolRules: config.ToolRules{Allow: []string{"github__get_issue"}}}}.compile(t)
	if d := p3.Decide(Subject{}, e); !d.Allowed {
		t.Fatalf("mixed-case entry not allowed: %+v", d)
	}
}

func TestPolicyByClientPrecedence(t *testing.T) {
	f := polFixture{tools: config.Tools{
		ToolRules: config.ToolRules{Profile: "full"},
		ByClient: map[string]*config.ToolRules{
			"*":        {Deny: []string{"fs__read_file"}},
			"cur*":     {Allow: []string{"group:slack"}},
			"cursor-*": {Allow: []string{"group:github"}},
			"Cursor":   {Profile: "minimal", Allow: []string{"github__get_issue"}},
		},
	}}
	p := f.compile(t)
	cases := []struct {
		client, allowed string
	}{
		// Exact beats every glob; its allow replaces the globs' allow lists.
		{"cursor", "github__get_issue"},
		// Longer glob beats shorter glob.
		{"Cursor-Nightly", "github__create_issue,github__get_issue,github__delete_repo"},
		{"curl", "slack__post_message,slack__delete_message"},
		// Only "*" matches: profile full minus the deny.
		{"claude-code", "github__create_issue,github__get_issue,github__delete_repo,slack__post_message,slack__delete_message,fs__status"},
	}
	for _, tc := range cases {
		if got := polAllowedSet(p, Subject{ClientName: tc.client}); got != tc.allowed {
			t.Errorf("client %q: allowed = %q, want %q", tc.client, got, tc.allowed)
		}
	}
	// Application order: least specific first, so the most specific lands last.
	var names []string
	for _, l := range p.Rules(Subject{ClientName: "CURSOR"}).Layers {
		names = append(names, l.Name)
	}
	if got, want := strings.Join(names, " "), `tools tools.by_client."*" tools.by_client."cur*" tools.by_client."Cursor"`; got != want {
		t.Fatalf("layers = %s, want %s", got, want)
	}
	// Deny from the least specific layer still wins over the exact layer.
	f.tools.ByClient["Cursor"].Allow = []string{"fs__*"}
	p = f.compile(t)
	got := polDecisions(p, Subject{ClientName: "cursor"})
	polWant(t, got, "fs__read_file", false, `denied by tools.by_client."*".deny "fs__read_file"`)
	polWant(t, got, "fs__status", true, `allowed by tools.by_client."Cursor".allow "fs__*"`)
}

func TestPolicyEndpoints(t *testing.T) {
	f := polFixture{
		tools: config.Tools{
			ToolRules: config.ToolRules{Deny: []string{"github__delete_repo"}},
			ByClient:  map[string]*config.ToolRules{"inspector": {AlsoAllow: []string{"fs__status"}}},
		},
		endpoints: map[string]*config.Endpoint{
			"team-a": {Path: "/team-a/mcp", Tools: config.ToolRules{Allow: []string{"group:github", "group:slack"}, Deny: []string{"slack__delete_*"}}},
			"ro":     {Tools: config.ToolRules{Profile: "minimal"}},
		},
	}
	p := f.compile(t)
	if got, want := polAllowedSet(p, Subject{}), "github__create_issue,github__get_issue,slack__post_message,slack__delete_message,fs__read_file,fs__status"; got != want {
		t.Fatalf("main: allowed = %q, want %q", got, want)
	}
	if got, want := polAllowedSet(p, Subject{Endpoint: "team-a"}), "github__create_issue,github__get_issue,slack__post_message"; got != want {
		t.Fatalf("team-a: allowed = %q, want %q", got, want)
	}
	got := polDecisions(p, Subject{Endpoint: "team-a"})
	polWant(t, got, "github__delete_repo", false, `denied by tools.deny "github__delete_repo"`)
	polWant(t, got, "slack__delete_message", false, `denied by endpoints.team-a.tools.deny "slack__delete_*"`)
	polWant(t, got, "github__get_issue", true, `allowed by endpoints.team-a.tools.allow "group:github"`)
	// by_client applies on top of the endpoint.
	polWant(t, polDecisions(p, Subject{Endpoint: "team-a", ClientName: "Inspector"}), "fs__status", true, `allowed by tools.by_client."inspector".also_allow "fs__status"`)
	polWant(t, polDecisions(p, Subject{Endpoint: "ro"}), "fs__read_file", false, `denied: not in endpoints.ro.tools.profile "minimal" (only direct-only tools)`)

	// An unknown endpoint fails closed.
	bad := Subject{Endpoint: "nope"}
	polWant(t, polDecisions(p, bad), "fs__status", false, `denied: unknown endpoint "nope"`)
	if _, err := p.Check(bad, polCatalog()); err == nil || !strings.Contains(err.Error(), `unknown endpoint "nope"`) {
		t.Fatalf("Check(unknown endpoint) err = %v", err)
	}

	subs := p.Subjects()
	if got, want := fmt.Sprintf("%#v", subs), `[]catalog.Subject{catalog.Subject{ClientName:"", Endpoint:""}, catalog.Subject{ClientName:"", Endpoint:"ro"}, catalog.Subject{ClientName:"", Endpoint:"team-a"}, catalog.Subject{ClientName:"inspector", Endpoint:""}}`; got != want {
		t.Fatalf("Subjects = %s, want %s", got, want)
	}
}

func TestPolicyCheckFailClosed(t *testing.T) {
	t.Run("nothing resolves", func(t *testing.T) {
		p := polFixture{tools: config.Tools{ToolRules: config.ToolRules{Allow: []string{"nosuch__tool", "group:github"}, AlsoAllow: []string{"mcp:x:y"}}}}.compile(t)
		// The catalog has no github tools (yet): the allow list resolves to nothing.
		noGitHub := []*Entry{polEnt("slack", "post_message")}
		_, err := p.Check(Subject{}, noGitHub)
		if err == nil {
			t.Fatal("Check succeeded, want fail-closed error")
		}
		for _, want := range []string{
			`the main endpoint: explicit allow list resolves to no callable tool`,
			`tools.allow: no tool matches "nosuch__tool"`,
			`tools.allow: no tool matches "group:github"`,
			`tools.also_allow: no tool matches "mcp:x:y"`,
		} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q lacks %q", err, want)
			}
		}
	})
	t.Run("resolves with warnings", func(t *testing.T) {
		p := polFixture{tools: config.Tools{
			ToolRules:       config.ToolRules{Allow: []string{"nosuch__tool", "group:github"}, Deny: []string{"ghost__*"}},
			RequireApproval: []string{"*__drop_*"},
		}}.compile(t)
		warns, err := p.Check(Subject{}, polCatalog())
		if err != nil {
			t.Fatalf("Check: %v", err)
		}
		want := []string{
			`tools.allow: no tool matches "nosuch__tool"`,
			`tools.deny: no tool matches "ghost__*"`,
			`tools.require_approval: no tool matches "*__drop_*"`,
		}
		if strings.Join(warns, "\n") != strings.Join(want, "\n") {
			t.Fatalf("warnings = %q, want %q", warns, want)
		}
	})
	t.Run("every match denied", func(t *testing.T) {
		p := polFixture{tools: config.Tools{ToolRules: config.ToolRules{Allow: []string{"group:slack"}, Deny: []string{"slack__*"}}}}.compile(t)
		_, err := p.Check(Subject{}, polCatalog())
		if err == nil || !strings.Contains(err.Error(), "every tool it matches is denied") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("empty allow list", func(t *testing.T) {
		p := polFixture{endpoints: map[string]*config.Endpoint{"e": {Tools: config.ToolRules{Allow: []string{}}}}}.compile(t)
		if _, err := p.Check(Subject{}, polCatalog()); err != nil {
			t.Fatalf("main endpoint: %v", err)
		}
		_, err := p.Check(Subject{Endpoint: "e"}, polCatalog())
		if err == nil || !strings.Contains(err.Error(), `endpoint "e": explicit allow list resolves to no callable tool: endpoints.e.tools.allow is empty`) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("overridden allow list is not checked", func(t *testing.T) {
		p := polFixture{tools: config.Tools{
			ToolRules: config.ToolRules{Allow: []string{"nosuch__tool"}},
			ByClient:  map[string]*config.ToolRules{"cli": {Allow: []string{"fs__*"}}},
		}}.compile(t)
		warns, err := p.Check(Subject{ClientName: "cli"}, polCatalog())
		if err != nil || len(warns) != 0 {
			t.Fatalf("warns=%q err=%v", warns, err)
		}
		if _, err := p.Check(Subject{}, polCatalog()); err == nil {
			t.Fatal("main subject should fail closed")
		}
	})
	t.Run("profile without tools warns", func(t *testing.T) {
		p := polFixture{tools: config.Tools{ToolRules: config.ToolRules{Profile: "minimal"}}}.compile(t)
		warns, err := p.Check(Subject{ClientName: "x"}, []*Entry{polEnt("slack", "post_message")})
		if err != nil || len(warns) != 1 || warns[0] != `client "x" on the main endpoint: no tool is allowed` {
			t.Fatalf("warns=%q err=%v", warns, err)
		}
	})
}

func TestPolicyRequireApproval(t *testing.T) {
	p := polFixture{
		tools: config.Tools{
			ToolRules:       config.ToolRules{Deny: []string{"slack__delete_message"}},
			RequireApproval: []string{"group:destructive", "slack__*"},
		},
		groups: map[string][]string{"destructive": {"*__delete_*"}},
	}.compile(t)
	got := polDecisions(p, Subject{})
	cases := map[string]string{
		"github__delete_repo":   `tools.require_approval "group:destructive" (via "*__delete_*")`,
		"slack__post_message":   `tools.require_approval "slack__*"`,
		"github__get_issue":     "",
		"slack__delete_message": "", // denied: hidden, so no approval
	}
	for name, rule := range cases {
		d := got[name]
		if d.NeedsApproval != (rule != "") || d.ApprovalRule != rule {
			t.Errorf("%s: NeedsApproval=%v ApprovalRule=%q, want rule %q", name, d.NeedsApproval, d.ApprovalRule, rule)
		}
	}
}

func TestPolicyViewCache(t *testing.T) {
	p := polFixture{tools: config.Tools{
		ToolRules: config.ToolRules{Profile: "minimal"},
		ByClient:  map[string]*config.ToolRules{"a*": {AlsoAllow: []string{"slack__post_message"}}},
	}}.compile(t)
	// Subjects that resolve to the same layers share one view.
	if p.View(Subject{ClientName: "x"}) != p.View(Subject{ClientName: "y"}) {
		t.Error("subjects without by_client matches should share a view")
	}
	if p.View(Subject{ClientName: "alpha"}) != p.View(Subject{ClientName: "ANT"}) {
		t.Error("subjects matching the same patterns should share a view")
	}
	if p.View(Subject{ClientName: "alpha"}) == p.View(Subject{ClientName: "x"}) {
		t.Error("different layers must not share a view")
	}
	// The cache key includes the direct-only flag and exposed name, so a
	// changed entry with the same id is decided afresh.
	v := p.View(Subject{})
	e := polEnt("fs", "status")
	if v.Allowed(e) {
		t.Fatal("non-direct-only tool allowed under minimal")
	}
	e2 := polDirect("fs", "status")
	if !v.Allowed(e2) {
		t.Fatal("direct-only tool with the same id denied: stale cache")
	}
	if got := len(v.Filter([]*Entry{e, e2, polEnt("slack", "post_message")})); got != 1 {
		t.Fatalf("Filter kept %d entries, want 1", got)
	}
}

func TestPolicyConcurrentViews(t *testing.T) {
	p := polFixture{tools: config.Tools{
		ToolRules: config.ToolRules{Deny: []string{"*__delete_*"}},
		ByClient:  map[string]*config.ToolRules{"c*": {Profile: "minimal"}},
	}}.compile(t)
	want := map[string]string{}
	for _, c := range []string{"a", "c1"} {
		want[c] = polAllowedSet(p, Subject{ClientName: c})
	}
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 200; j++ {
				c := []string{"a", "c1"}[(i+j)%2]
				if got := polAllowedSet(p, Subject{ClientName: c}); got != want[c] {
					errs <- fmt.Sprintf("client %s: %q != %q", c, got, want[c])
					return
				}
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func TestGlobMatch(t *testing.T) {
	cases := []struct {
		p, s string
		want bool
	}{
		{"github__*", "github__create_issue", true},
		{"github__*", "gitlab__create_issue", false},
		{"*__delete_*", "github__delete_repo", true},
		{"*__delete_*", "github__undelete_repo", false},
		{"*_delete_*", "github__undelete_repo", false},
		{"*delete*", "github__undelete_repo", true},
		{"mcp:*:get_*", "mcp:github:get_issue", true},
		{"a*b*c", "axxbyyc", true},
		{"a*b*c", "axxbyy", false},
		{"?", "é", true},
		{"??", "é", false},
		{"*", "", true},
		{"", "", true},
		{"", "a", false},
		{"GitHub__*", "GITHUB__X", true},
		{"a**b", "ab", true},
		{"x/*", "x/y/z", true},
	}
	for _, tc := range cases {
		if got := GlobMatch(tc.p, tc.s); got != tc.want {
			t.Errorf("GlobMatch(%q, %q) = %v, want %v", tc.p, tc.s, got, tc.want)
		}
	}
}

// polGlobRE is the reference semantics of GlobMatch as a regular expression.
func polGlobRE(p string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("(?s)^")
	for _, r := range strings.ToLower(p) {
		switch r {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

func FuzzGlobMatch(f *testing.F) {
	for _, s := range [][2]string{{"*__delete_*", "github__delete_repo"}, {"a?c*", "abcé"}, {"*a*a*a*b", "aaaaaaaaaaaaaaaaaaaac"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, p, s string) {
		ls := strings.ToLower(s)
		if want := polGlobRE(p).MatchString(ls); GlobMatch(p, s) != want {
			t.Fatalf("GlobMatch(%q, %q) = %v, regexp says %v", p, s, !want, want)
		}
	})
}

// polBenchPolicy builds a policy with a realistic number of rules and a
// catalog of n entries over 10 upstreams.
func polBenchPolicy(b *testing.B, n int) (*Policy, []*Entry) {
	ups := make([]string, 10)
	for i := range ups {
		ups[i] = fmt.Sprintf("up%d", i)
	}
	tools := config.Tools{
		ToolRules: config.ToolRules{
			Profile:   "team",
			Deny:      []string{"*__delete_*", "*__drop_*", "up3__*", "mcp:up4:admin_*"},
			AlsoAllow: []string{"up9__tool_1", "group:extra"},
		},
		RequireApproval: []string{"*__write_*", "group:up5"},
		ByClient:        map[string]*config.ToolRules{"cursor*": {Deny: []string{"up1__*"}}},
	}
	profiles := map[string]*config.Profile{"team": {Allow: []string{"group:up0", "group:up1", "group:up2", "up6__tool_1*"}, Deny: []string{"*_9"}}}
	groups := map[string][]string{"extra": {"up7__*", "up8__tool_2*"}}
	p, err := Compile(tools, profiles, groups, nil, ups)
	if err != nil {
		b.Fatal(err)
	}
	entries := make([]*Entry, n)
	for i := range entries {
		entries[i] = polEnt(ups[i%10], fmt.Sprintf("tool_%d", i))
	}
	return p, entries
}

func BenchmarkPolicyAllowedCached(b *testing.B) {
	p, entries := polBenchPolicy(b, 1000)
	v := p.View(Subject{ClientName: "cursor-1"})
	for _, e := range entries {
		v.Allowed(e)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		v.Allowed(entries[i%len(entries)])
	}
}

func BenchmarkPolicyDecideUncached(b *testing.B) {
	p, entries := polBenchPolicy(b, 1000)
	v := p.View(Subject{ClientName: "cursor-1"})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		v.decide(newPolCand(entries[i%len(entries)]))
	}
}

func BenchmarkPolicyView(b *testing.B) {
	p, _ := polBenchPolicy(b, 10)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p.View(Subject{ClientName: "cursor-nightly"})
	}
}

// TestPolicyDenySurvivesRename: a deny written for an exposed name keeps
// holding when a new clash renames the tool with a hash suffix (an
// upstream cannot switch a rule off by adding a look-alike tool).
func TestPolicyDenySurvivesRename(t *testing.T) {
	c := New("__", nil, []UpstreamInfo{{Name: "gh", Prefix: "gh"}})
	c.SetTools("gh", []*Entry{{Name: "delete_repo"}, {Name: "list_repos"}})
	p := polFixture{tools: config.Tools{ToolRules: config.ToolRules{Deny: []string{"gh__delete_repo", "gh__*_repo*x"}}}}.compile(t)
	allowed := func() map[string]bool {
		out := map[string]bool{}
		for _, e := range c.Snapshot().Entries {
			out[e.ID+" "+e.Exposed] = p.View(Subject{}).Allowed(e)
		}
		return out
	}
	before := allowed()
	if before["mcp:gh:delete_repo gh__delete_repo"] {
		t.Fatalf("not denied before the rename: %v", before)
	}
	c.SetTools("gh", []*Entry{{Name: "delete_repo"}, {Name: "list_repos"}, {Name: "Delete_Repo"}})
	for k, ok := range allowed() {
		if strings.HasPrefix(k, "mcp:gh:delete_repo ") || strings.HasPrefix(k, "mcp:gh:Delete_Repo ") {
			if ok || strings.HasSuffix(k, " gh__delete_repo") {
				t.Errorf("%s: allowed=%v after the clash renamed it (want denied, hashed name)", k, ok)
			}
		} else if !ok {
			t.Errorf("%s denied", k)
		}
	}
}
