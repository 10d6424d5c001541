//go:build unix

package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestAuditStartsAndRefusedReloads: `check` and `list`
// write no "start" line to the audit log (they serve no client; before,
// each read as a proxy start); a serving proxy writes one; a reload the
// CLI refuses (invalid file) is an audit line with outcome "refused" and
// the problem (before, only applied reloads were); `audit verify` accepts
// the chain.
func TestAuditStartsAndRefusedReloads(t *testing.T) {
	waitsMostly(t)
	cs, gh := catalogServer(t), catalogFile(t, "github-like.jsonl")
	v1 := fmt.Sprintf("[audit]\nfile = \"audit.jsonl\"\n[tool_search]\nenabled = false\n[upstreams.gh]\ncommand = %s\nargs = [\"-tools\", %s]\n", tomlString(cs), tomlString(gh))
	cfg := writeConfig(t, v1)
	log := filepath.Join(filepath.Dir(cfg), "audit.jsonl")
	bin := buildProxy(t)
	for _, args := range [][]string{{"check", cfg}, {"list", "--config", cfg}} {
		if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	if b, _ := os.ReadFile(log); strings.Contains(string(b), `"kind":"start"`) {
		t.Fatalf("check/list wrote a start line:\n%s", b)
	}

	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	proc := startHTTPServer(t, proxyCmd(t, cfg, "--transport", "http", "--listen", addr, "--log-level", "info"), nil, "http://"+addr+"/mcp")
	audit := func() string { b, _ := os.ReadFile(log); return string(b) }
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(100 * time.Millisecond) {
			if time.Now().After(deadline) { // fail-safe bound
				t.Fatalf("never: %s\naudit log:\n%s\nproxy log:\n%s", what, audit(), tail(proc.Output(), 2000))
			}
		}
	}
	waitFor("the serving proxy's start line", func() bool { return strings.Count(audit(), `"kind":"start"`) == 1 })
	// SIGHUP reloads once the proxy serves (before, it ends the process).
	waitFor("listening", func() bool { return strings.Contains(proc.Output(), "msg=listening") })

	if err := os.WriteFile(cfg, []byte(v1+"bogus_key = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	syscall.Kill(proc.PID(), syscall.SIGHUP)
	waitFor("a refused reload line", func() bool {
		return strings.Contains(audit(), `"kind":"reload","outcome":"refused","detail":"invalid config (signal hangup): `) &&
			strings.Contains(audit(), `unknown key \"upstreams.gh.bogus_key\"`)
	})
	if err := os.WriteFile(cfg, []byte(v1), 0o600); err != nil {
		t.Fatal(err)
	}
	syscall.Kill(proc.PID(), syscall.SIGHUP)
	waitFor("an applied reload line", func() bool { return strings.Contains(audit(), `"kind":"reload","outcome":"applied"`) })
	if out, err := exec.Command(bin, "audit", "verify", log).CombinedOutput(); err != nil || !strings.Contains(string(out), "OK") {
		t.Fatalf("audit verify: %v\n%s", err, out)
	}
	if n := strings.Count(audit(), `"kind":"start"`); n != 1 {
		t.Fatalf("%d start lines, want 1:\n%s", n, audit())
	}
}
