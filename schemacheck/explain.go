package schemacheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// explain turns a jsonschema-go validation error into a ValidationError
// for the value v. The library's error text is a chain of the schema
// locations it went through, then the failing keyword's message:
//
//	validating root: validating /properties/n: minimum: 0/1 is less than 1.000000
//
// The chain gives the instance path (properties become their names, array
// items "*"), the deepest location gives the subschema shown, and the
// keyword picks how the expectation is worded, from the subschema itself
// rather than the library's text.
func (s *Schema) explain(err error, v any) *ValidationError {
	field, loc, reason := splitChain(err.Error(), s.ids)
	part, _ := pointer(s.doc, loc)
	pm, _ := part.(map[string]any)
	ve := &ValidationError{Field: field, Reason: reason}
	kw, _, _ := strings.Cut(reason, ":")
	got := ""
	if g, ok := instanceAt(v, field); ok {
		got = compact(g, 80)
	}
	switch {
	case kw == "required":
		// One mismatch per missing property, each at the property's own
		// path (the walk in collect.go lists the others).
		names := quotedList(reason)
		if len(names) > 0 {
			ve.Field = join(field, names[0])
			ve.Reason = fmt.Sprintf("missing required property %q", names[0])
		}
		part = nil
		ve.Schema = requiredPart(pm)
	case strings.HasPrefix(reason, "unexpected additional properties"):
		names := quotedList(reason)
		var allowed []string
		if props, ok := pm["properties"].(map[string]any); ok {
			for k := range props {
				allowed = append(allowed, k)
			}
			sort.Strings(allowed)
		}
		if len(names) > 0 {
			ve.Field = join(field, names[0])
		}
		ve.Reason = "unexpected property " + quoteJoin(names)
		if len(allowed) > 0 {
			ve.Reason += " (allowed: " + quoteJoin(allowed) + ")"
		} else {
			ve.Reason += " (no other properties are allowed)"
		}
		part = map[string]any{"properties": allowed, "additionalProperties": pm["additionalProperties"]}
	case kw == "type":
		ve.Reason = "expected " + typeWords(pm["type"])
		if got != "" {
			ve.Reason += ", got " + got
		}
	case kw == "enum":
		ve.Reason = "expected one of " + compact(pm["enum"], 300)
		if got != "" {
			ve.Reason += ", got " + got
		}
	case kw == "const":
		ve.Reason = "expected exactly " + compact(pm["const"], 200)
		if got != "" {
			ve.Reason += ", got " + got
		}
	case kw == "anyOf" || kw == "oneOf":
		ve.Reason = "matches none of the allowed shapes (" + kw + ")"
		if strings.HasPrefix(reason, "oneOf: validated against both") {
			ve.Reason = "matches more than one of the allowed shapes (oneOf)"
		}
		if got != "" {
			ve.Reason += ", got " + got
		}
	case isBoundKeyword(kw):
		if b, ok := pm[kw]; ok {
			ve.Reason = fmt.Sprintf("expected %s %s", kw, compact(b, 120))
			if got != "" {
				ve.Reason += ", got " + got
			}
		}
	}
	ve.Reason = oneLine(ve.Reason, 400)
	if part != nil {
		ve.Schema = schemaPart(part)
	}
	return ve
}

func isBoundKeyword(k string) bool {
	switch k {
	case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength", "maxLength", "pattern",
		"minItems", "maxItems", "uniqueItems", "minProperties", "maxProperties", "minContains", "maxContains", "contains", "not":
		return true
	}
	return false
}

// validatingRE matches one "validating <schema location>: " step: "root",
// a JSON Pointer, or the $id of a schema (checked against ids).
var validatingRE = regexp.MustCompile(`^validating (root|/.*?|[^ ]+?): `)

// splitChain splits a jsonschema-go error into the instance path, the
// deepest schema location ("" for the root) and the keyword's message.
// Locations are absolute JSON Pointers into the root schema; after a $ref
// the chain jumps (e.g. to /$defs/R), and only the relative steps within
// one jump add to the instance path. Schema-only steps ($defs,
// allOf/anyOf/oneOf branches, if/then/else) add nothing.
//
// A schema with an $id is named by it; ids maps each $id to its pointer.
func splitChain(msg string, ids map[string]string) (field, loc, reason string) {
	rest := msg
	var path []string
	prev := ""
	for {
		m := validatingRE.FindStringSubmatch(rest)
		if m == nil {
			break
		}
		l := m[1]
		if l != "root" && !strings.HasPrefix(l, "/") {
			ptr, ok := ids[l]
			if !ok {
				break
			}
			l = ptr
		}
		rest = rest[len(m[0]):]
		if l == "root" || l == "" { // the root, by name or by its $id
			prev, loc = "", ""
			continue
		}
		rel := l
		if prev != "" && strings.HasPrefix(l, prev+"/") {
			rel = l[len(prev):]
		}
		path = append(path, schemaSteps(rel)...)
		prev, loc = l, l
	}
	reason = strings.Join(strings.Fields(strings.ReplaceAll(rest, "\n", " ; ")), " ")
	reason = strings.ReplaceAll(reason, ": ;", ";")
	return "/" + strings.Join(path, "/"), loc, reason
}

// schemaSteps converts a relative schema JSON Pointer into instance path
// elements (see splitChain).
func schemaSteps(ptr string) []string {
	segs := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	var out []string
	for i := 0; i < len(segs); i++ {
		switch segs[i] {
		case "properties":
			if i+1 < len(segs) {
				out = append(out, segs[i+1]) // still escaped (~0 ~1): the instance path is a JSON Pointer too
				i++
			}
		case "prefixItems":
			if i+1 < len(segs) {
				out = append(out, segs[i+1])
				i++
			}
		case "items", "additionalItems", "additionalProperties", "unevaluatedProperties", "unevaluatedItems", "contains":
			out = append(out, "*")
		case "patternProperties", "$defs", "definitions", "dependentSchemas", "allOf", "anyOf", "oneOf":
			i++ // the name or index that follows is the schema's, not the instance's
		}
	}
	return out
}

var ptrUnescape = strings.NewReplacer("~1", "/", "~0", "~")

// pointer resolves a JSON Pointer ("" or "/a/b") in doc.
func pointer(doc any, ptr string) (any, bool) {
	if ptr == "" || ptr == "/" {
		return doc, true
	}
	cur := doc
	for _, seg := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		seg = ptrUnescape.Replace(seg)
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[seg]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// instanceAt returns the value at an instance path; false when the path
// has a "*" (index not known) or does not exist.
func instanceAt(v any, field string) (any, bool) {
	if strings.Contains(field, "*") {
		return nil, false
	}
	return pointer(v, field)
}

var ptrEscape = strings.NewReplacer("~", "~0", "/", "~1")

func join(field, name string) string {
	name = ptrEscape.Replace(name)
	if field == "/" {
		return "/" + name
	}
	return field + "/" + name
}

var quotedRE = regexp.MustCompile(`"((?:[^"\\]|\\.)*)"`)

// quotedList returns the Go-quoted strings of s, unquoted.
func quotedList(s string) []string {
	var out []string
	for _, m := range quotedRE.FindAllString(s, 50) {
		if u, err := strconv.Unquote(m); err == nil {
			out = append(out, u)
		}
	}
	return out
}

func quoteJoin(names []string) string {
	q := make([]string, 0, len(names))
	for i, n := range names {
		if i == 12 {
			q = append(q, fmt.Sprintf("and %d more", len(names)-12))
			break
		}
		q = append(q, strconv.Quote(clip(n, 80)))
	}
	return strings.Join(q, ", ")
}

// typeWords renders a schema's "type" for "expected …".
func typeWords(t any) string {
	article := func(s string) string {
		switch s {
		case "object", "array", "integer":
			return "an " + s
		case "null":
			return "null"
		}
		return "a " + s
	}
	switch x := t.(type) {
	case string:
		return article(x)
	case []any:
		var parts []string
		for _, v := range x {
			if s, ok := v.(string); ok {
				parts = append(parts, article(s))
			}
		}
		return strings.Join(parts, " or ")
	}
	return "another type"
}

// compact renders v as JSON of at most n bytes.
func compact(v any, n int) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return clip(strings.TrimSpace(buf.String()), n)
}

func oneLine(s string, n int) string {
	return clip(strings.Join(strings.Fields(s), " "), n)
}

// schemaPart renders the subschema shown with an error, within
// MaxSchemaPart bytes: whole when it fits; else without nested
// descriptions; else with each "properties" map reduced to its names; else cut.
func schemaPart(part any) string {
	out := compact(part, 1<<20)
	if len(out) <= MaxSchemaPart {
		return out
	}
	out = compact(strip(part, 0, false), 1<<20)
	if len(out) <= MaxSchemaPart {
		return out
	}
	return compact(strip(part, 0, true), MaxSchemaPart)
}

// strip copies a schema without descriptions below the top level, and
// with properties maps reduced to their sorted names when names is set.
func strip(v any, depth int, names bool) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			switch {
			case depth > 0 && (k == "description" || k == "title" || k == "examples"):
				continue
			case names && k == "properties":
				if m, ok := val.(map[string]any); ok {
					ks := make([]string, 0, len(m))
					for pk := range m {
						ks = append(ks, pk)
					}
					sort.Strings(ks)
					out[k] = ks
					continue
				}
			}
			out[k] = strip(val, depth+1, names)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = strip(e, depth+1, names)
		}
		return out
	}
	return v
}

// collectIDs maps the $id of every schema object in doc to its JSON
// Pointer ("" for the root).
func collectIDs(doc any, ptr string, out map[string]string) {
	switch x := doc.(type) {
	case map[string]any:
		if id, ok := x["$id"].(string); ok && id != "" {
			if _, dup := out[id]; !dup {
				out[id] = ptr
			}
		}
		for k, v := range x {
			if k == "enum" || k == "const" || k == "default" || k == "examples" {
				continue
			}
			collectIDs(v, ptr+"/"+ptrEscape.Replace(k), out)
		}
	case []any:
		for i, v := range x {
			collectIDs(v, ptr+"/"+strconv.Itoa(i), out)
		}
	}
}
