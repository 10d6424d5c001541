package catalog

import (
	"encoding/json"
	"unicode/utf8"
)

// A reader of the parameter levels of an input schema straight from its
// JSON text (encoding/json's reflection, validity
// scan and map decoding were about a twentieth of the 10,000-tool index
// build). It fills the same paramRoot that json.Unmarshal would, and it
// only ever answers for text on which it is sure to agree with
// encoding/json: valid JSON, every key that could name a field spelled
// exactly as the field (encoding/json also matches keys case-insensitively,
// with Unicode folding), no repeated field or property name (encoding/json
// merges or overwrites), every field of the type it decodes into, no
// nesting deeper than fastSchemaDepth. Anything else makes it give up, and
// decodeParamRoot decodes the schema with encoding/json as before
// (TestFastParamRootAgreesWithJSON, FuzzFastParamRoot).

// fastSchemaDepth bounds the nesting the reader follows (encoding/json's
// own limit is 10,000; deeper text goes its way).
const fastSchemaDepth = 200

// schemaReader is the state of one read: the text and the position.
type schemaReader struct {
	b     []byte
	i     int
	depth int
}

// Struct fields a key can name at one level of paramRoot.
const (
	fieldDescKey  = 1 << iota // "description"
	fieldPropsKey             // "properties"
	fieldItemsKey             // "items"
	fieldEnumKey              // "enum"
)

// fastParamRoot decodes raw (a schema, trimmed, starting with '{') into
// root as json.Unmarshal would and reports true, or reports false (root
// then holds anything) when the text is one it leaves to encoding/json.
func fastParamRoot(raw []byte, root *paramRoot) bool {
	r := schemaReader{b: raw}
	ok := r.object(fieldPropsKey, func(k int) bool {
		if k != fieldPropsKey {
			return r.skip()
		}
		root.Properties = map[string]paramL1{}
		return r.props(root.Properties)
	})
	if !ok {
		return false
	}
	r.ws()
	return r.i == len(r.b)
}

// readProps reads a "properties" object into m, each member's schema by
// level; a name given twice gives up (encoding/json would keep the last).
func readProps[T any](r *schemaReader, m map[string]T, level func(*T) bool) bool {
	return r.members(func(name string) bool {
		if _, dup := m[name]; dup {
			return false
		}
		var v T
		if !level(&v) {
			return false
		}
		m[name] = v
		return true
	})
}

// props reads a top-level "properties" object into m.
func (r *schemaReader) props(m map[string]paramL1) bool { return readProps(r, m, r.level1) }

// level1 reads one top-level parameter's schema.
func (r *schemaReader) level1(v *paramL1) bool {
	return readLevel(r, &v.Description, &v.Enum, &v.Properties, &v.Items, r.level2)
}

// level2 reads one second-level parameter's schema.
func (r *schemaReader) level2(v *paramL2) bool {
	return readLevel(r, &v.Description, &v.Enum, &v.Properties, &v.Items, r.leaf)
}

// readLevel reads one parameter's schema of a level whose members' schemas
// are T (read by sub): its description, "enum", "properties" and
// "items"."properties" (paramL1, paramL2); any other key is skipped.
func readLevel[T any](r *schemaReader, desc *string, enum *[]string, props *map[string]T, items **struct {
	Properties map[string]T `json:"properties"`
}, sub func(*T) bool) bool {
	return r.object(fieldDescKey|fieldEnumKey|fieldPropsKey|fieldItemsKey, func(k int) bool {
		switch k {
		case fieldDescKey:
			return r.str(desc)
		case fieldEnumKey:
			return r.strs(enum)
		case fieldPropsKey:
			*props = map[string]T{}
			return readProps(r, *props, sub)
		case fieldItemsKey:
			it := &struct {
				Properties map[string]T `json:"properties"`
			}{}
			*items = it
			return r.object(fieldPropsKey, func(k int) bool {
				if k != fieldPropsKey {
					return r.skip()
				}
				it.Properties = map[string]T{}
				return readProps(r, it.Properties, sub)
			})
		}
		return r.skip()
	})
}

// leaf reads one third-level parameter's schema: its description and
// "enum" only.
func (r *schemaReader) leaf(v *paramLeaf) bool {
	return r.object(fieldDescKey|fieldEnumKey, func(k int) bool {
		switch k {
		case fieldDescKey:
			return r.str(&v.Description)
		case fieldEnumKey:
			return r.strs(&v.Enum)
		}
		return r.skip()
	})
}

// strs reads an array of strings into *s (an empty array: a non-nil empty
// slice, as encoding/json); anything else (null, another value in the
// array) gives up.
func (r *schemaReader) strs(s *[]string) bool {
	r.ws()
	if r.i >= len(r.b) || r.b[r.i] != '[' {
		return false
	}
	r.i++
	out := []string{}
	for first := true; ; first = false {
		r.ws()
		if r.i >= len(r.b) {
			return false
		}
		if r.b[r.i] == ']' && first {
			r.i++
			*s = out
			return true
		}
		var v string
		if !r.str(&v) {
			return false
		}
		out = append(out, v)
		r.ws()
		if r.i >= len(r.b) {
			return false
		}
		switch r.b[r.i] {
		case ']':
			r.i++
			*s = out
			return true
		case ',':
			r.i++
		default:
			return false
		}
	}
}

// object reads an object decoded into a struct whose fields are the set
// fields (fieldDescKey…), calling f with the field a key names (0: none)
// to read its value. A key that is not exactly a field's name but that
// encoding/json could match to one (another case, a non-ASCII key, an
// escape), a field given twice, or a value that is not an object makes
// it give up.
func (r *schemaReader) object(fields int, f func(k int) bool) bool {
	seen := 0
	return r.each(func() bool {
		lo, hi, plain := r.token()
		if hi < 0 || !plain {
			return false
		}
		k := fieldKey(r.b[lo:hi], fields)
		if k < 0 || k&seen != 0 {
			return false
		}
		seen |= k
		return r.colon() && f(k)
	})
}

// members reads an object decoded into a map[string]…, calling f with
// each key (decoded) to read its value.
func (r *schemaReader) members(f func(name string) bool) bool {
	return r.each(func() bool {
		var name string
		return r.str(&name) && r.colon() && f(name)
	})
}

// each reads an object (at most fastSchemaDepth deep), calling member at
// each member's key to read the key, the colon and the value; false when
// member gives up or the text is not an object.
func (r *schemaReader) each(member func() bool) bool {
	r.ws()
	if r.i >= len(r.b) || r.b[r.i] != '{' {
		return false
	}
	r.depth++
	if r.depth > fastSchemaDepth {
		return false
	}
	r.i++
	for first := true; ; first = false {
		r.ws()
		if r.i >= len(r.b) {
			return false
		}
		if r.b[r.i] == '}' && first {
			r.i++
			r.depth--
			return true
		}
		if !member() || !r.next() {
			return false
		}
		if r.b[r.i] == '}' {
			r.i++
			r.depth--
			return true
		}
		r.i++ // ','
	}
}

// fieldKey returns the field (of fields) that key names exactly, 0 for
// none, or -1 when encoding/json might match it to a field and the
// reader does not decide (an ASCII key equal to a field's name but for
// case, or a key with a non-ASCII byte: Unicode folding maps 'ſ' to 's'
// and 'K' to 'k').
func fieldKey(key []byte, fields int) int {
	for _, c := range key {
		if c >= utf8.RuneSelf {
			return -1
		}
	}
	for _, f := range [...]struct {
		bit  int
		name string
	}{{fieldDescKey, "description"}, {fieldPropsKey, "properties"}, {fieldItemsKey, "items"}, {fieldEnumKey, "enum"}} {
		if fields&f.bit == 0 || len(key) != len(f.name) {
			continue
		}
		if string(key) == f.name {
			return f.bit
		}
		if equalFoldASCII(key, f.name) {
			return -1
		}
	}
	return 0
}

// equalFoldASCII reports whether the ASCII bytes a equal s but for the
// case of letters.
func equalFoldASCII(a []byte, s string) bool {
	if len(a) != len(s) {
		return false
	}
	for i := range a {
		x, y := a[i], s[i]
		if x >= 'A' && x <= 'Z' {
			x += 'a' - 'A'
		}
		if y >= 'A' && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// ws skips JSON whitespace.
func (r *schemaReader) ws() {
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

// colon reads the ':' after a key.
func (r *schemaReader) colon() bool {
	r.ws()
	if r.i < len(r.b) && r.b[r.i] == ':' {
		r.i++
		return true
	}
	return false
}

// next reads up to the ',' or '}' after a member (left at r.i).
func (r *schemaReader) next() bool {
	r.ws()
	return r.i < len(r.b) && (r.b[r.i] == ',' || r.b[r.i] == '}')
}

// token reads a JSON string token at r.i and returns the span of its
// contents; hi is -1 when it is not a valid string. plain tells that the
// contents are their own value: no escape, valid UTF-8.
func (r *schemaReader) token() (lo, hi int, plain bool) {
	if r.i >= len(r.b) || r.b[r.i] != '"' {
		return 0, -1, false
	}
	lo = r.i + 1
	plain, high := true, false
	for j := lo; j < len(r.b); j++ {
		switch c := r.b[j]; {
		case c == '"':
			r.i = j + 1
			if high && plain && !utf8.Valid(r.b[lo:j]) {
				plain = false
			}
			return lo, j, plain
		case c == '\\':
			plain = false
			j++
			if j >= len(r.b) {
				return 0, -1, false
			}
			switch r.b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(r.b) {
					return 0, -1, false
				}
				for _, h := range r.b[j+1 : j+5] {
					if !isHexDigit(h) {
						return 0, -1, false
					}
				}
				j += 4
			default:
				return 0, -1, false
			}
		case c < 0x20:
			return 0, -1, false
		case c >= utf8.RuneSelf:
			high = true
		}
	}
	return 0, -1, false
}

// isHexDigit reports whether c is a hexadecimal digit.
func isHexDigit(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// str reads a string value into *s (decoded as encoding/json does: an
// escape or invalid UTF-8 by encoding/json itself); false when the value
// is not a string.
func (r *schemaReader) str(s *string) bool {
	r.ws()
	start := r.i
	lo, hi, plain := r.token()
	if hi < 0 {
		return false
	}
	if plain {
		*s = string(r.b[lo:hi])
		return true
	}
	return json.Unmarshal(r.b[start:r.i], s) == nil
}

// skip reads any JSON value.
func (r *schemaReader) skip() bool {
	r.ws()
	if r.i >= len(r.b) {
		return false
	}
	switch c := r.b[r.i]; {
	case c == '"':
		_, hi, _ := r.token()
		return hi >= 0
	case c == '{':
		return r.members(func(string) bool { return r.skip() })
	case c == '[':
		r.depth++
		if r.depth > fastSchemaDepth {
			return false
		}
		r.i++
		r.ws()
		if r.i < len(r.b) && r.b[r.i] == ']' {
			r.i++
			r.depth--
			return true
		}
		for {
			if !r.skip() {
				return false
			}
			r.ws()
			if r.i >= len(r.b) {
				return false
			}
			if r.b[r.i] == ']' {
				r.i++
				r.depth--
				return true
			}
			if r.b[r.i] != ',' {
				return false
			}
			r.i++
		}
	case c == 't':
		return r.literal("true")
	case c == 'f':
		return r.literal("false")
	case c == 'n':
		return r.literal("null")
	default:
		return r.number()
	}
}

// literal reads the literal lit.
func (r *schemaReader) literal(lit string) bool {
	if len(r.b)-r.i >= len(lit) && string(r.b[r.i:r.i+len(lit)]) == lit {
		r.i += len(lit)
		return true
	}
	return false
}

// number reads a JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (r *schemaReader) number() bool {
	b, i := r.b, r.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return false
		}
	}
	r.i = i
	return true
}
