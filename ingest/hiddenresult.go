package ingest

import (
	"bytes"
	"encoding/json"
)

// Hidden characters in tool results (the call path, proxy/results.go).
// A tool's output reaches the model as its definition does; an upstream
// that is not trusted can put instructions in Unicode TAG characters or
// behind bidi controls in a result as well. The same characters as in
// definitions (HiddenChars) are found in every string of a result: text
// content, structuredContent, resource text, links, _meta, at any depth.

// HasHidden reports whether s holds a hidden character (HiddenChars).
// Plain ASCII is told without decoding.
func HasHidden(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0xC2 {
			return len(hiddenIn(s)) > 0
		}
	}
	return false
}

// JSONMayHoldHidden reports whether the JSON text b may hold a hidden
// character, raw (UTF-8) or escaped (\uXXXX): false means surely none, so
// a result can pass as its bytes. It looks for the UTF-8 forms of the
// hidden ranges and for the escapes of them (hex of either case, and the
// high surrogate \udb40 of the TAG block and of the variation selectors
// supplement); it may say yes for a visible character that shares a
// prefix (U+FE0F after an emoji, U+2065).
func JSONMayHoldHidden(b []byte) bool {
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '\\':
			if i+5 < len(b) && b[i+1] == 'u' && escapeMayHide(b[i+2:i+6]) {
				return true
			}
			i++ // the escaped character ("\\\\u200b" is no escape of U+200B)
		case c < 0xC2:
		case c == 0xC2:
			if i+1 < len(b) && b[i+1] == 0xAD { // U+00AD
				return true
			}
		case c == 0xD8:
			if i+1 < len(b) && b[i+1] == 0x9C { // U+061C
				return true
			}
		case c == 0xE1:
			if bytes.HasPrefix(b[i:], []byte{0xE1, 0xA0, 0x8E}) { // U+180E
				return true
			}
		case c == 0xE2:
			if i+2 < len(b) && (b[i+1] == 0x80 && (b[i+2] >= 0x8B && b[i+2] <= 0x8F || b[i+2] >= 0xAA && b[i+2] <= 0xAE) || // U+200B–200F, U+202A–202E
				b[i+1] == 0x81 && b[i+2] >= 0xA0 && b[i+2] <= 0xA9) { // U+2060–2069
				return true
			}
		case c == 0xEF:
			if i+2 < len(b) && (b[i+1] == 0xB8 && b[i+2] >= 0x80 && b[i+2] <= 0x8F || b[i+1] == 0xBB && b[i+2] == 0xBF) { // U+FE00–FE0F, U+FEFF
				return true
			}
		case c == 0xF3:
			if i+2 < len(b) && b[i+1] == 0xA0 && (b[i+2] >= 0x80 && b[i+2] <= 0x81 || b[i+2] >= 0x84 && b[i+2] <= 0x87) { // U+E0000–E007F, U+E0100–E01EF
				return true
			}
		}
	}
	return false
}

// escapeMayHide reports whether the 4 hex digits of a \u escape name a
// hidden character or the high surrogate of one.
func escapeMayHide(h []byte) bool {
	var v int
	for _, c := range h {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | int(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | int(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v<<4 | int(c-'A'+10)
		default:
			return false
		}
	}
	switch {
	case v == 0xAD, v == 0x61C, v == 0x180E, v >= 0x200B && v <= 0x200F, v >= 0x202A && v <= 0x202E,
		v >= 0x2060 && v <= 0x2069, v >= 0xFE00 && v <= 0xFE0F, v == 0xFEFF, v == 0xDB40:
		return true
	}
	return false
}

// StripHiddenJSON returns the JSON document doc with the hidden characters
// of every string (values and member names, at any depth) removed, and
// the characters removed (none: doc itself). Numbers keep their text. A
// doc that is not JSON is returned as is.
func StripHiddenJSON(doc []byte) ([]byte, []rune) {
	v, err := decodeKeepNumbers(doc)
	if err != nil {
		return doc, nil
	}
	var removed []rune
	v = stripAll(v, &removed)
	if len(removed) == 0 {
		return doc, nil
	}
	out, err := json.Marshal(v)
	if err != nil {
		return doc, nil
	}
	return out, removed
}

func stripAll(v any, removed *[]rune) any {
	switch x := v.(type) {
	case string:
		s, rs := StripHidden(x)
		*removed = append(*removed, rs...)
		return s
	case []any:
		for i, e := range x {
			x[i] = stripAll(e, removed)
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			k2, rs := StripHidden(k)
			*removed = append(*removed, rs...)
			out[k2] = stripAll(e, removed)
		}
		return out
	}
	return v
}

// DescribeHidden says which hidden characters rs are, for a person: how
// many of which kind and the first code points ("67 hidden characters
// (66 TAG, 1 bidi: U+E0049, U+E0067, …)").
func DescribeHidden(rs []rune) string { return describeHidden(rs) }
