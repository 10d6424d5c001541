//go:build unix

package integration

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestTokenRotationByReload: a team deployment gives each user an endpoint
// with its own token (docs/policy.md). A token leaks; the admin writes a
// new one into the config and reloads (SIGHUP). From the reload on, the old
// token must be refused — by new clients and inside a session opened with
// it — and the new one taken, on the user's endpoint and on /mcp
// (server.bearer_token), with no restart: the other users' sessions stay
// open. Before (trial r9) a token change was logged as "need a restart" and
// the leaked token kept working until the proxy was restarted, which ended
// every client session.
func TestTokenRotationByReload(t *testing.T) {
	cs, gh := catalogServer(t), catalogFile(t, "github-like.jsonl")
	conf := func(mainTok, aliceTok string) string {
		return fmt.Sprintf(`
[server]
transport = "http"
bearer_token = %q

[tool_search]
enabled = false

[upstreams.gh]
command = %s
args = ["-tools", %s]

[endpoints.alice]
path = "/u/alice"
token = %q

[endpoints.bob]
path = "/u/bob"
`, mainTok, tomlString(cs), tomlString(gh), aliceTok)
	}
	cfg := writeConfig(t, conf("main-token-1", "alice-token-1"))
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	p := startHTTPServer(t, proxyCmd(t, cfg, "--listen", addr, "--log-level", "info"), nil, "http://"+addr+"/mcp")
	base := "http://" + addr

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	call := func(c *gosdk.ClientSession) error {
		_, err := c.ListTools(ctx, nil)
		return err
	}
	aliceOld := gosdkClientHTTP(t, base+"/u/alice", map[string]string{"Authorization": "Bearer alice-token-1"})
	bob := gosdkClientHTTP(t, base+"/u/bob", map[string]string{"Authorization": "Bearer main-token-1"})
	for _, c := range []*gosdk.ClientSession{aliceOld, bob} {
		if err := call(c); err != nil {
			t.Fatalf("before the rotation: %v", err)
		}
	}

	if err := os.WriteFile(cfg, []byte(conf("main-token-2", "alice-token-2")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(p.PID(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitOutput(t, p, "config reloaded")
	if strings.Contains(p.Output(), "need a restart") {
		t.Fatalf("a token change still needs a restart:\n%s", tail(p.Output(), 3000))
	}

	status := func(path, tok string) int {
		req, _ := http.NewRequestWithContext(ctx, "POST", base+path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, c := range []struct {
		path, tok string
		want      int
	}{
		{"/u/alice", "alice-token-1", http.StatusUnauthorized},
		{"/u/alice", "alice-token-2", http.StatusOK},
		{"/mcp", "main-token-1", http.StatusUnauthorized},
		{"/mcp", "main-token-2", http.StatusOK},
		{"/u/bob", "main-token-1", http.StatusUnauthorized}, // bob's endpoint has the main token
		{"/u/bob", "main-token-2", http.StatusOK},
		{"/metrics", "main-token-1", http.StatusUnauthorized},
	} {
		if got := status(c.path, c.tok); got != c.want {
			t.Errorf("after the rotation, %s with %s: HTTP %d, want %d", c.path, c.tok, got, c.want)
		}
	}
	// The session opened with the leaked token is refused from now on.
	if err := call(aliceOld); err == nil {
		t.Error("a session opened with the old token still works after the rotation")
	}
	// A client that switched to the new token keeps working without a restart.
	if err := call(gosdkClientHTTP(t, base+"/u/alice", map[string]string{"Authorization": "Bearer alice-token-2"})); err != nil {
		t.Fatalf("the new token: %v", err)
	}
}
