package catalog

import (
	"fmt"
	"runtime"
	"slices"
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

// TestSortAcc: sortAcc orders distinct terms by (sortKey, term) for
// sizes around its insertion-sort cut-off, sorted and reversed inputs
// and terms sharing their first 8 bytes.
func TestSortAcc(t *testing.T) {
	rng := uint64(1)
	next := func() uint64 { rng = rng*6364136223846793005 + 1442695040888963407; return rng >> 33 }
	for _, n := range []int{0, 1, 2, 3, 12, 13, 14, 40, 200, 3000} {
		for _, order := range []string{"random", "sorted", "reversed", "prefixes"} {
			var tab termTable
			seen := map[string]bool{}
			var acc []termAcc
			for len(acc) < n {
				w := strings.Repeat("x", int(next()%4)) + string(rune('a'+next()%26)) + string(rune('a'+next()%26)) + string(rune('a'+next()%26))
				if order == "prefixes" {
					w = "abcdefgh" + w
				}
				if seen[w] {
					continue
				}
				seen[w] = true
				id := tab.intern(w)
				acc = append(acc, termAcc{key: tab.terms[id].key, id: id})
			}
			cmp := func(x, y termAcc) int { return strings.Compare(tab.terms[x.id].t, tab.terms[y.id].t) }
			switch order {
			case "sorted":
				slices.SortFunc(acc, cmp)
			case "reversed":
				slices.SortFunc(acc, func(x, y termAcc) int { return -cmp(x, y) })
			}
			sortAcc(acc, tab.terms, 0)
			if !slices.IsSortedFunc(acc, cmp) {
				t.Errorf("n=%d %s: not sorted", n, order)
			}
		}
	}
}

// TestLexiconMatchesDocs: with 1 to 4 analysis workers the lexicon
// numbers every distinct term once and names each document's terms in
// the order of its idxDoc.terms.
func TestLexiconMatchesDocs(t *testing.T) {
	var es []*Entry
	for i := 0; i < 700; i++ {
		es = append(es, &Entry{ID: fmt.Sprintf("u:t%d", i), Upstream: "u", Name: fmt.Sprintf("get_item_%d", i%37),
			Description: fmt.Sprintf("Returns item %d of the list, word%d and word%d; 获取天气 %d", i, i%11, i%101, i%5)})
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2, 3, 4} {
		runtime.GOMAXPROCS(procs)
		docs, lex := analyzeAllLex(es, true)
		seen := map[string]bool{}
		for _, term := range lex.terms {
			if seen[term] {
				t.Fatalf("procs %d: %q numbered twice", procs, term)
			}
			seen[term] = true
		}
		var ids []int32
		for _, c := range lex.ids {
			ids = append(ids, c...)
		}
		k := 0
		for _, d := range docs {
			for _, tt := range d.terms {
				if k >= len(ids) || lex.terms[ids[k]] != tt.term {
					t.Fatalf("procs %d: term %d of %s is %q, lexicon says otherwise", procs, k, d.e.ID, tt.term)
				}
				k++
			}
		}
		if k != len(ids) {
			t.Fatalf("procs %d: %d ids for %d terms", procs, len(ids), k)
		}
	}
}

// TestPlainTermIsEmitWord: for words of ASCII lower-case letters and
// digits, plainTerm emits what emitWord does.
func TestPlainTermIsEmitWord(t *testing.T) {
	for _, w := range []string{"a", "s", "is", "the", "files", "queries", "creating", "abs", "ids", "urls", "please",
		"x1", "2fa", "v2s", "running", "cases", "ss", "sss", "address", "data", "used", "using"} {
		var want []string
		emitWord(w, func(t string) { want = append(want, t) }, func(t string) { want = append(want, "whole:"+t) })
		var got []string
		if term, ok := plainTerm(w); ok {
			got = append(got, term)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%q: plainTerm %q, emitWord %q", w, got, want)
		}
	}
}

// TestHasNonWordRune agrees with the strings.IndexFunc definition.
func TestHasNonWordRune(t *testing.T) {
	for _, s := range append(buildTestStrings, "get_ip", "getIP", "获取天气", "abc文", "naïve", "ab\xffcd", "x-y") {
		want := strings.IndexFunc(s, func(r rune) bool { return !isWordRune(r) || isCJK(r) }) >= 0
		if got := hasNonWordRune(s); got != want {
			t.Errorf("hasNonWordRune(%q) = %v, want %v", s, got, want)
		}
	}
}
