package schemacheck

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/agnivade/levenshtein"
)

// MaxMismatches bounds the mismatches one error reports (the first
// ValidationError and its More).
const MaxMismatches = 5

// collect walks the instance v next to the normalised schema and returns
// every mismatch of the simple keywords (type, required, enum, const,
// properties, additionalProperties: false, items, prefixItems, allOf and
// local $refs), each at a concrete JSON Pointer (array items by index).
//
// jsonschema-go stops at the first failure and names array items only by
// their schema location ("*"), so a model fixing a call needed one attempt
// per mismatch. collect runs only
// after the library said the value is invalid; it is the library that
// decides validity. Keywords whose failure depends on other branches
// (anyOf, oneOf, not, if/then/else, unevaluated*, patternProperties) are
// not walked: the library's own error covers them.
//
// The instance comes from a model (untrusted): the walk is bounded by
// depth (maxWalkDepth), by the number of nodes visited (maxWalkNodes) and
// by the mismatches kept.
//
// It also returns the fields of mismatches it folded into another one (an
// unknown property named by a missing one's "did you mean").
func (s *Schema) collect(v any) (mismatches []*ValidationError, folded []string) {
	w := &walker{s: s}
	w.walk(s.doc, v, "", 0)
	return w.out, w.folded
}

const (
	maxWalkDepth = 48
	maxWalkNodes = 20000
	maxCollected = 50
)

type walker struct {
	s      *Schema
	out    []*ValidationError
	folded []string
	nodes  int
}

func (w *walker) add(ve *ValidationError) {
	if len(w.out) < maxCollected {
		ve.Reason = oneLine(ve.Reason, 400)
		w.out = append(w.out, ve)
	}
}

func fieldOf(path string) string {
	if path == "" {
		return "/"
	}
	return path
}

func (w *walker) walk(schema, v any, path string, depth int) {
	sm, ok := schema.(map[string]any)
	w.nodes++
	if !ok || depth > maxWalkDepth || w.nodes > maxWalkNodes || len(w.out) >= maxCollected {
		return
	}
	if ref, ok := sm["$ref"].(string); ok {
		if target, ok := w.s.resolveRef(ref); ok {
			w.walk(target, v, path, depth+1)
		}
		switch w.s.Dialect {
		case Draft04, Draft06, Draft07:
			return // up to draft-07 a $ref's sibling keywords are ignored
		}
	}
	if all, ok := sm["allOf"].([]any); ok {
		for _, sub := range all {
			w.walk(sub, v, path, depth+1)
		}
	}
	got := compact(v, 80)
	if t, ok := sm["type"]; ok && !typeMatches(t, v) {
		w.add(&ValidationError{Field: fieldOf(path), Reason: "expected " + typeWords(t) + ", got " + got, Schema: schemaPart(sm)})
		return
	}
	if e, ok := sm["enum"].([]any); ok && !containsJSON(e, v) {
		w.add(&ValidationError{Field: fieldOf(path), Reason: "expected one of " + compact(e, 300) + ", got " + got, Schema: schemaPart(sm)})
	}
	if c, ok := sm["const"]; ok && !equalJSON(c, v) {
		w.add(&ValidationError{Field: fieldOf(path), Reason: "expected exactly " + compact(c, 200) + ", got " + got, Schema: schemaPart(sm)})
	}
	switch x := v.(type) {
	case map[string]any:
		w.object(sm, x, path, depth)
	case []any:
		w.array(sm, x, path, depth)
	}
}

func (w *walker) object(sm map[string]any, x map[string]any, path string, depth int) {
	props, _ := sm["properties"].(map[string]any)
	_, hasPattern := sm["patternProperties"]
	closed := false
	if ap, ok := sm["additionalProperties"].(bool); ok && !ap && !hasPattern {
		closed = true
	}
	var unknown []string
	for k := range x {
		if _, ok := props[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	used := map[string]bool{} // unknown keys already named by a "did you mean"
	if req, ok := sm["required"].([]any); ok {
		part := ""
		for _, r := range req {
			name, ok := r.(string)
			if !ok {
				continue
			}
			if _, present := x[name]; present {
				continue
			}
			if part == "" {
				part = requiredPart(sm)
			}
			reason := fmt.Sprintf("missing required property %q", name)
			if k := closest(name, unknown, used); k != "" {
				used[k] = true
				w.folded = append(w.folded, join(fieldOf(path), k))
				reason += fmt.Sprintf("; you sent %q, which is not a property: did you mean %q?", k, name)
			}
			w.add(&ValidationError{Field: join(fieldOf(path), name), Reason: reason, Schema: part})
		}
	}
	if closed {
		allowed := make([]string, 0, len(props))
		for k := range props {
			allowed = append(allowed, k)
		}
		sort.Strings(allowed)
		for _, k := range unknown {
			if used[k] {
				continue
			}
			reason := fmt.Sprintf("unexpected property %q", k)
			var free []string // allowed names not sent
			for _, a := range allowed {
				if _, sent := x[a]; !sent {
					free = append(free, a)
				}
			}
			if a := closest(k, free, nil); a != "" {
				reason += fmt.Sprintf(": did you mean %q?", a)
			}
			if len(allowed) > 0 {
				reason += " (allowed: " + quoteJoin(allowed) + ")"
			} else {
				reason += " (no other properties are allowed)"
			}
			w.add(&ValidationError{Field: join(fieldOf(path), k), Reason: reason,
				Schema: schemaPart(map[string]any{"properties": allowed, "additionalProperties": false})})
		}
	}
	keys := make([]string, 0, len(x))
	for k := range x {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if sub, ok := props[k]; ok {
			w.walk(sub, x[k], join(fieldOf(path), k), depth+1)
		}
	}
}

func (w *walker) array(sm map[string]any, x []any, path string, depth int) {
	prefix, _ := sm["prefixItems"].([]any)
	if arr, ok := sm["items"].([]any); ok && prefix == nil { // draft-07 tuple form
		prefix = arr
	}
	items, _ := sm["items"].(map[string]any)
	for i, it := range x {
		p := fieldOf(path)
		if p == "/" {
			p = ""
		}
		p += "/" + strconv.Itoa(i)
		switch {
		case i < len(prefix):
			w.walk(prefix[i], it, p, depth+1)
		case items != nil:
			w.walk(items, it, p, depth+1)
		}
		if len(w.out) >= maxCollected {
			return
		}
	}
}

// requiredPart is the schema shown with a missing required property: the
// "required" list and the subschema of every property it names, so the
// excerpt never names a required property it does not show.
func requiredPart(sm map[string]any) string {
	props, _ := sm["properties"].(map[string]any)
	req, _ := sm["required"].([]any)
	shown := map[string]any{}
	for _, r := range req {
		if n, ok := r.(string); ok {
			if p, ok := props[n]; ok {
				shown[n] = p
			}
		}
	}
	part := map[string]any{"required": req}
	if len(shown) > 0 {
		part["properties"] = shown
	}
	return schemaPart(part)
}

// resolveRef resolves a local $ref ("#", "#/json/pointer") or the $id of
// a schema in the document; false for anything else (remote, anchors).
func (s *Schema) resolveRef(ref string) (any, bool) {
	if strings.HasPrefix(ref, "#") {
		return pointer(s.doc, ref[1:])
	}
	if p, ok := s.ids[ref]; ok {
		return pointer(s.doc, p)
	}
	return nil, false
}

// closest returns the candidate that looks like a slip for name: the same
// once case, "_", "-" and spaces are ignored, or within a small edit
// distance (1 for names up to 4 letters, 2 up to 8, 3 beyond); "" when
// none does. Candidates in skip are passed over; ties go to the first.
func closest(name string, cands []string, skip map[string]bool) string {
	nn := normName(name)
	best, bestD := "", 1<<30
	for _, c := range cands {
		if skip[c] || len(c) > 128 || len(name) > 128 {
			continue
		}
		nc := normName(c)
		d := 0
		if nc != nn {
			d = levenshtein.ComputeDistance(nn, nc) + 1
		}
		if d < bestD {
			best, bestD = c, d
		}
	}
	limit := 3
	switch n := len(nn); {
	case n <= 4:
		limit = 1
	case n <= 8:
		limit = 2
	}
	if best == "" || bestD-1 > limit {
		return ""
	}
	return best
}

func normName(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '_', '-', ' ':
			return -1
		}
		return r
	}, strings.ToLower(s))
}

// typeMatches reports whether v is of the JSON Schema type t (a name or a
// list of names); an unknown type name matches (the library decides).
func typeMatches(t any, v any) bool {
	one := func(name string) bool {
		switch name {
		case "object":
			_, ok := v.(map[string]any)
			return ok
		case "array":
			_, ok := v.([]any)
			return ok
		case "string":
			_, ok := v.(string)
			return ok
		case "boolean":
			_, ok := v.(bool)
			return ok
		case "null":
			return v == nil
		case "number":
			_, ok := v.(float64)
			return ok
		case "integer":
			f, ok := v.(float64)
			return ok && f == math.Trunc(f) && !math.IsInf(f, 0)
		}
		return true
	}
	switch x := t.(type) {
	case string:
		return one(x)
	case []any:
		for _, e := range x {
			if s, ok := e.(string); ok && one(s) {
				return true
			}
		}
		return false
	}
	return true
}

func containsJSON(list []any, v any) bool {
	for _, e := range list {
		if equalJSON(e, v) {
			return true
		}
	}
	return false
}

// equalJSON compares two values decoded from JSON (numbers are float64).
func equalJSON(a, b any) bool { return reflect.DeepEqual(a, b) }
