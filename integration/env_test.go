//go:build unix

package integration

// The environment of stdio upstreams, read back through
// server-everything's get-env tool, the way a model could.

import (
	"fmt"
	"strings"
	"testing"
)

// TestSecretStaysWithItsUpstream: a secret in one upstream's env is not in
// another upstream's environment, nor is a secret of the proxy's own
// environment; inherit_env = true restores the whole environment for the
// upstream that sets it.
func TestSecretStaysWithItsUpstream(t *testing.T) {
	waitsMostly(t)
	cmd := npmServer(t, "everything")
	const mine, proxyOwn = "upstream-a-secret-4711", "proxy-env-secret-0815"
	cfg := writeConfig(t, fmt.Sprintf(`
[tool_search]
enabled = false
[upstreams.a]
command = %[1]s
args = [%[2]s]
env = { API_TOKEN = %[3]q }
[upstreams.b]
command = %[1]s
args = [%[2]s]
[upstreams.c]
command = %[1]s
args = [%[2]s]
inherit_env = true
`, tomlString(cmd[0]), tomlString(cmd[1]), mine))
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	startHTTPServer(t, proxyCmd(t, cfg, "--transport", "http", "--listen", addr), []string{"PROXY_DEPLOY_TOKEN=" + proxyOwn}, "http://"+addr+"/mcp")
	cs := gosdkClientHTTP(t, "http://"+addr+"/mcp", nil)
	envOf := func(up string) string {
		res := callGo(t, cs, up+"__get-env", map[string]any{})
		var sb strings.Builder
		for _, c := range res.Content {
			sb.WriteString(fmt.Sprint(c))
		}
		return sb.String()
	}
	a, b, c := envOf("a"), envOf("b"), envOf("c")
	if !strings.Contains(a, mine) || strings.Contains(a, proxyOwn) {
		t.Errorf("a's environment: want its own API_TOKEN and not the proxy's token:\n%s", a)
	}
	if strings.Contains(b, mine) || strings.Contains(b, proxyOwn) || !strings.Contains(b, `"PATH"`) {
		t.Errorf("b's environment holds another upstream's or the proxy's secret (or lacks PATH):\n%s", b)
	}
	if strings.Contains(c, mine) || !strings.Contains(c, proxyOwn) {
		t.Errorf("c (inherit_env) should see the proxy's environment and not a's env:\n%s", c)
	}
	t.Logf("b's environment (default, minimal):\n%s", b)
}
