package proxy

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
)

// TestReloadAuditedAndIdentityKept: a reload is an audit line; [rate_limits]
// and [audit] changes wait for a restart, and an upstream added with a
// per-user credential source is not served with its static headers.
func TestReloadAuditedAndIdentityKept(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "audit.jsonl")
	base := fmt.Sprintf("[audit]\nfile = %q\n[upstreams.t]\nurl = %%[1]s\n", log)
	p, up := testProxy(t, base)
	text := fmt.Sprintf(base, tomlQuote(up.URL)) + `
[rate_limits.per_subject]
rate = 1.0
[upstreams.gh]
url = "http://127.0.0.1:9/mcp"
[upstreams.gh.credential]
source = "passthrough"
audience = "http://127.0.0.1:9/mcp"
[server]
transport = "http"
[auth]
issuer = "http://127.0.0.1:9"
public_url = "http://127.0.0.1:8080"
`
	next, err := config.Parse([]byte(text), filepath.Join(dir, "config.toml"), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	rep, err := p.Reload(context.Background(), next)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(rep.NeedsRestart, " ")
	for _, want := range []string{"auth", "rate_limits", "upstreams.gh (added, per-user credential)", "server.transport"} {
		if !strings.Contains(got, want) {
			t.Errorf("NeedsRestart %q lacks %q", got, want)
		}
	}
	if _, ok := p.ups.Status("gh"); ok {
		t.Fatal("gh started without its per-user credential source")
	}
	if p.idn.limiter != nil {
		t.Fatal("rate limits applied without a restart")
	}
	b, _ := os.ReadFile(log)
	if !strings.Contains(string(b), `"kind":"reload","outcome":"applied","detail":"needs restart: auth,rate_limits,server.transport,upstreams.gh (added, per-user credential)"`) {
		t.Fatalf("audit log:\n%s", b)
	}
}

// TestReloadNamesRestartKeys: a reload that changes server.listen and
// rotates server.bearer_token names only the key it could not apply, and
// the token rotates.
func TestReloadNamesRestartKeys(t *testing.T) {
	base := "[server]\ntransport = \"http\"\nlisten = \"127.0.0.1:8080\"\nbearer_token = %[2]q\n[upstreams.t]\nurl = %[1]s\n"
	up := startTestUpstream(t)
	p := startProxyText(t, fmt.Sprintf(base, tomlQuote(up.URL), "old-token"))
	text := strings.Replace(fmt.Sprintf(base, tomlQuote(up.URL), "new-token"), "127.0.0.1:8080", "127.0.0.1:8081", 1)
	next, err := config.Parse([]byte(text), filepath.Join(t.TempDir(), "config.toml"), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	rep, err := p.Reload(context.Background(), next)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(rep.NeedsRestart, ","); got != "server.listen" {
		t.Errorf("NeedsRestart = %q, want server.listen", got)
	}
	if got := p.conf().Server; got.Listen != "127.0.0.1:8080" || got.BearerToken != "new-token" {
		t.Errorf("after the reload: listen %q, token %q; want the old listen and the new token", got.Listen, got.BearerToken)
	}
}
