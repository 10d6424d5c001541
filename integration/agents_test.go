//go:build unix

package integration

// Real agent clients end to end: Claude Code, Codex and Gemini CLI (the
// versions pinned in package.json) start the proxy over stdio from the
// entry `mcp-toolsearch init --client NAME` prints, and talk to a scripted
// model (internal/fakemodel) on loopback instead of their vendor's API: no
// key, and no network (every other connection a client tries goes to a
// recording proxy that refuses it). The model searches with tool_search,
// describes the write_file hit and calls it with tool_call; the test reads
// what the client sent the model: the proxy's tools, loaded (not deferred)
// and with the proxy's descriptions, the call's result coming back, and
// the file the reference filesystem server wrote.
//
//	go test ./integration -run TestAgent -v
//
// MCP_TOOLSEARCH_AGENT_OUT=DIR keeps every request body each client sent
// the model in DIR/<test name>.json.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/fakemodel"
)

// agentTimeout bounds one client run (a loaded 2-core machine starts
// Gemini CLI in up to ~20 s).
const agentTimeout = 2 * time.Minute

// agentSetup is one client's run: the proxy config, the folder the
// filesystem upstream may write, the scripted model and the egress
// recorder on loopback.
type agentSetup struct {
	client  string
	dir     string // the client's home and working folders live here
	cfg     string // the proxy's config
	file    string // the file the model has written
	content string
	model   *fakemodel.Server
	egress  *fakemodel.Egress
	api     string // the model API's base URL
	proxy   string // the egress proxy's URL
	bin     string // the proxy binary
}

func newAgentSetup(t *testing.T, client string) *agentSetup {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		missingDep(t, "node (>= 20) is not on PATH")
	}
	fs := npmServer(t, "filesystem")
	a := &agentSetup{client: client, dir: t.TempDir(), bin: buildProxy(t), egress: &fakemodel.Egress{}}
	files := filepath.Join(a.dir, "files")
	if err := os.MkdirAll(files, 0o755); err != nil {
		t.Fatal(err)
	}
	a.file, a.content = filepath.Join(files, "hello.txt"), "hello from "+client
	a.cfg = writeConfig(t, fmt.Sprintf(`
[tool_search]
enabled = true
mode = "tools"

[upstreams.filesystem]
command = %s
args = [%s, %s]
roots = false
`, tomlString(node), tomlString(fs[1]), tomlString(files)))
	a.model = &fakemodel.Server{Script: fakemodel.SearchDescribeCall("write text to a file", "write_file", map[string]any{"path": a.file, "content": a.content})}
	ms := httptest.NewServer(a.model)
	es := httptest.NewServer(a.egress)
	t.Cleanup(ms.Close)
	t.Cleanup(es.Close)
	a.api, a.proxy = ms.URL, es.URL
	return a
}

// snippet is what `init --client` prints for this setup's config.
func (a *agentSetup) snippet(t *testing.T) []byte {
	t.Helper()
	cmd := exec.Command(a.bin, "init", "--client", a.client, "-o", a.cfg, "--command", a.bin)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("init --client %s: %v", a.client, err)
	}
	return out
}

// env is a minimal environment for a client: node on PATH, its own home,
// every connection but loopback through the refusing egress proxy.
func (a *agentSetup) env(home string, extra ...string) []string {
	node, _ := exec.LookPath("node")
	env := []string{
		"PATH=" + filepath.Dir(node) + ":/usr/local/bin:/usr/bin:/bin",
		"HOME=" + home,
		"TERM=dumb",
		"HTTPS_PROXY=" + a.proxy, "HTTP_PROXY=" + a.proxy, "https_proxy=" + a.proxy, "http_proxy=" + a.proxy,
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost",
	}
	return append(env, extra...)
}

// run runs the client and fails the test unless it exits 0.
func (a *agentSetup) run(t *testing.T, dir string, env []string, argv ...string) (stdout string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), agentTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	cmd.WaitDelay = 5 * time.Second
	var out, errb lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	t.Logf("%s ran %s, %d model requests", a.client, time.Since(start).Round(10*time.Millisecond), len(a.model.Requests()))
	if err != nil {
		t.Fatalf("%s: %v (after %s)\nstdout:\n%s\nstderr:\n%s", a.client, err, time.Since(start).Round(time.Millisecond), tail(out.String(), 3000), tail(errb.String(), 3000))
	}
	return out.String()
}

// proxyTools lists the proxy's own tools and their descriptions as the
// proxy gives them to a client (go-sdk client, the same config).
func (a *agentSetup) proxyTools(t *testing.T) map[string]string {
	t.Helper()
	cs := gosdkClientStdio(t, proxyCmd(t, a.cfg))
	defer cs.Close()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, tl := range res.Tools {
		out[tl.Name] = tl.Description
	}
	return out
}

// check asserts the run: what the client offered the model, the model's
// search, describe and call, the call's effect and its result's way back,
// and that the client tried no other connection.
func (a *agentSetup) check(t *testing.T) {
	t.Helper()
	reqs := a.model.Requests()
	if dir := os.Getenv("MCP_TOOLSEARCH_AGENT_OUT"); dir != "" {
		b, _ := json.MarshalIndent(reqs, "", "  ")
		if err := os.WriteFile(filepath.Join(dir, strings.ReplaceAll(t.Name(), "/", "_")+".json"), b, 0o644); err != nil {
			t.Error(err)
		}
	}
	want := a.proxyTools(t)
	var turns []*fakemodel.Request // the requests that offered the proxy's tools
	for _, r := range reqs {
		for _, tl := range r.Tools {
			if strings.HasSuffix(tl.Name, "tool_search") {
				turns = append(turns, r)
				break
			}
		}
	}
	if len(turns) == 0 {
		var offered []string
		for _, r := range reqs {
			for _, tl := range r.Tools {
				offered = append(offered, tl.Name)
			}
			offered = append(offered, "|")
		}
		t.Fatalf("%s never offered the model the proxy's tools (%d requests; tools offered: %v)", a.client, len(reqs), offered)
	}
	first := turns[0]
	for _, own := range []string{"tool_search", "tool_describe", "tool_call"} {
		var got *fakemodel.Tool
		for i := range first.Tools {
			if strings.HasSuffix(first.Tools[i].Name, own) {
				got = &first.Tools[i]
			}
		}
		switch {
		case got == nil:
			t.Errorf("%s: %s not offered in the first turn", a.client, own)
		case got.Deferred:
			t.Errorf("%s: %s offered deferred (defer_loading), not loaded", a.client, got.Name)
		case own == "tool_search":
			// Its catalog summary names the upstream, ready or still starting.
			if prefix := strings.SplitAfter(want[own], ".")[0]; !strings.HasPrefix(got.Description, prefix) || !strings.Contains(got.Description, "filesystem") {
				t.Errorf("%s: %s description %q, want the proxy's (%q)", a.client, got.Name, got.Description, want[own])
			}
		case got.Description != want[own]:
			t.Errorf("%s: %s description %q, want the proxy's %q", a.client, got.Name, got.Description, want[own])
		}
	}
	// The model's turns, in order: search, describe, call, the answer.
	var seq []string
	for _, r := range turns {
		name := r.Reply.Tool
		if name == "" {
			name = "text"
		}
		seq = append(seq, name[strings.LastIndex(name, "_tool_")+1:])
	}
	last := turns[len(turns)-1]
	if got := strings.Join(seq, ","); got != "tool_search,tool_describe,tool_call,text" {
		t.Fatalf("%s: the model's turns were %s, want tool_search,tool_describe,tool_call,text; its last answer: %.600s", a.client, got, last.Reply.Text)
	}
	// The call reached the upstream, and its result went back to the model.
	if b, err := os.ReadFile(a.file); err != nil || string(b) != a.content {
		t.Errorf("%s: %s holds %q (%v), want %q", a.client, a.file, b, err, a.content)
	}
	if len(last.Results) < 3 || !strings.Contains(last.Results[2].Text, "Successfully wrote to "+a.file) {
		t.Errorf("%s: the call's result did not come back to the model: %+v", a.client, last.Results)
	}
	if !strings.HasPrefix(last.Reply.Text, "DONE: ") {
		t.Errorf("%s: the model's answer: %.600s", a.client, last.Reply.Text)
	}
	if hosts := a.egress.Hosts(); len(hosts) > 0 {
		t.Errorf("%s tried to reach the network: %v (set the client's setting that turns that off)", a.client, hosts)
	}
}

// claudeCodeBin is the native Claude Code binary of the pinned npm
// package (its postinstall, which npm ci --ignore-scripts skips, would
// copy it over bin/claude.exe).
func claudeCodeBin(t *testing.T) string {
	t.Helper()
	plat := map[string]string{"linux/amd64": "linux-x64", "linux/arm64": "linux-arm64", "darwin/amd64": "darwin-x64", "darwin/arm64": "darwin-arm64"}[runtime.GOOS+"/"+runtime.GOARCH]
	p := filepath.Join(integrationDir(t), "node_modules", "@anthropic-ai", "claude-code-"+plat, "claude")
	if _, err := os.Stat(p); plat == "" || err != nil {
		missingDep(t, "Claude Code (npm @anthropic-ai/claude-code) is not installed in integration/node_modules; run scripts/install-test-deps.sh")
	}
	return p
}

// TestAgentClaudeCode: Claude Code with its own tool search on
// (ENABLE_TOOL_SEARCH=true: it defers MCP tools and sends the model only
// their names) loads the proxy's tools: the entry from init --client sets
// the server's alwaysLoad; without it, the tools' own
// _meta["anthropic/alwaysLoad"] does.
func TestAgentClaudeCode(t *testing.T) {
	waitsMostly(t)
	bin := claudeCodeBin(t)
	for _, tc := range []struct {
		name  string
		entry func(a *agentSetup) []byte
		env   []string
	}{
		{"init-entry", func(a *agentSetup) []byte { return a.snippet(t) }, nil},
		// No alwaysLoad on the server: only the tools' _meta keeps them
		// loaded. -p mode connects such a server in the background, so
		// MCP_CONNECTION_NONBLOCKING=false has it connect before the
		// first turn, as an interactive session does before its first prompt.
		{"tool-meta", func(a *agentSetup) []byte {
			b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"toolsearch": map[string]any{"command": a.bin, "args": []string{"serve", "--config", a.cfg}}}})
			return b
		}, []string{"MCP_CONNECTION_NONBLOCKING=false"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAgentSetup(t, "claude-code")
			home, work := filepath.Join(a.dir, "home"), filepath.Join(a.dir, "work")
			for _, d := range []string{home, work} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			mcp := filepath.Join(a.dir, "mcp.json")
			if err := os.WriteFile(mcp, tc.entry(a), 0o644); err != nil {
				t.Fatal(err)
			}
			env := a.env(home, append([]string{
				"ANTHROPIC_BASE_URL=" + a.api, "ANTHROPIC_API_KEY=sk-ant-test",
				"ENABLE_TOOL_SEARCH=true",
				"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1", "DISABLE_AUTOUPDATER=1",
			}, tc.env...)...)
			a.run(t, work, env, bin, "-p", "Write hello into a file.", "--mcp-config", mcp, "--strict-mcp-config",
				"--allowedTools", "mcp__toolsearch__*", "--output-format", "json")
			a.check(t)
		})
	}
}

// TestAgentCodex: Codex CLI through a custom model provider (the
// OpenAI Responses API on loopback), the proxy's [mcp_servers] table
// from init --client. Codex groups a server's tools in a namespace
// (mcp__toolsearch) whose description is the proxy's instructions.
func TestAgentCodex(t *testing.T) {
	waitsMostly(t)
	requireNode(t)
	js := filepath.Join(integrationDir(t), "node_modules", "@openai", "codex", "bin", "codex.js")
	if _, err := os.Stat(js); err != nil {
		missingDep(t, "Codex (npm @openai/codex) is not installed in integration/node_modules; run scripts/install-test-deps.sh")
	}
	a := newAgentSetup(t, "codex")
	home, codexHome, work := filepath.Join(a.dir, "home"), filepath.Join(a.dir, "codex"), filepath.Join(a.dir, "work")
	for _, d := range []string{home, codexHome, work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The test's own settings first (top-level keys must precede the
	// tables), then the entry, then its approvals: `exec` cannot ask, and
	// tool_call (not read-only) would need an approval.
	cfg := fmt.Sprintf(`model = "fake-model"
model_provider = "fake"
approval_policy = "never"
check_for_update_on_startup = false

[analytics]
enabled = false

[features]
plugins = false
remote_plugin = false
apps = false
tool_suggest = false

[model_providers.fake]
name = "fake"
base_url = %s
wire_api = "responses"

%sdefault_tools_approval_mode = "approve"
`, tomlString(a.api+"/v1"), a.snippet(t))
	var check map[string]any
	if _, err := toml.Decode(cfg, &check); err != nil {
		t.Fatalf("codex config: %v\n%s", err, cfg)
	}
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	node, _ := exec.LookPath("node")
	a.run(t, work, a.env(home, "CODEX_HOME="+codexHome), node, js, "exec", "--skip-git-repo-check", "Write hello into a file.")
	a.check(t)
	// The namespace's description is the proxy's instructions.
	var body struct {
		Tools []struct {
			Type, Name, Description string
		}
	}
	_ = json.Unmarshal(a.model.Requests()[0].Body, &body)
	found := false
	for _, tl := range body.Tools {
		if tl.Type == "namespace" && tl.Name == "mcp__toolsearch" {
			found = strings.HasPrefix(tl.Description, "This server fronts a catalog of ")
		}
	}
	if !found {
		t.Errorf("codex: no namespace mcp__toolsearch described by the proxy's instructions in %.2000s", a.model.Requests()[0].Body)
	}
}

// TestAgentGemini: Gemini CLI with GOOGLE_GEMINI_BASE_URL at the Gemini
// API on loopback and the entry from init --client in its user settings
// (folder trust off: the test's folder is new).
func TestAgentGemini(t *testing.T) {
	waitsMostly(t)
	requireNode(t)
	js := filepath.Join(integrationDir(t), "node_modules", "@google", "gemini-cli", "bundle", "gemini.js")
	if _, err := os.Stat(js); err != nil {
		missingDep(t, "Gemini CLI (npm @google/gemini-cli) is not installed in integration/node_modules; run scripts/install-test-deps.sh")
	}
	a := newAgentSetup(t, "gemini-cli")
	home, work := filepath.Join(a.dir, "home"), filepath.Join(a.dir, "work")
	for _, d := range []string{filepath.Join(home, ".gemini"), work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var settings map[string]any
	if err := json.Unmarshal(a.snippet(t), &settings); err != nil {
		t.Fatal(err)
	}
	settings["security"] = map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}, "folderTrust": map[string]any{"enabled": false}}
	settings["privacy"] = map[string]any{"usageStatisticsEnabled": false}
	settings["general"] = map[string]any{"disableAutoUpdate": true, "disableUpdateNag": true}
	b, _ := json.MarshalIndent(settings, "", "  ")
	if err := os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	node, _ := exec.LookPath("node")
	a.run(t, work, a.env(home, "GEMINI_API_KEY=test-key", "GOOGLE_GEMINI_BASE_URL="+a.api),
		node, js, "-p", "Write hello into a file.", "--approval-mode", "yolo")
	a.check(t)
}
