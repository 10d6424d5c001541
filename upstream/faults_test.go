package upstream

// Issue 13: broken and hostile upstream servers. Each test runs a raw fake
// upstream (internal/fakeupstream) that produces one kind of fault.

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
	"github.com/mcp-toolsearch/mcp-toolsearch/ingest"
)

func fakeUpstream(name, scenario string) *config.Upstream {
	return stdioUpstream(name, "fake:"+scenario)
}

func diagFor(ds []ingest.Diagnostic, tool string) *ingest.Diagnostic {
	for i := range ds {
		if ds[i].Tool == tool {
			return &ds[i]
		}
	}
	return nil
}

// Item 3: each tool is checked on its own; the healthy tool always
// survives, fixable schemas are normalised, a string root is quarantined
// with a diagnostic in the status (list/check) and the log.
func TestIngestOddSchemas(t *testing.T) {
	m, rec := startManager(t, []*config.Upstream{fakeUpstream("odd", "oddschemas")}, Options{})
	st, _ := m.Status("odd")
	if st.State != StateReady {
		t.Fatalf("state %s: %s", st.State, st.Err)
	}
	got := toolNames(m.Tools("odd"))
	want := []string{"anyvalue", "draft7", "emptyschema", "healthy", "oneof"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("tools %v, want %v", got, want)
	}
	for _, tool := range m.Tools("odd") {
		var s struct {
			Type string `json:"type"`
		}
		raw, _ := tool.InputSchema.(json.RawMessage)
		if err := json.Unmarshal(raw, &s); err != nil || s.Type != "object" {
			t.Errorf("%s: inputSchema %s has no root type object", tool.Name, raw)
		}
	}
	d := diagFor(st.Diagnostics, "stringroot")
	if d == nil || d.Action != ingest.Quarantined || !strings.Contains(d.Detail, `root type is "string"`) {
		t.Fatalf("stringroot diagnostic %+v", d)
	}
	if d := diagFor(st.Diagnostics, "draft7"); d == nil || d.Action != ingest.Normalised || !strings.Contains(string(d.Original), "draft-07") {
		t.Fatalf("draft7 diagnostic %+v", d)
	}
	if !strings.Contains(rec.log.String(), "tool quarantined") || !strings.Contains(rec.log.String(), "stringroot") {
		t.Errorf("log does not name the quarantined tool:\n%s", rec.log.String())
	}
}

// Item 11: an upstream that lists zero tools is healthy: ready, with an
// empty (not nil) listing handed to OnToolsChanged.
func TestZeroToolsIsHealthy(t *testing.T) {
	var mu sync.Mutex
	var calls []string // "nil" or "n=<len>"
	rec := newRecorder()
	opts := rec.options(Options{})
	opts.OnToolsChanged = func(up string, tools []*mcp.Tool) {
		mu.Lock()
		defer mu.Unlock()
		if tools == nil {
			calls = append(calls, "nil")
		} else {
			calls = append(calls, "n="+string(rune('0'+len(tools))))
		}
	}
	m2 := NewManager([]*config.Upstream{fakeUpstream("zero", "zerotools")}, opts)
	t.Cleanup(func() { _ = m2.Close(context.Background()) })
	m2.Start(context.Background())
	if _, err := m2.CallTool(context.Background(), "zero", &mcp.CallToolParams{Name: "clear", Arguments: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the empty re-listing", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(calls) >= 2
	})
	mu.Lock()
	got := strings.Join(calls, ",")
	mu.Unlock()
	if got != "n=2,n=0" {
		t.Fatalf("OnToolsChanged calls %s, want n=2,n=0", got)
	}
	st, _ := m2.Status("zero")
	if st.State != StateReady || st.Tools != 0 {
		t.Fatalf("status %+v, want ready with 0 tools", st)
	}
}
