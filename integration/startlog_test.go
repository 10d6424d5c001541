//go:build unix

package integration

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// waitOutput polls p's output until it contains want (fail-safe bound
// readyTimeout; not a timed assertion: the line either comes or the test
// fails with the output).
func waitOutput(t *testing.T, p *Proc, want string) {
	t.Helper()
	deadline := time.Now().Add(readyTimeout)
	for !strings.Contains(p.Output(), want) {
		if ok, err := p.Exited(); ok {
			t.Fatalf("the proxy exited (%v) before logging %q:\n%s", err, want, tail(p.Output(), 4000))
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the proxy's log after %v:\n%s", want, readyTimeout, tail(p.Output(), 4000))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A default-config start (`serve --config
// config.toml --transport http`) logs no roots failure. config.toml sets
// `roots = false` on the filesystem upstream, so server-filesystem is told
// the client has no roots, says it keeps its command-line folder, and
// asks nothing (before: "Failed to request initial roots from client: MCP
// error -32601" at every start). Run at debug level so that every stderr
// line of every upstream is in the output.
func TestDefaultStartLogsNoRootsFailure(t *testing.T) {
	waitsMostly(t)
	cfg := defaultConfig(t)
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	p := startHTTPServer(t, []string{buildProxy(t), "serve", "--config", cfg, "--transport", "http", "--listen", addr, "--log-level", "debug"}, nil, "http://"+addr+"/mcp")
	waitOutput(t, p, "Client does not support MCP Roots, using allowed directories set from server args")
	waitOutput(t, p, "msg=ready")
	out := p.Output()
	for _, bad := range []string{"Failed to request initial roots", "upstream=filesystem method=roots/list"} {
		if strings.Contains(out, bad) {
			t.Errorf("the start logs %q:\n%s", bad, tail(out, 6000))
		}
	}
}

// Over stdio nothing reaches the client
// before its initialize answer, even when the catalog changed while the
// client had not sent initialize yet. server-everything adds tools after
// initialized and sends notifications/tools/list_changed, which makes the
// proxy re-list ("tools re-listed"); only then does this client send
// initialize, and the first line on the proxy's stdout must be its answer.
func TestStdioNoListChangedBeforeInitialize(t *testing.T) {
	ev := npmServer(t, "everything")
	cfg := writeConfig(t, fmt.Sprintf(`
[tool_search]
enabled = true
mode = "tools"

[upstreams.everything]
command = %s
args = [%s]
`, tomlString(ev[0]), quoteArgs(ev[1:])))
	cmd := exec.Command(buildProxy(t), "serve", "--config", cfg, "--log-level", "info")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	errBuf := &lockedBuffer{}
	cmd.Stderr = errBuf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &Proc{Cmd: cmd, output: errBuf, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	t.Cleanup(p.Stop)
	lines := make(chan string, 64)
	go func() {
		r := bufio.NewReader(stdout)
		for {
			l, err := r.ReadString('\n')
			if l != "" {
				lines <- l
			}
			if err != nil {
				close(lines)
				return
			}
		}
	}()
	// The catalog changed after the proxy was serving stdio and before
	// this client's initialize.
	waitOutput(t, p, "msg=\"tools re-listed\" upstream=everything")
	waitOutput(t, p, "msg=ready")
	time.Sleep(300 * time.Millisecond) // the go-sdk sends list_changed 10 ms after a change
	write := func(s string) {
		t.Helper()
		if _, err := io.WriteString(stdin, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	var first map[string]any
	select {
	case l, ok := <-lines:
		if !ok {
			t.Fatalf("stdout closed before the initialize answer:\n%s", tail(p.Output(), 4000))
		}
		if err := json.Unmarshal([]byte(l), &first); err != nil {
			t.Fatalf("first stdout line is not JSON: %q", l)
		}
		if first["id"] != float64(1) || first["result"] == nil {
			t.Fatalf("first message on stdout is not the initialize answer: %s", l)
		}
	case <-time.After(readyTimeout):
		t.Fatalf("no answer to initialize:\n%s", tail(p.Output(), 4000))
	}
	write(`{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`)
	write(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("stdout closed before the tools/list answer")
			}
			var m map[string]any
			_ = json.Unmarshal([]byte(l), &m)
			if m["id"] == float64(2) {
				if m["result"] == nil {
					t.Fatalf("tools/list: %s", l)
				}
				return
			}
		case <-time.After(readyTimeout):
			t.Fatal("no answer to tools/list")
		}
	}
}

// `roots = false`: the upstream is initialized without
// the roots capability, on a shared and on a per-client session, although
// the client has roots: server-everything then does not register
// get-roots-list (it does only for clients with roots) and never asks
// roots/list.
func TestRootsFalseOffersNoRoots(t *testing.T) {
	waitsMostly(t)
	steps := scriptArg(t,
		map[string]any{"op": "sleep", "ms": 1500}, // server-everything adds its conditional tools after initialized
		map[string]any{"op": "list"},
		map[string]any{"op": "call", "name": "echo", "args": map[string]any{"message": "hi"}},
	)
	for _, session := range []string{"shared", "per-client"} {
		t.Run(session, func(t *testing.T) {
			cfg := everythingTransparent(t, session)
			b, err := os.ReadFile(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(cfg, append(b, "roots = false\n"...), 0o644); err != nil {
				t.Fatal(err)
			}
			doc := nodeClient(t, append([]string{"--quiet", "--caps", "all", "--script", steps, "--"}, proxyCmd(t, cfg)...)...)
			names := toolNames(t, jpath(t, doc, "steps", 1, "result", "tools").([]any))
			if slices.Contains(names, "get-roots-list") || !slices.Contains(names, "trigger-sampling-request") {
				t.Errorf("tools = %v: want sampling's tool but not get-roots-list", names)
			}
			for _, r := range jpath(t, doc, "serverRequests").([]any) {
				if jpath(t, r, "method") == "roots/list" {
					t.Errorf("the client was asked roots/list through an upstream with roots = false")
				}
			}
		})
	}
}
