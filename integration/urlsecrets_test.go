//go:build unix

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestURLPathAndFragmentSecretsHidden: hosted MCP
// servers put their key in the url's path (…/mcp/s/sk-…/sse, …/<uuid>/…)
// or a client keeps a token in its fragment (#access_token=…). With such
// an upstream down (connection refused: Go's error quotes the url), none
// of them reaches `check`, `list`, the serve log, or what the model reads
// (instructions, tool_search's description, a search note, the answer for
// the upstream's tool); the url password was already hidden.
func TestURLPathAndFragmentSecretsHidden(t *testing.T) {
	const (
		pathKey = "sk-ak-3f9aB7c2D4e6F8g0H1i3J5k7"
		uuidKey = "7f3c2a9e-1b4d-4e8f-9a6b-2c5d8e1f0a3b"
		fragTok = "fragTok3nValue99"
		pass    = "pw12345secret"
	)
	closed := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	cfg := writeConfig(t, fmt.Sprintf(`
[tool_search]
mode = "tools"

[upstreams.github]
command = %s
args = ["-tools", %s, "-server", "github"]

[upstreams.zap]
url = "http://alice:%s@%s/api/mcp/s/%s/sse?x=1#access_token=%s"
startup_timeout = "3s"

[upstreams.pd]
url = "http://%s/%s/gmail"
startup_timeout = "3s"
`, tomlString(catalogServer(t)), tomlString(catalogFile(t, "github-like.jsonl")), pass, closed, pathKey, fragTok, closed, uuidKey))
	secrets := []string{pathKey, uuidKey, fragTok, pass}
	leaks := func(what, text string) {
		t.Helper()
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("%s shows %q:\n%s", what, s, tail(text, 2000))
			}
		}
	}
	run := func(args ...string) string { return runCLI(t, args...) }
	check := run("check", "--config", cfg)
	leaks("check", check)
	if !strings.Contains(check, "/api/mcp/s/***/sse") || !strings.Contains(check, "upstream zap") {
		t.Errorf("check lost its content:\n%s", check)
	}
	leaks("list", run("list", "--config", cfg))

	cmd := proxyCmd(t, cfg, "--startup-wait", "20s", "--log-level", "debug")
	cs, stderr := gosdkClientStdioLog(t, cmd)
	ctx, cancel := context.WithTimeout(context.Background(), goClientTimeout)
	defer cancel()
	seen := cs.InitializeResult().Instructions
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(tools)
	seen += string(b)
	for _, call := range []gosdk.CallToolParams{
		{Name: "tool_search", Arguments: map[string]any{"query": "zzqx blorf"}},
		{Name: "tool_call", Arguments: map[string]any{"id": "mcp:zap:send", "args": map[string]any{}}},
	} {
		res, err := cs.CallTool(ctx, &call)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res)
		seen += string(b)
	}
	leaks("what the model reads", seen)
	if !strings.Contains(seen, "zap") || !strings.Contains(seen, "unavailable") {
		t.Errorf("the model is not told zap is unavailable:\n%s", tail(seen, 2000))
	}
	cs.Close()
	leaks("serve log", stderr.String())
	if !strings.Contains(stderr.String(), "upstream=zap") {
		t.Errorf("serve log lost its content:\n%s", tail(stderr.String(), 2000))
	}
}
