//go:build unix

package integration

// A reload never waits for an upstream: an added upstream
// slow to list starts in the background while the reload's policy is in
// force at once, and later reloads are not held behind it; a restarted
// upstream keeps serving on its old instance until its new one started,
// and a later reload drops that pending start. After a restart of a
// per-client upstream, the client sessions on the old instance are told
// to start a new session.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestReloadDoesNotWaitForSlowUpstream: SIGHUP adds an upstream whose
// tools/list is held (catalogserver -list-gate: it answers once a file
// exists) and denies a tool. The deny is in force for the next request
// while the added upstream is still starting; a call of its tool says it
// is still starting; a second reload (another deny) is applied while it
// still is. Once the gate opens, its tools appear and answer. Then a
// restart of an upstream whose new instance is held keeps the old one
// serving, and a reload back to its old config drops the pending start.
func TestReloadDoesNotWaitForSlowUpstream(t *testing.T) {
	cs, gh := catalogServer(t), catalogFile(t, "github-like.jsonl")
	dir := t.TempDir()
	gate, gate2 := filepath.Join(dir, "gate"), filepath.Join(dir, "gate2")
	up := func(name, extra string) string {
		return fmt.Sprintf("[upstreams.%s]\ncommand = %s\nargs = [\"-tools\", %s%s]\nstartup_timeout = \"10m\"\n", name, tomlString(cs), tomlString(gh), extra)
	}
	head := "[tool_search]\nenabled = false\n"
	slowUp := up("slow", ", \"-list-gate\", "+tomlString(gate))
	v1 := head + up("stable", "")
	v2 := head + up("stable", "") + slowUp + "[tools]\ndeny = [\"stable__create_issue\"]\n"
	v3 := head + up("stable", "") + slowUp + "[tools]\ndeny = [\"stable__create_issue\", \"stable__update_issue\"]\n"
	cfg := writeConfig(t, v1)
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	proc := startHTTPServer(t, proxyCmd(t, cfg, "--transport", "http", "--listen", addr, "--log-level", "info"), nil, "http://"+addr+"/mcp")
	c := gosdk.NewClient(&gosdk.Implementation{Name: "reloader", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sess, err := c.Connect(ctx, &gosdk.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	call := func(name string) (*gosdk.CallToolResult, error) {
		return sess.CallTool(ctx, &gosdk.CallToolParams{Name: name, Arguments: map[string]any{"owner": "o", "repo": "r", "issue_number": 1, "title": "t"}})
	}
	names := func() []string {
		lt, err := sess.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tl := range lt.Tools {
			out = append(out, tl.Name)
		}
		return out
	}
	waitUntil := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second) // fail-safe bound
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("never: %s\nproxy log:\n%s", what, tail(proc.Output(), 4000))
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	denied := func(name string) func() bool {
		return func() bool {
			_, err := call(name)
			return err != nil && strings.Contains(err.Error(), "unknown tool")
		}
	}
	reload := func(text string) {
		t.Helper()
		if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Kill(proc.PID(), syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
	}
	if res, err := call("stable__create_issue"); err != nil || res.IsError {
		t.Fatalf("before the reload: %v %v", res, err)
	}

	reload(v2)
	waitUntil("the deny of v2 in force", denied("stable__create_issue"))
	if _, err := os.Stat(gate); err == nil {
		t.Fatal("the gate is open")
	}
	// The added upstream is still starting: its tools/list is held.
	_, err = call("slow__list_issues")
	if err == nil || !strings.Contains(err.Error(), `MCP server "slow" is still starting`) {
		t.Errorf("a call of the starting upstream's tool: %v; want it to say the server is still starting", err)
	}
	if out := proc.Output(); !strings.Contains(out, "config reloaded") || !strings.Contains(out, "added upstreams are starting in the background") {
		t.Errorf("the reload's log lines are missing:\n%s", tail(out, 3000))
	}
	// A later reload is not held behind it.
	reload(v3)
	waitUntil("the deny of v3 in force while slow is still starting", denied("stable__update_issue"))
	if n := names(); slices.Contains(n, "slow__list_issues") {
		t.Fatalf("slow's tools listed before its tools/list was answered: %v", n)
	}

	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	waitUntil("slow's tools listed once it answered tools/list", func() bool { return slices.Contains(names(), "slow__list_issues") })
	if res, err := call("slow__list_issues"); err != nil || res.IsError {
		t.Fatalf("slow__list_issues once listed: %v %v", res, err)
	}

	// Restart stable with a held tools/list: the old instance keeps serving.
	v4 := head + up("stable", ", \"-list-gate\", "+tomlString(gate2)+", \"-is-error-tool\", \"list_issues\"") + slowUp
	reload(v4)
	waitUntil("the restart of stable pending", func() bool {
		return strings.Contains(proc.Output(), "restarted upstreams keep serving on their old instance until the new one has started")
	})
	// v4 lifted the denies at once; the old instance answers (no -is-error-tool).
	waitUntil("the deny lifted by v4", func() bool { res, err := call("stable__create_issue"); return err == nil && !res.IsError })
	if res, err := call("stable__list_issues"); err != nil || res.IsError {
		t.Fatalf("stable__list_issues while its new instance starts: %v %v; want the old instance's result", res, err)
	}
	// Back to stable's old config: the pending start is dropped, the old instance stays.
	reload(head + up("stable", "") + slowUp)
	waitUntil("the pending restart dropped", func() bool {
		return strings.Contains(proc.Output(), "the pending restart of these upstreams was dropped")
	})
	if err := os.WriteFile(gate2, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if res, err := call("stable__list_issues"); err != nil || res.IsError {
		t.Fatalf("stable__list_issues after the pending restart was dropped: %v %v", res, err)
	}
	if strings.Contains(proc.Output(), "switched the restarted upstream to its new instance") {
		t.Errorf("a dropped pending start was switched to:\n%s", tail(proc.Output(), 3000))
	}
}

// TestReloadPerClientSessionMessage: after SIGHUP restarts a
// session = "per-client" upstream, the client session whose per-client
// session was on the old instance is told that a config reload restarted
// the upstream and to start a new client session (before: "per-client
// session closed", from the new instance's manager).
func TestReloadPerClientSessionMessage(t *testing.T) {
	cs, gh := catalogServer(t), catalogFile(t, "github-like.jsonl")
	up := func(extra string) string {
		return fmt.Sprintf("[tool_search]\nenabled = false\n[upstreams.pc]\ncommand = %s\nargs = [\"-tools\", %s%s]\nsession = \"per-client\"\n", tomlString(cs), tomlString(gh), extra)
	}
	cfg := writeConfig(t, up(""))
	cmd := proxyCmd(t, cfg)
	proc := exec.Command(cmd[0], cmd[1:]...)
	sess := gosdkConnect(t, &gosdk.CommandTransport{Command: proc})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := map[string]any{"owner": "o", "repo": "r"}
	if res, err := sess.CallTool(ctx, &gosdk.CallToolParams{Name: "pc__list_issues", Arguments: args}); err != nil || res.IsError {
		t.Fatalf("before the reload: %v %v", res, err)
	}
	if err := os.WriteFile(cfg, []byte(up(", \"-is-error-tool\", \"list_issues\"")), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(proc.Process.Pid, syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	want := `upstream "pc" was restarted by a config reload; this client's per-client session of it ended with the old instance: start a new client session`
	var last string
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) { // the switch happens once the new instance started
		res, err := sess.CallTool(ctx, &gosdk.CallToolParams{Name: "pc__list_issues", Arguments: args})
		last = fmt.Sprint(err)
		if res != nil {
			last = contentText(res)
		}
		if strings.Contains(last, want) {
			break
		}
		if strings.Contains(last, "is-error") || (res != nil && res.IsError && !strings.Contains(last, `upstream "pc"`)) {
			t.Fatalf("the old client session reached the new instance: %v", last)
		}
		if time.Now().After(deadline) {
			t.Fatalf("a call of the old client session after the reload: %s; want %q", last, want)
		}
	}
}
