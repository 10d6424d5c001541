package clientconfig

import (
	"errors"
	"unicode/utf8"
)

// stripJSONC turns JSON with comments (// and /* */) and trailing commas, as
// VS Code's mcp.json allows, into plain JSON: comments become spaces (so
// offsets in errors stay right) and a comma followed only by blanks and
// comments before '}' or ']' is dropped. Strings are left untouched.
func stripJSONC(in []byte) ([]byte, error) {
	if !utf8.Valid(in) {
		return nil, errors.New("not UTF-8 text")
	}
	out := make([]byte, len(in))
	copy(out, in)
	inString := false
	for i := 0; i < len(out); i++ {
		c := out[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch {
		case c == '"':
			inString = true
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			for ; i < len(out) && out[i] != '\n'; i++ {
				out[i] = ' '
			}
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			j := i + 2
			for ; j+1 < len(out) && !(out[j] == '*' && out[j+1] == '/'); j++ {
			}
			if j+1 >= len(out) {
				return nil, errors.New("unterminated /* comment")
			}
			for k := i; k <= j+1; k++ {
				if out[k] != '\n' {
					out[k] = ' '
				}
			}
			i = j + 1
		}
	}
	// Trailing commas: a ',' whose next non-blank byte is '}' or ']'.
	inString = false
	for i := 0; i < len(out); i++ {
		c := out[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		if c == '"' {
			inString = true
			continue
		}
		if c == ',' {
			j := i + 1
			for j < len(out) && (out[j] == ' ' || out[j] == '\t' || out[j] == '\n' || out[j] == '\r') {
				j++
			}
			if j < len(out) && (out[j] == '}' || out[j] == ']') {
				out[i] = ' '
			}
		}
	}
	return out, nil
}
