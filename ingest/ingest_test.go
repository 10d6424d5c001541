package ingest

import (
	"encoding/json"
	"strings"
	"testing"
)

func raws(ss ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(ss))
	for i, s := range ss {
		out[i] = json.RawMessage(s)
	}
	return out
}

func schemaOf(t *testing.T, r Result, name string) string {
	t.Helper()
	for _, tool := range r.Tools {
		if tool.Name == name {
			b, _ := tool.InputSchema.(json.RawMessage)
			return string(b)
		}
	}
	t.Fatalf("tool %q not in result (diagnostics %v)", name, r.Diagnostics)
	return ""
}

func diagOf(r Result, name string) *Diagnostic {
	for i := range r.Diagnostics {
		if r.Diagnostics[i].Tool == name {
			return &r.Diagnostics[i]
		}
	}
	return nil
}

// Schemas that strict clients refuse, each checked on its own.
func TestSchemaShapes(t *testing.T) {
	r := Default().Run("odd", raws(
		`{"name":"draft7","inputSchema":{"$schema":"http://json-schema.org/draft-07/schema#"}}`,
		`{"name":"anyvalue","inputSchema":{"title":"AnyValue"}}`,
		`{"name":"oneof","inputSchema":{"oneOf":[{"type":"object","properties":{"a":{"type":"string"}}},{"type":"object","properties":{"b":{"type":"number"}}}]}}`,
		`{"name":"string","inputSchema":{"type":"string"}}`,
		`{"name":"empty","inputSchema":{}}`,
		`{"name":"absent"}`,
		`{"name":"nullable","inputSchema":{"type":["object","null"],"properties":{"x":{"type":"string"}}}}`,
		`{"name":"badreq","inputSchema":{"type":"object","required":"x"}}`,
		`{"name":"healthy","description":"fine","inputSchema":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}}`,
		`{"name":"badout","inputSchema":{"type":"object"},"outputSchema":{"type":"array"}}`,
		`{"name":"bare","inputSchema":{"type":"object"},"outputSchema":{"type":"object"}}`,
		`{"name":"nullprops","inputSchema":{"type":"object","properties":null,"additionalProperties":false}}`,
	))
	want := map[string]string{
		"draft7":   `{"type":"object","properties":{},"$schema":"http://json-schema.org/draft-07/schema#"}`,
		"anyvalue": `{"type":"object","properties":{},"title":"AnyValue"}`,
		"oneof":    `{"type":"object","properties":{},"oneOf":[{"type":"object","properties":{"a":{"type":"string"}}},{"type":"object","properties":{"b":{"type":"number"}}}]}`,
		"empty":    `{"type":"object","properties":{}}`,
		"absent":   `{"type":"object","properties":{}}`,
		"nullable": `{"type":"object","properties":{"x":{"type":"string"}}}`,
		"badreq":   `{"type":"object","properties":{}}`,
		"healthy":  `{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`,
		"badout":   `{"properties":{},"type":"object"}`,
		// Strict clients refuse an object schema without "properties".
		"bare":      `{"properties":{},"type":"object"}`,
		"nullprops": `{"type":"object","properties":{},"additionalProperties":false}`,
	}
	for name, w := range want {
		if got := schemaOf(t, r, name); got != w {
			t.Errorf("%s: inputSchema %s, want %s", name, got, w)
		}
	}
	if len(r.Tools) != len(want) {
		t.Errorf("%d tools passed, want %d", len(r.Tools), len(want))
	}
	d := diagOf(r, "string")
	if d == nil || d.Action != Quarantined || !strings.Contains(d.Detail, `root type is "string"`) {
		t.Fatalf("string: %+v", d)
	}
	if d := diagOf(r, "healthy"); d != nil {
		t.Errorf("healthy tool got a diagnostic: %+v", d)
	}
	if d := diagOf(r, "draft7"); d == nil || d.Action != Normalised || string(d.Original) != `{"$schema":"http://json-schema.org/draft-07/schema#"}` || d.Field != "inputSchema" {
		t.Errorf("draft7 diagnostic: %+v", d)
	}
	for _, tool := range r.Tools {
		if tool.Name == "badout" && tool.OutputSchema != nil {
			t.Errorf("badout kept outputSchema %v", tool.OutputSchema)
		}
		if out, _ := tool.OutputSchema.(json.RawMessage); tool.Name == "bare" && string(out) != `{"type":"object"}` {
			t.Errorf("bare: outputSchema %s, want it as received", out)
		}
	}
	if d := diagOf(r, "bare"); d != nil {
		t.Errorf("bare: adding \"properties\":{} changes nothing it allows, yet got a diagnostic: %+v", d)
	}
	if r.Quarantined() != 1 || r.Normalised() != 9 {
		t.Errorf("quarantined %d normalised %d", r.Quarantined(), r.Normalised())
	}
}

// One deep schema quarantines only its own tool.
func TestDeepToolQuarantinedAlone(t *testing.T) {
	deep := strings.Repeat(`{"type":"object","properties":{"a":`, 300) + `{"type":"string"}` + strings.Repeat(`}}`, 300)
	var tools []string
	for i := range 5 {
		tools = append(tools, `{"name":"ok`+string(rune('a'+i))+`","inputSchema":{"type":"object"}}`)
	}
	tools = append(tools[:3], append([]string{`{"name":"deep","inputSchema":` + deep + `}`}, tools[3:]...)...)
	r := Default().Run("deep", raws(tools...))
	if len(r.Tools) != 5 {
		t.Fatalf("%d tools passed, want 5; %v", len(r.Tools), r.Diagnostics)
	}
	d := diagOf(r, "deep")
	if d == nil || d.Action != Quarantined || d.Step != StepDecode || !strings.Contains(d.Detail, "JSON nesting deeper than 512 levels") {
		t.Fatalf("deep: %+v", d)
	}
}

func TestDecodeFailuresNamed(t *testing.T) {
	r := Default().Run("u", raws(
		`{"name":"a","description":5}`,
		`[1,2]`,
		`{"description":"no name"}`,
		`{"name":"a"}`,
		`{"name":"a"}`,
	))
	if len(r.Tools) != 1 || r.Tools[0].Name != "a" {
		t.Fatalf("tools %v", r.Tools)
	}
	want := []string{"a|Tool.description of type string", "#2|not a JSON object", `#3|no "name"`, "a|absent: set to", `a|already has the name`}
	if len(r.Diagnostics) != len(want) {
		t.Fatalf("diagnostics %v", r.Diagnostics)
	}
	for i, w := range want {
		name, detail, _ := strings.Cut(w, "|")
		if d := r.Diagnostics[i]; d.Tool != name || !strings.Contains(d.Detail, detail) {
			t.Errorf("diagnostic %d: %+v, want %s", i, d, w)
		}
	}
}

func TestZeroToolsIsNotNil(t *testing.T) {
	if r := Default().Run("u", nil); r.Tools == nil {
		t.Fatal("Tools is nil for an empty listing")
	}
}

// A step added after the built-in ones sees decoded tools and can
// quarantine or normalise (the extension point).
func TestExtraStep(t *testing.T) {
	p := New(SchemaShape{}, StepFunc{StepName: "nobang", F: func(tool *Tool) error {
		if strings.Contains(tool.Tool.Description, "!") {
			tool.Normalise("description", json.RawMessage(`"`+tool.Tool.Description+`"`), "removed '!'")
			tool.Tool.Description = strings.ReplaceAll(tool.Tool.Description, "!", "")
		}
		return nil
	}})
	r := p.Run("u", raws(`{"name":"x","description":"hi!","inputSchema":{"type":"object"}}`))
	if r.Tools[0].Description != "hi" || len(r.Diagnostics) != 1 || r.Diagnostics[0].Step != "nobang" {
		t.Fatalf("%+v %+v", r.Tools[0], r.Diagnostics)
	}
	if got := strings.Join(p.Steps(), ","); got != "decode,schema,nobang" {
		t.Fatal(got)
	}
}
