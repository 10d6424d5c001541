// Package schemacheck compiles the JSON Schemas of upstream tools
// (inputSchema, outputSchema) and validates values against them, with
// errors a model can act on: the field, what was expected, and the part of
// the schema that says so.
//
// It wraps github.com/google/jsonschema-go (drafts 2020-12 and draft-07),
// after rewriting draft-04, draft-06 and 2019-09 schemas into those
// (normalize.go). Remote $refs are never loaded. A schema that does not
// compile is reported as an error by Compile; callers decide what that
// means (the proxy skips input validation for it).
//
// Schemas come from upstream servers (untrusted text): compiling is bounded
// by MaxSchemaBytes, and everything echoed in errors is bounded.
package schemacheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// MaxSchemaBytes bounds the size of a schema that is compiled; a larger one
// does not compile.
const MaxSchemaBytes = 512 << 10

// maxCache bounds the compiled schemas kept; one is dropped when full.
const maxCache = 2048

// Schema is a compiled schema.
type Schema struct {
	rs *jsonschema.Resolved
	// Dialect is the dialect the schema declared (Draft04 … Draft2020;
	// Draft2020 when it declared none).
	Dialect string
	// doc is the normalised schema as generic JSON, for ValidationError.Schema.
	doc any
	// ids maps the $id of each schema in doc to its JSON Pointer.
	ids map[string]string
	// fast accepts plainly valid JSON text without decoding it (fast.go);
	// nil when the schema has a keyword it does not decide.
	fast *fastNode
}

type cached struct {
	raw []byte // a copy of the schema's bytes: a hash hit counts only when they are equal
	s   *Schema
	err error
}

// cache holds compiled schemas by a hash of their bytes (maphash, with a
// seed of this process: sha256 cost ~28k instructions per
// tool_call for a 1.5 KB schema, maphash and the comparison ~1k). The
// bytes are compared on a hit, so a collision is a miss, never another
// schema's result.
var cache = struct {
	sync.Mutex
	seed maphash.Seed
	m    map[uint64]cached
}{seed: maphash.MakeSeed(), m: map[uint64]cached{}}

// Compile compiles raw, or returns the cached result for the same bytes.
// The error says why the schema does not compile, e.g. `$schema
// "http://json-schema.org/draft-03/schema#" is not a dialect the validator
// knows` or `it is 600000 bytes, over the 524288-byte limit`.
func Compile(raw json.RawMessage) (*Schema, error) {
	if len(raw) > MaxSchemaBytes {
		return compile(raw) // refused at once; not kept
	}
	key := maphash.Bytes(cache.seed, raw)
	cache.Lock()
	c, ok := cache.m[key]
	cache.Unlock()
	if ok && bytes.Equal(c.raw, raw) {
		return c.s, c.err
	}
	c.raw = bytes.Clone(raw)
	c.s, c.err = compile(raw)
	cache.Lock()
	if len(cache.m) >= maxCache {
		for k := range cache.m { // drop one (map order is random)
			delete(cache.m, k)
			break
		}
	}
	cache.m[key] = c
	cache.Unlock()
	return c.s, c.err
}

func compile(raw json.RawMessage) (*Schema, error) {
	if len(raw) > MaxSchemaBytes {
		return nil, fmt.Errorf("it is %d bytes, over the %d-byte limit", len(raw), MaxSchemaBytes)
	}
	norm, dialect, err := normalize(raw)
	if err != nil {
		return nil, err
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(norm, &s); err != nil {
		return nil, fmt.Errorf("it is not a JSON Schema: %v", err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return nil, err
	}
	var doc any
	_ = json.Unmarshal(norm, &doc)
	ids := map[string]string{}
	collectIDs(doc, "", ids)
	sc := &Schema{rs: rs, Dialect: dialect, doc: doc, ids: ids}
	if loop := refLoopOf(&s); loop != "" { // refloop.go: the validator would never return
		return nil, fmt.Errorf("it is not validated: %s", loop)
	}
	// Resolve accepts any $schema; Validate refuses the versions it cannot
	// validate. Find out now (normalize leaves none of those, so this is a
	// guard against a change of the library).
	if err := rs.Validate(map[string]any{}); err != nil && strings.HasPrefix(err.Error(), "cannot validate version") {
		return nil, err
	}
	sc.fast = buildFast(rs)
	return sc, nil
}

// ValidationError is a value that does not match its schema.
type ValidationError struct {
	// Field is the JSON Pointer of the failing value in the instance ("/"
	// for the whole value); an array item whose index is not known is "*"
	// (e.g. "/files/*/path").
	Field string
	// Reason says what is wrong and what was expected, e.g. `missing
	// required property "content"` or `expected a string, got 3`.
	Reason string
	// Schema is the part of the schema that applies to Field, as compact
	// JSON, at most MaxSchemaPart bytes (large objects keep only their
	// property names); "" when not known.
	Schema string
	// More holds the further mismatches of the same value, in the order
	// found, at most MaxMismatches-1 (Validate only; their own More is nil).
	More []*ValidationError
	// Omitted counts the mismatches found beyond those listed.
	Omitted int
}

// MaxSchemaPart bounds ValidationError.Schema, in bytes.
const MaxSchemaPart = 600

// Error renders the mismatch as `FIELD: REASON; schema: PART`. With more
// than one it lists every mismatch first and the schema parts after them,
// so that a reader who cuts the text (the code bridge keeps 512 bytes of an
// error) still sees every field that is wrong:
// `N mismatches: [1] FIELD: REASON; [2] FIELD: REASON … and K more.
// Schema of [1] and [2]: PART. Schema of [3]: PART` — a part shared by
// several mismatches is given once, naming them all; "… and K more" ends a
// list that was cut at MaxMismatches.
func (e *ValidationError) Error() string {
	if len(e.More) == 0 && e.Omitted == 0 {
		return e.one()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d mismatches:", 1+len(e.More)+e.Omitted)
	all := append([]*ValidationError{e}, e.More...)
	var parts []string          // distinct schema parts, in order of first use
	users := map[string][]int{} // schema part -> the mismatches (1-based) it applies to
	for i, m := range all {
		if i > 0 {
			b.WriteByte(';')
		}
		fmt.Fprintf(&b, " [%d] %s: %s", i+1, m.Field, m.Reason)
		if m.Schema == "" {
			continue
		}
		if _, ok := users[m.Schema]; !ok {
			parts = append(parts, m.Schema)
		}
		users[m.Schema] = append(users[m.Schema], i+1)
	}
	if e.Omitted > 0 {
		fmt.Fprintf(&b, " … and %d more", e.Omitted)
	}
	for _, part := range parts {
		b.WriteString(". Schema of ")
		for j, n := range users[part] {
			switch {
			case j == 0:
			case j == len(users[part])-1:
				b.WriteString(" and ")
			default:
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "[%d]", n)
		}
		b.WriteString(": " + part)
	}
	return b.String()
}

func (e *ValidationError) one() string {
	msg := e.Field + ": " + e.Reason
	if e.Schema != "" {
		msg += "; schema: " + e.Schema
	}
	return msg
}

// Validate checks v, a value decoded from JSON (map[string]any, []any,
// string, float64, bool, nil), against s. It returns nil or a
// *ValidationError: the first mismatch, with the others (up to
// MaxMismatches in all) in More. Array items are named by index
// ("/files/1/name"); "*" remains only for a mismatch the library found
// under a keyword collect does not walk.
func (s *Schema) Validate(v any) error {
	err := s.rs.Validate(v)
	if err == nil {
		return nil
	}
	first := s.explain(err, v)
	all, folded := s.collect(v)
	if !covered(first, all, folded) {
		all = append(all, first)
	}
	out := all[0]
	if n := len(all); n > MaxMismatches {
		out.Omitted = n - MaxMismatches
		all = all[:MaxMismatches]
	}
	out.More = all[1:]
	return out
}

// covered reports whether the library's mismatch (whose path may hold "*")
// is at the field of one collect found or folded.
func covered(lib *ValidationError, all []*ValidationError, folded []string) bool {
	ls := strings.Split(lib.Field, "/")
	fields := folded
	for _, c := range all {
		fields = append(fields, c.Field)
	}
	for _, f := range fields {
		cs := strings.Split(f, "/")
		if len(cs) != len(ls) {
			continue
		}
		same := true
		for i := range ls {
			if ls[i] != cs[i] && ls[i] != "*" {
				same = false
				break
			}
		}
		if same {
			return true
		}
	}
	return false
}

// ValidateJSON decodes raw and validates it; raw that is not JSON is a
// *ValidationError at "/". Text that plainly satisfies a plain schema is
// accepted without being decoded (fast.go: the same answer, without the
// allocations).
func (s *Schema) ValidateJSON(raw json.RawMessage) error {
	if s.fast != nil && s.fast.accepts(raw) {
		return nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return &ValidationError{Field: "/", Reason: "not JSON: " + err.Error()}
	}
	return s.Validate(v)
}
