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
// open. Before a token change was logged as "need a restart" and
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

// TestTokenRotationByReloadOAuth: the same rotation with
// [auth] on. An endpoint whose token equals server.bearer_token has its own
// token all the same (docs/config.md [auth]: only a route without its own
// endpoint token wants a JWT): rotating only that endpoint's token must
// refuse the old value there and take the new one; rotating only the main
// token must leave such an endpoint's unchanged token working. Before, the
// endpoint was given the main token's check when the values were equal at
// start, so after the reload the main token was still taken there and the
// endpoint's new one refused. Endpoints added or removed by a reload need
// a restart (docs/config.md Reload): the routes stay as they were.
func TestTokenRotationByReloadOAuth(t *testing.T) {
	cs, gh := catalogServer(t), catalogFile(t, "github-like.jsonl")
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	base := "http://" + addr
	// The issuer is never asked: every request here carries a static token
	// (or one that is no JWT at all).
	conf := func(mainTok, carolTok, daveTok, extra string) string {
		return fmt.Sprintf(`
[server]
transport = "http"
bearer_token = %q

[auth]
public_url = %q
issuer = "http://127.0.0.1:9"

[tool_search]
enabled = false

[upstreams.gh]
command = %s
args = ["-tools", %s]

[endpoints.carol]
path = "/u/carol"
token = %q

[endpoints.bob]
path = "/u/bob"
%s`, mainTok, base, tomlString(cs), tomlString(gh), carolTok, extra) + daveTok
	}
	dave := func(tok string) string {
		return fmt.Sprintf("\n[endpoints.dave]\npath = \"/u/dave\"\ntoken = %q\n", tok)
	}
	// carol and dave start with the main token as their own.
	cfg := writeConfig(t, conf("main-token-1", "main-token-1", dave("main-token-1"), ""))
	p := startHTTPServer(t, proxyCmd(t, cfg, "--listen", addr, "--log-level", "info"), nil, base+"/mcp")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
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
	type probe struct {
		path, tok string
		want      int
	}
	check := func(when string, probes []probe) {
		t.Helper()
		for _, c := range probes {
			if got := status(c.path, c.tok); got != c.want {
				t.Errorf("%s, %s with %s: HTTP %d, want %d", when, c.path, c.tok, got, c.want)
			}
		}
	}
	check("before the rotation", []probe{
		{"/u/carol", "main-token-1", http.StatusOK},
		{"/u/dave", "main-token-1", http.StatusOK},
		{"/u/bob", "main-token-1", http.StatusOK},
		{"/mcp", "main-token-1", http.StatusOK},
	})

	// carol's token rotated alone; the main token rotated alone (dave keeps
	// the old main value as its own token, as the file says).
	if err := os.WriteFile(cfg, []byte(conf("main-token-2", "carol-token-2", dave("main-token-1"), "")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(p.PID(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitOutput(t, p, "config reloaded")
	if strings.Contains(p.Output(), "need a restart") {
		t.Fatalf("a token change needs a restart:\n%s", tail(p.Output(), 3000))
	}
	check("after the rotation", []probe{
		{"/u/carol", "main-token-1", http.StatusUnauthorized},
		{"/u/carol", "main-token-2", http.StatusUnauthorized}, // carol has a token of her own
		{"/u/carol", "carol-token-2", http.StatusOK},
		{"/u/dave", "main-token-1", http.StatusOK}, // dave's own token did not change
		{"/u/dave", "main-token-2", http.StatusUnauthorized},
		{"/u/bob", "main-token-1", http.StatusUnauthorized}, // bob has the main token
		{"/u/bob", "main-token-2", http.StatusOK},
		{"/mcp", "main-token-1", http.StatusUnauthorized},
		{"/mcp", "main-token-2", http.StatusOK},
		{"/mcp", "carol-token-2", http.StatusUnauthorized},
		{"/metrics", "main-token-1", http.StatusUnauthorized},
	})

	// dave removed, erin added: both need a restart, the routes stay.
	erin := "\n[endpoints.erin]\npath = \"/u/erin\"\ntoken = \"erin-token-1\"\n"
	if err := os.WriteFile(cfg, []byte(conf("main-token-2", "carol-token-2", "", erin)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(p.PID(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitOutput(t, p, "endpoints.dave (removed)")
	if !strings.Contains(p.Output(), "endpoints.erin (added)") {
		t.Errorf("an added endpoint is not logged as needing a restart:\n%s", tail(p.Output(), 3000))
	}
	check("after adding and removing endpoints", []probe{
		{"/u/dave", "main-token-1", http.StatusOK},
		{"/u/erin", "erin-token-1", http.StatusNotFound},
		{"/u/carol", "carol-token-2", http.StatusOK},
		{"/mcp", "main-token-2", http.StatusOK},
	})
}
