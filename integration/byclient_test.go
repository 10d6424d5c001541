//go:build unix

package integration

// by_client only narrows: a client that claims
// clientInfo.name = "trusted-agent" on the main endpoint gets what the main
// endpoint's token grants (nothing here), not the 5 tools a
// [tools.by_client."trusted-agent"] table names; the same 5 tools are
// granted by an endpoint with its own token. `check` warns about the rule.

import (
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"testing"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestByClientCannotWiden(t *testing.T) {
	cfg := writeConfig(t, fmt.Sprintf(`
[server]
bearer_token = "main-token-1234"

[tool_search]
enabled = false

[tools]
profile = "minimal" # no direct-only tools here: the main endpoint grants nothing

[tools.by_client."trusted-agent"]
profile = "full"

[endpoints.trusted]
path = "/trusted/mcp"
token = "trusted-token-5678"
[endpoints.trusted.tools]
profile = "full"

[upstreams.gh]
command = %s
args = ["-tools", %s, "-limit", "5"]
`, tomlString(catalogServer(t)), tomlString(catalogFile(t, "github-like.jsonl"))))
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	startHTTPServer(t, proxyCmd(t, cfg, "--transport", "http", "--listen", addr), nil, "http://"+addr+"/mcp")
	tools := func(path, name, token string) int {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), goClientTimeout)
		defer cancel()
		c := gosdk.NewClient(&gosdk.Implementation{Name: name, Version: "1"}, nil)
		cs, err := c.Connect(ctx, &gosdk.StreamableClientTransport{Endpoint: "http://" + addr + path,
			HTTPClient: &http.Client{Transport: headerRoundTripper{map[string]string{"Authorization": "Bearer " + token}}}}, nil)
		if err != nil {
			t.Fatalf("connect %s as %q: %v", path, name, err)
		}
		defer cs.Close()
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		return len(res.Tools)
	}
	if n := tools("/mcp", "trusted-agent", "main-token-1234"); n != 0 {
		t.Errorf("a client claiming clientInfo.name \"trusted-agent\" on the main endpoint sees %d tools, want 0 (what the main endpoint grants)", n)
	}
	if n := tools("/mcp", "some-client", "main-token-1234"); n != 0 {
		t.Errorf("another client sees %d tools, want 0", n)
	}
	if n := tools("/trusted/mcp", "trusted-agent", "trusted-token-5678"); n != 5 {
		t.Errorf("the endpoint with its own token grants %d tools, want 5", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), nodeClientTimeout)
	defer cancel()
	out, _ := exec.CommandContext(ctx, buildProxy(t), "check", "--config", cfg).CombinedOutput()
	if !strings.Contains(string(out), `tools.by_client.\"trusted-agent\" would allow 5 tool(s) that the main endpoint does not`) &&
		!strings.Contains(string(out), `tools.by_client."trusted-agent" would allow 5 tool(s) that the main endpoint does not`) {
		t.Errorf("check does not warn about the widening by_client rule:\n%s", out)
	}
}
