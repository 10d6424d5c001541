package schemacheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
)

func mustCompile(t *testing.T, raw string) *Schema {
	t.Helper()
	s, err := Compile(json.RawMessage(raw))
	if err != nil {
		t.Fatalf("Compile(%s): %v", raw, err)
	}
	return s
}

// Every draft an MCP server is seen to declare compiles and validates with
// that draft's meaning.
func TestDrafts(t *testing.T) {
	for _, tc := range []struct {
		name, schema, dialect string
		good, bad             []string
	}{
		{"draft-04 boolean exclusive bounds and id", `{"$schema":"http://json-schema.org/draft-04/schema#","id":"http://example.com/s","type":"object","properties":{"n":{"type":"number","minimum":0,"exclusiveMinimum":true,"maximum":10,"exclusiveMaximum":false}},"required":["n"]}`,
			Draft04, []string{`{"n":0.5}`, `{"n":10}`}, []string{`{"n":0}`, `{"n":11}`, `{}`}},
		{"draft-06", `{"$schema":"http://json-schema.org/draft-06/schema#","type":"object","properties":{"a":{"const":1}}}`,
			Draft06, []string{`{"a":1}`}, []string{`{"a":2}`}},
		{"draft-07 tuple items", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"array","items":[{"type":"string"},{"type":"integer"}],"additionalItems":false}`,
			Draft07, []string{`["a",1]`}, []string{`[1,"a"]`, `["a",1,2]`}},
		{"draft-07 https without #", `{"$schema":"https://json-schema.org/draft-07/schema","type":"string"}`,
			Draft07, []string{`"x"`}, []string{`1`}},
		{"2019-09 tuple items and recursive ref", `{"$schema":"https://json-schema.org/draft/2019-09/schema","$recursiveAnchor":true,"type":"object","properties":{"pair":{"type":"array","items":[{"type":"string"}],"additionalItems":{"type":"integer"}},"child":{"$recursiveRef":"#"}}}`,
			Draft2019, []string{`{"pair":["a",1,2],"child":{"pair":["b"]}}`}, []string{`{"pair":["a","b"]}`, `{"child":{"pair":[1]}}`}},
		{"2020-12", `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"array","prefixItems":[{"type":"string"}],"items":false}`,
			Draft2020, []string{`["a"]`}, []string{`["a",1]`}},
		{"no $schema is 2020-12, a tuple items array is read as a tuple", `{"type":"array","items":[{"type":"string"}]}`,
			Draft2020, []string{`["a",1]`}, []string{`[1]`}},
		{"boolean schema", `true`, Draft2020, []string{`1`, `{}`}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := mustCompile(t, tc.schema)
			if s.Dialect != tc.dialect {
				t.Errorf("dialect %q, want %q", s.Dialect, tc.dialect)
			}
			for _, g := range tc.good {
				if err := s.ValidateJSON(json.RawMessage(g)); err != nil {
					t.Errorf("%s: %v", g, err)
				}
			}
			for _, b := range tc.bad {
				if err := s.ValidateJSON(json.RawMessage(b)); err == nil {
					t.Errorf("%s validated", b)
				}
			}
		})
	}
	for _, bad := range []string{
		`{"$schema":"http://json-schema.org/draft-03/schema#","type":"string"}`,
		`{"$schema":"https://example.com/my-meta","type":"string"}`,
		`{"type":"object","properties":{"a":{"$ref":"https://example.com/remote.json"}}}`,
		`{"type":7}`,
		`[1,2]`,
		`{"type":"string"` + strings.Repeat(" ", MaxSchemaBytes) + `}`,
	} {
		if _, err := Compile(json.RawMessage(bad)); err == nil {
			t.Errorf("Compile(%.80s) succeeded, want an error", bad)
		}
	}
}

// Errors name the field, what was expected, and the part of the schema.
func TestValidationErrors(t *testing.T) {
	s := mustCompile(t, `{"type":"object","properties":{
		"path":{"type":"string","description":"Path of the file to write"},
		"content":{"type":"string"},
		"n":{"type":"integer","minimum":1},
		"mode":{"enum":["append","overwrite"]},
		"opts":{"type":"object","properties":{"dry":{"type":"boolean"}},"additionalProperties":false},
		"files":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}},
		"ref":{"$ref":"#/$defs/R"},
		"id":{"anyOf":[{"type":"string"},{"type":"integer"}]}
	},"required":["path","content"],"additionalProperties":false,"$defs":{"R":{"type":"object","required":["q"],"properties":{"q":{"type":"string"}}}}}`)
	for _, tc := range []struct {
		in, field, reason, schema string
	}{
		{`{"content":"x"}`, "/path", `missing required property "path"`, `"path":{"description":"Path of the file to write","type":"string"}`},
		{`{}`, "/path", `missing required property "path"`, `"required":["path","content"]`},
		{`{"path":3,"content":"x"}`, "/path", `expected a string, got 3`, `{"description":"Path of the file to write","type":"string"}`},
		{`{"path":"a","content":"x","n":0}`, "/n", `expected minimum 1, got 0`, `{"minimum":1,"type":"integer"}`},
		{`{"path":"a","content":"x","n":1.5}`, "/n", `expected an integer, got 1.5`, `"type":"integer"`},
		{`{"path":"a","content":"x","mode":"replace"}`, "/mode", `expected one of ["append","overwrite"], got "replace"`, `{"enum":["append","overwrite"]}`},
		{`{"path":"a","content":"x","opts":{"force":true}}`, "/opts/force", `unexpected property "force" (allowed: "dry")`, `"properties":["dry"]`},
		{`{"path":"a","content":"x","extra":1}`, "/extra", `unexpected property "extra" (allowed: "content", "files", "id", "mode", "n", "opts", "path", "ref")`, `"additionalProperties":false`},
		{`{"path":"a","content":"x","files":[{"name":"a"},{}]}`, "/files/1/name", `missing required property "name"`, `"required":["name"]`},
		{`{"path":"a","content":"x","ref":{}}`, "/ref/q", `missing required property "q"`, `"q":{"type":"string"}`},
		{`{"path":"a","content":"x","id":true}`, "/id", `matches none of the allowed shapes (anyOf), got true`, `"anyOf":[{"type":"string"},{"type":"integer"}]`},
	} {
		err := s.ValidateJSON(json.RawMessage(tc.in))
		var ve *ValidationError
		if !errors.As(err, &ve) {
			t.Errorf("%s: %v, want a *ValidationError", tc.in, err)
			continue
		}
		if ve.Field != tc.field || ve.Reason != tc.reason || !strings.Contains(ve.Schema, tc.schema) {
			t.Errorf("%s:\n got field %q reason %q schema %s\nwant field %q reason %q schema containing %s", tc.in, ve.Field, ve.Reason, ve.Schema, tc.field, tc.reason, tc.schema)
		}
		if !strings.HasPrefix(ve.Error(), ve.Field+": "+ve.Reason+"; schema: ") && !strings.HasPrefix(ve.Error(), "2 mismatches: [1] "+ve.Field+": "+ve.Reason+"; [2] ") {
			t.Errorf("Error() = %q", ve.Error())
		}
	}
	if err := s.ValidateJSON(json.RawMessage(`{"path":"a","content":"x","files":[{"name":"a"}],"ref":{"q":"y"},"id":3}`)); err != nil {
		t.Errorf("a valid value: %v", err)
	}
}

// Schemas named by $id (the library names them so in its errors) still
// give the field and the subschema.
func TestValidationErrorsWithIDs(t *testing.T) {
	s := mustCompile(t, `{"$schema":"http://json-schema.org/draft-04/schema#","id":"urn:root","type":"object","properties":{"size":{"type":"number","minimum":0,"exclusiveMinimum":true},"item":{"$ref":"#/definitions/I"}},"definitions":{"I":{"id":"https://example.com/item.json","type":"object","properties":{"n":{"type":"integer"}}}}}`)
	for in, want := range map[string]string{
		`{"size":0}`:         `/size: expected exclusiveMinimum 0, got 0; schema: {"exclusiveMinimum":0,"type":"number"}`,
		`{"item":{"n":"x"}}`: `/item/n: expected an integer, got "x"; schema: {"type":"integer"}`,
	} {
		if err := s.ValidateJSON(json.RawMessage(in)); err == nil || err.Error() != want {
			t.Errorf("%s: %v\nwant %s", in, err, want)
		}
	}
}

// The schema shown stays bounded for a huge subschema.
func TestSchemaPartBounded(t *testing.T) {
	var props []string
	for i := range 200 {
		props = append(props, `"p`+strings.Repeat("x", 10)+string(rune('a'+i%26))+itoa(i)+`":{"type":"string","description":"`+strings.Repeat("long text ", 20)+`"}`)
	}
	s := mustCompile(t, `{"type":"object","properties":{`+strings.Join(props, ",")+`},"additionalProperties":false}`)
	var ve *ValidationError
	if err := s.ValidateJSON(json.RawMessage(`{"zzz":1}`)); !errors.As(err, &ve) || len(ve.Schema) > MaxSchemaPart+len("…") || len(ve.Reason) > 404 {
		t.Errorf("unbounded: %d-byte schema part, %d-byte reason", len(ve.Schema), len(ve.Reason))
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// BenchmarkValidate is what input validation adds to one call once the
// schema is compiled (Compile's cache lookup, which hashes the schema, plus
// decoding and validating the arguments), for the largest inputSchema of
// examples/catalogs/github-like.jsonl (list_issues, 898 bytes) and a valid
// call; and the first compile of that schema.
//
//	go test ./schemacheck -run XXX -bench . -benchmem
func BenchmarkValidate(b *testing.B) {
	schema := json.RawMessage(listIssuesSchema(b))
	args := json.RawMessage(`{"owner":"octo","repo":"hello","state":"open","labels":["bug"],"per_page":30}`)
	if _, err := Compile(schema); err != nil {
		b.Fatal(err)
	}
	b.Run("cached", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			s, err := Compile(schema)
			if err != nil {
				b.Fatal(err)
			}
			if err := s.ValidateJSON(args); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("invalid", func(b *testing.B) {
		bad := json.RawMessage(`{"owner":"octo","state":"maybe"}`)
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			s, _ := Compile(schema)
			if s.ValidateJSON(bad) == nil {
				b.Fatal("validated")
			}
		}
	})
	b.Run("compile", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			if _, err := compile(schema); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// reportCPU reports the process CPU time per operation ("cpu-ns/op")
// from its call to the call of the function it returns.
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() {
		if d := cpuTime() - start; d > 0 {
			b.ReportMetric(float64(d.Nanoseconds())/float64(b.N), "cpu-ns/op")
		}
	}
}

func listIssuesSchema(b testing.TB) []byte {
	f, err := os.ReadFile("../examples/catalogs/github-like.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range bytes.Split(f, []byte("\n")) {
		var t struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		}
		if json.Unmarshal(l, &t) == nil && t.Name == "list_issues" {
			return t.InputSchema
		}
	}
	b.Fatal("no list_issues in github-like.jsonl")
	return nil
}
