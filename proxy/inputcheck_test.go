package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// loggedProxy is testProxy with the proxy's log kept in a buffer.
func loggedProxy(t *testing.T, base string) (*Proxy, *testUpstream, *syncBuffer) {
	t.Helper()
	up := startTestUpstream(t)
	logs := &syncBuffer{}
	p := startProxyIn(t, t.TempDir(), fmt.Sprintf(base, tomlQuote(up.URL)), nil, Options{Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	return p, up, logs
}

// Arguments are validated against the inputSchema in the
// one call path, before the upstream sees anything; the error names the
// field, what was expected and the part of the schema.
func TestInputValidationToolsMode(t *testing.T) {
	p, up, logs := loggedProxy(t, `
[tool_search]
enabled = true
mode = "tools"
[upstreams.up]
url = %[1]s
[upstreams.off]
url = %[1]s
validate_input = false
`)
	cs := connect(t, p, "unit-input", nil)
	for _, c := range []struct {
		name, id string
		args     any
		want     string // "" = reaches the upstream
	}{
		{"missing required", "mcp:up:write", map[string]any{"path": "/tmp/a"},
			`tool_call mcp:up:write: arguments of mcp:up:write do not match its inputSchema, so the call was not made: /content: missing required property "content"; schema: {"properties":{"content":{"type":"string"},"path":{"description":"file to write","type":"string"}},"required":["path","content"]}`},
		{"wrong type", "mcp:up:write", map[string]any{"path": 3, "content": "x"},
			`/path: expected a string, got 3; schema: {"description":"file to write","type":"string"}`},
		{"enum", "mcp:up:write", map[string]any{"path": "a", "content": "x", "mode": "replace"},
			`/mode: expected one of ["overwrite","append"], got "replace"`},
		{"unexpected property", "mcp:up:write", map[string]any{"path": "a", "content": "x", "force": true},
			`/force: unexpected property "force" (allowed: "content", "mode", "path")`},
		{"valid", "mcp:up:write", map[string]any{"path": "a", "content": "x"}, ""},
		{"draft-04 exclusiveMinimum", "mcp:up:old_write", map[string]any{"path": "a", "size": 0}, `/size: expected exclusiveMinimum 0, got 0`},
		{"draft-04 valid", "mcp:up:old_write", map[string]any{"path": "a", "size": 1}, ""},
		{"draft-03 does not compile: not validated", "mcp:up:draft03", map[string]any{"path": 1}, ""},
		{"validate_input = false", "mcp:off:write", map[string]any{}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			tool := c.id[strings.LastIndex(c.id, ":")+1:]
			before := up.count(tool)
			r := callTool(t, cs, "tool_call", map[string]any{"id": c.id, "args": c.args})
			reached := up.count(tool) - before
			if c.want == "" {
				if r.IsError || reached != 1 {
					t.Fatalf("want the call to reach the upstream; isError=%v reached=%d: %s", r.IsError, reached, resultText(r))
				}
				return
			}
			if !r.IsError || !strings.Contains(resultText(r), c.want) {
				t.Errorf("got isError=%v\n  %s\nwant\n  %s", r.IsError, resultText(r), c.want)
			}
			if reached != 0 {
				t.Errorf("the upstream saw %d calls", reached)
			}
		})
	}
	// The draft-03 schema is warned about once, however many calls.
	callTool(t, cs, "tool_call", map[string]any{"id": "mcp:up:draft03", "args": map[string]any{}})
	if n := strings.Count(logs.String(), "inputSchema does not compile"); n != 1 {
		t.Errorf("%d warnings about the draft-03 inputSchema, want 1:\n%s", n, logs.String())
	}
}

// In direct mode validation is off unless validate_input = true; then a
// bad call is an isError result (a tool execution error), not a JSON-RPC
// error.
func TestInputValidationDirectMode(t *testing.T) {
	p, up := testProxy(t, `
[upstreams.up]
url = %[1]s
[upstreams.strict]
url = %[1]s
validate_input = true
`)
	cs := connect(t, p, "unit-input-direct", nil)
	before := up.count("write")
	if r := callTool(t, cs, "up__write", map[string]any{}); r.IsError || up.count("write") != before+1 {
		t.Errorf("direct mode, default: want the call forwarded, got isError=%v %s", r.IsError, resultText(r))
	}
	r := callTool(t, cs, "strict__write", map[string]any{"path": "a"})
	if !r.IsError || !strings.Contains(resultText(r), `arguments of mcp:strict:write do not match its inputSchema, so the call was not made: /content: missing required property "content"`) {
		t.Errorf("validate_input = true in direct mode: isError=%v %s", r.IsError, resultText(r))
	}
	if up.count("write") != before+1 {
		t.Errorf("the invalid call reached the upstream")
	}
}

// Code mode warns at start when a run cannot outlive one
// upstream call.
func TestCodeBudgetWarning(t *testing.T) {
	parse := func(text string) *config.Config {
		cfg, err := config.Parse([]byte(text), "c.toml", func(string) (string, bool) { return "", false })
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	w := codeBudgetWarning(parse("[tool_search]\nmode = \"code\"\n[upstreams.a]\ncommand = \"x\"\n[upstreams.b]\ncommand = \"x\"\ncall_timeout = \"5s\"\n"))
	if !strings.Contains(w, "tool_search.code_timeout_ms (10s)") || !strings.Contains(w, "a (55s)") || strings.Contains(w, "b (") {
		t.Errorf("warning = %q; want upstream a (default 55 s call_timeout) named, not b (5 s)", w)
	}
	if w := codeBudgetWarning(parse("[tool_search]\nmode = \"code\"\ncode_timeout_ms = 60000\n[upstreams.a]\ncommand = \"x\"\n")); w != "" {
		t.Errorf("run budget = call budget: warning %q", w)
	}
}

// Denied attempts, answered as unknown tools, are in the
// session log (outcome "denied" with the rule, the client's name and the
// session id on the line) and in a debug line of the proxy's log.
func TestDeniedAttemptsLogged(t *testing.T) {
	logFile := filepath.Join(t.TempDir(), "session.jsonl")
	p, up, logs := loggedProxy(t, `
[tool_search]
mode = "tools"
[tools]
deny = ["up__delete_thing"]
[telemetry]
session_log = `+tomlQuote(logFile)+`
[upstreams.up]
url = %[1]s
`)
	cs := connect(t, p, "denied-client", nil)
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"tool_call", map[string]any{"id": "mcp:up:delete_thing"}},
		{"tool_describe", map[string]any{"id": "up__delete_thing"}},
		{"tool_call", map[string]any{"id": "mcp:up:no_such_tool"}}, // unknown: not a denied attempt
	} {
		if r := callTool(t, cs, c.tool, c.args); !r.IsError || !strings.Contains(resultText(r), "unknown tool") {
			t.Fatalf("%s %v: %s", c.tool, c.args, resultText(r))
		}
	}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "up__delete_thing", Arguments: map[string]any{}}); err == nil || !strings.Contains(err.Error(), `unknown tool "up__delete_thing"`) || strings.Contains(err.Error(), "tool_call") {
		t.Fatalf("direct call of the denied name: %v (want the plain unknown-tool answer)", err)
	}
	if up.count("delete_thing") != 0 {
		t.Fatal("a denied call reached the upstream")
	}
	_ = cs.Close()
	_ = p.Close(context.Background())
	var denied []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(must(os.ReadFile(logFile)))), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		if m["client"] != "denied-client" || m["session"] == "" {
			t.Errorf("a session log line without the client's name and the session id: %s", l)
		}
		if m["outcome"] == "denied" {
			denied = append(denied, m)
		}
	}
	if len(denied) != 3 {
		t.Fatalf("%d denied records, want 3 (tool_call, tool_describe, direct tools/call)", len(denied))
	}
	for _, m := range denied {
		if m["id"] != "mcp:up:delete_thing" || m["rule"] != `denied by tools.deny "up__delete_thing"` {
			t.Errorf("denied record %v", m)
		}
	}
	if n := strings.Count(logs.String(), `msg=denied id=mcp:up:delete_thing`); n != 3 || !strings.Contains(logs.String(), "client=denied-client") {
		t.Errorf("%d debug lines about the denied attempts, want 3 naming the client:\n%s", n, logs.String())
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
