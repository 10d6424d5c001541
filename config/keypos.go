package config

import (
	"strconv"
	"strings"
)

// keyLines maps every key of a TOML document (table headers, dotted keys,
// keys inside inline tables, and every prefix of those) to the 1-based line
// where it first appears. BurntSushi/toml v1.6.0 keeps key positions private
// (MetaData.keyInfo), so Parse finds them with this small scanner. It runs
// only on text the toml parser already accepted, so it is lenient: on
// anything it does not understand it skips a byte and carries on.
type keyLines map[string]int

// joinKey is the map key of keyLines for a key path.
func joinKey(path []string) string { return strings.Join(path, "\x00") }

// line returns the line of path, or of its nearest ancestor that appears in
// the document (a table header or inline table), or 0 when none does.
func (k keyLines) line(path []string) int {
	for n := len(path); n > 0; n-- {
		if l, ok := k[joinKey(path[:n])]; ok {
			return l
		}
	}
	return 0
}

func (k keyLines) record(path []string, line int) {
	for n := 1; n <= len(path); n++ {
		j := joinKey(path[:n])
		if _, ok := k[j]; !ok {
			k[j] = line
		}
	}
}

type keyScanner struct {
	s    string
	i    int
	line int
	out  keyLines
}

// scanKeyLines returns the line of every key in the TOML text src.
func scanKeyLines(src string) keyLines {
	sc := &keyScanner{s: src, line: 1, out: keyLines{}}
	var table []string
	for sc.i < len(sc.s) {
		start := sc.i
		sc.skipSpace(true)
		if sc.i >= len(sc.s) {
			break
		}
		switch c := sc.s[sc.i]; {
		case c == '[':
			sc.i++
			arr := sc.peek('[')
			if arr {
				sc.i++
			}
			line := sc.line
			key := sc.key()
			sc.skipSpace(false)
			for sc.i < len(sc.s) && sc.s[sc.i] == ']' {
				sc.i++
			}
			table = key
			sc.out.record(key, line)
		case isBareKeyByte(c) || c == '"' || c == '\'':
			line := sc.line
			key := append(append([]string{}, table...), sc.key()...)
			sc.out.record(key, line)
			sc.skipSpace(false)
			if sc.peek('=') {
				sc.i++
				sc.skipSpace(false)
				sc.value(key)
			}
		}
		if sc.i == start {
			sc.advance()
		}
	}
	return sc.out
}

func isBareKeyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

func (sc *keyScanner) peek(c byte) bool { return sc.i < len(sc.s) && sc.s[sc.i] == c }

func (sc *keyScanner) advance() {
	if sc.i < len(sc.s) {
		if sc.s[sc.i] == '\n' {
			sc.line++
		}
		sc.i++
	}
}

// skipSpace skips blanks and comments; newlines too when nl is true.
func (sc *keyScanner) skipSpace(nl bool) {
	for sc.i < len(sc.s) {
		switch sc.s[sc.i] {
		case ' ', '\t', '\r':
			sc.i++
		case '\n':
			if !nl {
				return
			}
			sc.advance()
		case '#':
			for sc.i < len(sc.s) && sc.s[sc.i] != '\n' {
				sc.i++
			}
		default:
			return
		}
	}
}

// key reads a possibly dotted, possibly quoted key.
func (sc *keyScanner) key() []string {
	var parts []string
	for sc.i < len(sc.s) {
		sc.skipSpace(false)
		if sc.i >= len(sc.s) {
			break
		}
		c := sc.s[sc.i]
		switch {
		case c == '"':
			start := sc.i
			sc.basicString()
			raw := sc.s[start:sc.i]
			if u, err := strconv.Unquote(raw); err == nil {
				parts = append(parts, u)
			} else {
				parts = append(parts, strings.Trim(raw, `"`))
			}
		case c == '\'':
			start := sc.i + 1
			sc.literalString()
			parts = append(parts, strings.TrimSuffix(sc.s[start:sc.i], "'"))
		case isBareKeyByte(c):
			start := sc.i
			for sc.i < len(sc.s) && isBareKeyByte(sc.s[sc.i]) {
				sc.i++
			}
			parts = append(parts, sc.s[start:sc.i])
		default:
			return parts
		}
		sc.skipSpace(false)
		if !sc.peek('.') {
			return parts
		}
		sc.i++
	}
	return parts
}

// basicString skips a "..." or """...""" string starting at sc.i.
func (sc *keyScanner) basicString() {
	if strings.HasPrefix(sc.s[sc.i:], `"""`) {
		sc.i += 3
		for sc.i < len(sc.s) {
			if sc.s[sc.i] == '\\' {
				sc.advance()
				sc.advance()
				continue
			}
			if strings.HasPrefix(sc.s[sc.i:], `"""`) {
				sc.i += 3
				for n := 0; n < 2 && sc.peek('"'); n++ {
					sc.i++
				}
				return
			}
			sc.advance()
		}
		return
	}
	sc.i++
	for sc.i < len(sc.s) && sc.s[sc.i] != '\n' {
		switch sc.s[sc.i] {
		case '\\':
			sc.i += 2
			continue
		case '"':
			sc.i++
			return
		}
		sc.i++
	}
}

// literalString skips a '...' or ”'...”' string starting at sc.i.
func (sc *keyScanner) literalString() {
	if strings.HasPrefix(sc.s[sc.i:], `'''`) {
		sc.i += 3
		for sc.i < len(sc.s) {
			if strings.HasPrefix(sc.s[sc.i:], `'''`) {
				sc.i += 3
				for n := 0; n < 2 && sc.peek('\''); n++ {
					sc.i++
				}
				return
			}
			sc.advance()
		}
		return
	}
	sc.i++
	for sc.i < len(sc.s) && sc.s[sc.i] != '\n' {
		if sc.s[sc.i] == '\'' {
			sc.i++
			return
		}
		sc.i++
	}
}

// value skips one value; keys inside inline tables are recorded under path.
func (sc *keyScanner) value(path []string) {
	if sc.i >= len(sc.s) {
		return
	}
	switch sc.s[sc.i] {
	case '"':
		sc.basicString()
	case '\'':
		sc.literalString()
	case '[':
		sc.i++
		for sc.i < len(sc.s) {
			sc.skipSpace(true)
			if sc.peek(']') {
				sc.i++
				return
			}
			before := sc.i
			sc.value(path)
			sc.skipSpace(true)
			if sc.peek(',') {
				sc.i++
			}
			if sc.i == before {
				sc.advance()
			}
		}
	case '{':
		sc.i++
		for sc.i < len(sc.s) {
			sc.skipSpace(true)
			if sc.peek('}') {
				sc.i++
				return
			}
			before := sc.i
			line := sc.line
			k := append(append([]string{}, path...), sc.key()...)
			sc.out.record(k, line)
			sc.skipSpace(true)
			if sc.peek('=') {
				sc.i++
				sc.skipSpace(true)
				sc.value(k)
			}
			sc.skipSpace(true)
			if sc.peek(',') {
				sc.i++
			}
			if sc.i == before {
				sc.advance()
			}
		}
	default:
		for sc.i < len(sc.s) {
			switch sc.s[sc.i] {
			case ',', ']', '}', '#', ' ', '\t', '\r', '\n':
				return
			}
			sc.i++
		}
	}
}
