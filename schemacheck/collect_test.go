package schemacheck

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// Mismatches a model would otherwise meet one attempt at a time, each
// reported at once: every mismatch (up to MaxMismatches), array items by
// index, one path form for every missing property, a "did you mean" for a
// misnamed property, and a schema excerpt that shows every property it
// names as required.
func TestAllMismatches(t *testing.T) {
	writeFile := mustCompile(t, `{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"],"additionalProperties":false,"$schema":"http://json-schema.org/draft-07/schema#"}`)
	entities := mustCompile(t, `{"type":"object","properties":{"entities":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"entityType":{"type":"string"},"observations":{"type":"array","items":{"type":"string"}}},"required":["name","entityType","observations"],"additionalProperties":false}}},"required":["entities"],"additionalProperties":false}`)
	search := mustCompile(t, `{"type":"object","properties":{"query":{"type":"string"},"limit":{"type":"integer"}},"additionalProperties":false}`)
	var many []string
	var manyProps []string
	for _, c := range "abcdefgh" {
		many = append(many, `"`+string(c)+`"`)
		manyProps = append(manyProps, `"`+string(c)+`":{"type":"string"}`)
	}
	wide := mustCompile(t, `{"type":"object","properties":{`+strings.Join(manyProps, ",")+`},"required":[`+strings.Join(many, ",")+`]}`)
	for _, tc := range []struct {
		s    *Schema
		in   string
		want string
	}{
		// The misnamed property is named, and the excerpt shows "path" too.
		{writeFile, `{"path":"p.txt","contents":"x"}`,
			`/content: missing required property "content"; you sent "contents", which is not a property: did you mean "content"?; schema: {"properties":{"content":{"type":"string"},"path":{"type":"string"}},"required":["path","content"]}`},
		{writeFile, `{"querry":"x","path":"p"}`,
			`2 mismatches: [1] /content: missing required property "content"; [2] /querry: unexpected property "querry" (allowed: "content", "path"). Schema of [1]: {"properties":{"content":{"type":"string"},"path":{"type":"string"}},"required":["path","content"]}. Schema of [2]: {"additionalProperties":false,"properties":["content","path"]}`},
		// Two missing properties, each at its own path.
		{writeFile, `{}`,
			`2 mismatches: [1] /path: missing required property "path"; [2] /content: missing required property "content". Schema of [1] and [2]: {"properties":{"content":{"type":"string"},"path":{"type":"string"}},"required":["path","content"]}`},
		// Every mismatch at once, array items by index.
		{entities, `{"entities":[{"name":"Solo","entityType":"x","observations":"one"},{"name":3,"entityType":"y","observations":["a",2]}]}`,
			`3 mismatches: [1] /entities/0/observations: expected an array, got "one"; [2] /entities/1/name: expected a string, got 3; [3] /entities/1/observations/1: expected a string, got 2. Schema of [1]: {"items":{"type":"string"},"type":"array"}. Schema of [2] and [3]: {"type":"string"}`},
		{entities, `{"entities":{"name":"Solo"}}`,
			`/entities: expected an array, got {"name":"Solo"}; schema: {"items":`},
		{search, `{"querry":"x"}`,
			`/querry: unexpected property "querry": did you mean "query"? (allowed: "limit", "query")`},
		// bounded: 8 missing, 5 listed.
		{wide, `{}`, `8 mismatches: [1] /a: missing required property "a"`},
	} {
		err := tc.s.ValidateJSON(json.RawMessage(tc.in))
		var ve *ValidationError
		if !errors.As(err, &ve) || !strings.HasPrefix(ve.Error(), tc.want) {
			t.Errorf("%s:\n got %v\nwant %s", tc.in, err, tc.want)
		}
	}
	// Up to draft-07 a $ref's siblings are ignored: no mismatch from them.
	d7 := mustCompile(t, `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"$ref":"#/definitions/S","type":"integer"},"b":{"type":"string"}},"definitions":{"S":{"type":"string"}}}`)
	if err := d7.ValidateJSON(json.RawMessage(`{"a":"x","b":1}`)); err == nil || err.Error() != `/b: expected a string, got 1; schema: {"type":"string"}` {
		t.Errorf("draft-07 $ref siblings: %v", err)
	}
	err := wide.ValidateJSON(json.RawMessage(`{}`))
	if !strings.HasSuffix(err.Error(), `[5] /e: missing required property "e" … and 3 more. Schema of [1], [2], [3], [4] and [5]: {"properties":{"a":{"type":"string"},"b":{"type":"string"},"c":{"type":"string"},"d":{"type":"string"},"e":{"type":"string"},"f":{"type":"string"},"g":{"type":"string"},"h":{"type":"string"}},"required":["a","b","c","d","e","f","g","h"]}`) {
		t.Errorf("8 missing: %v", err)
	}
	// The code bridge keeps 512 bytes of an error, and the
	// second mismatch was cut off inside the first one's schema part. Every
	// field and reason now comes before any schema part.
	err = entities.ValidateJSON(json.RawMessage(`{"entities":[{"name":"a","observations":"just one"}]}`))
	if head := err.Error()[:min(512, len(err.Error()))]; !strings.Contains(head, `[1] /entities/0/entityType: missing required property "entityType"`) ||
		!strings.Contains(head, `[2] /entities/0/observations: expected an array, got "just one"`) {
		t.Errorf("the first 512 bytes do not name both mismatches: %q", head)
	}
	if msg := err.Error(); strings.Index(msg, ". Schema of ") < strings.Index(msg, "[2] /entities/0/observations") {
		t.Errorf("a schema part comes before the last mismatch: %q", msg)
	}
	if err := entities.ValidateJSON(json.RawMessage(`{"entities":[{"name":"a","entityType":"b","observations":["c"]}]}`)); err != nil {
		t.Errorf("a valid value: %v", err)
	}
}
