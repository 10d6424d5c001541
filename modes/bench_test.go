package modes

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
)

// latencies collects per-operation wall times and reports p50/p99 in ms.
type latencies []time.Duration

func (l latencies) report(b *testing.B) {
	if len(l) == 0 {
		return
	}
	s := slices.Clone(l)
	slices.Sort(s)
	q := func(p float64) float64 {
		return float64(s[min(len(s)-1, int(p*float64(len(s))))].Microseconds()) / 1000
	}
	b.ReportMetric(q(0.50), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
}

// BenchmarkCodeVsTools: one search and one call, as one tool_search_code run
// (pool warm, workers = this test binary) and as tool_search + tool_call, on
// the 1,013-tool catalog of newTestEnv with an in-process echo upstream. The
// difference of the p50 figures is code mode's added latency (target: at
// most 5 ms). Run with -benchtime=200x or more for a stable p99.
func BenchmarkCodeVsTools(b *testing.B) {
	env := newTestEnv(b)
	ctx := context.Background()
	const body = `const hits = await openclaw.tools.search("create a GitHub issue", {limit: 3});
return await openclaw.tools.call(hits[0].id, {owner: "o", repo: "r", title: "Crash on start"});`
	b.Run("tools", func(b *testing.B) {
		s := &Tools{API: testAPI()}
		var lat latencies
		for b.Loop() {
			start := time.Now()
			r, err := s.Call(ctx, env, ToolSearch, json.RawMessage(`{"query":"create a GitHub issue","limit":3}`))
			if err != nil || r.IsError {
				b.Fatal(err, r)
			}
			var sr struct{ Hits []catalog.Hit }
			json.Unmarshal(mustMarshal(r.StructuredContent), &sr)
			r, err = s.Call(ctx, env, ToolCall, mustMarshal(map[string]any{"id": sr.Hits[0].ID, "args": map[string]any{"owner": "o", "repo": "r", "title": "Crash on start"}}))
			if err != nil || r.IsError {
				b.Fatal(err, r)
			}
			lat = append(lat, time.Since(start))
		}
		lat.report(b)
	})
	b.Run("code", func(b *testing.B) {
		c := newTestCode(b, 2)
		a := mustMarshal(map[string]any{"code": body})
		var lat latencies
		for b.Loop() {
			start := time.Now()
			r, err := c.Call(ctx, env, ToolSearchCode, a)
			if err != nil || r.IsError {
				b.Fatal(err, resultText(b, r))
			}
			lat = append(lat, time.Since(start))
			// Let the pool refill as between two model turns: a run
			// never pays a worker start-up then.
			time.Sleep(15 * time.Millisecond)
		}
		lat.report(b)
	})
}

// hostileEnv is a catalog with one trusted upstream serving a 1 MB schema
// (huge), a depth-200 schema (deep) and a plain tool.
func hostileEnv(t testing.TB) *testEnv {
	t.Helper()
	cat := catalog.New("__", Reserved, []catalog.UpstreamInfo{{Name: "hostile", Prefix: "hostile", Trusted: true}})
	cat.SetTools("hostile", hostileEntries())
	return &testEnv{cat: cat, deny: map[string]bool{}}
}

func hostileEntries() []*catalog.Entry {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i := 0; b.Len() < 1<<20; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"field_%05d":{"type":"string","description":"padding text padding text padding text %d"}`, i, i)
	}
	b.WriteString(`}}`)
	deep := `{"type":"string"}`
	for i := 0; i < 200; i++ {
		deep = fmt.Sprintf(`{"type":"object","properties":{"level%d":%s}}`, 199-i, deep)
	}
	return []*catalog.Entry{
		{Name: "huge", Description: "A tool whose input schema is one megabyte", InputSchema: json.RawMessage(b.String())},
		{Name: "deep", Description: "A tool whose input schema nests two hundred levels deep", InputSchema: json.RawMessage(deep)},
		{Name: "plain", Description: "An ordinary tool", InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)},
	}
}

// BenchmarkHostileSchemas: the cost of a trusted upstream's 1 MB and
// depth-200 schemas: indexing them (SetTools), a search returning both
// hits (signature rendering included) and describe.
func BenchmarkHostileSchemas(b *testing.B) {
	es := hostileEntries()
	b.Run("index", func(b *testing.B) {
		for b.Loop() {
			cat := catalog.New("__", Reserved, []catalog.UpstreamInfo{{Name: "hostile", Prefix: "hostile", Trusted: true}})
			cat.SetTools("hostile", es)
		}
	})
	env := hostileEnv(b)
	api := testAPI()
	b.Run("search", func(b *testing.B) {
		for b.Loop() {
			if h, _ := api.Search(env, "schema tool", 3, ViaTool); len(h) < 2 {
				b.Fatal(h)
			}
		}
	})
	b.Run("describe", func(b *testing.B) {
		for b.Loop() {
			for _, id := range []string{"mcp:hostile:huge", "mcp:hostile:deep"} {
				if _, err := api.Describe(env, id, ViaTool); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
