package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/jsonscan"
)

// StepSchema is SchemaShape's name.
const StepSchema = "schema"

// SchemaShape makes every exposed inputSchema (and outputSchema) an object
// schema that strict clients accept, checking each tool on its own (MCP
// spec 2025-11-25 server/tools "Tool": inputSchema and outputSchema are
// JSON Schema objects with "type": "object"; the TypeScript SDK's client
// refuses a whole tools/list page when one tool breaks this, losing every
// tool of the upstream).
//
// inputSchema:
//   - absent, null, {} or no root "type" and no root combinator (e.g.
//     {"$schema": …} or {"title": "AnyValue"}): becomes
//     {"type":"object","properties":{}} plus the keys it had;
//   - a root oneOf/anyOf/allOf (or not, if/then/else) without "type": gets
//     "type":"object" added;
//   - a root "type" list that contains "object" (["object","null"]):
//     becomes "object";
//   - an object schema without "properties", such as {"type":"object"}:
//     gets "properties":{} as its first member, with no diagnostic (it
//     allows what it allowed; OpenAI-compatible and other strict clients
//     refuse an object schema without it); "properties": null becomes {};
//   - "required" that is not a list of strings: dropped;
//   - any other root type ({"type":"string"}), a schema that is not a JSON
//     object, or "properties" that is not an object: the tool is
//     quarantined (its arguments could never be a JSON object).
//
// outputSchema gets the same repairs but the "properties" one (no model
// fills it in); one that cannot be repaired is
// dropped from the exposed tool (the tool stays callable; results are then
// not validated) instead of quarantining the tool.
//
// Every change is a normalisation diagnostic holding the schema as
// received, which `describe` still shows.
type SchemaShape struct{}

func (SchemaShape) Name() string { return StepSchema }

func (SchemaShape) Apply(t *Tool) error {
	in, _ := t.Tool.InputSchema.(json.RawMessage)
	fixed, detail, err := shapeSchema(in, true)
	if err != nil {
		return fmt.Errorf("inputSchema: %v", err)
	}
	if detail != "" {
		t.Normalise("inputSchema", in, "inputSchema: "+detail)
	}
	t.Tool.InputSchema = fixed
	out, _ := t.Tool.OutputSchema.(json.RawMessage)
	if len(out) == 0 {
		return nil
	}
	fixed, detail, err = shapeSchema(out, false)
	switch {
	case err != nil:
		t.Normalise("outputSchema", out, "outputSchema dropped: "+err.Error())
		t.Tool.OutputSchema = nil
	case detail != "":
		t.Normalise("outputSchema", out, "outputSchema: "+detail)
		t.Tool.OutputSchema = fixed
	}
	return nil
}

var combinators = []string{"oneOf", "anyOf", "allOf", "not", "if", "then", "else"}

// shapeSchema returns the repaired schema and what was done ("" when raw
// is fine as it is), or why it cannot be an object schema. input says it
// is an inputSchema, which always gets "properties".
func shapeSchema(raw json.RawMessage, input bool) (json.RawMessage, string, error) {
	if isNull(raw) {
		return json.RawMessage(`{"type":"object","properties":{}}`), `absent: set to {"type":"object","properties":{}}`, nil
	}
	members := map[string][]byte{}
	_, err := jsonscan.Object(raw, func(k, v []byte) bool {
		members[string(k)] = v
		return true
	})
	if errors.Is(err, jsonscan.ErrNotObject) {
		return nil, "", fmt.Errorf("not a JSON object (%s)", preview(raw))
	}
	if err != nil {
		return nil, "", err
	}
	if p, ok := members["properties"]; ok && !isNull(p) && p[0] != '{' {
		return nil, "", fmt.Errorf(`"properties" is not an object (%s)`, preview(p))
	}
	var detail []string
	typ, hasType := members["type"]
	switch {
	case !hasType:
		comb := ""
		for _, c := range combinators {
			if _, ok := members[c]; ok {
				comb = c
				break
			}
		}
		if comb != "" {
			members["type"] = []byte(`"object"`)
			detail = append(detail, fmt.Sprintf(`root %q without "type": added "type":"object"`, comb))
		} else {
			members["type"] = []byte(`"object"`)
			if _, ok := members["properties"]; !ok {
				members["properties"] = []byte(`{}`)
				detail = append(detail, `no root "type": added "type":"object","properties":{}`)
			} else {
				detail = append(detail, `no root "type": added "type":"object"`)
			}
		}
	default:
		var s string
		var list []string
		switch {
		case json.Unmarshal(typ, &s) == nil:
			if s != "object" {
				return nil, "", fmt.Errorf(`root type is %q, not "object" (tool arguments are a JSON object)`, s)
			}
		case json.Unmarshal(typ, &list) == nil && slices.Contains(list, "object"):
			members["type"] = []byte(`"object"`)
			detail = append(detail, fmt.Sprintf(`root type %s: set to "object"`, typ))
		default:
			return nil, "", fmt.Errorf(`root type is %s, not "object" (tool arguments are a JSON object)`, typ)
		}
	}
	addProps := false // "properties":{} to add, silently unless something else changes
	if p, ok := members["properties"]; input && !ok {
		members["properties"] = []byte(`{}`)
		addProps = true
	} else if input && isNull(p) {
		members["properties"] = []byte(`{}`)
		detail = append(detail, `"properties" is null: set to {}`)
	}
	if r, ok := members["required"]; ok {
		var req []string
		if json.Unmarshal(r, &req) != nil {
			delete(members, "required")
			detail = append(detail, fmt.Sprintf(`"required" is not a list of names (%s): dropped`, preview(r)))
		}
	}
	if len(detail) == 0 {
		if addProps {
			// It allows what it allowed: no diagnostic, and the schema's
			// own bytes after the new member.
			return append([]byte(`{"properties":{},`), bytes.TrimSpace(raw)[1:]...), "", nil
		}
		return raw, "", nil
	}
	return encodeMembers(members), strings.Join(detail, "; "), nil
}

// encodeMembers writes an object with "type" and "properties" first, then
// the other members in name order, values as they were.
func encodeMembers(m map[string][]byte) json.RawMessage {
	keys := make([]string, 0, len(m))
	for k := range m {
		if k != "type" && k != "properties" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var b bytes.Buffer
	b.WriteByte('{')
	first := true
	write := func(k string, v []byte) {
		if !first {
			b.WriteByte(',')
		}
		first = false
		b.WriteByte('"')
		b.WriteString(k) // raw key bytes as received (escapes kept)
		b.WriteString(`":`)
		b.Write(v)
	}
	for _, k := range []string{"type", "properties"} {
		if v, ok := m[k]; ok {
			write(k, v)
		}
	}
	for _, k := range keys {
		write(k, m[k])
	}
	b.WriteByte('}')
	return b.Bytes()
}
