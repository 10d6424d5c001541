package policy

import (
	"strings"
	"unicode/utf8"
)

// IsGlob reports whether pattern contains a glob metacharacter ('*' or '?').
// A pattern without one is matched literally.
func IsGlob(pattern string) bool { return strings.ContainsAny(pattern, "*?") }

// Match reports whether s matches pattern, case-insensitively. It is the one
// glob dialect of every rule list and of the tools.by_client keys.
//
// The syntax is deliberately tiny (SPEC §6 patterns such as "github__*" and
// "*__delete_*"): '*' matches any run of characters, including none, and
// crosses every character ('_', ':', '/', '.'); '?' matches exactly one
// character (one Unicode code point); every other character matches itself
// ('[', '\\' included: there are no character classes and no escapes, so no
// pattern is malformed). Both sides are compared after strings.ToLower. It
// runs in O(len(pattern)*len(s)) time in the worst case and does not
// allocate when both strings are already lower case.
func Match(pattern, s string) bool {
	return matchLower(strings.ToLower(pattern), strings.ToLower(s))
}

// matchLower is Match for strings that are already lower case.
// It is the classic iterative matcher: on a mismatch it backtracks to the
// most recent '*' and lets it swallow one more character.
func matchLower(p, s string) bool {
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

// coversLower reports whether the lower-case pattern p matches every string
// ns+w for every non-empty w: whether p covers the whole namespace ns (an
// upstream's "github__" or "mcp:github:"). "github__*", "git*__*",
// "mcp:github:*" and "*" cover "github__"; "github__get_*", "*__delete_*"
// and "github__?" do not.
//
// It runs the pattern as a set of states (positions in p) over ns, then over
// one character that only '?' and '*' match, and asks whether some state is
// followed by nothing but '*'.
func coversLower(p, ns string) bool {
	states := make([]bool, len(p)+1)
	closure := func(st []bool) {
		for i := 0; i < len(p); i++ {
			if st[i] && p[i] == '*' {
				st[i+1] = true
			}
		}
	}
	states[0] = true
	closure(states)
	step := func(r string) {
		next := make([]bool, len(p)+1)
		for i := 0; i < len(p); i++ {
			if !states[i] {
				continue
			}
			switch {
			case p[i] == '*':
				next[i] = true
			case p[i] == '?':
				next[i+1] = true
			case r != "" && strings.HasPrefix(p[i:], r):
				next[i+len(r)] = true
			}
		}
		closure(next)
		states = next
	}
	for _, r := range ns {
		step(string(r))
	}
	step("") // the wildcard character
	for i := 0; i < len(p); i++ {
		if states[i] && strings.Trim(p[i:], "*") == "" {
			return true
		}
	}
	return false
}
