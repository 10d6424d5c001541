package proxy

// What the identity features add to the call path, measured without the
// upstream call (which dwarfs it): the call span, the traced policy step,
// the rate-limit step and the audit/span end, for a session without a
// verified user.
//
//	go test ./proxy -run XXX -bench CallPathIdentity -benchmem
//
// "baseline" is the policy decision alone (what the path did before);
// "off" is every identity step with traces, limits and audit off (the
// default); the others turn one piece on. Figures: docs/performance.md
// "Identity features on the call path".

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"golang.org/x/oauth2"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
	"github.com/mcp-toolsearch/mcp-toolsearch/config"
	"github.com/mcp-toolsearch/mcp-toolsearch/credentials"
	"github.com/mcp-toolsearch/mcp-toolsearch/identity"
	"github.com/mcp-toolsearch/mcp-toolsearch/internal/testredis"
	"github.com/mcp-toolsearch/mcp-toolsearch/statestore"
	"github.com/mcp-toolsearch/mcp-toolsearch/tracing"
)

func benchIdentityProxy(b *testing.B, extra string, opts Options) (*Proxy, *session, *catalog.Entry) {
	b.Helper()
	text := "[upstreams.gh]\ncommand = \"true\"\n" + extra
	cfg, err := config.Parse([]byte(text), filepath.Join(b.TempDir(), "config.toml"), func(string) (string, bool) { return "", false })
	if err != nil {
		b.Fatal(err)
	}
	opts.Logger = slog.New(slog.DiscardHandler)
	p, err := New(cfg, opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { p.closeIdentity(context.Background()) })
	p.catalog().SetTools("gh", []*catalog.Entry{{Name: "list_issues", Description: "List issues", InputSchema: json.RawMessage(`{"type":"object"}`)}})
	e := p.catalog().Snapshot().ByExposed("gh__list_issues")
	if e == nil {
		b.Fatal("no entry")
	}
	return p, &session{p: p, client: "bench"}, e
}

func BenchmarkCallPathIdentity(b *testing.B) {
	args := json.RawMessage(`{"owner":"octo","repo":"hello"}`)
	run := func(b *testing.B, p *Proxy, s *session, e *catalog.Entry) {
		ctx := context.Background()
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			cctx, span := p.startCallSpan(ctx, s, e, "direct")
			d := p.decideTraced(cctx, s, e)
			if !d.Allowed {
				b.Fatal("denied")
			}
			if r := p.rateLimited(cctx, s, e); r != nil {
				b.Fatal("limited")
			}
			p.callDone(cctx, span, s, e, "direct", args, "ok", 1.5, nil)
		}
	}
	b.Run("baseline", func(b *testing.B) {
		_, s, e := benchIdentityProxy(b, "", Options{})
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if !s.decide(e).Allowed {
				b.Fatal("denied")
			}
		}
	})
	b.Run("off", func(b *testing.B) {
		p, s, e := benchIdentityProxy(b, "", Options{})
		run(b, p, s, e)
	})
	b.Run("traces", func(b *testing.B) {
		p, s, e := benchIdentityProxy(b, "", Options{Tracing: &tracing.Config{Exporter: tracetest.NewNoopExporter(), SampleRatio: 1}})
		run(b, p, s, e)
	})
	b.Run("limits", func(b *testing.B) {
		p, s, e := benchIdentityProxy(b, "[rate_limits.per_subject]\nrate = 1e9\nburst = 1000000\n[rate_limits.per_upstream.\"*\"]\nrate = 1e9\nburst = 1000000\n", Options{})
		run(b, p, s, e)
	})
	b.Run("audit", func(b *testing.B) {
		p, s, e := benchIdentityProxy(b, fmt.Sprintf("[audit]\nfile = %q\n", filepath.Join(b.TempDir(), "audit.jsonl")), Options{})
		run(b, p, s, e)
	})
}

// BenchmarkCallPathStateStore is what a shared state store adds to a
// call: its rate-limit step (per-subject and per-upstream buckets) and the
// per-user token lookup of an upstream with credential source "oauth",
// with the state in this process ("memory": buckets in memory, the token
// file) and in a redis-server on loopback ("redis": one GCRA script and
// one GET per call). Needs redis-server (scripts/install-test-deps.sh).
//
//	go test ./proxy -run XXX -bench CallPathStateStore -benchmem -count 6
func BenchmarkCallPathStateStore(b *testing.B) {
	key := "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
	base := `[upstreams.gh]
url = "http://127.0.0.1:9/mcp"
[upstreams.gh.credential]
source = "oauth"
audience = "http://127.0.0.1:9/mcp"
authorize_url = "http://127.0.0.1:9/authorize"
token_url = "http://127.0.0.1:9/token"
client_id = "proxy"
[auth]
issuer = "http://127.0.0.1:9"
public_url = "http://127.0.0.1:8080"
token_store_key = %q
%s
[rate_limits.per_subject]
rate = 1e9
burst = 1000000
[rate_limits.per_upstream."*"]
rate = 1e9
burst = 1000000
[server]
transport = "http"
%s
`
	tok := &oauth2.Token{AccessToken: "at-" + strings.Repeat("x", 600), RefreshToken: "rt", Expiry: time.Now().Add(time.Hour)}
	start := func(b *testing.B, text string) (*Proxy, *session, *catalog.Entry) {
		cfg, err := config.Parse([]byte(text), filepath.Join(b.TempDir(), "config.toml"), func(string) (string, bool) { return "", false })
		if err != nil {
			b.Fatal(err)
		}
		p, err := New(cfg, Options{Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { p.closeIdentity(context.Background()) })
		p.catalog().SetTools("gh", []*catalog.Entry{{Name: "list_issues", InputSchema: json.RawMessage(`{"type":"object"}`)}})
		return p, &session{p: p, client: "bench", fixedID: &identity.Identity{Subject: "alice"}}, p.catalog().Snapshot().ByExposed("gh__list_issues")
	}
	run := func(b *testing.B, p *Proxy, s *session, e *catalog.Entry) {
		ctx := context.Background()
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if r := p.rateLimited(ctx, s, e); r != nil {
				b.Fatal(resultText(r))
			}
			if h, err := p.idn.creds.Authorization(ctx, "gh", s.ident()); err != nil || h != "Bearer "+tok.AccessToken {
				b.Fatal(h, err)
			}
		}
	}
	b.Run("memory", func(b *testing.B) {
		file := filepath.Join(b.TempDir(), "tokens.json")
		st, _ := credentials.OpenStore(file, []byte("0123456789abcdef0123456789abcdef"))
		if err := st.Put(context.Background(), "gh", "alice", tok); err != nil {
			b.Fatal(err)
		}
		p, s, e := start(b, fmt.Sprintf(base, key, fmt.Sprintf("token_store = %q", file), ""))
		run(b, p, s, e)
	})
	b.Run("redis", func(b *testing.B) {
		srv := testredis.Start(b, testredis.Options{})
		kv, err := statestore.OpenRedis(statestore.RedisOptions{URL: srv.URL()})
		if err != nil {
			b.Fatal(err)
		}
		defer kv.Close()
		st, _ := credentials.NewSharedStore(kv, []byte("0123456789abcdef0123456789abcdef"))
		if err := st.Put(context.Background(), "gh", "alice", tok); err != nil {
			b.Fatal(err)
		}
		p, s, e := start(b, fmt.Sprintf(base, key, "", fmt.Sprintf("state_store = %q\nstate_store_key = %q", srv.URL(), key)))
		run(b, p, s, e)
	})
}
