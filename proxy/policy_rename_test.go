package proxy

import (
	"strings"
	"testing"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
	"github.com/mcp-toolsearch/mcp-toolsearch/policy"
)

// TestPolicyDenySurvivesRename: a deny written for an exposed name keeps
// holding when a new clash renames the tool with a hash suffix (an
// upstream cannot switch a rule off by adding a look-alike tool).
func TestPolicyDenySurvivesRename(t *testing.T) {
	c := catalog.New("__", nil, []catalog.UpstreamInfo{{Name: "gh", Prefix: "gh"}})
	c.SetTools("gh", []*catalog.Entry{{Name: "delete_repo"}, {Name: "list_repos"}})
	p, err := policy.Compile(policy.Spec{Tools: policy.Rules{Deny: []string{"gh__delete_repo", "gh__*_repo*x"}}, Upstreams: []policy.Upstream{{Name: "gh"}}})
	if err != nil {
		t.Fatal(err)
	}
	allowed := func() map[string]bool {
		out := map[string]bool{}
		for _, e := range c.Snapshot().Entries {
			out[e.ID+" "+e.Exposed] = p.View(policy.Subject{}).Allowed(toolOf(e))
		}
		return out
	}
	before := allowed()
	if before["mcp:gh:delete_repo gh__delete_repo"] {
		t.Fatalf("not denied before the rename: %v", before)
	}
	c.SetTools("gh", []*catalog.Entry{{Name: "delete_repo"}, {Name: "list_repos"}, {Name: "Delete_Repo"}})
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
