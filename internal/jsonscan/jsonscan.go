// Package jsonscan reads the shape of JSON text without decoding it: the
// members of one object (keys and raw values), the length of one value,
// and the nesting depth. It allocates nothing and never recurses, so it is
// safe on untrusted input of any size or depth (an upstream server's
// frames and tool definitions): the cost is one pass over the bytes.
//
// The checks are structural: strings, brackets, the top-level object's
// keys, colons and commas, and literals are checked; inside nested values
// only brackets and strings are (a value such as [1 2] passes). Callers that
// need full validation decode the value afterwards.
package jsonscan

import (
	"errors"
	"fmt"
)

// ErrNotObject is returned by Object when the text is not a JSON object.
var ErrNotObject = errors.New("not a JSON object")

// Error is a structural error at a byte offset.
type Error struct {
	Offset int
	Msg    string
}

func (e *Error) Error() string { return fmt.Sprintf("invalid JSON at byte %d: %s", e.Offset, e.Msg) }

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

// SkipSpace returns the index of the first non-blank byte of data at or after i.
func SkipSpace(data []byte, i int) int {
	for i < len(data) && isSpace(data[i]) {
		i++
	}
	return i
}

// Value returns the end offset (exclusive) of the JSON value starting at
// data[i] (i must point at its first byte, no leading blanks) and the
// deepest nesting of objects and arrays inside it (0 for a scalar, 1 for
// [] or {}).
func Value(data []byte, i int) (end, depth int, err error) {
	if i >= len(data) {
		return i, 0, &Error{i, "unexpected end of input"}
	}
	switch c := data[i]; {
	case c == '"':
		end, err = str(data, i)
		return end, 0, err
	case c == '{' || c == '[':
		return container(data, i)
	case c == '-' || c >= '0' && c <= '9':
		return number(data, i), 0, nil
	case c == 't':
		return literal(data, i, "true")
	case c == 'f':
		return literal(data, i, "false")
	case c == 'n':
		return literal(data, i, "null")
	default:
		return i, 0, &Error{i, fmt.Sprintf("unexpected character %q", c)}
	}
}

func literal(data []byte, i int, lit string) (int, int, error) {
	if len(data)-i < len(lit) || string(data[i:i+len(lit)]) != lit {
		return i, 0, &Error{i, "invalid literal"}
	}
	return i + len(lit), 0, nil
}

func number(data []byte, i int) int {
	for i < len(data) {
		switch c := data[i]; {
		case c >= '0' && c <= '9', c == '-', c == '+', c == '.', c == 'e', c == 'E':
			i++
		default:
			return i
		}
	}
	return i
}

// str returns the end of the string starting at data[i] == '"'.
func str(data []byte, i int) (int, error) {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j + 1, nil
		case '\n':
			return j, &Error{j, "newline in string"}
		}
	}
	return len(data), &Error{len(data), "unterminated string"}
}

// container skips an object or array iteratively (no recursion, no
// allocation): bracket kinds are matched with a bit stack for the first 64
// levels, deeper ones by count only.
func container(data []byte, i int) (end, maxDepth int, err error) {
	var kinds uint64 // bit d set: level d is an object
	depth := 0
	for j := i; j < len(data); j++ {
		switch c := data[j]; c {
		case '"':
			e, err := str(data, j)
			if err != nil {
				return e, maxDepth, err
			}
			j = e - 1
		case '{', '[':
			if depth < 64 {
				if c == '{' {
					kinds |= 1 << depth
				} else {
					kinds &^= 1 << depth
				}
			}
			depth++
			maxDepth = max(maxDepth, depth)
		case '}', ']':
			depth--
			if depth < 0 {
				return j, maxDepth, &Error{j, "unbalanced bracket"}
			}
			if depth < 64 && (kinds&(1<<depth) != 0) != (c == '}') {
				return j, maxDepth, &Error{j, "mismatched bracket"}
			}
			if depth == 0 {
				return j + 1, maxDepth, nil
			}
		}
	}
	return len(data), maxDepth, &Error{len(data), "unexpected end of input"}
}

// Object calls fn for each member of the JSON object that data holds
// (blanks around it allowed), with the key's raw bytes between the quotes
// (escapes not decoded) and the value's raw bytes, in order, until fn
// returns false. It returns ErrNotObject when data is not an object, an
// *Error for malformed text, and the deepest nesting seen (1 for a flat
// object; members not visited because fn stopped are not counted).
func Object(data []byte, fn func(key, value []byte) bool) (depth int, err error) {
	return ObjectNested(data, "", nil, fn)
}

// ObjectNested is Object, and it records into in the members of the
// value of the member named key (raw, between the quotes) when that value
// is an object, in the same pass (one scan per message, the
// reader of the inner object needs no scan of its own). For a repeated key
// in records the last one fn was shown. in is left not Complete when
// there is no such member, its value is not an object, or that object is
// malformed (the value is then skipped as Object skips it, so depth and
// err are always Object's). With in nil (or key empty and no member named
// "") it is Object.
func ObjectNested(data []byte, key string, in *Members, fn func(key, value []byte) bool) (depth int, err error) {
	return ObjectNested2(data, key, in, "", nil, fn)
}

// ObjectNested2 is ObjectNested one level deeper: in2 (nil: none) records
// the members of the object value of the member named key2 inside the
// object in records (the last one; not Complete unless in is, for the
// same member). For a request line: params, and its _meta.
func ObjectNested2(data []byte, key string, in *Members, key2 string, in2 *Members, fn func(key, value []byte) bool) (depth int, err error) {
	resetAll(in, in2)
	i := SkipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return 0, ErrNotObject
	}
	end, depth, stopped, err := object(data, i, nil, key, in, key2, in2, fn)
	if err != nil || stopped {
		return depth, err
	}
	return depth, trailing(data, end)
}

// ObjectMembers is Object recording every member into m (see Members);
// depth and err are Object's.
func ObjectMembers(data []byte, m *Members) (depth int, err error) {
	m.Reset()
	i := SkipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return 0, ErrNotObject
	}
	end, depth, _, err := object(data, i, m, "", nil, "", nil, nil)
	if err == nil {
		if err = trailing(data, end); err == nil {
			m.Done(data[i:end])
			if i > 0 || end < len(data) {
				m.ok = false // offsets are from the object's first byte: data must be it
			}
		}
	}
	return depth, err
}

// object scans the object starting at data[i] == '{' and returns its end
// (exclusive), its depth, whether fn stopped it, and an *Error. rec (nil:
// none) records its members; the value of the member named key, when an
// object, is scanned by object itself recording into in (and its member
// key2 into in2; two levels at most), falling back to Value when it fails.
func object(data []byte, i int, rec *Members, key string, in *Members, key2 string, in2 *Members, fn func(key, value []byte) bool) (end, depth int, stopped bool, err error) {
	base := i
	depth = 1
	i = SkipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return i + 1, depth, false, nil
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return i, depth, false, &Error{i, "expected a member name"}
		}
		kend, err := str(data, i)
		if err != nil {
			return kend, depth, false, err
		}
		k0 := i + 1
		i = SkipSpace(data, kend)
		if i >= len(data) || data[i] != ':' {
			return i, depth, false, &Error{i, "expected ':'"}
		}
		i = SkipSpace(data, i+1)
		var vend, d int
		if in != nil && string(data[k0:kend-1]) == key {
			resetAll(in, in2)
			if i < len(data) && data[i] == '{' {
				var ierr error
				if vend, d, _, ierr = object(data, i, in, key2, in2, "", nil, nil); ierr == nil {
					in.Done(data[i:vend])
				} else {
					resetAll(in, in2)
					vend, d, err = Value(data, i)
				}
			} else {
				vend, d, err = Value(data, i)
			}
		} else {
			vend, d, err = Value(data, i)
		}
		if err != nil {
			return vend, depth, false, err
		}
		depth = max(depth, d+1)
		if rec != nil {
			rec.Add(k0-base, kend-1-base, i-base, vend-base)
		}
		if fn != nil && !fn(data[k0:kend-1], data[i:vend]) {
			return vend, depth, true, nil
		}
		i = SkipSpace(data, vend)
		if i >= len(data) {
			return i, depth, false, &Error{i, "unexpected end of input"}
		}
		switch data[i] {
		case ',':
			i = SkipSpace(data, i+1)
		case '}':
			return i + 1, depth, false, nil
		default:
			return i, depth, false, &Error{i, "expected ',' or '}'"}
		}
	}
}

func resetAll(in, in2 *Members) {
	if in != nil {
		in.Reset()
	}
	if in2 != nil {
		in2.Reset()
	}
}

// maxMembers is how many members a Members records.
const maxMembers = 8

// Members records where the members of one JSON object are in its text,
// as offsets from the object's first byte, so that the readers of one
// message need one scan of it between them. Only the first
// maxMembers members are recorded; a record is Complete only when the
// object was scanned whole and well-formed (Object's checks) and every
// member recorded. The zero value is an empty, not Complete record.
type Members struct {
	at   [maxMembers][4]int32 // key start, key end (between the quotes), value start, value end
	n    int
	obj  *byte // the object's first byte: a record belongs to that text
	size int   // the object's length in bytes
	over bool
	ok   bool
}

// Reset empties m. Reset, Add and Done also let a writer that builds an
// object from recorded members record the object it builds.
func (m *Members) Reset() { m.n, m.obj, m.size, m.over, m.ok = 0, nil, 0, false, false }

// Add records the next member: its key between the quotes at k0:k1 and
// its value at v0:v1, offsets from the object's first byte.
func (m *Members) Add(k0, k1, v0, v1 int) {
	if m.n == len(m.at) || v1 > 1<<31-1 {
		m.over = true
		return
	}
	m.at[m.n] = [4]int32{int32(k0), int32(k1), int32(v0), int32(v1)}
	m.n++
}

// Done marks the record whole: obj is the object it was scanned from (or
// built as), first byte to last.
func (m *Members) Done(obj []byte) { m.obj, m.size, m.ok = &obj[0], len(obj), !m.over }

// Complete reports whether m holds every member of the object obj (the
// very text it was recorded from, first byte to last: the same array and
// length): readers use it instead of scanning obj, and scan obj themselves
// when it is false.
func (m *Members) Complete(obj []byte) bool {
	return m.ok && len(obj) == m.size && &obj[0] == m.obj
}

// Len is the number of members recorded.
func (m *Members) Len() int { return m.n }

// At returns member i of obj (0 <= i < Len(); obj as for Complete): its
// raw key between the quotes and its raw value, as Object shows them.
func (m *Members) At(obj []byte, i int) (key, value []byte) {
	a := &m.at[i]
	return obj[a[0]:a[1]], obj[a[2]:a[3]]
}

func trailing(data []byte, i int) error {
	if i = SkipSpace(data, i); i < len(data) {
		return &Error{i, "data after the object"}
	}
	return nil
}

// Array calls fn for each element of the JSON array that data holds, with
// the element's raw bytes, until fn returns false. It returns an *Error
// when data is not a well-formed array.
func Array(data []byte, fn func(elem []byte) bool) error {
	i := SkipSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return &Error{i, "not a JSON array"}
	}
	i = SkipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return trailing(data, i+1)
	}
	for {
		end, _, err := Value(data, i)
		if err != nil {
			return err
		}
		if !fn(data[i:end]) {
			return nil
		}
		i = SkipSpace(data, end)
		if i >= len(data) {
			return &Error{i, "unexpected end of input"}
		}
		switch data[i] {
		case ',':
			i = SkipSpace(data, i+1)
		case ']':
			return trailing(data, i+1)
		default:
			return &Error{i, "expected ',' or ']'"}
		}
	}
}

// Depth is the deepest nesting of objects and arrays in data (0 for a
// scalar), counted over the whole text; strings are skipped.
func Depth(data []byte) int {
	depth, deepest := 0, 0
	for j := 0; j < len(data); j++ {
		switch data[j] {
		case '"':
			for j++; j < len(data) && data[j] != '"'; j++ {
				if data[j] == '\\' {
					j++
				}
			}
		case '{', '[':
			depth++
			deepest = max(deepest, depth)
		case '}', ']':
			depth--
		}
	}
	return deepest
}
