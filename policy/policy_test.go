package policy

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// polEnt builds an entry the way the catalog does with the default "__"
// separator and no prefix override.
func polEnt(upstream, tool string) Tool {
	return Tool{ID: "mcp:" + upstream + ":" + tool, Exposed: upstream + "__" + tool, Base: upstream + "__" + tool, Name: tool, Upstream: upstream}
}

func polDirect(upstream, tool string) Tool {
	e := polEnt(upstream, tool)
	e.DirectOnly = true
	return e
}

var polUpstreams = []Upstream{
	{Name: "github", NamePrefix: "github__", IDPrefix: "mcp:github:"},
	{Name: "slack", NamePrefix: "slack__", IDPrefix: "mcp:slack:"},
	{Name: "fs", NamePrefix: "fs__", IDPrefix: "mcp:fs:"},
}

func polCatalog() []Tool {
	return []Tool{
		polEnt("github", "create_issue"),
		polEnt("github", "get_issue"),
		polEnt("github", "delete_repo"),
		polEnt("slack", "post_message"),
		polEnt("slack", "delete_message"),
		polEnt("fs", "read_file"),
		polDirect("fs", "status"),
	}
}

type polFixture Spec

func (f polFixture) compile(t *testing.T) *Policy {
	t.Helper()
	sp := Spec(f)
	sp.Upstreams = polUpstreams
	p, err := Compile(sp)
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
	f := polFixture{
		Tools: Rules{
			Allow:     []string{"github__delete_repo", "github__create_issue"},
			Deny:      []string{"github__delete_*"},
			AlsoAllow: []string{"github__delete_repo"},
		},
		ByClient: map[string]Rules{
			"cursor": {Allow: []string{"*"}, AlsoAllow: []string{"slack__delete_message"}, Deny: []string{"slack__delete_message"}},
		},
	}
	p := f.compile(t)
	got := polDecisions(p, Subject{})
	polWant(t, got, "github__delete_repo", false, `denied by tools.deny "github__delete_*"`)
	polWant(t, got, "github__create_issue", true, `allowed by tools.allow "github__create_issue"`)
	polWant(t, got, "slack__post_message", false, `denied: not matched by tools.allow`)

	// A later layer's allow "*" cannot undo an earlier deny, and its own deny
	// beats its own also_allow. Nor can it grant what the endpoint does not
	// (by_client only narrows).
	got = polDecisions(p, Subject{ClientName: "cursor"})
	polWant(t, got, "github__delete_repo", false, `denied by tools.deny "github__delete_*"`)
	polWant(t, got, "slack__delete_message", false, `denied by tools.by_client."cursor".deny "slack__delete_message"`)
	polWant(t, got, "slack__post_message", false, `denied: not matched by tools.allow (tools.by_client rules only narrow what the endpoint allows)`)
	polWant(t, got, "github__create_issue", true, `allowed by tools.by_client."cursor".allow "*"`)
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
		p := polFixture{Tools: Rules{Profile: "FULL"}}.compile(t)
		got := polDecisions(p, Subject{})
		polWant(t, got, "slack__post_message", true, `allowed by tools.profile "full"`)
	})
	t.Run("minimal keeps direct-only tools", func(t *testing.T) {
		p := polFixture{Tools: Rules{Profile: "minimal"}}.compile(t)
		if got, want := polAllowedSet(p, Subject{}), "fs__status"; got != want {
			t.Fatalf("allowed = %q, want %q", got, want)
		}
		got := polDecisions(p, Subject{})
		polWant(t, got, "fs__status", true, `allowed by tools.profile "minimal" (direct-only tool)`)
		polWant(t, got, "fs__read_file", false, `denied: not in tools.profile "minimal" (only direct-only tools)`)
	})
	t.Run("minimal plus also_allow", func(t *testing.T) {
		p := polFixture{Tools: Rules{Profile: "minimal", AlsoAllow: []string{"fs__read_file"}}}.compile(t)
		if got, want := polAllowedSet(p, Subject{}), "fs__read_file,fs__status"; got != want {
			t.Fatalf("allowed = %q, want %q", got, want)
		}
		polWant(t, polDecisions(p, Subject{}), "fs__read_file", true, `allowed by tools.also_allow "fs__read_file"`)
	})
	t.Run("custom profile", func(t *testing.T) {
		f := polFixture{
			Tools: Rules{Profile: "Triage", AlsoAllow: []string{"slack__post_message"}},
			Profiles: map[string]Profile{
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
		f.Tools.AlsoAllow = []string{"github__delete_repo"}
		p = f.compile(t)
		polWant(t, polDecisions(p, Subject{}), "github__delete_repo", true, `allowed by tools.also_allow "github__delete_repo"`)
	})
	t.Run("explicit allow replaces profile", func(t *testing.T) {
		p := polFixture{Tools: Rules{Profile: "minimal", Allow: []string{"slack__*"}}}.compile(t)
		// fs__status is direct-only but not in the allow list: policy governs it too.
		if got, want := polAllowedSet(p, Subject{}), "slack__post_message,slack__delete_message"; got != want {
			t.Fatalf("allowed = %q, want %q", got, want)
		}
	})
}

func TestPolicyAlsoAllowWithAllowList(t *testing.T) {
	p := polFixture{Tools: Rules{
		Allow:     []string{"group:slack"},
		AlsoAllow: []string{"mcp:fs:read_file"},
	}}.compile(t)
	if got, want := polAllowedSet(p, Subject{}), "slack__post_message,slack__delete_message,fs__read_file"; got != want {
		t.Fatalf("allowed = %q, want %q", got, want)
	}
	got := polDecisions(p, Subject{})
	polWant(t, got, "fs__read_file", true, `allowed by tools.also_allow "mcp:fs:read_file"`)
	polWant(t, got, "slack__post_message", true, `allowed by tools.allow "group:slack"`)
}

func TestPolicyGroups(t *testing.T) {
	f := polFixture{
		Tools: Rules{Allow: []string{"group:Readers"}, Deny: []string{"group:dangerous"}},
		Groups: map[string][]string{
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
		{"cycle", polFixture{Groups: map[string][]string{"a": {"group:b"}, "b": {"x", "group:c"}, "c": {"group:a"}}},
			`groups.a: cycle group:a -> group:b -> group:c -> group:a`},
		{"self cycle in unused group", polFixture{Groups: map[string][]string{"loop": {"group:loop"}}},
			`groups.loop: cycle group:loop -> group:loop`},
		{"unknown group", polFixture{Tools: Rules{Deny: []string{"x", "group:nosuch"}}},
			`tools.deny[1]: "group:nosuch" names no upstream and no [groups] entry`},
		{"unknown group inside group", polFixture{Groups: map[string][]string{"g": {"group:gone"}}},
			`groups.g[0]: "group:gone" names no upstream and no [groups] entry`},
		{"unknown profile", polFixture{ByClient: map[string]Rules{"cursor*": {Profile: "codng"}},
			Profiles: map[string]Profile{"coding": {}}},
			`tools.by_client."cursor*".profile: unknown profile "codng" (known: "coding", "full", "minimal")`},
		{"built-in profile redefined", polFixture{Profiles: map[string]Profile{"Minimal": {}}},
			`profiles.Minimal: "minimal" is a built-in profile`},
		{"empty entry", polFixture{Tools: Rules{Allow: []string{""}}},
			`tools.allow[0]: empty entry`},
		{"spaces", polFixture{RequireApproval: []string{"a", " github__*"}},
			`tools.require_approval[1]: entry " github__*" has leading or trailing spaces`},
		{"empty group name", polFixture{Endpoints: map[string]Rules{"team": {AlsoAllow: []string{"group:"}}}},
			`endpoints.team.tools.also_allow[0]: entry "group:": empty group name`},
		{"group pattern", polFixture{Tools: Rules{Allow: []string{"group:git*"}}},
			`group names cannot be patterns`},
		{"group shadows upstream", polFixture{Groups: map[string][]string{"GitHub": {"x"}}},
			`groups.GitHub: group name "GitHub" is also an upstream name`},
		{"duplicate client pattern", polFixture{ByClient: map[string]Rules{"Cursor": {}, "cursor": {}}},
			`(client patterns are case-insensitive)`},
		{"profile entry", polFixture{Profiles: map[string]Profile{"p": {Deny: []string{"group:zzz"}}}},
			`profiles.p.deny[0]: "group:zzz" names no upstream`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sp := Spec(tc.f)
			sp.Upstreams = polUpstreams
			_, err := Compile(sp)
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
	p := polFixture{Tools: Rules{
		Allow: []string{"GitHub__Create_Issue", "*__delete_*", "MCP:FS:?ead_*"},
	}}.compile(t)
	if got, want := polAllowedSet(p, Subject{}), "github__create_issue,github__delete_repo,slack__delete_message,fs__read_file"; got != want {
		t.Fatalf("allowed = %q, want %q", got, want)
	}
	// Entries whose own names are mixed case match lower-case patterns.
	e := Tool{ID: "mcp:GitHub:Get_Issue", Exposed: "GitHub__Get_Issue", Upstream: "GitHub"}
	p2 := polFixture{Tools: Rules{Allow: []string{"github__get_issue"}, Deny: []string{"group:github"}}}.compile(t)
	if d := p2.Decide(Subject{}, e); d.Allowed || d.Rule != `denied by tools.deny "group:github"` {
		t.Fatalf("mixed-case entry: %+v", d)
	}
	p3 := polFixture{Tools: Rules{Allow: []string{"github__get_issue"}}}.compile(t)
	if d := p3.Decide(Subject{}, e); !d.Allowed {
		t.Fatalf("mixed-case entry not allowed: %+v", d)
	}
}

func TestPolicyByClientPrecedence(t *testing.T) {
	f := polFixture{Tools: Rules{Profile: "full"},
		ByClient: map[string]Rules{
			"*":        {Deny: []string{"fs__read_file"}},
			"cur*":     {Allow: []string{"group:slack"}},
			"cursor-*": {Allow: []string{"group:github"}},
			"Cursor":   {Profile: "minimal", Allow: []string{"github__get_issue"}},
		},
	}
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
	for _, l := range p.Rules(Subject{ClientName: "CURSOR"}) {
		names = append(names, l.Name)
	}
	if got, want := strings.Join(names, " "), `tools tools.by_client."*" tools.by_client."cur*" tools.by_client."Cursor"`; got != want {
		t.Fatalf("layers = %s, want %s", got, want)
	}
	// Deny from the least specific layer still wins over the exact layer.
	f.ByClient["Cursor"] = Rules{Profile: "minimal", Allow: []string{"fs__*"}}
	p = f.compile(t)
	got := polDecisions(p, Subject{ClientName: "cursor"})
	polWant(t, got, "fs__read_file", false, `denied by tools.by_client."*".deny "fs__read_file"`)
	polWant(t, got, "fs__status", true, `allowed by tools.by_client."Cursor".allow "fs__*"`)
}

func TestPolicyEndpoints(t *testing.T) {
	f := polFixture{
		Tools:    Rules{Deny: []string{"github__delete_repo"}},
		ByClient: map[string]Rules{"inspector": {AlsoAllow: []string{"fs__status"}}},
		Endpoints: map[string]Rules{
			"team-a": {Allow: []string{"group:github", "group:slack"}, Deny: []string{"slack__delete_*"}},
			"ro":     {Profile: "minimal"},
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
	// by_client applies on top of the endpoint, and only narrows it: its
	// also_allow cannot add a tool the endpoint does not allow.
	polWant(t, polDecisions(p, Subject{Endpoint: "team-a", ClientName: "Inspector"}), "fs__status", false, `denied: not matched by endpoints.team-a.tools.allow (tools.by_client rules only narrow what the endpoint allows)`)
	polWant(t, polDecisions(p, Subject{Endpoint: "team-a", ClientName: "Inspector"}), "github__get_issue", true, `allowed by endpoints.team-a.tools.allow "group:github"`)
	polWant(t, polDecisions(p, Subject{Endpoint: "ro"}), "fs__read_file", false, `denied: not in endpoints.ro.tools.profile "minimal" (only direct-only tools)`)

	// An unknown endpoint fails closed.
	bad := Subject{Endpoint: "nope"}
	polWant(t, polDecisions(p, bad), "fs__status", false, `denied: unknown endpoint "nope"`)
	if _, err := p.Check(bad, polCatalog()); err == nil || !strings.Contains(err.Error(), `unknown endpoint "nope"`) {
		t.Fatalf("Check(unknown endpoint) err = %v", err)
	}

	subs := p.Subjects()
	if got, want := fmt.Sprintf("%v", subs), `[the main endpoint endpoint "ro" endpoint "team-a" client "inspector" on the main endpoint]`; got != want {
		t.Fatalf("Subjects = %s, want %s", got, want)
	}
}

func TestPolicyCheckFailClosed(t *testing.T) {
	t.Run("nothing resolves", func(t *testing.T) {
		p := polFixture{Tools: Rules{Allow: []string{"nosuch__tool", "group:github"}, AlsoAllow: []string{"mcp:github:y"}}}.compile(t)
		// The catalog has no github tools (yet): the allow list resolves to nothing.
		noGitHub := []Tool{polEnt("slack", "post_message")}
		_, err := p.Check(Subject{}, noGitHub)
		if err == nil {
			t.Fatal("Check succeeded, want fail-closed error")
		}
		for _, want := range []string{
			`the main endpoint: explicit allow list resolves to no callable tool`,
			`tools.allow: no tool matches "nosuch__tool"`,
			`tools.allow: no tool matches "group:github"`,
			`tools.also_allow: no tool matches "mcp:github:y"`,
		} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q lacks %q", err, want)
			}
		}
	})
	t.Run("resolves with warnings", func(t *testing.T) {
		p := polFixture{
			Tools:           Rules{Allow: []string{"nosuch__tool", "group:github"}, Deny: []string{"ghost__*"}},
			RequireApproval: []string{"*__drop_*"},
		}.compile(t)
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
		p := polFixture{Tools: Rules{Allow: []string{"group:slack"}, Deny: []string{"slack__*"}}}.compile(t)
		_, err := p.Check(Subject{}, polCatalog())
		if err == nil || !strings.Contains(err.Error(), "every tool it matches is denied") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("empty allow list", func(t *testing.T) {
		p := polFixture{Endpoints: map[string]Rules{"e": {Allow: []string{}}}}.compile(t)
		if _, err := p.Check(Subject{}, polCatalog()); err != nil {
			t.Fatalf("main endpoint: %v", err)
		}
		_, err := p.Check(Subject{Endpoint: "e"}, polCatalog())
		if err == nil || !strings.Contains(err.Error(), `endpoint "e": explicit allow list resolves to no callable tool: endpoints.e.tools.allow is empty`) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("overridden allow list is not checked", func(t *testing.T) {
		p := polFixture{
			Tools:    Rules{Allow: []string{"nosuch__tool"}},
			ByClient: map[string]Rules{"cli": {Allow: []string{"fs__*"}}},
		}.compile(t)
		// The by_client allow list resolves (no fail-closed error), but it
		// would widen the grant, which it cannot: warned.
		warns, err := p.Check(Subject{ClientName: "cli"}, polCatalog())
		if err != nil || len(warns) != 2 || !strings.HasPrefix(warns[0], `tools.by_client."cli" would allow 2 tool(s) that the main endpoint does not (fs__read_file, fs__status): by_client rules only narrow`) ||
			warns[1] != `client "cli" on the main endpoint: no tool is allowed` {
			t.Fatalf("warns=%q err=%v", warns, err)
		}
		if _, err := p.Check(Subject{}, polCatalog()); err == nil {
			t.Fatal("main subject should fail closed")
		}
	})
	t.Run("profile without tools warns", func(t *testing.T) {
		p := polFixture{Tools: Rules{Profile: "minimal"}}.compile(t)
		warns, err := p.Check(Subject{ClientName: "x"}, []Tool{polEnt("slack", "post_message")})
		if err != nil || len(warns) != 1 || warns[0] != `client "x" on the main endpoint: no tool is allowed` {
			t.Fatalf("warns=%q err=%v", warns, err)
		}
	})
}

func TestPolicyRequireApproval(t *testing.T) {
	p := polFixture{
		Tools:           Rules{Deny: []string{"slack__delete_message"}},
		RequireApproval: []string{"group:destructive", "slack__*"},
		Groups:          map[string][]string{"destructive": {"*__delete_*"}},
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
	p := polFixture{
		Tools:    Rules{Profile: "minimal"},
		ByClient: map[string]Rules{"a*": {AlsoAllow: []string{"slack__post_message"}}},
	}.compile(t)
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
}

func TestPolicyConcurrentViews(t *testing.T) {
	p := polFixture{
		Tools:    Rules{Deny: []string{"*__delete_*"}},
		ByClient: map[string]Rules{"c*": {Profile: "minimal"}},
	}.compile(t)
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

func TestMatch(t *testing.T) {
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
		if got := Match(tc.p, tc.s); got != tc.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tc.p, tc.s, got, tc.want)
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

func FuzzMatch(f *testing.F) {
	for _, s := range [][2]string{{"*__delete_*", "github__delete_repo"}, {"a?c*", "abcé"}, {"*a*a*a*b", "aaaaaaaaaaaaaaaaaaaac"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, p, s string) {
		ls := strings.ToLower(s)
		if want := polGlobRE(p).MatchString(ls); Match(p, s) != want {
			t.Fatalf("Match(%q, %q) = %v, regexp says %v", p, s, !want, want)
		}
	})
}

// polBenchPolicy builds a policy with a realistic number of rules and a
// catalog of n entries over 10 upstreams.
func polBenchPolicy(b *testing.B, n int) (*Policy, []Tool) {
	ups := make([]string, 10)
	for i := range ups {
		ups[i] = fmt.Sprintf("up%d", i)
	}
	spec := Spec{
		Tools: Rules{
			Profile:   "team",
			Deny:      []string{"*__delete_*", "*__drop_*", "up3__*", "mcp:up4:admin_*"},
			AlsoAllow: []string{"up9__tool_1", "group:extra"},
		},
		RequireApproval: []string{"*__write_*", "group:up5"},
		ByClient:        map[string]Rules{"cursor*": {Deny: []string{"up1__*"}}},
		Profiles:        map[string]Profile{"team": {Allow: []string{"group:up0", "group:up1", "group:up2", "up6__tool_1*"}, Deny: []string{"*_9"}}},
		Groups:          map[string][]string{"extra": {"up7__*", "up8__tool_2*"}},
	}
	for _, u := range ups {
		spec.Upstreams = append(spec.Upstreams, Upstream{Name: u, NamePrefix: u + "__", IDPrefix: "mcp:" + u + ":"})
	}
	p, err := Compile(spec)
	if err != nil {
		b.Fatal(err)
	}
	entries := make([]Tool, n)
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
		v.decide(toolCand(entries[i%len(entries)]))
	}
}

func BenchmarkPolicyView(b *testing.B) {
	p, _ := polBenchPolicy(b, 10)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p.View(Subject{ClientName: "cursor-nightly"})
	}
}

// TestDenyByNameAndFailClosed: a deny entry matches a tool by its name on
// its upstream too ("delete_repo", not only "github__delete_repo"), an
// allow entry does not (it would reach every upstream's tool of that
// name); a literal deny entry that matches nothing fails closed naming the
// tools it may have meant, unless an upstream is still pending; globs
// that match nothing stay warnings.
func TestDenyByNameAndFailClosed(t *testing.T) {
	p := polFixture{Tools: Rules{Deny: []string{"delete_repo"}}}.compile(t)
	if d := p.View(Subject{}).Decide(polEnt("github", "delete_repo")); d.Allowed || d.Rule != `denied by tools.deny "delete_repo"` {
		t.Errorf("deny by upstream-side name: %+v", d)
	}
	if _, err := p.Check(Subject{}, polCatalog()); err != nil {
		t.Errorf("a deny that matches by name failed the check: %v", err)
	}
	p = polFixture{Tools: Rules{Allow: []string{"read_file", "fs__status"}}}.compile(t)
	if p.View(Subject{}).Allowed(polEnt("fs", "read_file")) {
		t.Error("an allow entry matched a tool by its upstream-side name")
	}
	p = polFixture{Tools: Rules{Profile: "minimal"}, RequireApproval: []string{"status"}}.compile(t)
	if d := p.View(Subject{}).Decide(polDirect("fs", "status")); !d.NeedsApproval {
		t.Errorf("require_approval by upstream-side name: %+v", d)
	}

	p = polFixture{Tools: Rules{Deny: []string{"delete_repository", "ghost__*"}}, Endpoints: map[string]Rules{"team": {Deny: []string{"mcp:github:delete_repo"}}}}.compile(t)
	warns, err := p.Check(Subject{}, polCatalog())
	var miss *DenyMissError
	if !errors.As(err, &miss) || len(miss.Misses) != 1 {
		t.Fatalf("err = %v, want one deny miss", err)
	}
	for _, want := range []string{`tools.deny: "delete_repository" matches no tool`, `did you mean "github__delete_repo" (mcp:github:delete_repo)?`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if strings.Join(warns, "\n") != `tools.deny: no tool matches "ghost__*"` {
		t.Errorf("warnings = %q", warns)
	}
	warns, err = p.CheckPending(Subject{}, polCatalog(), []string{"gitlab"})
	if err != nil || !strings.Contains(strings.Join(warns, "\n"), `tools.deny: "delete_repository" matches no tool of the upstreams listed so far (by exposed name, id or name on its upstream; not listed yet: gitlab)`) {
		t.Errorf("with a pending upstream: warnings %q, err %v", warns, err)
	}
	if _, err := p.Check(Subject{Endpoint: "team"}, polCatalog()); err == nil || strings.Contains(err.Error(), "mcp:github:delete_repo\" matches") {
		t.Errorf("endpoint subject: %v (its own deny matches; the base layer's does not)", err)
	}
}

// TestDenyMissUpstreamAndClosed: a deny miss names the upstream its form
// names (id or exposed name), none for a tool's name on its upstream; a
// policy with that upstream closed denies its tools and its features
// whatever the rules say, leaves the others as they were, and p itself
// is unchanged.
func TestDenyMissUpstreamAndClosed(t *testing.T) {
	p := polFixture{Tools: Rules{Deny: []string{"mcp:github:nope", "slack__nope", "nope"}}}.compile(t)
	_, err := p.Check(Subject{}, polCatalog())
	var miss *DenyMissError
	if !errors.As(err, &miss) || len(miss.Misses) != 3 {
		t.Fatalf("err = %v, want three deny misses", err)
	}
	got := map[string]string{}
	for _, m := range miss.Misses {
		got[m.Entry] = m.Upstream
		if m.Field != "tools.deny" || !strings.Contains(m.String(), m.Entry) {
			t.Errorf("miss %+v", m)
		}
	}
	if got["mcp:github:nope"] != "github" || got["slack__nope"] != "slack" || got["nope"] != "" {
		t.Errorf("upstreams named: %v", got)
	}
	// The tools it may have meant are those of the upstream it names.
	p = polFixture{Tools: Rules{Deny: []string{"slack__read_file"}}}.compile(t)
	if _, err := p.Check(Subject{}, polCatalog()); err == nil || strings.Contains(err.Error(), "fs__read_file") {
		t.Errorf("a miss naming slack suggests another upstream's tool: %v", err)
	}

	cp := p.Closed(map[string]string{"github": "closed: why"})
	v := cp.View(Subject{})
	if d := v.Decide(polEnt("github", "get_issue")); d.Allowed || d.Rule != `denied: upstream "github" is closed: closed: why` {
		t.Errorf("tool of the closed upstream: %+v", d)
	}
	if d := v.Features("github", nil); d.Allowed {
		t.Errorf("features of the closed upstream: %+v", d)
	}
	if !v.Allowed(polEnt("slack", "post_message")) || !v.Features("slack", nil).Allowed {
		t.Error("the other upstream is closed too")
	}
	if cp.ClosedReason("GitHub") != "closed: why" || p.ClosedReason("github") != "" || !p.View(Subject{}).Allowed(polEnt("github", "get_issue")) {
		t.Error("Closed changed p, or ClosedReason does not ignore case")
	}
}

// TestGroupMemberAndProfileWarnings: a group member that matches no tool
// is named (with the tools it may have meant) whether or not the group
// matches others, nested groups too, in allow, deny and require_approval
// lists; so are the entries of the profile in use.
func TestGroupMemberAndProfileWarnings(t *testing.T) {
	p := polFixture{
		Groups: map[string][]string{
			"dev":   {"github__create_issue", "github__creat_issue", "group:inner"},
			"inner": {"slack__nope_*"},
			"gone":  {"github__delete_rep"},
		},
		Tools:           Rules{Allow: []string{"group:dev"}, Deny: []string{"group:gone"}},
		RequireApproval: []string{"group:dev"},
	}.compile(t)
	warns, err := p.Check(Subject{}, polCatalog())
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(warns, "\n")
	for _, want := range []string{
		`tools.allow: "group:dev" member "github__creat_issue" matches no tool; did you mean "github__create_issue" (mcp:github:create_issue)`,
		`tools.allow: "group:inner" member "slack__nope_*" matches no tool`,
		`tools.deny: no tool matches "group:gone"`,
		`tools.deny: "group:gone" member "github__delete_rep" matches no tool; did you mean "github__delete_repo" (mcp:github:delete_repo)?`,
		`tools.require_approval: "group:dev" member "github__creat_issue" matches no tool`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("warnings lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, `member "github__create_issue"`) {
		t.Errorf("a member that matches was named:\n%s", got)
	}

	p = polFixture{
		Profiles: map[string]Profile{"ro": {Allow: []string{"github__get_*", "fs__raed_file"}, Deny: []string{"slack__nope"}}},
		Tools:    Rules{Profile: "ro"},
	}.compile(t)
	warns, _ = p.Check(Subject{}, polCatalog())
	got = strings.Join(warns, "\n")
	for _, want := range []string{`profiles.ro.allow: no tool matches "fs__raed_file"`, `profiles.ro.deny: no tool matches "slack__nope"`} {
		if !strings.Contains(got, want) {
			t.Errorf("warnings lack %q:\n%s", want, got)
		}
	}
}

// TestMeantClosestFirst: a deny entry one edit away from a tool's name gets
// that tool first in its "did you mean", not cut off as "or N more" behind
// names that merely share a word with it.
func TestMeantClosestFirst(t *testing.T) {
	var tools []Tool
	for _, n := range []string{"edit_file", "move_file", "read_file", "write_file", "list_directory"} {
		tools = append(tools, Tool{ID: "mcp:filesystem:" + n, Exposed: "filesystem__" + n, Base: "filesystem__" + n, Name: n})
	}
	got := meant("filesystem__writefile", tools)
	if want := `; did you mean "filesystem__write_file" (mcp:filesystem:write_file), `; !strings.HasPrefix(got, want) || !strings.HasSuffix(got, " or 1 more?") {
		t.Errorf("meant = %s\nwant it to start %s and end with 1 more", got, want)
	}
}
