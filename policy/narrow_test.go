package policy

import (
	"slices"
	"strings"
	"testing"
)

// TestByClientOnlyNarrows: a client that claims the name
// of a trusted one gets no more than the endpoint grants, by any kind of
// by_client rule (profile, allow, also_allow), for tools and for an
// upstream's features; narrowing still works; an endpoint with its own
// token grants more.
func TestByClientOnlyNarrows(t *testing.T) {
	f := polFixture{
		Tools: Rules{Profile: "minimal"}, // only fs__status (direct-only)
		ByClient: map[string]Rules{
			"trusted-agent": {Profile: "full"},
			"lister":        {Allow: []string{"*"}},
			"adder":         {AlsoAllow: []string{"group:github"}},
			"narrow*":       {Deny: []string{"fs__status"}},
		},
		Endpoints: map[string]Rules{"trusted": {Profile: "full"}},
	}
	p := f.compile(t)
	for _, name := range []string{"", "trusted-agent", "lister", "adder"} {
		if got := polAllowedSet(p, Subject{ClientName: name}); got != "fs__status" {
			t.Errorf("client %q: allowed %q, want only what the endpoint grants (fs__status)", name, got)
		}
		v := p.View(Subject{ClientName: name})
		if d := v.Features("github", slices.Values(polCatalog()[:3])); d.Allowed {
			t.Errorf("client %q sees github's resources and prompts: %s", name, d.Rule)
		}
	}
	if got := polAllowedSet(p, Subject{ClientName: "narrow-me"}); got != "" {
		t.Errorf("a narrowing by_client rule: allowed %q, want none", got)
	}
	if got := polAllowedSet(p, Subject{Endpoint: "trusted"}); !strings.Contains(got, "github__delete_repo") {
		t.Errorf("an endpoint with its own token grants more: %q", got)
	}
	d := p.Decide(Subject{ClientName: "trusted-agent"}, polEnt("github", "create_issue"))
	if d.Allowed || !strings.Contains(d.Rule, "only narrow") {
		t.Errorf("decision names the reason: %+v", d)
	}
	warns, err := p.Check(Subject{ClientName: "trusted-agent"}, polCatalog())
	if err != nil || len(warns) == 0 || !strings.Contains(warns[0], `tools.by_client."trusted-agent" would allow 6 tool(s) that the main endpoint does not`) || !strings.Contains(warns[0], "[endpoints.NAME] with its own token") {
		t.Errorf("check: warns=%q err=%v", warns, err)
	}
	if warns, _ := p.Check(Subject{ClientName: "narrow-me"}, polCatalog()); slices.ContainsFunc(warns, func(w string) bool { return strings.Contains(w, "would allow") }) {
		t.Errorf("a narrowing rule is warned about as widening: %q", warns)
	}
}
