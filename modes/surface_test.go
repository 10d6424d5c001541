package modes

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
)

// The "direct" row of MeasureSurfaces is the baseline without the proxy:
// the tools as their upstreams sent them (their own _meta, no search
// hint), under their exposed names. The proxy's direct mode, with its hints, is the
// "direct+hints" row, and the ratios divide by the baseline.
func TestMeasureSurfacesDirectBaseline(t *testing.T) {
	env := newTestEnv(t)
	env.cat.SetTools("memory", []*catalog.Entry{
		{Name: "read_graph", Description: "Read the entire knowledge graph"},
		{Name: "search_nodes", Description: "Search for nodes in the knowledge graph by a query.", Meta: json.RawMessage(`{"x/keep":2}`)},
	})
	rows := MeasureSurfaces(env, API{Limits: Limits{Default: 8, Max: 20}, Bounds: catalog.DefaultBounds()}, nil, 6000, 10*time.Second)
	if len(rows) < 3 || rows[0].Mode != "direct" || rows[1].Mode != "direct+hints" {
		t.Fatalf("rows %+v: want direct, direct+hints first", rows)
	}
	var want []*mcp.Tool
	for _, e := range allowedEntries(env, nil) {
		tl := EntryTool(e)
		if _, hinted := tl.Meta[searchHintKey]; hinted {
			t.Fatalf("%s: the catalog entry has a search hint of its own; the test wants none", e.ID)
		}
		want = append(want, tl)
	}
	if n := len(wireJSON(&mcp.ListToolsResult{Tools: want})); rows[0].ToolsListBytes != n || rows[0].TotalBytes != n {
		t.Errorf("direct: %d tools/list bytes (total %d), want %d: the tools as the upstreams sent them", rows[0].ToolsListBytes, rows[0].TotalBytes, n)
	}
	hinted := len(wireJSON(&mcp.ListToolsResult{Tools: Direct{}.Tools(env)}))
	if rows[1].ToolsListBytes != hinted || hinted <= rows[0].ToolsListBytes {
		t.Errorf("direct+hints: %d bytes, want the proxy's direct mode's %d, more than the baseline's %d", rows[1].ToolsListBytes, hinted, rows[0].ToolsListBytes)
	}
	for _, r := range rows {
		if want := float64(r.TotalBytes) / float64(rows[0].TotalBytes); r.RatioToDirect != want {
			t.Errorf("%s: ratio %v, want %v (to the baseline)", r.Mode, r.RatioToDirect, want)
		}
	}
}
