//go:build unix

package integration

// `mcp-toolsearch check` on the real binary.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckToolRefTypos: a direct_only entry and a pinned reference
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

// TestCheckStartFailureReason: check names the real cause for an
// upstream that writes a line that is not JSON-RPC and never answers
// initialize (it was "exited with status 0": the exit that followed the
// timeout), and does not promise background retries.
func TestCheckStartFailureReason(t *testing.T) {
	waitsMostly(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "garbage.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho 'hello this is not json'\ncat > /dev/null\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, "[upstreams.garbage]\ncommand = "+tomlString(script)+"\nstartup_timeout = \"2s\"\n")
	out, err := exec.Command(buildProxy(t), "check", cfg).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("check: %v, want exit status 1", err)
	}
	want := `upstream garbage              FAILED  initialize: startup_timeout (2s) exceeded: no answer to initialize; it wrote 1 line the proxy could not use, the first: not a JSON-RPC message: hello this is not json`
	if !strings.Contains(string(out), want) {
		t.Errorf("check lacks %q:\n%s", want, out)
	}
	if strings.Contains(string(out), "retrying in the background") {
		t.Errorf("check promises background retries:\n%s", out)
	}
}
