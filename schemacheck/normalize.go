package schemacheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// JSON Schema dialects (the "$schema" values) and what is done with them.
// github.com/google/jsonschema-go v0.4.3 validates draft-07 and 2020-12
// only (Resolved.Validate refuses any other $schema with "cannot validate
// version"), and its Schema type cannot hold draft-04's boolean
// exclusiveMinimum. Older and neighbouring drafts are therefore rewritten
// into the nearest one it validates, keyword by keyword, before compiling:
//
//   - draft-04 -> draft-07: exclusiveMinimum/exclusiveMaximum true (with
//     minimum/maximum) become the numeric forms, false is dropped; "id"
//     becomes "$id".
//   - draft-06 -> draft-07: nothing to rewrite (draft-07 only added keywords).
//   - 2019-09 -> 2020-12: "items" as an array becomes "prefixItems" and
//     "additionalItems" becomes "items"; "$recursiveRef" becomes "$ref"
//     (a static reference: exact unless a schema extends a recursive one
//     through "$recursiveAnchor", which is dropped).
//   - no $schema: 2020-12 (the MCP default dialect since 2025-11-25);
//     draft-07 forms that 2020-12 reads differently are rewritten as for
//     2019-09 (an "items" array is a tuple), and boolean exclusive bounds as
//     for draft-04.
//   - draft-03, and any other $schema (a custom meta-schema): not
//     supported, Compile returns an error (callers then skip validation).
//
// Sources: json-schema.org draft-04, draft-06 and draft-07 "migration"
// notes, and the 2019-09 to 2020-12 release notes ("items and
// additionalItems", "$recursiveRef and $recursiveAnchor").

// Dialects.
const (
	Draft04   = "draft-04"
	Draft06   = "draft-06"
	Draft07   = "draft-07"
	Draft2019 = "2019-09"
	Draft2020 = "2020-12"
)

const (
	uriDraft07 = "http://json-schema.org/draft-07/schema#"
	uri2020    = "https://json-schema.org/draft/2020-12/schema"
)

// dialectOf names the dialect of a $schema value; "" when unknown. An
// absent $schema is 2020-12.
func dialectOf(uri string) string {
	if uri == "" {
		return Draft2020
	}
	u := strings.TrimSuffix(strings.TrimSpace(uri), "#")
	u = strings.TrimPrefix(strings.TrimPrefix(u, "https://"), "http://")
	switch u {
	case "json-schema.org/draft-04/schema":
		return Draft04
	case "json-schema.org/draft-06/schema":
		return Draft06
	case "json-schema.org/draft-07/schema":
		return Draft07
	case "json-schema.org/draft/2019-09/schema":
		return Draft2019
	case "json-schema.org/draft/2020-12/schema":
		return Draft2020
	}
	return ""
}

// normalize rewrites raw (a JSON Schema) into draft-07 or 2020-12 as
// described above and returns the new bytes and the source dialect.
func normalize(raw []byte) ([]byte, string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var root any
	if err := dec.Decode(&root); err != nil {
		return nil, "", fmt.Errorf("it is not JSON: %v", err)
	}
	switch r := root.(type) {
	case bool:
		return raw, Draft2020, nil
	case map[string]any:
		uri, _ := r["$schema"].(string)
		d := dialectOf(uri)
		switch d {
		case "":
			return nil, "", fmt.Errorf("$schema %q is not a dialect the validator knows (draft-04, draft-06, draft-07, 2019-09, 2020-12)", clip(uri, 120))
		case Draft04, Draft06, Draft07:
			r["$schema"] = uriDraft07
		case Draft2019:
			r["$schema"] = uri2020
		case Draft2020:
			if uri != "" {
				r["$schema"] = uri2020
			}
		}
		walk(r, d)
		out, err := json.Marshal(r)
		return out, d, err
	}
	return nil, "", fmt.Errorf("it is a JSON %s, not an object or a boolean", kind(root))
}

// schema-valued keywords, by the shape of their value.
var (
	oneSchema  = []string{"additionalProperties", "additionalItems", "contains", "propertyNames", "not", "if", "then", "else", "unevaluatedItems", "unevaluatedProperties", "contentSchema", "items"}
	schemaMaps = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"}
	schemaList = []string{"allOf", "anyOf", "oneOf", "prefixItems", "items"}
)

// walk rewrites one schema object s of dialect d in place, then its
// subschemas.
func walk(s map[string]any, d string) {
	// Boolean exclusive bounds are draft-04 whatever $schema says.
	for _, b := range [][2]string{{"exclusiveMinimum", "minimum"}, {"exclusiveMaximum", "maximum"}} {
		if v, ok := s[b[0]].(bool); ok {
			delete(s, b[0])
			if n, has := s[b[1]]; v && has {
				s[b[0]] = n
				delete(s, b[1])
			}
		}
	}
	if d == Draft04 {
		if id, ok := s["id"].(string); ok {
			if _, has := s["$id"]; !has {
				s["$id"] = id
			}
			delete(s, "id")
		}
	}
	if d == Draft2019 || d == Draft2020 {
		if arr, ok := s["items"].([]any); ok {
			if _, has := s["prefixItems"]; !has {
				s["prefixItems"] = arr
				delete(s, "items")
				if ai, has := s["additionalItems"]; has {
					s["items"] = ai
					delete(s, "additionalItems")
				}
			}
		}
		if rr, ok := s["$recursiveRef"].(string); ok {
			if _, has := s["$ref"]; !has {
				s["$ref"] = rr
			}
			delete(s, "$recursiveRef")
		}
		delete(s, "$recursiveAnchor")
	}
	for _, k := range oneSchema {
		if sub, ok := s[k].(map[string]any); ok {
			walk(sub, d)
		}
	}
	for _, k := range schemaMaps {
		if m, ok := s[k].(map[string]any); ok {
			for _, v := range m {
				if sub, ok := v.(map[string]any); ok {
					walk(sub, d)
				}
			}
		}
	}
	for _, k := range schemaList {
		if arr, ok := s[k].([]any); ok {
			for _, v := range arr {
				if sub, ok := v.(map[string]any); ok {
					walk(sub, d)
				}
			}
		}
	}
}

func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case []any:
		return "array"
	case json.Number:
		return "number"
	}
	return fmt.Sprintf("%T", v)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
