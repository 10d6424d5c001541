//go:build unix

package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestLogRotationReopensOnSIGUSR1: logrotate's default
// (rename, then signal) works for the session log and the audit file. After
// the files are renamed and the proxy gets SIGUSR1, later records go to new
// files at the configured paths; the new audit file starts with a "rotate"
// line that continues the old chain, so `audit verify OLD NEW` accepts
// both as one chain. Before, SIGUSR1 ended the proxy (its default action)
// and without it records went on into the renamed files.
func TestLogRotationReopensOnSIGUSR1(t *testing.T) {
	cs, gh := catalogServer(t), catalogFile(t, "github-like.jsonl")
	cfgText := fmt.Sprintf("[tool_search]\nenabled = true\nmode = \"tools\"\n[audit]\nfile = \"audit.jsonl\"\n[telemetry]\nsession_log = \"sessions.jsonl\"\n[upstreams.gh]\ncommand = %s\nargs = [\"-tools\", %s]\n", tomlString(cs), tomlString(gh))
	cfg := writeConfig(t, cfgText)
	dir := filepath.Dir(cfg)
	auditLog, sessLog := filepath.Join(dir, "audit.jsonl"), filepath.Join(dir, "sessions.jsonl")
	bin := buildProxy(t)
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	url := "http://" + addr + "/mcp"
	proc := startHTTPServer(t, proxyCmd(t, cfg, "--transport", "http", "--listen", addr, "--log-level", "info"), nil, url)
	read := func(p string) string { b, _ := os.ReadFile(p); return string(b) }
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(100 * time.Millisecond) {
			if time.Now().After(deadline) { // fail-safe bound
				t.Fatalf("never: %s\nproxy log:\n%s", what, tail(proc.Output(), 3000))
			}
		}
	}
	search := func(q string) {
		t.Helper()
		c := gosdkClientHTTP(t, url, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := c.CallTool(ctx, &gosdk.CallToolParams{Name: "tool_search", Arguments: map[string]any{"query": q}}); err != nil {
			t.Fatalf("tool_search: %v", err)
		}
		c.Close()
	}
	waitFor("listening", func() bool { return strings.Contains(proc.Output(), "msg=listening") })
	search("before rotation")
	waitFor("the first session in the session log", func() bool { return strings.Contains(read(sessLog), `"event":"search"`) })

	// logrotate without `create`: rename, then the signal.
	for _, p := range []string{auditLog, sessLog} {
		if err := os.Rename(p, p+".1"); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Kill(proc.PID(), syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	waitFor("log files reopened", func() bool {
		if done, _ := proc.Exited(); done {
			t.Fatalf("the proxy ended on SIGUSR1:\n%s", tail(proc.Output(), 3000))
		}
		return strings.Contains(proc.Output(), "log files reopened")
	})
	search("after rotation")
	syscall.Kill(proc.PID(), syscall.SIGHUP) // an audit line: the reload
	waitFor("the reload in the new audit file", func() bool { return strings.Contains(read(auditLog), `"kind":"reload"`) })
	waitFor("the second session in the new session log", func() bool { return strings.Count(read(sessLog), `"event":"search"`) == 1 })
	if n := strings.Count(read(sessLog+".1"), `"event":"search"`); n != 1 {
		t.Fatalf("renamed session log has %d searches, want 1 (records after the signal went there)", n)
	}
	if first := strings.SplitN(read(auditLog), "\n", 2)[0]; !strings.Contains(first, `"kind":"rotate"`) || strings.HasPrefix(first, `{"seq":1,`) {
		t.Fatalf("new audit file's first line: %s", first)
	}
	for _, args := range [][]string{{auditLog}, {auditLog + ".1", auditLog}} {
		out, err := exec.Command(bin, append([]string{"audit", "verify"}, args...)...).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "OK") {
			t.Fatalf("audit verify %v: %v\n%s", args, err, out)
		}
		t.Logf("audit verify %v: %s", args, strings.TrimSpace(string(out)))
	}
}
