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
	for _, want := range []string{"auth", "rate_limits", "upstreams.gh (added, per-user credential)", "server"} {
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
	if !strings.Contains(string(b), `"kind":"reload","outcome":"applied","detail":"needs restart: auth,rate_limits,server,upstreams.gh (added, per-user credential)"`) {
		t.Fatalf("audit log:\n%s", b)
	}
}
