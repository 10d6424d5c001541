package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/testauth"
)

// TestAuditVerify: `audit verify` passes on a
// log the proxy wrote (calls and a denial, each `call` command one run of the proxy) and fails,
// naming the line, on the same log with one line edited.
func TestAuditVerify(t *testing.T) {
	as := testauth.New()
	t.Cleanup(as.Close)
	up := testauth.NewUpstream(as, "svc-token")
	t.Cleanup(up.Close)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.toml")
	log := filepath.Join(dir, "audit.jsonl")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`
[upstreams.t]
url = %q
headers = { Authorization = "Bearer svc-token" }
[tools]
deny = ["t__whoami"]
[audit]
file = "audit.jsonl"
arguments = true
`, up.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	// Each `call` is one proxy run appending to the same chain.
	for i, want := range []int{0, 0, 0} {
		code, out, errs := run("call", "t__echo", "--args", fmt.Sprintf(`{"text":"call %d","api_key":"sk-live-123456"}`, i), "--config", cfg)
		if code != want {
			t.Fatalf("call %d: exit %d\n%s%s", i, code, out, errs)
		}
	}
	if code, _, _ := run("call", "t__whoami", "--config", cfg); code == 0 {
		t.Fatal("denied tool called")
	}
	b, _ := os.ReadFile(log)
	text := string(b)
	for _, want := range []string{`"kind":"call"`, `"kind":"denied"`, `"subject":"cli"`, `"api_key":"***"`} {
		if !strings.Contains(text, want) {
			t.Errorf("log lacks %s:\n%s", want, text)
		}
	}
	if strings.Contains(text, "sk-live-123456") {
		t.Fatal("a secret argument in the audit log")
	}
	code, out, errs := run("audit", "verify", log)
	if code != 0 || !strings.Contains(out, "OK, ") {
		t.Fatalf("verify: %d %s %s", code, out, errs)
	}
	t.Logf("intact log:\n%s", out)
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if !strings.Contains(lines[1], `"outcome":"ok"`) {
		t.Fatalf("line 2: %s", lines[1])
	}
	lines[1] = strings.Replace(lines[1], `"outcome":"ok"`, `"outcome":"tool_error"`, 1)
	edited := filepath.Join(dir, "edited.jsonl")
	os.WriteFile(edited, []byte(strings.Join(lines, "\n")+"\n"), 0o600)
	code, out, _ = run("audit", "verify", edited)
	if code != 1 || !strings.Contains(out, "FAILED at line 2: hash does not match") {
		t.Fatalf("edited: %d %s", code, out)
	}
	t.Logf("edited log:\n%s", out)
}
