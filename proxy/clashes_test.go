package proxy

import (
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/fakeupstream"
)

// TestNameClashWarned: an upstream with prefix "" lists "alpha__echo",
// the name upstream alpha's "echo" has; both are renamed with a hash, and
// the log (once) and NameClashes (what `check` prints) name both
// upstreams, both ids and the names they got.
func TestNameClashWarned(t *testing.T) {
	serve := func(tools string) string {
		hs := httptest.NewServer(&fakeupstream.HTTP{Scenario: &fakeupstream.Scenario{Tools: func() string { return tools }}})
		t.Cleanup(hs.Close)
		return hs.URL
	}
	alpha := serve(`[{"name":"echo","inputSchema":{"type":"object"}}]`)
	beta := serve(`[{"name":"alpha__echo","inputSchema":{"type":"object"}},{"name":"other","inputSchema":{"type":"object"}}]`)
	logs := &syncBuffer{}
	conf := fmt.Sprintf("[tool_search]\nenabled = false\n[upstreams.alpha]\nurl = %s\n[upstreams.beta]\nurl = %s\nprefix = \"\"\n", tomlQuote(alpha), tomlQuote(beta))
	p := startProxyIn(t, t.TempDir(), conf, nil, Options{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	clashes := p.NameClashes()
	if len(clashes) != 1 {
		t.Fatalf("NameClashes = %q, want one", clashes)
	}
	for _, want := range []string{`upstreams "alpha" and "beta" both want the exposed name "alpha__echo"`, "mcp:alpha:echo", "mcp:beta:alpha__echo", `"alpha__echo_`, "another prefix"} {
		if !strings.Contains(clashes[0], want) {
			t.Errorf("clash %q lacks %q", clashes[0], want)
		}
	}
	p.warnToolRefs() // a later listing: not logged again
	if n := strings.Count(logs.String(), "exposed-name clash"); n != 1 {
		t.Errorf("%d clash warnings in the log, want 1:\n%s", n, logs.String())
	}
}
