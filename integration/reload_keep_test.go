//go:build unix

package integration

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestReloadKeepsOldInstanceWhenNewFails: a reload
// that changes a working upstream's command to a typo keeps its old
// instance serving — its tools stay listed and calls work — instead of
// switching to the failed new one (before: its tools vanished and calls
// got "unknown tool" for every client). The log names the upstream and
// the start failure; /healthz lists it under "reload_not_applied" and
// /metrics has mcp_toolsearch_upstream_reload_not_applied{upstream} 1.
// The same reload adds a working and a broken upstream: both appear in
// /metrics (upstream_up 1 and 0, catalog_tools) — before, upstreams added
// by a reload never did. The next reload tries the change again;
// restoring the file clears the mark.
func TestReloadKeepsOldInstanceWhenNewFails(t *testing.T) {
	cs, gh := catalogServer(t), catalogFile(t, "github-like.jsonl")
	up := func(name, command string) string {
		return fmt.Sprintf("[upstreams.%s]\ncommand = %s\nargs = [\"-tools\", %s]\n", name, tomlString(command), tomlString(gh))
	}
	head := "[tool_search]\nenabled = false\n"
	v1 := head + up("gh", cs)
	v2 := head + up("gh", cs+"-typo") + up("added", cs) + "[upstreams.broken]\ncommand = \"/nonexistent/server-bin\"\n"
	v3 := head + up("gh", cs) + up("added", cs) + "[upstreams.broken]\ncommand = \"/nonexistent/server-bin\"\n"
	cfg := writeConfig(t, v1)
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	proc := startHTTPServer(t, proxyCmd(t, cfg, "--transport", "http", "--listen", addr, "--log-level", "info"), nil, "http://"+addr+"/mcp")
	sess, err := gosdk.NewClient(&gosdk.Implementation{Name: "keeper", Version: "1"}, nil).
		Connect(context.Background(), &gosdk.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	get := func(path string) string {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(60 * time.Second); !cond(); time.Sleep(100 * time.Millisecond) {
			if time.Now().After(deadline) { // fail-safe bound
				t.Fatalf("never: %s\n/healthz: %s\nproxy log:\n%s", what, get("/healthz"), tail(proc.Output(), 3000))
			}
		}
	}
	call := func() error {
		res, err := sess.CallTool(context.Background(), &gosdk.CallToolParams{Name: "gh__list_issues", Arguments: map[string]any{"owner": "o", "repo": "r"}})
		if err == nil && res.IsError {
			err = fmt.Errorf("isError: %v", res.Content)
		}
		return err
	}
	waitFor("listening", func() bool { return strings.Contains(proc.Output(), "msg=listening") })
	if err := call(); err != nil {
		t.Fatalf("before the reload: %v", err)
	}

	if err := os.WriteFile(cfg, []byte(v2), 0o600); err != nil {
		t.Fatal(err)
	}
	syscall.Kill(proc.PID(), syscall.SIGHUP)
	waitFor("the failed start logged", func() bool {
		return strings.Contains(proc.Output(), "its old instance keeps serving") && strings.Contains(proc.Output(), "upstream=gh")
	})
	lt, err := sess.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range lt.Tools {
		names = append(names, tl.Name)
	}
	if !slices.Contains(names, "gh__list_issues") {
		t.Errorf("tools/list after the failed restart lacks gh__list_issues: %v", names)
	}
	if err := call(); err != nil {
		t.Errorf("gh__list_issues after the failed restart: %v", err)
	}
	if h := get("/healthz"); !strings.Contains(h, `"gh":"ready"`) || !strings.Contains(h, `"reload_not_applied":["gh"]`) {
		t.Errorf("/healthz: %s", h)
	}
	series := func(m string) []string {
		return regexp.MustCompile(`(?m)^mcp_toolsearch_(upstream_up|catalog_tools|upstream_reload_not_applied)\{.*$`).FindAllString(m, -1)
	}
	waitFor("the added upstreams in /metrics", func() bool {
		m := get("/metrics")
		return strings.Contains(m, `mcp_toolsearch_upstream_up{upstream="added"} 1`) &&
			strings.Contains(m, `mcp_toolsearch_upstream_up{upstream="broken"} 0`) &&
			regexp.MustCompile(`mcp_toolsearch_catalog_tools\{trust="untrusted",upstream="added"\} [1-9]`).MatchString(m)
	})
	m := get("/metrics")
	for _, want := range []string{`mcp_toolsearch_upstream_up{upstream="gh"} 1`, `mcp_toolsearch_upstream_reload_not_applied{upstream="gh"} 1`} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %s:\n%s", want, strings.Join(series(m), "\n"))
		}
	}
	t.Logf("after the reload with a typo:\n%s\n%s", get("/healthz"), strings.Join(series(m), "\n"))

	// The next reload (same file) tries the change again, and keeps the
	// old instance again.
	syscall.Kill(proc.PID(), syscall.SIGHUP)
	waitFor("the change tried again", func() bool { return strings.Count(proc.Output(), "its old instance keeps serving") == 2 })
	if err := call(); err != nil {
		t.Errorf("gh__list_issues after the second failed restart: %v", err)
	}
	if h := get("/healthz"); !strings.Contains(h, `"reload_not_applied":["gh"]`) {
		t.Errorf("/healthz after the second failed restart: %s", h)
	}

	// The file fixed: the mark goes, gh still serves.
	if err := os.WriteFile(cfg, []byte(v3), 0o600); err != nil {
		t.Fatal(err)
	}
	syscall.Kill(proc.PID(), syscall.SIGHUP)
	waitFor("the mark cleared", func() bool {
		return !strings.Contains(get("/healthz"), "reload_not_applied") && !strings.Contains(get("/metrics"), "upstream_reload_not_applied{")
	})
	if err := call(); err != nil {
		t.Errorf("gh__list_issues after the file was fixed: %v", err)
	}
}
