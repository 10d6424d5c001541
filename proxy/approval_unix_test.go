//go:build unix

package proxy

// The approval command tests run shell scripts (#!/bin/sh): Unix only. On
// Windows the same code path runs a program through os/exec (an .exe; a .sh
// is "Bad EXE format"); it is not run there by these tests.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// writeScript writes an executable shell script and returns its path.
func writeScript(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "approve.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestApprovalCommand(t *testing.T) {
	dir := t.TempDir()
	seen := filepath.Join(dir, "request.json")
	cases := []struct {
		name, script string
		timeout      string
		runs         bool
		because      string
	}{
		{"allow", "cat > " + seen + "\necho '  ALLOW  because reasons'\n", "5s", true, ""},
		{"deny", "cat > /dev/null\necho deny\n", "5s", false, "answered deny"},
		{"other word", "echo maybe\n", "5s", false, `answered "maybe" (want allow or deny)`},
		{"silent", "exit 0\n", "5s", false, "answered nothing"},
		{"non-zero exit", "echo allow\necho 'it broke' >&2\nexit 3\n", "5s", false, "failed: exit status 3"},
		{"time-out", "echo allow\nexec sleep 30\n", "300ms", false, "gave no answer within tools.approval_timeout (300ms)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			script := writeScript(t, c.script)
			p, up := testProxy(t, approvalConfig+fmt.Sprintf("approval_command = [%s]\n", tomlQuote(script)))
			p.conf().Tools.ApprovalTimeout.Duration, _ = time.ParseDuration(c.timeout)
			cs := connect(t, p, "cmd-client", nil) // no elicitation: the command decides
			r := callTool(t, cs, "up__delete_thing", map[string]any{"name": "x", "password": "pw"})
			if !c.runs {
				assertBlocked(t, r, up, "delete_thing", c.because)
				return
			}
			if r.IsError || up.count("delete_thing") != 1 {
				t.Fatalf("allowed call: isError=%v upstream calls=%d: %s", r.IsError, up.count("delete_thing"), resultText(r))
			}
			b, err := os.ReadFile(seen)
			if err != nil {
				t.Fatal(err)
			}
			var req ApprovalRequest
			if err := json.Unmarshal(b, &req); err != nil {
				t.Fatalf("stdin was not an ApprovalRequest: %v: %s", err, b)
			}
			if req.ID != "mcp:up:delete_thing" || req.Upstream != "up" || req.Tool != "delete_thing" || req.Exposed != "up__delete_thing" || req.Client != "cmd-client" || req.Rule != `tools.require_approval "up__delete_*"` {
				t.Errorf("request = %+v", req)
			}
			// The program gets the full arguments, exactly what the upstream got.
			if string(req.Arguments) != string(up.args["delete_thing"][0]) {
				t.Errorf("arguments: command got %s, upstream got %s", req.Arguments, up.args["delete_thing"][0])
			}
		})
	}
	t.Run("missing program", func(t *testing.T) {
		p, up := testProxy(t, approvalConfig+`approval_command = ["/nonexistent/approve"]`+"\n")
		r, err := p.call(context.Background(), p.Env("", "").(*session), p.Catalog().ByExposed("up__delete_thing"), nil, "cli")
		if err != nil {
			t.Fatal(err)
		}
		assertBlocked(t, r, up, "delete_thing", `tools.approval_command "/nonexistent/approve" could not run`)
	})
}
