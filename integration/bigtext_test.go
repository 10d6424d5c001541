//go:build unix

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestBulkyToolTextIsBounded: an upstream whose tool
// carries 1 MiB of text in every member a client or the model reads
// (title, description, annotations.title, a schema description,
// outputSchema, an unknown member), a tool with a 50,000-value enum and
// one with a 1 MiB _meta. Before, tool_describe answered 11.5 MB for the
// first (only the description was cut) and direct mode listed all three
// whole. Now each text string is cut to 16,384 characters at the ingest
// point and a tool still over security.max_tool_bytes (128 KiB) is
// quarantined: describe stays within twice the bound (structuredContent
// and the same JSON as text), direct tools/list within the bound per tool,
// and `list` names the quarantines.
func TestBulkyToolTextIsBounded(t *testing.T) {
	const maxTool = 128 << 10
	cfgFor := func(enabled bool) string {
		return writeConfig(t, fmt.Sprintf(`
[tool_search]
enabled = %v
mode = "tools"

[upstreams.bulk]
command = %s
args = ["-scenario", "bigtext"]
`, enabled, tomlString(fakeUpstreamBin(t))))
	}
	// Both binaries are built before any deadline starts.
	toolsCmd, directCmd := proxyCmd(t, cfgFor(true), "--startup-wait", "60s"), proxyCmd(t, cfgFor(false), "--startup-wait", "60s")

	t.Run("tools", func(t *testing.T) {
		cs := gosdkClientStdio(t, toolsCmd)
		ctx, cancel := context.WithTimeout(context.Background(), goClientTimeout)
		defer cancel()
		res, err := cs.CallTool(ctx, &gosdk.CallToolParams{Name: "tool_describe", Arguments: map[string]any{"id": "mcp:bulk:big"}})
		if err != nil || res.IsError {
			t.Fatalf("tool_describe: %v %+v", err, res)
		}
		b, _ := json.Marshal(res)
		if len(b) > 2*maxTool+8<<10 {
			t.Errorf("describe answered %d bytes for one tool, over twice the %d-byte bound", len(b), maxTool)
		}
		var d map[string]any
		if err := json.Unmarshal([]byte(res.Content[0].(*gosdk.TextContent).Text), &d); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"title", "description", "inputSchema", "outputSchema", "annotations", "extra"} {
			kb, _ := json.Marshal(d[k])
			if d[k] == nil || !strings.Contains(string(kb), "BBBB…") || len(kb) > 17<<10 {
				t.Errorf("describe's %s should be there, cut to 16,384 characters: %d bytes %.80s", k, len(kb), kb)
			}
		}
		for _, q := range []string{"bulky", "pick one"} {
			res, err := cs.CallTool(ctx, &gosdk.CallToolParams{Name: "tool_search", Arguments: map[string]any{"query": q}})
			if err != nil || res.IsError {
				t.Fatalf("tool_search: %v %+v", err, res)
			}
			sb, _ := json.Marshal(res)
			if strings.Contains(string(sb), "mcp:bulk:enums") || strings.Contains(string(sb), "mcp:bulk:meta") {
				t.Errorf("a quarantined tool is a hit: %.300s", sb)
			}
		}
		res, err = cs.CallTool(ctx, &gosdk.CallToolParams{Name: "tool_describe", Arguments: map[string]any{"id": "mcp:bulk:enums"}})
		if err != nil || !res.IsError {
			t.Errorf("describe of the quarantined tool should fail: %v %+v", err, res)
		}
	})

	t.Run("direct", func(t *testing.T) {
		cs := gosdkClientStdio(t, directCmd)
		ctx, cancel := context.WithTimeout(context.Background(), goClientTimeout)
		defer cancel()
		tools, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		names := toolNamesGo(tools.Tools)
		for _, tl := range tools.Tools {
			b, _ := json.Marshal(tl)
			if len(b) > maxTool {
				t.Errorf("tools/list carries %s as %d bytes, over the %d-byte bound", tl.Name, len(b), maxTool)
			}
		}
		if strings.Join(names, ",") != "bulk__big,bulk__ok" {
			t.Errorf("tools/list = %v, want big (cut) and ok; enums and meta quarantined", names)
		}
	})

	out := runCLI(t, "list", "--config", cfgFor(false))
	for _, want := range []string{
		"big normalised (size): description cut from 1048576 to 16384 characters",
		"enums quarantined (size): the definition is", "its largest member is inputSchema",
		"meta quarantined (size)", "its largest member is _meta",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("list lacks %q:\n%.2000s", want, out)
		}
	}
}
