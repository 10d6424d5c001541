//go:build unix

package integration

// `mcp-toolsearch check` on the real binary (trial round 6).

import (
	"os/exec"
	"strings"
	"testing"
)

// TestCheckToolRefTypos (M5): a direct_only entry and a pinned reference
// that name no tool of the upstream get a warning with a did-you-mean in
// check's output; they were silently ignored.
func TestCheckToolRefTypos(t *testing.T) {
	cfg := writeConfig(t, "[tool_search]\nmode = \"directory\"\npinned = [\"gh__list_isues\"]\n[upstreams.gh]\ncommand = "+tomlString(catalogServer(t))+
		"\nargs = [\"-tools\", "+tomlString(catalogFile(t, "github-like.jsonl"))+"]\ndirect_only = [\"creat_issue\"]\n")
	out, _ := exec.Command(buildProxy(t), "check", cfg).CombinedOutput()
	for _, want := range []string{
		`warning: direct_only "creat_issue" of upstream "gh": no such tool; did you mean "create_issue"?`,
		`warning: pinned "gh__list_isues": upstream "gh" has no such tool; did you mean "gh__list_issues"?`,
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("check lacks %q:\n%s", want, out)
		}
	}
}
