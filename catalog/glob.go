package catalog

import (
	"strings"
	"unicode/utf8"
)

// IsGlob reports whether pattern contains a glob metacharacter ('*' or '?').
// A pattern without one is matched literally.
func IsGlob(pattern string) bool { return strings.ContainsAny(pattern, "*?") }

// GlobMatch reports whether s matches pattern, case-insensitively.
//
// The syntax is deliberately tiny (SPEC §6 patterns such as "github__*" and
// "*__delete_*"): '*' matches any run of characters, including none, and
// crosses every character ('_', ':', '/', '.'); '?' matches exactly one
// character (one Unicode code point); every other character matches itself.
// There are no character classes and no escapes, so no pattern is malformed.
// Both sides are compared after strings.ToLower. It runs in
// O(len(pattern)*len(s)) time in the worst case and does not allocate when
// both strings are already lower case.
func GlobMatch(pattern, s string) bool {
	return globMatchLower(strings.ToLower(pattern), strings.ToLower(s))
}

// globMatchLower is GlobMatch for strings that are already lower case.
// It is the classic iterative matcher: on a mismatch it backtracks to the
// most recent '*' and lets it swallow one more character.
func globMatchLower(p, s string) bool {
	pi, si := 0, 0
	starP, starS := -1, 0
	for si < len(s) {
		if pi < len(p) {
			switch p[pi] {
			case '*':
				starP, starS = pi, si
				pi++
				continue
			case '?':
				_, n := utf8.DecodeRuneInString(s[si:])
				pi++
				si += n
				continue
			default:
				if p[pi] == s[si] {
					pi++
					si++
					continue
				}
			}
		}
		if starP < 0 {
			return false
		}
		// Let the last '*' absorb one more character (a whole code point,
		// so a later '?' never lands inside a multi-byte sequence).
		_, n := utf8.DecodeRuneInString(s[starS:])
		starS += n
		pi, si = starP+1, starS
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}
