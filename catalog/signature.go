package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
)

// This file renders JSON Schemas as compact TypeScript-style types for
// search hits (SPEC §4: a bounded `input` signature such as
// `{ id: string; mode?: "drip" | "flood" }`, and for trusted sources an
// `output` hint such as `Array<{ id: string; paid: boolean }>`).
//
// Mapping:
//
//	object with properties   { a: T; b?: U }   (b not in "required")
//	additionalProperties: S  { [k: string]: S } (after the properties)
//	object, no properties    {}                 (an "open" type)
//	array with items S       S[] for a simple S, Array<S> otherwise
//	prefixItems / items[]    [A, B]
//	string / boolean / null  string / boolean / null
//	integer / number         number
//	enum, const              "a" | "b" | 3 (JSON literals)
//	anyOf / oneOf            A | B
//	allOf                    A & B
//	type: [..] or nullable   T | null
//	no type, true, {}        unknown            (an "open" type)
//	$ref "#/..."             the referenced schema ($defs, definitions or
//	                         any local JSON pointer)
//
// Anything beyond Bounds, a recursive or non-local $ref, or JSON that is
// not a schema makes the result incomplete (complete=false); callers then
// show "unknown" (SPEC §4) and keep the full schema for describe.

// Bounds limits signature rendering. A zero field takes its default.
type Bounds struct {
	// MaxLen is the longest signature, in bytes (default 400).
	MaxLen int
	// MaxDepth is the deepest nesting of objects/arrays (default 4; the
	// top-level object is depth 1).
	MaxDepth int
	// MaxProps is the most properties rendered for one object (default 24).
	MaxProps int
	// MaxEnum is the most enum values (default 12).
	MaxEnum int
	// MaxUnion is the most anyOf/oneOf/allOf/type variants (default 8).
	MaxUnion int
	// MaxBytes is the largest schema parsed, in bytes (default 512 KiB);
	// a larger schema is incomplete without being parsed.
	MaxBytes int
	// MaxNodes is the most schema nodes visited, $ref expansions included
	// (default 2000): the time budget of the walk.
	MaxNodes int
}

// DefaultBounds returns the documented default Bounds.
func DefaultBounds() Bounds {
	return Bounds{MaxLen: 400, MaxDepth: 4, MaxProps: 24, MaxEnum: 12, MaxUnion: 8, MaxBytes: 512 << 10, MaxNodes: 2000}
}

func (b Bounds) withDefaults() Bounds {
	d := DefaultBounds()
	pick := func(v, def int) int {
		if v <= 0 {
			return def
		}
		return v
	}
	return Bounds{
		MaxLen: pick(b.MaxLen, d.MaxLen), MaxDepth: pick(b.MaxDepth, d.MaxDepth),
		MaxProps: pick(b.MaxProps, d.MaxProps), MaxEnum: pick(b.MaxEnum, d.MaxEnum),
		MaxUnion: pick(b.MaxUnion, d.MaxUnion), MaxBytes: pick(b.MaxBytes, d.MaxBytes),
		MaxNodes: pick(b.MaxNodes, d.MaxNodes),
	}
}

// RenderInput renders a tool's input schema. complete is false when the
// schema is absent, not valid JSON, not a schema, or exceeds b; sig is then
// a best-effort prefix or "" and must not be shown (use "unknown"). Open
// parts (a parameter without a type) render as "unknown" and do not make
// an input signature incomplete.
func RenderInput(schema json.RawMessage, b Bounds) (sig string, complete bool) {
	return render(schema, b, false)
}

// RenderOutput renders a tool's output schema as an output hint. Besides
// the cases of RenderInput, an open schema (any part rendered as "unknown"
// or as an object without declared properties) is incomplete: SPEC §4 says
// an open, oversized or partial output schema gets no hint.
func RenderOutput(schema json.RawMessage, b Bounds) (sig string, complete bool) {
	return render(schema, b, true)
}

func render(schema json.RawMessage, b Bounds, strictOpen bool) (string, bool) {
	b = b.withDefaults()
	if len(bytes.TrimSpace(schema)) == 0 || len(schema) > b.MaxBytes {
		return "", false
	}
	root, err := parseOrdered(schema, 2*b.MaxDepth+16)
	if err != nil {
		return "", false
	}
	r := &renderer{b: b, root: root}
	r.node(root, 1)
	if r.failed || len(r.buf) > b.MaxLen || (strictOpen && r.open) {
		return "", false
	}
	return string(r.buf), true
}

// jobj is a JSON object that keeps its key order (properties render in
// declaration order).
type jobj struct {
	keys []string
	m    map[string]any
}

func (o *jobj) get(k string) (any, bool) {
	v, ok := o.m[k]
	return v, ok
}

// tooDeep marks a value nested deeper than the parser keeps.
type tooDeep struct{}

var errNotJSON = errors.New("schema: invalid JSON")

// parseOrdered decodes JSON into *jobj, []any, string, json.Number, bool
// and nil, keeping at most maxDepth levels of nesting (deeper values are
// validated and skipped iteratively and replaced by tooDeep{}), so parse
// cost is linear in the input and recursion is bounded. It is a small
// hand-written parser: encoding/json's token API costs several times more
// per schema.
func parseOrdered(data []byte, maxDepth int) (any, error) {
	p := &jparser{data: data, maxDepth: maxDepth}
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.ws()
	if p.i != len(p.data) {
		return nil, errNotJSON
	}
	return v, nil
}

type jparser struct {
	data     []byte
	i        int
	maxDepth int
}

func (p *jparser) ws() {
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jparser) value(depth int) (any, error) {
	p.ws()
	if p.i >= len(p.data) {
		return nil, errNotJSON
	}
	switch c := p.data[p.i]; {
	case c == '{' || c == '[':
		if depth >= p.maxDepth {
			if err := p.skip(); err != nil {
				return nil, err
			}
			return tooDeep{}, nil
		}
		if c == '{' {
			return p.object(depth)
		}
		return p.array(depth)
	case c == '"':
		return p.str()
	case c == 't':
		return true, p.lit("true")
	case c == 'f':
		return false, p.lit("false")
	case c == 'n':
		return nil, p.lit("null")
	case c == '-' || c >= '0' && c <= '9':
		return p.num()
	}
	return nil, errNotJSON
}

func (p *jparser) lit(w string) error {
	if !bytes.HasPrefix(p.data[p.i:], []byte(w)) {
		return errNotJSON
	}
	p.i += len(w)
	return nil
}

func (p *jparser) num() (any, error) {
	start := p.i
	for p.i < len(p.data) {
		c := p.data[p.i]
		if c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' {
			p.i++
			continue
		}
		break
	}
	n := json.Number(p.data[start:p.i])
	if _, err := n.Float64(); err != nil {
		return nil, errNotJSON
	}
	return n, nil
}

// str parses a JSON string starting at its opening quote.
func (p *jparser) str() (string, error) {
	start := p.i
	p.i++
	escaped := false
	for p.i < len(p.data) {
		c := p.data[p.i]
		switch {
		case c == '\\':
			escaped = true
			p.i += 2
			continue
		case c == '"':
			p.i++
			if !escaped {
				return string(p.data[start+1 : p.i-1]), nil
			}
			var s string
			if err := json.Unmarshal(p.data[start:p.i], &s); err != nil {
				return "", errNotJSON
			}
			return s, nil
		case c < 0x20:
			return "", errNotJSON
		}
		p.i++
	}
	return "", errNotJSON
}

func (p *jparser) object(depth int) (any, error) {
	p.i++ // {
	o := &jobj{m: map[string]any{}}
	p.ws()
	if p.i < len(p.data) && p.data[p.i] == '}' {
		p.i++
		return o, nil
	}
	for {
		p.ws()
		if p.i >= len(p.data) || p.data[p.i] != '"' {
			return nil, errNotJSON
		}
		k, err := p.str()
		if err != nil {
			return nil, err
		}
		p.ws()
		if p.i >= len(p.data) || p.data[p.i] != ':' {
			return nil, errNotJSON
		}
		p.i++
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		if _, dup := o.m[k]; !dup {
			o.keys = append(o.keys, k)
		}
		o.m[k] = v
		p.ws()
		if p.i >= len(p.data) {
			return nil, errNotJSON
		}
		switch p.data[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return o, nil
		default:
			return nil, errNotJSON
		}
	}
}

func (p *jparser) array(depth int) (any, error) {
	p.i++ // [
	a := []any{}
	p.ws()
	if p.i < len(p.data) && p.data[p.i] == ']' {
		p.i++
		return a, nil
	}
	for {
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		p.ws()
		if p.i >= len(p.data) {
			return nil, errNotJSON
		}
		switch p.data[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return a, nil
		default:
			return nil, errNotJSON
		}
	}
}

// skip passes over one object or array without building it and without
// recursion: brackets are counted, strings skipped. (Structure inside is
// only checked for balance, which is enough for a value that is never
// rendered.)
func (p *jparser) skip() error {
	level := 0
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case '{', '[':
			level++
		case '}', ']':
			level--
			if level == 0 {
				p.i++
				return nil
			}
		case '"':
			if _, err := p.str(); err != nil {
				return err
			}
			continue
		}
		p.i++
	}
	return errNotJSON
}

type renderer struct {
	b      Bounds
	root   any
	buf    []byte
	nodes  int
	failed bool
	open   bool
	refs   []string // $ref stack, for recursion detection
}

func (r *renderer) fail() { r.failed = true }

func (r *renderer) w(s string) {
	if r.failed {
		return
	}
	r.buf = append(r.buf, s...)
	if len(r.buf) > r.b.MaxLen {
		r.fail()
	}
}

// node renders one schema at the given depth.
func (r *renderer) node(v any, depth int) {
	if r.failed {
		return
	}
	if r.nodes++; r.nodes > r.b.MaxNodes {
		r.fail()
		return
	}
	switch s := v.(type) {
	case bool:
		if s {
			r.open = true
			r.w("unknown")
		} else {
			r.w("never")
		}
		return
	case *jobj:
		r.schema(s, depth)
	default:
		r.fail()
	}
}

func (r *renderer) schema(s *jobj, depth int) {
	if ref, ok := s.get("$ref"); ok {
		r.ref(ref, depth)
		return
	}
	if c, ok := s.get("const"); ok {
		r.literal(c)
		r.nullable(s)
		return
	}
	if e, ok := s.get("enum"); ok {
		vals, ok := e.([]any)
		if !ok || len(vals) == 0 || len(vals) > r.b.MaxEnum {
			r.fail()
			return
		}
		for i, x := range vals {
			if i > 0 {
				r.w(" | ")
			}
			r.literal(x)
		}
		r.nullable(s)
		return
	}
	for _, kw := range []string{"anyOf", "oneOf", "allOf"} {
		if x, ok := s.get(kw); ok {
			vs, ok := x.([]any)
			if !ok || len(vs) == 0 || len(vs) > r.b.MaxUnion {
				r.fail()
				return
			}
			for i, sub := range vs {
				if i > 0 {
					if kw == "allOf" {
						r.w(" & ")
					} else {
						r.w(" | ")
					}
				}
				start := len(r.buf)
				r.node(sub, depth)
				// A union inside an intersection needs parentheses.
				if kw == "allOf" && len(vs) > 1 && !r.failed && strings.Contains(string(r.buf[start:]), " | ") {
					elem := string(r.buf[start:])
					r.buf = r.buf[:start]
					r.w("(")
					r.w(elem)
					r.w(")")
				}
			}
			r.nullable(s)
			return
		}
	}
	var types []string
	switch t := s.m["type"].(type) {
	case string:
		types = []string{t}
	case []any:
		if len(t) == 0 || len(t) > r.b.MaxUnion {
			r.fail()
			return
		}
		for _, x := range t {
			str, ok := x.(string)
			if !ok {
				r.fail()
				return
			}
			types = append(types, str)
		}
	case nil:
		if _, ok := s.m["type"]; ok {
			r.fail()
			return
		}
		switch {
		case s.m["properties"] != nil || s.m["additionalProperties"] != nil:
			types = []string{"object"}
		case s.m["items"] != nil || s.m["prefixItems"] != nil:
			types = []string{"array"}
		default:
			r.open = true
			r.w("unknown")
			return
		}
	default:
		r.fail()
		return
	}
	for i, t := range types {
		if i > 0 {
			r.w(" | ")
		}
		switch t {
		case "string":
			r.w("string")
		case "integer", "number":
			r.w("number")
		case "boolean":
			r.w("boolean")
		case "null":
			r.w("null")
		case "object":
			r.object(s, depth)
		case "array":
			r.array(s, depth)
		default:
			r.fail()
			return
		}
	}
	r.nullable(s)
}

// nullable appends " | null" for OpenAPI's "nullable": true.
func (r *renderer) nullable(s *jobj) {
	if b, ok := s.m["nullable"].(bool); ok && b {
		r.w(" | null")
	}
}

func (r *renderer) literal(v any) {
	switch x := v.(type) {
	case string:
		plain := true
		for i := 0; i < len(x); i++ {
			if c := x[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x7f {
				plain = false
				break
			}
		}
		if plain {
			r.w(`"`)
			r.w(x)
			r.w(`"`)
			return
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if enc.Encode(x) != nil {
			r.fail()
			return
		}
		r.w(strings.TrimSuffix(buf.String(), "\n"))
	case json.Number:
		r.w(x.String())
	case bool:
		r.w(strconv.FormatBool(x))
	case nil:
		r.w("null")
	default:
		r.fail() // object or array literals are not rendered
	}
}

func (r *renderer) ref(v any, depth int) {
	ref, ok := v.(string)
	if !ok || !strings.HasPrefix(ref, "#") {
		r.fail() // only local refs are resolved
		return
	}
	for _, x := range r.refs {
		if x == ref {
			r.fail() // recursive
			return
		}
	}
	target, ok := resolvePointer(r.root, ref[1:])
	if !ok {
		r.fail()
		return
	}
	r.refs = append(r.refs, ref)
	r.node(target, depth)
	r.refs = r.refs[:len(r.refs)-1]
}

// resolvePointer follows a JSON pointer (RFC 6901, "" is the root).
func resolvePointer(root any, ptr string) (any, bool) {
	if ptr == "" {
		return root, true
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, false
	}
	cur := root
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case *jobj:
			v, ok := c.m[tok]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(tok)
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

func (r *renderer) object(s *jobj, depth int) {
	if depth > r.b.MaxDepth {
		r.fail()
		return
	}
	props, _ := s.m["properties"].(*jobj)
	if p := s.m["properties"]; p != nil && props == nil {
		r.fail() // not an object (or nested too deep to parse)
		return
	}
	required := map[string]bool{}
	if req, ok := s.m["required"].([]any); ok {
		for _, x := range req {
			if str, ok := x.(string); ok {
				required[str] = true
			}
		}
	}
	var addl any
	if a, ok := s.m["additionalProperties"]; ok {
		if _, isBool := a.(bool); !isBool {
			addl = a
		}
	}
	n := 0
	if props != nil {
		n = len(props.keys)
	}
	if n > r.b.MaxProps {
		r.fail()
		return
	}
	if n == 0 && addl == nil {
		r.open = true
		r.w("{}")
		return
	}
	r.w("{ ")
	for i := 0; props != nil && i < len(props.keys); i++ {
		k := props.keys[i]
		if i > 0 {
			r.w("; ")
		}
		r.w(propName(k))
		if !required[k] {
			r.w("?")
		}
		r.w(": ")
		r.node(props.m[k], depth+1)
	}
	if addl != nil {
		if n > 0 {
			r.w("; ")
		}
		r.w("[k: string]: ")
		r.node(addl, depth+1)
	}
	r.w(" }")
}

func (r *renderer) array(s *jobj, depth int) {
	if depth > r.b.MaxDepth {
		r.fail()
		return
	}
	tuple, isTuple := s.m["prefixItems"].([]any)
	if !isTuple {
		tuple, isTuple = s.m["items"].([]any) // draft-07 tuple form
	}
	if isTuple {
		if len(tuple) > r.b.MaxUnion {
			r.fail()
			return
		}
		r.w("[")
		for i, x := range tuple {
			if i > 0 {
				r.w(", ")
			}
			r.node(x, depth+1)
		}
		r.w("]")
		return
	}
	items, ok := s.m["items"]
	if !ok {
		r.open = true
		r.w("unknown[]")
		return
	}
	// Render the element, then choose T[] or Array<T>.
	start := len(r.buf)
	r.node(items, depth+1)
	if r.failed {
		return
	}
	if isSimpleType(string(r.buf[start:])) {
		r.w("[]")
		return
	}
	elem := string(r.buf[start:])
	r.buf = r.buf[:start]
	r.w("Array<")
	r.w(elem)
	r.w(">")
}

// isSimpleType reports whether a rendered type can take a "[]" suffix
// without parentheses.
func isSimpleType(t string) bool {
	switch t {
	case "string", "number", "boolean", "null", "unknown":
		return true
	}
	return false
}

// propName quotes a property name that is not a plain identifier.
func propName(k string) string {
	ok := k != ""
	for i, c := range k {
		if !(c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			ok = false
			break
		}
	}
	if ok {
		return k
	}
	b, _ := json.Marshal(k)
	return string(b)
}
