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
	i := SkipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return 0, ErrNotObject
	}
	depth = 1
	i = SkipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return depth, trailing(data, i+1)
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return depth, &Error{i, "expected a member name"}
		}
		kend, err := str(data, i)
		if err != nil {
			return depth, err
		}
		key := data[i+1 : kend-1]
		i = SkipSpace(data, kend)
		if i >= len(data) || data[i] != ':' {
			return depth, &Error{i, "expected ':'"}
		}
		i = SkipSpace(data, i+1)
		vend, d, err := Value(data, i)
		if err != nil {
			return depth, err
		}
		depth = max(depth, d+1)
		if !fn(key, data[i:vend]) {
			return depth, nil
		}
		i = SkipSpace(data, vend)
		if i >= len(data) {
			return depth, &Error{i, "unexpected end of input"}
		}
		switch data[i] {
		case ',':
			i = SkipSpace(data, i+1)
		case '}':
			return depth, trailing(data, i+1)
		default:
			return depth, &Error{i, "expected ',' or '}'"}
		}
	}
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
