//go:build unix

package integration

// Reload without restart on the real binary: SIGHUP
// re-reads the config while a client keeps calling.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestReloadUnderLoad: add, remove and change an upstream and add a deny
// rule with SIGHUP while four goroutines call a tool of an upstream that
// does not change: zero failed calls; tools/list follows (with
// notifications/tools/list_changed). Then an invalid file is refused with
// file:line and the running config keeps serving.
func TestReloadUnderLoad(t *testing.T) {
	cs, gh := catalogServer(t), catalogFile(t, "github-like.jsonl")
	up := func(name string, extra string) string {
		return fmt.Sprintf("[upstreams.%s]\ncommand = %s\nargs = [\"-tools\", %s%s]\n", name, tomlString(cs), tomlString(gh), extra)
	}
	head := "[tool_search]\nenabled = false\n"
	v1 := head + up("stable", "") + up("gone", "") + up("chg", "")
	v2 := head + up("stable", "") + up("chg", `, "-is-error-tool", "update_issue"`) + up("added", "") +
		"[tools]\ndeny = [\"stable__create_issue\"]\n"
	cfg := writeConfig(t, v1)
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	proc := startHTTPServer(t, proxyCmd(t, cfg, "--transport", "http", "--listen", addr, "--log-level", "info"), nil, "http://"+addr+"/mcp")

	var changed, otherChanged atomic.Int32
	c := gosdk.NewClient(&gosdk.Implementation{Name: "reloader", Version: "1"}, &gosdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *gosdk.ToolListChangedRequest) { changed.Add(1) },
	})
	sess, err := c.Connect(context.Background(), &gosdk.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	// No upstream offers resources or prompts, so a session
	// of the classic handshake (which gets list_changed without
	// subscribing) is told of neither, and a reload must not send their
	// list_changed to it.
	legacy, err := gosdk.NewClient(&gosdk.Implementation{Name: "legacy", Version: "1"}, &gosdk.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *gosdk.ResourceListChangedRequest) { otherChanged.Add(1) },
		PromptListChangedHandler:   func(context.Context, *gosdk.PromptListChangedRequest) { otherChanged.Add(1) },
	}).Connect(context.Background(), &gosdk.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp"}, &gosdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer legacy.Close()
	names := func() []string {
		lt, err := sess.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tl := range lt.Tools {
			out = append(out, tl.Name)
		}
		return out
	}
	if n := names(); !slices.Contains(n, "gone__list_issues") || !slices.Contains(n, "stable__create_issue") {
		t.Fatalf("v1 tools: %v", n)
	}

	// Load on the upstream that does not change.
	var calls, failed atomic.Int64
	var firstErr atomic.Value
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				res, err := sess.CallTool(context.Background(), &gosdk.CallToolParams{Name: "stable__list_issues", Arguments: map[string]any{"owner": "o", "repo": fmt.Sprint(i)}})
				calls.Add(1)
				if err != nil || res.IsError {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, fmt.Sprint(err, res))
				}
			}
		}()
	}
	waitUntil := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second) // fail-safe bound
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("never: %s\nproxy log:\n%s", what, tail(proc.Output(), 3000))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	time.Sleep(300 * time.Millisecond)
	before := calls.Load()
	if err := os.WriteFile(cfg, []byte(v2), 0o600); err != nil {
		t.Fatal(err)
	}
	syscall.Kill(proc.PID(), syscall.SIGHUP)
	waitUntil("v2 in force", func() bool {
		n := names()
		return slices.Contains(n, "added__list_issues") && !slices.Contains(n, "gone__list_issues") && !slices.Contains(n, "stable__create_issue")
	})
	waitUntil("notifications/tools/list_changed", func() bool { return changed.Load() > 0 })
	if ir := legacy.InitializeResult(); ir.Capabilities.Resources != nil || ir.Capabilities.Prompts != nil {
		t.Errorf("initialize declared resources %+v / prompts %+v; no upstream offers them", ir.Capabilities.Resources, ir.Capabilities.Prompts)
	}
	// The changed upstream was restarted with its new arguments (it
	// switches once its new instance started: proxy/reload.go).
	waitUntil("chg__update_issue answered by chg's new instance (isError: -is-error-tool)", func() bool {
		res, err := sess.CallTool(context.Background(), &gosdk.CallToolParams{Name: "chg__update_issue", Arguments: map[string]any{"owner": "o", "repo": "r", "issue_number": 1}})
		return err == nil && res.IsError
	})
	// The deny rule is in force: the tool is unknown.
	if _, err := sess.CallTool(context.Background(), &gosdk.CallToolParams{Name: "stable__create_issue", Arguments: map[string]any{}}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("denied after the reload: err %v", err)
	}

	// An invalid file is refused with file:line; v2 keeps serving.
	if err := os.WriteFile(cfg, []byte(v2+"[upstreams.bad]\ncommand = \"x\"\nbogus_key = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	syscall.Kill(proc.PID(), syscall.SIGHUP)
	waitUntil("the invalid config refused in the log", func() bool {
		return strings.Contains(proc.Output(), "reload refused") && strings.Contains(proc.Output(), cfg+":")
	})
	if n := names(); !slices.Contains(n, "added__list_issues") || slices.Contains(n, "bad__list_issues") {
		t.Errorf("after the refused reload: %v", n)
	}
	time.Sleep(300 * time.Millisecond)
	close(stop)
	wg.Wait()
	if calls.Load() <= before {
		t.Fatalf("no calls made during the reloads")
	}
	if f := failed.Load(); f != 0 {
		t.Fatalf("%d of %d calls to the unchanged upstream failed; first: %v", f, calls.Load(), firstErr.Load())
	}
	t.Logf("%d calls to the unchanged upstream during two reloads, 0 failed", calls.Load())
	if n := otherChanged.Load(); n != 0 { // after the restarted upstream switched, which notifies too
		t.Errorf("%d resources/prompts list_changed notifications after reloads, to a client told of neither", n)
	}
	i := strings.Index(proc.Output(), "reload refused")
	t.Logf("refusal logged: %s", tail(proc.Output()[i:], 400))
}

// TestReloadDrainsCallsInFlight: a reload that changes
// an upstream (call_timeout added) while a call of it is in flight lets
// the call finish on the old instance; calls after the reload reach the
// new instance. Before, the call failed at once with "connection lost
// during tools/call …: EOF".
func TestReloadDrainsCallsInFlight(t *testing.T) {
	cs, gh := catalogServer(t), catalogFile(t, "github-like.jsonl")
	v1 := fmt.Sprintf("[tool_search]\nenabled = false\n[upstreams.chg]\ncommand = %s\nargs = [\"-tools\", %s, \"-slow-tool\", \"list_issues=4s\"]\n", tomlString(cs), tomlString(gh))
	v2 := strings.Replace(v1, `"list_issues=4s"]`, `"list_issues=4s", "-is-error-tool", "update_issue"]`+"\ncall_timeout = \"20s\"", 1)
	cfg := writeConfig(t, v1)
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	proc := startHTTPServer(t, proxyCmd(t, cfg, "--transport", "http", "--listen", addr, "--log-level", "info"), nil, "http://"+addr+"/mcp")
	c := gosdk.NewClient(&gosdk.Implementation{Name: "reloader", Version: "1"}, nil)
	sess, err := c.Connect(context.Background(), &gosdk.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()

	type out struct {
		res *gosdk.CallToolResult
		err error
	}
	got := make(chan out, 1)
	go func() {
		res, err := sess.CallTool(context.Background(), &gosdk.CallToolParams{Name: "chg__list_issues", Arguments: map[string]any{"owner": "o", "repo": "r"}})
		got <- out{res, err}
	}()
	time.Sleep(500 * time.Millisecond) // let the call reach the upstream (4 s slow)
	if err := os.WriteFile(cfg, []byte(v2), 0o600); err != nil {
		t.Fatal(err)
	}
	syscall.Kill(proc.PID(), syscall.SIGHUP)
	o := <-got
	if o.err != nil || o.res == nil || o.res.IsError {
		t.Fatalf("the call in flight during the reload: %+v, %v; want its result\nproxy log:\n%s", o.res, o.err, tail(proc.Output(), 3000))
	}
	if !strings.Contains(proc.Output(), "config reloaded") || !strings.Contains(proc.Output(), "waiting for calls in flight") {
		t.Fatalf("the reload did not see the call in flight\nproxy log:\n%s", tail(proc.Output(), 3000))
	}
	// A call after the switch reaches the new instance (-is-error-tool).
	if res, err := sess.CallTool(context.Background(), &gosdk.CallToolParams{Name: "chg__update_issue", Arguments: map[string]any{"owner": "o", "repo": "r", "issue_number": 1}}); err != nil || !res.IsError {
		t.Errorf("chg__update_issue after the reload: err %v isError %v, want isError (-is-error-tool)", err, res != nil && res.IsError)
	}
}

// TestReloadRemovedUpstreamReason: after SIGHUP removes an
// upstream, a direct tools/call of one of its former tools says that its
// MCP server was removed from the configuration; before, it said "unknown
// tool" and suggested a tool of another server.
func TestReloadRemovedUpstreamReason(t *testing.T) {
	cs, gh := catalogServer(t), catalogFile(t, "github-like.jsonl")
	up := func(name string) string {
		return fmt.Sprintf("[upstreams.%s]\ncommand = %s\nargs = [\"-tools\", %s]\n", name, tomlString(cs), tomlString(gh))
	}
	v1 := "[tool_search]\nenabled = false\n" + up("keep") + up("gone")
	cfg := writeConfig(t, v1)
	cmd := proxyCmd(t, cfg)
	proc := exec.Command(cmd[0], cmd[1:]...)
	sess := gosdkConnect(t, &gosdk.CommandTransport{Command: proc})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args := map[string]any{"owner": "o", "repo": "r"}
	if res, err := sess.CallTool(ctx, &gosdk.CallToolParams{Name: "gone__list_issues", Arguments: args}); err != nil || res.IsError {
		t.Fatalf("before the reload: %v %v", res, err)
	}
	if err := os.WriteFile(cfg, []byte("[tool_search]\nenabled = false\n"+up("keep")), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(proc.Process.Pid, syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	var last error
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) { // the reload is applied in the background
		_, last = sess.CallTool(ctx, &gosdk.CallToolParams{Name: "gone__list_issues", Arguments: args})
		if last != nil && strings.Contains(last.Error(), `unknown tool "gone__list_issues": MCP server "gone", which provided this tool, was removed from the proxy's configuration (config reload)`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a call of the removed upstream's tool after the reload: %v", last)
		}
	}
	if res, err := sess.CallTool(ctx, &gosdk.CallToolParams{Name: "keep__list_issues", Arguments: args}); err != nil || res.IsError {
		t.Errorf("the kept upstream after the reload: %v %v", res, err)
	}
}
