package proxy

import (
	"strings"
	"testing"
)

// TestRateLimitedBurst: a burst of calls by one
// subject, how many passed, how many were refused, the error text with
// its retry hint, and the counts in /metrics. The bucket refills one token
// per 100 s, so the count does not depend on how fast the machine is.
func TestRateLimitedBurst(t *testing.T) {
	p, up := testProxy(t, `
[upstreams.t]
url = %[1]s
[rate_limits.per_subject]
rate = 0.01
burst = 3
`)
	cs := connect(t, p, "burst-client", nil)
	passed, refused := 0, 0
	var text string
	var meta any
	for i := 0; i < 10; i++ {
		r := callTool(t, cs, "t__echo", map[string]any{"i": i})
		if r.IsError {
			refused++
			text, meta = resultText(r), r.Meta[MetaKeyRetryAfterMs]
			continue
		}
		passed++
	}
	t.Logf("burst of 10: %d passed, %d refused; last refusal: %s (retryAfterMs %v)", passed, refused, text, meta)
	if passed != 3 || refused != 7 || up.count("echo") != 3 {
		t.Fatalf("passed %d refused %d; upstream saw %d", passed, refused, up.count("echo"))
	}
	if !strings.HasPrefix(text, `call to mcp:t:echo refused: rate limit exceeded for subject "client:burst-client@main" (rate_limits.per_subject: 0.01 calls/s, burst 3); retry after `) ||
		!strings.HasSuffix(text, `. The upstream "t" did not receive it.`) {
		t.Fatalf("text %q", text)
	}
	if ms, ok := meta.(float64); !ok || ms <= 0 || ms > 100000 {
		t.Fatalf("retry hint %v", meta)
	}
	m := metricsText(t, p)
	for _, want := range []string{`mcp_toolsearch_rate_limited_total{kind="subject"} 7`, `mcp_toolsearch_tool_calls_total{outcome="rate_limited",upstream="t"} 7`, `mcp_toolsearch_tool_calls_total{outcome="ok",upstream="t"} 3`} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %s:\n%s", want, grepLines(m, "rate_limited"))
		}
	}
}
