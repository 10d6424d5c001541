package proxy

// What issue 18 adds to the call path, measured without the upstream call
// (which dwarfs it): the call span, the traced policy step, the rate-limit
// step and the audit/span end, for a session without a verified user.
//
//	go test ./proxy -run XXX -bench CallPathIdentity -benchmem
//
// "baseline" is the policy decision alone (what the path did before);
// "off" is every issue 18 step with traces, limits and audit off (the
// default); the others turn one piece on. Figures: docs/figures.md.

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
	"github.com/mcp-toolsearch/mcp-toolsearch/config"
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
