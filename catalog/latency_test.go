package catalog

import "testing"

// The ASCII pass of looksLikeIdentifier answers as the rune-by-rune rule.
func TestLooksLikeIdentifierASCIIPass(t *testing.T) {
	for _, w := range []string{"", "a", "A", "Get", "getURLs", "create_issue", "math.factorial", "x-y", "plain",
		"ABC", "aB", "_", ".", "-", "Ab_", "e.g", "404", "a1B2"} {
		if got, want := looksLikeIdentifier(w), looksLikeIdentifierRunes(w); got != want {
			t.Errorf("looksLikeIdentifier(%q) = %v, rune rule %v", w, got, want)
		}
	}
	for _, w := range []string{"创建issue", "Émile", "naïve_word", "getÜber"} {
		if looksLikeIdentifier(w) != looksLikeIdentifierRunes(w) {
			t.Errorf("%q: the two paths differ", w)
		}
	}
}
