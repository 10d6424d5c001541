package policy

import (
	"iter"
	"slices"
	"strings"
	"testing"
)

func TestCovers(t *testing.T) {
	cases := []struct {
		p, ns string
		want  bool
	}{
		{"github__*", "github__", true},
		{"git*__*", "github__", true},
		{"*", "github__", true},
		{"**", "github__", true},
		{"mcp:github:*", "mcp:github:", true},
		{"mcp:*:*", "mcp:github:", true},
		{"github__?*", "github__", true},
		{"*__*", "github__", true},
		{"github__get_*", "github__", false},
		{"*__delete_*", "github__", false},
		{"github__?", "github__", false},
		{"github__", "github__", false},
		{"gitlab__*", "github__", false},
		{"github_*", "github__", true},
		{"*x", "github__", false},
		{"*b__*", "github__", true},
	}
	for _, tc := range cases {
		if got := coversLower(tc.p, tc.ns); got != tc.want {
			t.Errorf("coversLower(%q, %q) = %v, want %v", tc.p, tc.ns, got, tc.want)
		}
	}
}

// FuzzCovers: a pattern that covers a namespace matches every name in it;
// one that does not is refuted by some short suffix.
func FuzzCovers(f *testing.F) {
	for _, s := range [][2]string{{"github__*", "github__"}, {"*__delete_*", "gh__"}, {"a?*", "a"}, {"*é*", "xé"}} {
		f.Add(s[0], s[1])
	}
	suffixes := []string{"x", "xy", "delete_", "__delete_x", "é", "***", "a", "b", "_", "zzzzzzzz"}
	f.Fuzz(func(t *testing.T, p, ns string) {
		p, ns = strings.ToLower(p), strings.ToLower(ns)
		if len(p) > 12 || len(ns) > 12 {
			return
		}
		if coversLower(p, ns) {
			for _, w := range suffixes {
				if !matchLower(p, ns+w) {
					t.Fatalf("coversLower(%q, %q) but %q does not match", p, ns, ns+w)
				}
			}
		}
	})
}

func seqOf(ts ...Tool) iter.Seq[Tool] { return slices.Values(ts) }

func TestFeatures(t *testing.T) {
	ups := append(slices.Clone(polUpstreams), Upstream{Name: "docs", NamePrefix: "docs__", IDPrefix: "mcp:docs:"})
	compile := func(f polFixture) *Policy {
		t.Helper()
		sp := Spec(f)
		sp.Upstreams = ups
		p, err := Compile(sp)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	github := seqOf(polEnt("github", "create_issue"), polEnt("github", "get_issue"), polEnt("github", "delete_repo"))
	cases := []struct {
		name    string
		f       polFixture
		subject Subject
		up      string
		tools   iter.Seq[Tool]
		allowed bool
		rule    string
	}{
		{"default full, tool-less upstream", polFixture{}, Subject{}, "docs", nil, true, `allowed by profile "full" (default)`},
		{"default full, via a tool", polFixture{}, Subject{}, "github", github, true, `allowed: its tool "github__create_issue" is (allowed by profile "full" (default))`},
		{"deny group", polFixture{Tools: Rules{Deny: []string{"group:github"}}}, Subject{}, "github", github, false, `denied by tools.deny "group:github"`},
		{"deny namespace glob", polFixture{Tools: Rules{Deny: []string{"GitHub__*"}}}, Subject{}, "github", github, false, `denied by tools.deny "GitHub__*"`},
		{"deny id glob", polFixture{Tools: Rules{Deny: []string{"mcp:docs:*"}}}, Subject{}, "docs", nil, false, `denied by tools.deny "mcp:docs:*"`},
		{"partial deny keeps features", polFixture{Tools: Rules{Deny: []string{"*__delete_*"}}}, Subject{}, "github", github, true, `allowed: its tool "github__create_issue" is (allowed by profile "full" (default))`},
		{"group of groups", polFixture{Tools: Rules{Deny: []string{"group:vcs"}}, Groups: map[string][]string{"vcs": {"group:github"}}}, Subject{}, "github", github, false, `denied by tools.deny "group:vcs" (via "group:github")`},
		{"allow list of one tool", polFixture{Tools: Rules{Allow: []string{"github__get_*"}}}, Subject{}, "github", github, true, `allowed: its tool "github__get_issue" is (allowed by tools.allow "github__get_*")`},
		{"allow list elsewhere", polFixture{Tools: Rules{Allow: []string{"group:slack"}}}, Subject{}, "github", github, false, `denied: not matched by tools.allow (no tool of it allowed)`},
		{"allow list names tool-less upstream", polFixture{Tools: Rules{Allow: []string{"group:docs"}}}, Subject{}, "docs", nil, true, `allowed by tools.allow "group:docs"`},
		{"every tool denied one by one", polFixture{Tools: Rules{Deny: []string{"github__create_issue", "github__get_issue", "github__delete_repo"}}}, Subject{}, "github", github, true, `allowed by profile "full" (default)`},
		{"minimal", polFixture{Tools: Rules{Profile: "minimal"}}, Subject{}, "docs", nil, false, `denied: not in tools.profile "minimal" (only direct-only tools) (no tool of it allowed)`},
		{"minimal with a direct-only tool", polFixture{Tools: Rules{Profile: "minimal"}}, Subject{}, "fs", seqOf(polEnt("fs", "read_file"), polDirect("fs", "status")), true, `allowed: its tool "fs__status" is (allowed by tools.profile "minimal" (direct-only tool))`},
		{"endpoint deny", polFixture{Endpoints: map[string]Rules{"team": {Deny: []string{"group:github"}}}}, Subject{Endpoint: "team"}, "github", github, false, `denied by endpoints.team.tools.deny "group:github"`},
		{"by_client deny", polFixture{ByClient: map[string]Rules{"cur*": {Deny: []string{"*"}}}}, Subject{ClientName: "cursor"}, "docs", nil, false, `denied by tools.by_client."cur*".deny "*"`},
		{"unknown endpoint", polFixture{}, Subject{Endpoint: "nope"}, "docs", nil, false, `denied: unknown endpoint "nope"`},
		{"unknown upstream", polFixture{}, Subject{}, "ghost", nil, false, `denied: unknown upstream "ghost"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := compile(tc.f).View(tc.subject).Features(tc.up, tc.tools)
			if d.Allowed != tc.allowed || d.Rule != tc.rule {
				t.Fatalf("got {%v %q}, want {%v %q}", d.Allowed, d.Rule, tc.allowed, tc.rule)
			}
		})
	}
}

// TestEveryProblemReported: Compile reports every problem of a spec at once,
// each at its own key, and a broken group once (not again where it is used).
func TestEveryProblemReported(t *testing.T) {
	sp := Spec{
		Tools:     Rules{Profile: "minmal", Allow: []string{"group:gh", "group:bad"}, Deny: []string{" x"}},
		ByClient:  map[string]Rules{"cursor*": {Deny: []string{""}}},
		Groups:    map[string][]string{"bad": {"group:nope"}},
		Upstreams: polUpstreams,
	}
	ps := Validate(sp)
	var got []string
	for _, p := range ps {
		got = append(got, p.Error())
	}
	want := []string{
		`groups.bad[0]: "group:nope" names no upstream and no [groups] entry`,
		`tools.profile: unknown profile "minmal" (known: "full", "minimal")`,
		`tools.allow[0]: "group:gh" names no upstream and no [groups] entry`,
		`tools.deny[0]: entry " x" has leading or trailing spaces`,
		`tools.by_client."cursor*".deny[0]: empty entry`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if ps[1].Name != "minmal" || !slices.Equal(ps[1].Candidates, []string{"full", "minimal"}) {
		t.Fatalf("profile hint: %+v", ps[1])
	}
	if ps[2].Name != "group:gh" || !slices.Contains(ps[2].Candidates, "group:github") {
		t.Fatalf("group hint: %+v", ps[2])
	}
}

// TestOneDialect: '[' and '\' are ordinary characters (no classes, no
// escapes), so every entry is valid and means what it says.
func TestOneDialect(t *testing.T) {
	p, err := Compile(Spec{Tools: Rules{Deny: []string{"fs__[a]*", `fs__\*`}}, Upstreams: polUpstreams})
	if err != nil {
		t.Fatal(err)
	}
	v := p.View(Subject{})
	for name, allowed := range map[string]bool{"fs__[a]x": false, "fs__a": true, `fs__\x`: false, "fs__*": true} {
		if got := v.Allowed(Tool{ID: "mcp:fs:" + strings.TrimPrefix(name, "fs__"), Exposed: name, Upstream: "fs"}); got != allowed {
			t.Errorf("%s: allowed=%v, want %v", name, got, allowed)
		}
	}
}
