//go:build unix

package integration

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// gosdkSSE starts the go-sdk's SSE example (greeter1 at /greeter1, greeter2
// at /greeter2, legacy HTTP+SSE transport) and returns its base URL.
func gosdkSSE(t *testing.T) string {
	t.Helper()
	port := freePort(t)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	bin := goBinary(t, "gosdk-sse", "github.com/modelcontextprotocol/go-sdk/examples/server/sse")
	startHTTPServer(t, []string{bin, "-host", "127.0.0.1", "-port", fmt.Sprint(port)}, nil, base+"/greeter1")
	return base
}

// everythingSSE starts server-everything's legacy SSE mode (/sse, messages
// at /message) and returns its base URL.
func everythingSSE(t *testing.T) string {
	t.Helper()
	port := freePort(t)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	startHTTPServer(t, append(npmServer(t, "everything"), "sse"), []string{fmt.Sprintf("PORT=%d", port)}, base+"/sse")
	return base
}

// prefixProxy is a reverse proxy (net/http/httputil, as deployed in front
// of MCP servers) that serves target under prefix: /PREFIX/x → target/x.
// The server behind it does not know the prefix.
func prefixProxy(t *testing.T, prefix, target string) string {
	t.Helper()
	tu, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(tu)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := strings.CutPrefix(r.URL.Path, prefix)
		if !ok || !strings.HasPrefix(p, "/") {
			http.NotFound(w, r) // outside the prefix: nothing is served there
			return
		}
		r.URL.Path, r.URL.RawPath = p, ""
		rp.ServeHTTP(w, r)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String() + prefix
}

// TestBareURLLegacySSE: a url without transport (what `import` writes for
// Cursor's {"url": …}) of a legacy SSE server. Streamable HTTP is tried
// first; the go-sdk SSE example refuses its POST with 400 ("sessionid must
// be provided"), server-everything's with 404, and the proxy then speaks
// the legacy SSE transport to each: check passes, tools are listed and
// called. With transport = "streamable-http" written out, the failure
// names the fix.
func TestBareURLLegacySSE(t *testing.T) {
	waitsMostly(t)
	greeter, everything := gosdkSSE(t), everythingSSE(t)
	cfg := writeConfig(t, fmt.Sprintf(`
[upstreams.greeter]
url = %q

[upstreams.everything]
url = %q
startup_timeout = "20s"
`, greeter+"/greeter1", everything+"/sse"))
	out, err := exec.Command(buildProxy(t), "check", cfg, "--log-level", "info").CombinedOutput()
	if err != nil {
		t.Fatalf("check failed: %v\n%s", err, out)
	}
	for _, want := range []string{
		`upstream everything           ok`, `upstream greeter              ok      1 tool`,
		`speaks the legacy SSE transport: using it`, `status="HTTP 400"`, `status="HTTP 404"`,
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("check output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "failed one request") {
		t.Errorf("the refused Streamable HTTP try was logged as a failure:\n%s", out)
	}
	s := gosdkClientStdio(t, []string{buildProxy(t), "serve", "--config", cfg, "--mode", "off", "--log-level", "warn", "--startup-wait", "20s"})
	ctx := context.Background()
	res, err := s.CallTool(ctx, &gosdk.CallToolParams{Name: "greeter__greet1", Arguments: map[string]any{"name": "Ada"}})
	if err != nil || res.IsError || len(res.Content) == 0 || res.Content[0].(*gosdk.TextContent).Text != "Hi Ada" {
		t.Errorf("greeter__greet1 through the proxy: %v %+v", err, res)
	}
	res, err = s.CallTool(ctx, &gosdk.CallToolParams{Name: "everything__echo", Arguments: map[string]any{"message": "over sse"}})
	if err != nil || res.IsError || !strings.Contains(fmt.Sprint(res.Content[0].(*gosdk.TextContent).Text), "over sse") {
		t.Errorf("everything__echo through the proxy: %v %+v", err, res)
	}

	// The same server as a Cursor mcp.json entry ({"url": …}) through
	// import: the written config checks, with no warning at all.
	dir := t.TempDir()
	cursor := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(cursor, []byte(fmt.Sprintf(`{"mcpServers": {"greeter": {"url": %q}}}`, greeter+"/greeter1")), 0o600); err != nil {
		t.Fatal(err)
	}
	imported := filepath.Join(dir, "config.toml")
	if out, err := exec.Command(buildProxy(t), "import", cursor, "-o", imported).CombinedOutput(); err != nil {
		t.Fatalf("import: %v\n%s", err, out)
	}
	out, err = exec.Command(buildProxy(t), "check", imported).CombinedOutput()
	if err != nil || !strings.Contains(string(out), `upstream greeter              ok      1 tool`) || strings.Contains(string(out), "WARN") {
		t.Errorf("check of the imported Cursor entry: %v, want ok and no WARN line:\n%s", err, out)
	}

	explicit := writeConfig(t, fmt.Sprintf(`
[upstreams.greeter]
url = %q
transport = "streamable-http"
`, greeter+"/greeter1"))
	out, err = exec.Command(buildProxy(t), "check", explicit).CombinedOutput()
	if err == nil || !strings.Contains(string(out), `HTTP 400 Bad Request: sessionid must be provided (if this is a legacy SSE server, try transport = "sse"`) {
		t.Errorf("explicit streamable-http against an SSE server: %v\n%s", err, out)
	}
}

// TestSSEUpstreamBehindPathPrefix: legacy SSE servers behind a reverse
// proxy that serves them under a prefix they do not know. The go-sdk's
// handler advertises its own path (/greeter1?sessionid=…), the end of the
// configured url: the proxy derives the prefix by itself. server-everything
// advertises /message?sessionId=…: without sse_path_prefix its POSTs go
// past the prefix and fail; with it the upstream works.
func TestSSEUpstreamBehindPathPrefix(t *testing.T) {
	greeter := prefixProxy(t, "/gw", gosdkSSE(t))
	everything := prefixProxy(t, "/tools", everythingSSE(t))
	cfg := writeConfig(t, fmt.Sprintf(`
[upstreams.greeter]
url = %q

[upstreams.plain]
url = %q
transport = "sse"
startup_timeout = "10s"

[upstreams.prefixed]
url = %q
transport = "sse"
sse_path_prefix = "/tools"
startup_timeout = "20s"
`, greeter+"/greeter1", everything+"/sse", everything+"/sse"))
	out, _ := exec.Command(buildProxy(t), "check", cfg).CombinedOutput()
	for _, want := range []string{
		`upstream greeter              ok      1 tool`,
		`upstream plain                FAILED`, `set sse_path_prefix to that prefix`,
		`upstream prefixed             ok`,
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("check output lacks %q:\n%s", want, out)
		}
	}
	bad := writeConfig(t, `
[upstreams.x]
url = "http://127.0.0.1:1/sse"
transport = "streamable-http"
sse_path_prefix = "tools"
`)
	out, err := exec.Command(buildProxy(t), "check", bad).CombinedOutput()
	if err == nil || !strings.Contains(string(out), `sse_path_prefix`) || !strings.Contains(string(out), `want a path that starts with /`) || !strings.Contains(string(out), `only for the legacy SSE transport`) {
		t.Errorf("bad sse_path_prefix: %v\n%s", err, out)
	}
}

// TestFrontSSEBehindPathPrefix: the proxy's own /sse, served by a reverse
// proxy under /mcp-gw (which the proxy does not know). The endpoint event
// is relative (?sessionid=…), so the official TypeScript SDK client and
// the go-sdk client post to /mcp-gw/sse?sessionid=… and work; the go-sdk's
// absolute /sse?sessionid=… missed the prefix.
func TestFrontSSEBehindPathPrefix(t *testing.T) {
	cfg := writeConfig(t, fmt.Sprintf(`
[upstreams.github]
command = %s
args = ["-tools", %s, "-server", "github"]
`, tomlString(catalogServer(t)), tomlString(catalogFile(t, "github-like.jsonl"))))
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	startHTTPServer(t, proxyCmd(t, cfg, "--transport", "http", "--listen", addr, "--mode", "off"), nil, "http://"+addr+"/healthz")
	gw := prefixProxy(t, "/mcp-gw", "http://"+addr)

	// The event itself, as the proxy writes it.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, gw+"/sse", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	var event []string
	for sc.Scan() && sc.Text() != "" {
		event = append(event, sc.Text())
	}
	resp.Body.Close()
	if len(event) != 2 || event[0] != "event: endpoint" || !strings.HasPrefix(event[1], "data: ?sessionid=") {
		t.Errorf("endpoint event %q, want a relative ?sessionid=… reference", event)
	}

	doc := nodeClient(t, "--quiet", "--sse", gw+"/sse", "--call", "github__list_issues", "--args", `{"owner":"o","repo":"r"}`)
	if e := jpath(t, doc, "steps", 0).(map[string]any)["error"]; e != nil {
		t.Errorf("TypeScript SDK client over SSE behind /mcp-gw: %v", e)
	}
	// Not gosdkConnect: the SSE transport's GET stream lives as long as the
	// context given to Connect.
	s, err := gosdk.NewClient(&gosdk.Implementation{Name: "gosdk-test-client", Version: "0.1.0"}, nil).Connect(context.Background(), &gosdk.SSEClientTransport{Endpoint: gw + "/sse"}, nil)
	if err != nil {
		t.Fatalf("go-sdk client over SSE behind /mcp-gw: connect: %v", err)
	}
	defer s.Close()
	if _, err := s.CallTool(context.Background(), &gosdk.CallToolParams{Name: "github__list_issues", Arguments: map[string]any{"owner": "o", "repo": "r"}}); err != nil {
		t.Errorf("go-sdk client over SSE behind /mcp-gw: %v", err)
	}
}
