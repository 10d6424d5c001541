package proxy

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/testauth"
	"github.com/mcp-toolsearch/mcp-toolsearch/sandbox"
	"github.com/mcp-toolsearch/mcp-toolsearch/tracing"
)

// TestMain routes the sandbox worker role to sandbox.WorkerMain, so the
// test binary itself is code mode's worker (as the real binary is).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "sandbox-worker" {
		os.Exit(sandbox.WorkerMain())
	}
	os.Exit(m.Run())
}

// proxyWith starts a proxy from config text with opts.
func proxyWith(t *testing.T, text string, opts Options) *Proxy {
	t.Helper()
	opts.Logger = nil // testLogger
	return startProxyIn(t, t.TempDir(), text, nil, opts)
}

// spanTree renders spans as an indented tree (children in start order),
// roots first; a span whose parent is not among spans shows its remote
// parent's span id.
func spanTree(spans tracetest.SpanStubs) string {
	byParent := map[string][]tracetest.SpanStub{}
	ids := map[string]bool{}
	for _, s := range spans {
		ids[s.SpanContext.SpanID().String()] = true
	}
	for _, s := range spans {
		p := s.Parent.SpanID().String()
		if !ids[p] {
			p = "root"
		}
		byParent[p] = append(byParent[p], s)
	}
	var b strings.Builder
	var walk func(parent string, depth int)
	walk = func(parent string, depth int) {
		kids := byParent[parent]
		sort.SliceStable(kids, func(i, j int) bool { return kids[i].StartTime.Before(kids[j].StartTime) })
		for _, s := range kids {
			fmt.Fprintf(&b, "%s%s\n", strings.Repeat("  ", depth), s.Name)
			walk(s.SpanContext.SpanID().String(), depth+1)
		}
	}
	walk("root", 0)
	return b.String()
}

// TestSpanTreeCodeRun: the span tree of one
// code-mode run with two bridge calls, joined to the client's trace (its
// traceparent in _meta), with trace context passed on to the HTTP
// upstream (header and params._meta).
func TestSpanTreeCodeRun(t *testing.T) {
	as := testauth.New()
	t.Cleanup(as.Close)
	up := testauth.NewUpstream(as, "svc-token")
	t.Cleanup(up.Close) // after the proxy's Close (cleanups run last-in first-out)
	exp := tracetest.NewInMemoryExporter()
	p := proxyWith(t, fmt.Sprintf(`
[tool_search]
enabled = true
mode = "code"
[upstreams.t]
url = %q
headers = { Authorization = "Bearer svc-token" }
`, up.URL), Options{Tracing: &tracing.Config{Exporter: exp, Sync: true, SampleRatio: 1}})
	cs := connect(t, p, "tracer-client", nil)
	const clientTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	code := `const a = await openclaw.tools.call("mcp:t:echo", {text: "one"});
const b = await openclaw.tools.call("mcp:t:echo", {text: "two"});
return [a, b];`
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "tool_search_code", Arguments: map[string]any{"code": code},
		Meta: mcp.Meta{"traceparent": "00-" + clientTrace + "-00f067aa0ba902b7-01"}})
	if err != nil || res.IsError {
		t.Fatalf("run: %v %s", err, resultText(res))
	}
	var spans tracetest.SpanStubs
	for _, s := range exp.GetSpans() {
		if s.SpanContext.TraceID().String() == clientTrace {
			spans = append(spans, s)
		}
	}
	tree := spanTree(spans)
	t.Logf("span tree:\n%s", tree)
	want := `tools/call tool_search_code
  sandbox run
    bridge call
      call mcp:t:echo
        policy
        upstream tools/call
    bridge call
      call mcp:t:echo
        policy
        upstream tools/call
`
	if tree != want {
		t.Fatalf("span tree:\n%s\nwant:\n%s", tree, want)
	}
	var upstreamSpans []sdktrace.ReadOnlySpan
	for _, s := range spans.Snapshots() {
		if s.Name() == "upstream tools/call" {
			upstreamSpans = append(upstreamSpans, s)
		}
	}
	calls := up.Calls()
	if len(calls) != 2 || len(upstreamSpans) != 2 {
		t.Fatalf("calls %v", calls)
	}
	for i, c := range calls {
		want := "00-" + clientTrace + "-" + upstreamSpans[i].SpanContext().SpanID().String() + "-01"
		if c.Traceparent != want || c.MetaParent != want {
			t.Fatalf("upstream call %d: header %q, _meta %q, want %q", i, c.Traceparent, c.MetaParent, want)
		}
	}
}
