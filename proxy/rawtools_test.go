package proxy

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tools/list answer writes each tool's extra members (such as "execution")
// after the members the proxy sets; a change of an extra member alone
// changes the list's fingerprint (a client is told the list changed).
func TestRawToolsList(t *testing.T) {
	tools := []*mcp.Tool{
		{Name: "up__task", Description: "d", InputSchema: json.RawMessage(`{"type":"object"}`)},
		{Name: "up__plain", InputSchema: json.RawMessage(`{"type":"object"}`)},
	}
	if _, ok := toolsListResult(tools, nil).(*mcp.ListToolsResult); !ok {
		t.Errorf("no extras: want a plain *mcp.ListToolsResult")
	}
	extras := []json.RawMessage{json.RawMessage(`{"execution":{"taskSupport":"required"},"x-new":[1]}`), nil}
	res := toolsListResult(tools, extras)
	c := cacheableOf(res)
	if c == nil {
		t.Fatal("cacheableOf(rawToolsList) = nil: cache hints would not be set")
	}
	c.TTLMs, c.CacheScope = 5, "public"
	res.(*rawToolsList).NextCursor = "n"
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	want := map[string]any{
		"ttlMs": 5.0, "cacheScope": "public", "nextCursor": "n",
		"tools": []any{
			map[string]any{"name": "up__task", "description": "d", "inputSchema": map[string]any{"type": "object"},
				"execution": map[string]any{"taskSupport": "required"}, "x-new": []any{1.0}},
			map[string]any{"name": "up__plain", "inputSchema": map[string]any{"type": "object"}},
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tools/list answer\n got: %s\nwant: %v", b, want)
	}
	other := []json.RawMessage{json.RawMessage(`{"execution":{"taskSupport":"optional"},"x-new":[1]}`), nil}
	if surfaceFingerprint(tools, extras) == surfaceFingerprint(tools, other) || surfaceFingerprint(tools, extras) == surfaceFingerprint(tools, nil) {
		t.Error("a change of an extra member alone leaves the fingerprint unchanged")
	}
}

// BenchmarkToolsListEncode: the tools/list answer of 1,047 tools, 40 of
// them with an execution member (the default config's shape), encoded
// plain (the go-sdk result, members dropped) and with the extra members
// (rawToolsList).
func BenchmarkToolsListEncode(b *testing.B) {
	tools := make([]*mcp.Tool, 1047)
	extras := make([]json.RawMessage, len(tools))
	for i := range tools {
		tools[i] = &mcp.Tool{Name: fmt.Sprintf("up__tool_%d", i), Description: "Does a thing with the given path and returns what it found there.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"Where"},"limit":{"type":"number"}},"required":["path"]}`),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}
		if i%26 == 0 && i/26 < 40 {
			extras[i] = json.RawMessage(`{"execution":{"taskSupport":"forbidden"}}`)
		}
	}
	b.Run("plain", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = json.Marshal(toolsListResult(tools, nil))
		}
	})
	b.Run("extra", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = json.Marshal(toolsListResult(tools, extras))
		}
	})
}
