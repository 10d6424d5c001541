package jsonscan

// AppendCompact is encoding/json.Compact for the common case, about
// three times faster (the proxy compacts every raw tools/call
// result it writes, the only full check of the upstream's JSON, and every
// call's arguments it sends upstream).
//
// It checks src fully, as encoding/json's scanner does (one value,
// strings without control characters and with valid escapes, the number
// grammar, literals; invalid UTF-8 is passed as encoding/json passes it),
// and appends src without the blanks outside strings. When ok, the bytes
// appended are exactly what json.Compact appends. ok is false (dst is
// then returned as it came) for text that is not valid JSON and for
// nesting deeper than compactMaxDepth: the caller then runs json.Compact,
// whose error (or, deeper than this limit, result) stays encoding/json's.

// compactMaxDepth is the deepest nesting AppendCompact takes on itself
// (encoding/json allows 10000; deeper text goes the caller's fallback).
const compactMaxDepth = 1024

// strPlain marks the bytes a JSON string holds as they are: not a control
// character, not '"' and not '\\'.
var strPlain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// compactor holds one AppendCompact run: blanks outside strings are cut
// out of the copy as they are met (src[start:i] is not yet copied).
type compactor struct {
	src   []byte
	dst   []byte
	start int
}

// blanks skips the blanks at src[i:], cutting them out of the copy. It
// is small enough to be inlined for the usual case, no blank (it is
// called at every value and separator); cut does the rest.
func (c *compactor) blanks(i int) int {
	if i >= len(c.src) || c.src[i] > ' ' { // every blank is <= ' '
		return i
	}
	return c.cut(i)
}

// cut skips the blanks starting at src[i], cutting them out of the copy
// (kept out of line so that blanks stays small enough to inline); for a
// src[i] that is not a blank it only copies up to i, which leaves the
// result as it was.
//
//go:noinline
func (c *compactor) cut(i int) int {
	c.dst = append(c.dst, c.src[c.start:i]...)
	for i < len(c.src) && isSpace(c.src[i]) {
		i++
	}
	c.start = i
	return i
}

// AppendCompact appends the compact form of the JSON text src to dst
// (see the comment at the top of this file).
func AppendCompact(dst, src []byte) ([]byte, bool) {
	c := compactor{src: src, dst: dst}
	var kinds [compactMaxDepth/64 + 1]uint64 // bit set: an object at that level
	depth := 0
	n := len(src)
	inObject := false
	i := c.blanks(0)
value:
	if i >= n {
		return dst, false
	}
	switch b := src[i]; {
	case b == '{':
		if depth >= compactMaxDepth {
			return dst, false
		}
		kinds[depth/64] |= 1 << (depth % 64)
		depth++
		i = c.blanks(i + 1)
		if i < n && src[i] == '}' {
			depth--
			i++
			goto after
		}
		goto key
	case b == '[':
		if depth >= compactMaxDepth {
			return dst, false
		}
		kinds[depth/64] &^= 1 << (depth % 64)
		depth++
		i = c.blanks(i + 1)
		if i < n && src[i] == ']' {
			depth--
			i++
			goto after
		}
		goto value
	case b == '"':
		var ok bool
		if i, ok = checkString(src, i); !ok {
			return dst, false
		}
	case b == '-' || b >= '0' && b <= '9':
		var ok bool
		if i, ok = checkNumber(src, i); !ok {
			return dst, false
		}
	case b == 't':
		if !hasLiteral(src, i, "true") {
			return dst, false
		}
		i += 4
	case b == 'f':
		if !hasLiteral(src, i, "false") {
			return dst, false
		}
		i += 5
	case b == 'n':
		if !hasLiteral(src, i, "null") {
			return dst, false
		}
		i += 4
	default:
		return dst, false
	}
after: // a value ended at src[i]
	i = c.blanks(i)
	if depth == 0 {
		if i != n {
			return dst, false
		}
		return append(c.dst, src[c.start:]...), true
	}
	if i >= n {
		return dst, false
	}
	inObject = kinds[(depth-1)/64]&(1<<((depth-1)%64)) != 0
	switch src[i] {
	case ',':
		i = c.blanks(i + 1)
		if inObject {
			goto key
		}
		goto value
	case '}':
		if !inObject {
			return dst, false
		}
	case ']':
		if inObject {
			return dst, false
		}
	default:
		return dst, false
	}
	depth--
	i++
	goto after
key: // a member name, its colon, then its value
	if i >= n || src[i] != '"' {
		return dst, false
	}
	{
		var ok bool
		if i, ok = checkString(src, i); !ok {
			return dst, false
		}
	}
	i = c.blanks(i)
	if i >= n || src[i] != ':' {
		return dst, false
	}
	i = c.blanks(i + 1)
	goto value
}

// checkString checks the string starting at src[i] == '"' and returns the
// offset after its closing quote.
func checkString(src []byte, i int) (int, bool) {
	n := len(src)
	for j := i + 1; j < n; {
		b := src[j]
		if strPlain[b] {
			j++
			continue
		}
		switch b {
		case '"':
			return j + 1, true
		case '\\':
			if j+1 >= n {
				return j, false
			}
			switch src[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				if j+6 > n || !isHex(src[j+2]) || !isHex(src[j+3]) || !isHex(src[j+4]) || !isHex(src[j+5]) {
					return j, false
				}
				j += 6
			default:
				return j, false
			}
		default: // a control character
			return j, false
		}
	}
	return n, false
}

func isHex(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'a' && b <= 'f' || b >= 'A' && b <= 'F'
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

// checkNumber checks the number starting at src[i] (RFC 8259 section 6,
// as encoding/json's scanner reads it) and returns the offset after it.
func checkNumber(src []byte, i int) (int, bool) {
	n := len(src)
	if src[i] == '-' {
		i++
	}
	switch {
	case i >= n:
		return i, false
	case src[i] == '0':
		i++
	case src[i] >= '1' && src[i] <= '9':
		for i++; i < n && isDigit(src[i]); i++ {
		}
	default:
		return i, false
	}
	if i < n && src[i] == '.' {
		i++
		if i >= n || !isDigit(src[i]) {
			return i, false
		}
		for i++; i < n && isDigit(src[i]); i++ {
		}
	}
	if i < n && (src[i] == 'e' || src[i] == 'E') {
		i++
		if i < n && (src[i] == '+' || src[i] == '-') {
			i++
		}
		if i >= n || !isDigit(src[i]) {
			return i, false
		}
		for i++; i < n && isDigit(src[i]); i++ {
		}
	}
	return i, true
}

func hasLiteral(src []byte, i int, lit string) bool {
	return len(src)-i >= len(lit) && string(src[i:i+len(lit)]) == lit
}
