package proxy

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/fakeupstream"
)

// TestNoCacheHintsBeforeModern: answers to clients of
// protocols before 2026-07-28 carried "ttlMs": 0 and "cacheScope": ""
// (go-sdk v1.8.0's Cacheable has no omitempty), members those protocols do
// not have. A raw Streamable HTTP client at 2025-06-18 and at 2025-11-25
// lists tools (plain and with an extra member), resources, templates and
// prompts and reads a resource through the proxy in front of a real go-sdk
// server: no answer has either member, and each still has its content.
func TestNoCacheHintsBeforeModern(t *testing.T) {
	tasks := httptest.NewServer(&fakeupstream.HTTP{Scenario: fakeupstream.Named("tasks")}) // a tool with "execution": the rawToolsList answer
	t.Cleanup(tasks.Close)
	conf := fmt.Sprintf("[server]\ntransport = \"http\"\n[tool_search]\nenabled = false\n[upstreams.docs]\nurl = %s\n[upstreams.tasks]\nurl = %s\n", tomlQuote(featureUpstream(t, "docs")), tomlQuote(tasks.URL))
	url := frontURL(t, startProxyText(t, conf))
	for _, version := range []string{"2025-06-18", "2025-11-25"} {
		c := &rawClient{t: t, url: url, version: version}
		if res := c.initialize("old-client"); res["error"] != nil {
			t.Fatalf("%s initialize: %v", version, res)
		}
		for _, q := range []struct {
			method string
			params map[string]any
			holds  string // a member the answer must still have
		}{
			{"tools/list", nil, "tools"},
			{"resources/list", nil, "resources"},
			{"resources/templates/list", nil, "resourceTemplates"},
			{"prompts/list", nil, "prompts"},
			{"resources/read", map[string]any{"uri": "docs://own"}, "contents"},
		} {
			var params any
			if q.params != nil {
				params = q.params
			}
			res := c.call(q.method, params)
			r, ok := res["result"].(map[string]any)
			if !ok {
				t.Fatalf("%s %s: %v", version, q.method, res)
			}
			for _, k := range []string{"ttlMs", "cacheScope"} {
				if v, ok := r[k]; ok {
					t.Errorf("%s %s: answer has %q: %v (no such member before 2026-07-28)", version, q.method, k, v)
				}
			}
			if _, ok := r[q.holds]; !ok {
				t.Errorf("%s %s: answer lost %q: %v", version, q.method, q.holds, r)
			}
			if q.method == "tools/list" && !strings.Contains(fmt.Sprint(r["tools"]), "taskSupport") {
				t.Errorf("%s tools/list lost the extra member execution: %v", version, r["tools"])
			}
			if q.method == "resources/read" && !strings.Contains(fmt.Sprint(r["contents"]), "docs") {
				t.Errorf("%s resources/read: contents %v", version, r["contents"])
			}
		}
	}
}
