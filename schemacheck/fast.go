package schemacheck

import (
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/google/jsonschema-go/jsonschema"
)

// A fast accept for arguments that plainly satisfy a plain schema
// (validating a call's arguments decoded them into Go values and ran
// the library's validator, ~2 KB and ~50 allocations per call, for the
// usual object of a few strings and numbers). ValidateJSON first reads the
// JSON text against a fastNode tree built once per compiled schema; when
// that says yes the arguments are valid and nothing is allocated. Any other
// answer (a mismatch, or something the tree does not decide) goes the
// library's way, which decides and words the error: the fast path only
// ever accepts what the library accepts, never refuses, so validation is
// never weaker or different (TestFastAcceptAgreesWithLibrary,
// FuzzFastAccept).
//
// The tree is built only from schemas whose every keyword, at every
// level reached, is one the fast reader decides exactly as
// github.com/google/jsonschema-go v0.4.3's validate.go does: type, enum
// (of strings, numbers, booleans and null), minimum, maximum,
// exclusiveMinimum, exclusiveMaximum, minLength, maxLength, pattern,
// items (one schema), minItems, maxItems, properties, required,
// additionalProperties, and the false schema; plus the keywords that
// validate nothing (annotations: title, description, default, examples,
// format, $comment, $id, $defs…; unknown keywords). Any other field of
// jsonschema.Schema that is set (read by reflection, so a keyword a later
// library adds is refused too) leaves the schema without a tree.
//
// What the library sees is the text decoded by encoding/json into `any`;
// the reader accepts only text that decodes (encoding/json's grammar, and
// numbers within float64's range, or Unmarshal fails) and, where a value
// is compared (an enum, a length, a pattern, an object key), only strings
// whose decoded value is their own bytes (no escapes, valid UTF-8).

// fastNode is one schema of the tree.
type fastNode struct {
	never bool  // the false schema: nothing matches
	typed bool  // type or types given
	types uint8 // the allowed JSON types (typeBit), when typed

	hasEnum  bool
	enumStr  []string
	enumNum  []float64
	enumBool uint8 // 1: false, 2: true
	enumNull bool

	min, max, xmin, xmax float64
	hasMin, hasMax       bool
	hasXMin, hasXMax     bool
	minLen, maxLen       int // -1: none
	pattern              *regexp.Regexp
	strValue             bool // a string's decoded value is needed (enum, lengths, pattern)
	minItems, maxItems   int  // -1: none
	items                *fastNode
	props                map[string]*fastNode
	req                  map[string]uint64 // required property -> its bit
	reqAll               uint64
	addl                 int // addlAny, addlNone, addlNode
	addlNode             *fastNode
	keyExact             bool // object keys are compared: props, required or addl
}

const (
	addlAny = iota
	addlNone
	addlNode
)

// JSON types as jsonschema-go's jsonType names them.
const (
	tNull uint8 = 1 << iota
	tBoolean
	tObject
	tArray
	tNumber
	tInteger
	tString
)

var typeBits = map[string]uint8{"null": tNull, "boolean": tBoolean, "object": tObject, "array": tArray,
	"number": tNumber, "integer": tInteger, "string": tString}

// anyNode accepts every value (the empty schema).
var anyNode = &fastNode{minLen: -1, maxLen: -1, minItems: -1, maxItems: -1}

// maxFastDepth bounds the nesting the reader follows (and the schema depth
// a tree is built for); deeper text goes the library's way.
const maxFastDepth = 64

// fastIgnored are the fields of jsonschema.Schema that validate nothing
// in jsonschema-go v0.4.3 (annotations, identifiers, definitions reached
// only through $ref, which the tree refuses, unknown keywords).
var fastIgnored = map[string]bool{"ID": true, "Schema": true, "Comment": true, "Defs": true, "Definitions": true,
	"Anchor": true, "DynamicAnchor": true, "Vocabulary": true, "Title": true, "Description": true, "Default": true,
	"Deprecated": true, "ReadOnly": true, "WriteOnly": true, "Examples": true, "ContentEncoding": true,
	"ContentMediaType": true, "ContentSchema": true, "Format": true, "Extra": true, "PropertyOrder": true}

// fastHandled are the fields the tree decides.
var fastHandled = map[string]bool{"Type": true, "Types": true, "Enum": true, "Minimum": true, "Maximum": true,
	"ExclusiveMinimum": true, "ExclusiveMaximum": true, "MinLength": true, "MaxLength": true, "Pattern": true,
	"Items": true, "MinItems": true, "MaxItems": true, "Properties": true, "Required": true,
	"AdditionalProperties": true}

// buildFast returns the tree of rs, or nil when some keyword of it is not
// one the tree decides.
func buildFast(rs *jsonschema.Resolved) *fastNode {
	root := rs.Schema()
	switch root.Schema { // Resolved.Validate refuses other versions
	case "", "http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft-07/schema#",
		"https://json-schema.org/draft/2020-12/schema":
	default:
		return nil
	}
	n, ok := fastOf(root, 0)
	if !ok {
		return nil
	}
	return n
}

func fastOf(s *jsonschema.Schema, depth int) (*fastNode, bool) {
	if s == nil || depth > maxFastDepth {
		return nil, false
	}
	if s.Not != nil {
		// Only the false schema ({"not": {}}, how jsonschema-go reads
		// false): nothing validates, whatever else it says.
		if !reflect.ValueOf(*s.Not).IsZero() {
			return nil, false
		}
		return &fastNode{never: true}, true
	}
	v := reflect.ValueOf(s).Elem()
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if fastIgnored[f.Name] || fastHandled[f.Name] || v.Field(i).IsZero() {
			continue
		}
		return nil, false
	}
	n := &fastNode{minLen: -1, maxLen: -1, minItems: -1, maxItems: -1}
	if s.Type != "" || s.Types != nil {
		n.typed = true
		if s.Type != "" { // the library reads types only without type
			n.types = typeBits[s.Type]
		} else {
			for _, ty := range s.Types {
				n.types |= typeBits[ty]
			}
		}
		if n.types&tNumber != 0 { // "number" subsumes integers
			n.types |= tInteger
		}
	}
	if s.Enum != nil {
		n.hasEnum, n.strValue = true, true
		for _, e := range s.Enum {
			switch e := e.(type) {
			case string:
				n.enumStr = append(n.enumStr, e)
			case float64:
				n.enumNum = append(n.enumNum, e)
			case bool:
				if e {
					n.enumBool |= 2
				} else {
					n.enumBool |= 1
				}
			case nil:
				n.enumNull = true
			default: // an object or array
				return nil, false
			}
		}
	}
	if s.Minimum != nil {
		n.min, n.hasMin = *s.Minimum, true
	}
	if s.Maximum != nil {
		n.max, n.hasMax = *s.Maximum, true
	}
	if s.ExclusiveMinimum != nil {
		n.xmin, n.hasXMin = *s.ExclusiveMinimum, true
	}
	if s.ExclusiveMaximum != nil {
		n.xmax, n.hasXMax = *s.ExclusiveMaximum, true
	}
	if s.MinLength != nil {
		n.minLen, n.strValue = *s.MinLength, true
	}
	if s.MaxLength != nil {
		n.maxLen, n.strValue = *s.MaxLength, true
	}
	if s.Pattern != "" {
		re, err := regexp.Compile(s.Pattern) // as jsonschema-go's resolve does
		if err != nil {
			return nil, false
		}
		n.pattern, n.strValue = re, true
	}
	if s.Items != nil {
		items, ok := fastOf(s.Items, depth+1)
		if !ok {
			return nil, false
		}
		n.items = items
	}
	if s.MinItems != nil {
		n.minItems = *s.MinItems
	}
	if s.MaxItems != nil {
		n.maxItems = *s.MaxItems
	}
	if len(s.Properties) > 0 {
		n.props = make(map[string]*fastNode, len(s.Properties))
		for k, ps := range s.Properties {
			pn, ok := fastOf(ps, depth+1)
			if !ok {
				return nil, false
			}
			n.props[k] = pn
		}
	}
	if s.Required != nil {
		n.req = map[string]uint64{}
		for _, k := range s.Required {
			if _, dup := n.req[k]; dup {
				continue
			}
			if len(n.req) == 64 {
				return nil, false
			}
			bit := uint64(1) << len(n.req)
			n.req[k] = bit
			n.reqAll |= bit
		}
	}
	if s.AdditionalProperties != nil {
		an, ok := fastOf(s.AdditionalProperties, depth+1)
		if !ok {
			return nil, false
		}
		if an.never {
			n.addl = addlNone
		} else {
			n.addl, n.addlNode = addlNode, an
		}
	}
	n.keyExact = n.props != nil || n.req != nil || n.addl != addlAny
	return n, true
}

// accepts reports whether data, one JSON text, surely decodes and
// validates against the tree; false: not known (the library decides).
func (n *fastNode) accepts(data []byte) bool {
	i := skipWS(data, 0)
	end, ok := n.value(data, i, 0)
	if !ok {
		return false
	}
	return skipWS(data, end) == len(data)
}

func skipWS(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// typeOK reports whether a value of JSON type bit t passes n's type.
func (n *fastNode) typeOK(t uint8) bool {
	return !n.typed || n.types&t != 0
}

// value reads the value at data[i] against n: its end, and whether it
// surely validates.
func (n *fastNode) value(data []byte, i, depth int) (int, bool) {
	if n.never || i >= len(data) || depth > maxFastDepth {
		return i, false
	}
	switch c := data[i]; {
	case c == '{':
		if !n.typeOK(tObject) || n.hasEnum {
			return i, false
		}
		return n.object(data, i, depth)
	case c == '[':
		if !n.typeOK(tArray) || n.hasEnum {
			return i, false
		}
		return n.array(data, i, depth)
	case c == '"':
		end, exact, ok := scanString(data, i)
		if !ok || !n.typeOK(tString) {
			return i, false
		}
		if n.strValue {
			if !exact {
				return i, false
			}
			if !n.stringOK(data[i+1 : end-1]) {
				return i, false
			}
		}
		return end, true
	case c == '-' || c >= '0' && c <= '9':
		end, ok := scanNumber(data, i)
		if !ok {
			return i, false
		}
		b := data[i:end]
		f, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(b), len(b)), 64)
		if err != nil { // out of float64's range: encoding/json fails to decode it
			return i, false
		}
		t := tNumber
		if _, frac := math.Modf(f); frac == 0 {
			t = tInteger
		}
		if !n.typeOK(t) || !n.numberOK(f) {
			return i, false
		}
		return end, true
	case c == 't' || c == 'f':
		lit, bit := "true", uint8(2)
		if c == 'f' {
			lit, bit = "false", 1
		}
		if len(data)-i < len(lit) || string(data[i:i+len(lit)]) != lit {
			return i, false
		}
		if !n.typeOK(tBoolean) || n.hasEnum && n.enumBool&bit == 0 {
			return i, false
		}
		return i + len(lit), true
	case c == 'n':
		if len(data)-i < 4 || string(data[i:i+4]) != "null" {
			return i, false
		}
		if !n.typeOK(tNull) || n.hasEnum && !n.enumNull {
			return i, false
		}
		return i + 4, true
	}
	return i, false
}

// stringOK checks a string's decoded value s against enum, lengths and
// pattern.
func (n *fastNode) stringOK(s []byte) bool {
	str := unsafe.String(unsafe.SliceData(s), len(s))
	if n.hasEnum && !slices.Contains(n.enumStr, str) {
		return false
	}
	if n.minLen >= 0 || n.maxLen >= 0 {
		l := utf8.RuneCount(s)
		if n.minLen >= 0 && l < n.minLen || n.maxLen >= 0 && l > n.maxLen {
			return false
		}
	}
	return n.pattern == nil || n.pattern.MatchString(str)
}

// numberOK checks a number against enum and bounds (compared as float64
// values: exactly the library's comparison of their rationals).
func (n *fastNode) numberOK(f float64) bool {
	if n.hasEnum && !slices.Contains(n.enumNum, f) {
		return false
	}
	return !(n.hasMin && f < n.min || n.hasMax && f > n.max || n.hasXMin && f <= n.xmin || n.hasXMax && f >= n.xmax)
}

func (n *fastNode) object(data []byte, i, depth int) (int, bool) {
	i = skipWS(data, i+1)
	var seen uint64
	if i < len(data) && data[i] == '}' {
		return i + 1, n.reqAll == 0
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return i, false
		}
		end, exact, ok := scanString(data, i)
		if !ok || n.keyExact && !exact {
			return i, false
		}
		key := data[i+1 : end-1]
		child := anyNode
		if n.keyExact {
			k := unsafe.String(unsafe.SliceData(key), len(key))
			if pn, ok := n.props[k]; ok {
				child = pn
			} else {
				switch n.addl {
				case addlNone:
					return i, false
				case addlNode:
					child = n.addlNode
				}
			}
			seen |= n.req[k]
		}
		i = skipWS(data, end)
		if i >= len(data) || data[i] != ':' {
			return i, false
		}
		i = skipWS(data, i+1)
		if i, ok = child.value(data, i, depth+1); !ok {
			return i, false
		}
		i = skipWS(data, i)
		if i >= len(data) {
			return i, false
		}
		switch data[i] {
		case ',':
			i = skipWS(data, i+1)
		case '}':
			return i + 1, seen == n.reqAll
		default:
			return i, false
		}
	}
}

func (n *fastNode) array(data []byte, i, depth int) (int, bool) {
	i = skipWS(data, i+1)
	child := n.items
	if child == nil {
		child = anyNode
	}
	count := 0
	if i < len(data) && data[i] == ']' {
		return i + 1, n.itemsOK(0)
	}
	for {
		var ok bool
		if i, ok = child.value(data, i, depth+1); !ok {
			return i, false
		}
		count++
		i = skipWS(data, i)
		if i >= len(data) {
			return i, false
		}
		switch data[i] {
		case ',':
			i = skipWS(data, i+1)
		case ']':
			return i + 1, n.itemsOK(count)
		default:
			return i, false
		}
	}
}

func (n *fastNode) itemsOK(count int) bool {
	return !(n.minItems >= 0 && count < n.minItems || n.maxItems >= 0 && count > n.maxItems)
}

// scanString reads the string at data[i] (data[i] == '"') as
// encoding/json's scanner does (no control characters, valid escapes;
// any other byte, invalid UTF-8 included, is allowed): its end, and
// whether its decoded value is its own bytes (no escapes, valid UTF-8).
func scanString(data []byte, i int) (end int, exact, ok bool) {
	exact = true
	ascii := true
	start := i + 1
	for i++; i < len(data); i++ {
		switch c := data[i]; {
		case c == '"':
			if !ascii && exact {
				exact = utf8.Valid(data[start:i])
			}
			return i + 1, exact, true
		case c == '\\':
			exact = false
			i++
			if i >= len(data) {
				return i, false, false
			}
			switch data[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(data)-i < 5 || !isHex(data[i+1]) || !isHex(data[i+2]) || !isHex(data[i+3]) || !isHex(data[i+4]) {
					return i, false, false
				}
				i += 4
			default:
				return i, false, false
			}
		case c < 0x20:
			return i, false, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return i, false, false
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// scanNumber reads a number with JSON's grammar: -? (0 | [1-9][0-9]*)
// (. [0-9]+)? ([eE] [+-]? [0-9]+)?
func scanNumber(data []byte, i int) (int, bool) {
	if data[i] == '-' {
		i++
	}
	if i >= len(data) {
		return i, false
	}
	switch {
	case data[i] == '0':
		i++
	case data[i] >= '1' && data[i] <= '9':
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
		}
	default:
		return i, false
	}
	if i < len(data) && data[i] == '.' {
		i++
		d := i
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
		}
		if i == d {
			return i, false
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		d := i
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
		}
		if i == d {
			return i, false
		}
	}
	return i, true
}
