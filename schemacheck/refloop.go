package schemacheck

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
)

// A reference loop that never reaches into the value: {"$ref":"#"}, or
// {"$defs":{"a":{"allOf":[{"$ref":"#/$defs/a"}]}},"$ref":"#/$defs/a"}.
// jsonschema-go v0.4.3 resolves such a schema and then, validating any
// value, follows the loop until the goroutine's stack is exhausted: a
// fatal error that ends the whole process, not a panic (an upstream's inputSchema is untrusted text). Compile refuses such
// schemas (the proxy then skips validation for the tool, as for any schema
// that does not compile).
//
// The keywords that apply a subschema to the same value are followed:
// $ref, $dynamicRef, allOf, anyOf, oneOf, not, if, then, else,
// dependentSchemas and draft-07 dependencies. Keywords that apply one to a
// part of the value (properties, items, …) end a path: each step there
// goes one level into the value, which is finite. A reference whose
// target this check cannot find ($dynamicRef, an anchor, a relative URI,
// a "#…" reference inside a schema with an $id of its own, which rebases
// it)
// counts as a loop: such schemas are not validated rather than risk the
// process.

// refLoopOf checks the schema as jsonschema-go read it: written back as
// JSON its keywords have their canonical names (encoding/json matched
// "AllOf" or "$REF" to them when reading), and its references' JSON
// Pointers walk those names.
func refLoopOf(s *jsonschema.Schema) string {
	b, err := json.Marshal(s)
	if err != nil {
		return "it cannot be checked for a reference loop: " + err.Error()
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		return "it cannot be checked for a reference loop: " + err.Error()
	}
	ids := map[string]string{}
	collectIDs(doc, "", ids)
	return (&Schema{doc: doc, ids: ids}).refLoop()
}

// inPlaceKeys are the keywords whose subschemas apply to the same value.
var inPlaceKeys = []string{"allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas", "dependencies"}

// refLoop returns a description of a loop of doc's in-place keywords, or
// "" when there is none. s resolves references (doc and ids set).
func (s *Schema) refLoop() string {
	// The objects inside a schema with an $id of its own (not the
	// root's): a "#…" reference there is relative to that schema.
	rebased := map[uintptr]bool{}
	var mark func(v any, in bool)
	mark = func(v any, in bool) {
		switch x := v.(type) {
		case map[string]any:
			if in {
				rebased[reflect.ValueOf(x).Pointer()] = true
			}
			for k, c := range x {
				mark(c, in || hasID(c) && k != "enum" && k != "const" && k != "default" && k != "examples")
			}
		case []any:
			for _, c := range x {
				mark(c, in || hasID(c))
			}
		}
	}
	mark(s.doc, false)
	const (
		white = iota
		grey
		black
	)
	color := map[uintptr]int{}
	type frame struct {
		node  map[string]any
		edges []any
		next  int
	}
	// edges lists the schemas node applies to the same value; a nil entry
	// is a reference that could not be followed.
	edges := func(node map[string]any) ([]any, string) {
		var out []any
		for _, k := range []string{"$ref", "$dynamicRef"} {
			ref, ok := node[k].(string)
			if !ok {
				continue
			}
			if k == "$dynamicRef" || rebased[reflect.ValueOf(node).Pointer()] && len(ref) > 0 && ref[0] == '#' {
				return nil, fmt.Sprintf("its %s %q cannot be followed to check it for a loop", k, bounded(ref, 80))
			}
			t, ok := s.resolveRef(ref)
			if !ok {
				return nil, fmt.Sprintf("its $ref %q cannot be followed to check it for a loop", bounded(ref, 80))
			}
			out = append(out, t)
		}
		for _, k := range inPlaceKeys {
			switch v := node[k].(type) {
			case []any:
				out = append(out, v...)
			case map[string]any:
				if k == "dependentSchemas" || k == "dependencies" {
					for _, d := range v {
						out = append(out, d)
					}
				} else {
					out = append(out, v)
				}
			}
		}
		return out, ""
	}
	var problem string
	var walkDoc func(v any) bool
	visit := func(start map[string]any) bool {
		if color[reflect.ValueOf(start).Pointer()] != white {
			return true
		}
		e, p := edges(start)
		if p != "" {
			problem = p
			return false
		}
		color[reflect.ValueOf(start).Pointer()] = grey
		stack := []frame{{node: start, edges: e}}
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			if top.next == len(top.edges) {
				color[reflect.ValueOf(top.node).Pointer()] = black
				stack = stack[:len(stack)-1]
				continue
			}
			child, _ := top.edges[top.next].(map[string]any)
			top.next++
			if child == nil { // true, false
				continue
			}
			switch color[reflect.ValueOf(child).Pointer()] {
			case grey:
				problem = "its references loop without reaching into the value (e.g. {\"$ref\":\"#\"}), which the validator would follow without end"
				return false
			case black:
				continue
			}
			ce, p := edges(child)
			if p != "" {
				problem = p
				return false
			}
			color[reflect.ValueOf(child).Pointer()] = grey
			stack = append(stack, frame{node: child, edges: ce})
		}
		return true
	}
	// Every object of the document may be a schema (a $ref can point
	// anywhere); encoding/json bounds the document's depth (10,000).
	walkDoc = func(v any) bool {
		switch x := v.(type) {
		case map[string]any:
			if !visit(x) {
				return false
			}
			for k, c := range x {
				if k == "enum" || k == "const" || k == "default" || k == "examples" { // values, not schemas
					continue
				}
				if !walkDoc(c) {
					return false
				}
			}
		case []any:
			for _, c := range x {
				if !walkDoc(c) {
					return false
				}
			}
		}
		return true
	}
	walkDoc(s.doc)
	return problem
}

// hasID reports whether v is an object with a non-empty $id.
func hasID(v any) bool {
	m, _ := v.(map[string]any)
	id, _ := m["$id"].(string)
	return id != ""
}

// bounded cuts s to at most n bytes.
func bounded(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
