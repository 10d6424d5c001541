//go:build unix

package integration

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestObjectSchemaGetsProperties: the go-sdk "everything" example lists
// tools whose inputSchema is {"type":"object"} (ping, log, roots, sample,
// elicit …). Strict clients (OpenAI-compatible function calling among them)
// refuse an object schema without "properties", so the proxy exposes each
// with "properties": {} — the same schema, allowing the same arguments —
// in direct mode's tools/list and in describe, with no normalisation
// reported (describe shows no originalInputSchema for it), and the tool
// still works.
func TestObjectSchemaGetsProperties(t *testing.T) {
	cfg := writeConfig(t, `
[upstreams.ev]
command = `+tomlString(gosdkEverything(t))+`
`)
	proxy := buildProxy(t)
	s := gosdkClientStdio(t, []string{proxy, "serve", "--config", cfg, "--mode", "off", "--log-level", "warn"})
	ctx := context.Background()
	res, err := s.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	bare := 0
	for _, tool := range res.Tools {
		b, _ := json.Marshal(tool.InputSchema)
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: inputSchema %s: %v", tool.Name, b, err)
		}
		p, ok := m["properties"]
		if !ok || string(p) == "null" {
			t.Errorf("%s: inputSchema %s has no \"properties\"", tool.Name, b)
		}
		if string(p) == "{}" {
			bare++
		}
	}
	if bare < 4 {
		t.Errorf("only %d tools with empty properties; the go-sdk example lists several {\"type\":\"object\"} tools (ping, log, roots, sample)", bare)
	}
	// The tool still works through the proxy.
	if r, err := s.CallTool(ctx, &gosdk.CallToolParams{Name: "ev__ping", Arguments: map[string]any{}}); err != nil || r.IsError {
		t.Errorf("ev__ping: %v %+v", err, r)
	}
	out := runCLI(t, "describe", "ev__ping", "--config", cfg)
	if !strings.Contains(out, `"properties": {}`) || strings.Contains(out, "originalInputSchema") {
		t.Errorf("describe ev__ping: want \"properties\": {} and no originalInputSchema:\n%s", out)
	}
}
