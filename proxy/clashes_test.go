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

// TestNameClashWithinOneUpstreamIsNote: one upstream lists "Upload" and
// "upload" (the default config's registry does). Both are renamed with a
// hash, but no prefix or other setting changes that: it is a note (check's
// "note:", the log at info, once), not a warning, and a clash between two
// upstreams in the same catalog is still a warning.
func TestNameClashWithinOneUpstreamIsNote(t *testing.T) {
	serve := func(tools string) string {
		hs := httptest.NewServer(&fakeupstream.HTTP{Scenario: &fakeupstream.Scenario{Tools: func() string { return tools }}})
		t.Cleanup(hs.Close)
		return hs.URL
	}
	reg := serve(`[{"name":"Upload","inputSchema":{"type":"object"}},{"name":"upload","inputSchema":{"type":"object"}},{"name":"echo","inputSchema":{"type":"object"}}]`)
	beta := serve(`[{"name":"reg__echo","inputSchema":{"type":"object"}}]`)
	logs := &syncBuffer{}
	conf := fmt.Sprintf("[tool_search]\nenabled = false\n[upstreams.reg]\nurl = %s\n[upstreams.beta]\nurl = %s\nprefix = \"\"\n", tomlQuote(reg), tomlQuote(beta))
	p := startProxyIn(t, t.TempDir(), conf, nil, Options{Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	notes := p.NameClashNotes()
	if len(notes) != 1 {
		t.Fatalf("NameClashNotes = %q, want one", notes)
	}
	for _, want := range []string{`upstream "reg" lists tools whose names differ only in case`, "mcp:reg:Upload, mcp:reg:upload", `"reg__Upload_`, `"reg__upload_`} {
		if !strings.Contains(notes[0], want) {
			t.Errorf("note %q lacks %q", notes[0], want)
		}
	}
	warns := p.NameClashes()
	if len(warns) != 1 || !strings.Contains(warns[0], `upstreams "beta" and "reg" both want`) && !strings.Contains(warns[0], `upstreams "reg" and "beta" both want`) {
		t.Fatalf("NameClashes = %q, want only the clash between reg and beta", warns)
	}
	p.warnToolRefs() // a later listing: not logged again
	var infos, warnings int
	for _, line := range strings.Split(logs.String(), "\n") {
		switch {
		case strings.Contains(line, `"level":"INFO"`) && strings.Contains(line, "exposed-name clash within one upstream"):
			infos++
		case strings.Contains(line, `"level":"WARN"`) && strings.Contains(line, "exposed-name clash"):
			warnings++
			if strings.Contains(line, "Upload") {
				t.Errorf("the clash within one upstream logged as a warning: %s", line)
			}
		}
	}
	if infos != 1 || warnings != 1 {
		t.Errorf("%d info and %d warning clash lines in the log, want 1 and 1:\n%s", infos, warnings, logs.String())
	}
}
