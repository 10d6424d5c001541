package modes

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
)

// Describe gives the whole description (hits keep a short
// one); it carries title, annotations, outputSchema, icons and _meta.
func TestDescribeFullDescriptionAndFields(t *testing.T) {
	long := "Create a new file or completely overwrite an existing file with new content. Use with caution as it will overwrite existing files without warning. Handles text content with proper encoding.\n\nOnly works within allowed directories."
	cat := catalog.New("__", Reserved, []catalog.UpstreamInfo{{Name: "fs", Prefix: "fs"}})
	cat.SetTools("fs", []*catalog.Entry{{
		Name: "write_file", Title: "Write file", Description: long,
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`),
		Annotations:  json.RawMessage(`{"readOnlyHint":false,"destructiveHint":true,"idempotentHint":true,"openWorldHint":false}`),
		Icons:        json.RawMessage(`[{"src":"data:image/png;base64,AA==","mimeType":"image/png"}]`),
		Meta:         json.RawMessage(`{"example.com/x":1}`),
		Extra:        json.RawMessage(`{"execution":{"taskSupport":"optional"},"x-later":{"a":1}}`),
	}})
	env := &testEnv{cat: cat, deny: map[string]bool{}}
	api := testAPI()
	hits, err := api.Search(env, "write a file", 3, ViaTool)
	if err != nil || len(hits) == 0 {
		t.Fatalf("search: %v %v", hits, err)
	}
	if n := utf8.RuneCountInString(hits[0].Description); n > catalog.MaxHitDescription || !strings.HasSuffix(hits[0].Description, "…") {
		t.Errorf("hit description is not the short one (%d runes): %q", n, hits[0].Description)
	}
	d, err := api.Describe(env, "mcp:fs:write_file", ViaTool)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(d)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m["description"] != long {
		t.Errorf("describe description = %q, want the whole text", m["description"])
	}
	if m["title"] != "Write file" {
		t.Errorf("title = %v", m["title"])
	}
	if ex, _ := m["execution"].(map[string]any); ex["taskSupport"] != "optional" {
		t.Errorf("describe execution = %v, want taskSupport optional: %s", m["execution"], b)
	}
	if x, _ := m["extra"].(map[string]any); len(x) != 1 || x["x-later"] == nil {
		t.Errorf("describe extra = %v, want x-later only", m["extra"])
	}
	for _, k := range []string{"inputSchema", "outputSchema", "annotations", "icons", "_meta"} {
		if m[k] == nil {
			t.Errorf("describe lacks %s: %s", k, b)
		}
	}
	if a := m["annotations"].(map[string]any); a["destructiveHint"] != true || a["idempotentHint"] != true {
		t.Errorf("annotations = %v", a)
	}
	// A runaway description is bounded.
	huge := strings.Repeat("é", MaxDescribeDescription+10)
	if got := fullDescription(huge); utf8.RuneCountInString(got) != MaxDescribeDescription || !strings.HasSuffix(got, "…") {
		t.Errorf("fullDescription of %d runes gave %d runes", MaxDescribeDescription+10, utf8.RuneCountInString(got))
	}
	exact := strings.Repeat("a", MaxDescribeDescription)
	if fullDescription(exact) != exact {
		t.Errorf("a description of exactly the limit was cut")
	}
}
