package catalog

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// buildTestStrings are ASCII, mixed-case, non-ASCII and invalid UTF-8
// strings of every length around the 8-byte step of isLowerASCII.
var buildTestStrings = []string{"", "a", "A", "@", "[", "`", "{", "Z", "z", "abcdefg", "abcdefgh", "abcdefgH",
	"Abcdefgh", "abcdefghi", "abcdefghI", "@toolsdk.ai/aws-ses-mcp::send-email", "_toolsdk_ai_aws-ses-mcp__Send-Email",
	"get_URLs", "créer_fichier", "获取天气", "Ünïcode", "abcdefg\xff", "\xffabcdefgh", "ÀBCDEFGH", "İstanbul", "ǅ",
	"hello world  ", "0123456789", "ZZZZZZZZZZZZZZZZ", "AZaz@[`{AZaz@[`{x"}

// TestToLowerIsStringsToLower: toLower and isLowerASCII agree with
// strings.ToLower on every test string.
func TestToLowerIsStringsToLower(t *testing.T) {
	for _, s := range buildTestStrings {
		if got, want := toLower(s), strings.ToLower(s); got != want {
			t.Errorf("toLower(%q) = %q, want %q", s, got, want)
		}
		want := true
		for i := 0; i < len(s); i++ {
			if c := s[i]; c >= utf8.RuneSelf || c >= 'A' && c <= 'Z' {
				want = false
			}
		}
		if got := isLowerASCII(s); got != want {
			t.Errorf("isLowerASCII(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestAppendNameKeyASCIIPath: the byte-at-a-time ASCII path of
// appendNameKey gives the key of the rune-by-rune definition.
func TestAppendNameKeyASCIIPath(t *testing.T) {
	ref := func(s string) string {
		var b []byte
		for _, r := range s {
			if isWordRune(r) {
				b = utf8.AppendRune(b, unicode.ToLower(r))
			}
		}
		if utf8.RuneCount(b) < 4 {
			return ""
		}
		return string(b)
	}
	for _, s := range append(buildTestStrings, "Get IP", "get_ip", "abc", "ab-c-d", "é_ab", "文文文", "a文b") {
		if got, want := nameKey(s), ref(s); got != want {
			t.Errorf("nameKey(%q) = %q, want %q", s, got, want)
		}
	}
}

// TestStopTableIsStopwords: the stopword table answers as the map does,
// for every stopword and for words near them.
func TestStopTableIsStopwords(t *testing.T) {
	if maxStopwordLen > 7 {
		t.Skip("stopwords longer than 7 bytes: the map is used")
	}
	words := []string{"", "x", "thee", "th", "tha", "pleas", "pleasee", "abcdefg", "\xff", "é", "a\x00"}
	for w := range stopwords {
		words = append(words, w, w+"s", w[:len(w)-1], strings.ToUpper(w))
	}
	for _, w := range words {
		_, want := stopwords[w]
		if got := isStopword(w); got != want {
			t.Errorf("isStopword(%q) = %v, want %v", w, got, want)
		}
	}
}
