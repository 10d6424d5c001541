package catalog

import (
	"slices"
	"testing"
	"unicode"
)

func TestTokenizeSeedQuery(t *testing.T) {
	got := Tokenize("GitHub issue を作成する")
	for _, want := range []string{"github", stem("issue"), "を作", "作成", "成す", "する", stem("create")} {
		if !slices.Contains(got, want) {
			t.Errorf("Tokenize(seed query) = %q, missing %q", got, want)
		}
	}
	if slices.Contains(got, "を作成する") {
		t.Errorf("CJK run kept whole instead of bigrams: %q", got)
	}
}

func TestTokenizeCJKUnigramAndChinese(t *testing.T) {
	if got := Tokenize("猫"); !slices.Equal(got, []string{"猫"}) {
		t.Errorf("single CJK char: got %q, want [猫]", got)
	}
	got := Tokenize("获取天气预报")
	for _, want := range []string{"获取", "取天", "天气", "气预", "预报", "weather", "forecast", "get"} {
		if !slices.Contains(got, want) {
			t.Errorf("Tokenize(获取天气预报) = %q, missing %q", got, want)
		}
	}
	// Hangul is bigrammed too.
	if got := Tokenize("날씨검색"); !slices.Contains(got, "날씨") || !slices.Contains(got, "씨검") {
		t.Errorf("Hangul bigrams missing: %q", got)
	}
}

func TestTokenizeIdentifiersAndStemming(t *testing.T) {
	cases := map[string][]string{
		"createIssue":            {"creat", "issu", "createissu"},
		"HTTPServer":             {"http", "server", "httpserver"},
		"list_pull-requests.v2":  {"list", "pull", "request", "v2"},
		"Creating issues":        {"creat", "issu"},
		"queries and policies":   {"queri", "polici"},
		"stopped the boxes":      {"stop", "box"},
		"The status of analysis": {"status", "analysis"},
	}
	for in, want := range cases {
		if got := Tokenize(in); !slices.Equal(got, want) {
			t.Errorf("Tokenize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNameTokensKeepWhole(t *testing.T) {
	var got []string
	nameTokens("create_issue", func(s string) { got = append(got, s) })
	if !slices.Equal(got, []string{"create_issue", "creat", "issu"}) {
		t.Errorf("nameTokens(create_issue) = %q", got)
	}
	got = nil
	nameTokens("search", func(s string) { got = append(got, s) })
	if !slices.Equal(got, []string{"search"}) {
		t.Errorf("nameTokens(search) = %q", got)
	}
}

func TestStemSameFamily(t *testing.T) {
	for _, fam := range [][]string{
		{"create", "creates", "created", "creating"},
		{"list", "lists", "listed", "listing"},
		{"update", "updates", "updated", "updating"},
		{"query", "queries"},
		{"run", "running"},
	} {
		s0 := stem(fam[0])
		for _, w := range fam[1:] {
			if s := stem(w); s != s0 {
				t.Errorf("stem(%q) = %q, stem(%q) = %q: want equal", w, s, fam[0], s0)
			}
		}
	}
	if stem("作成") != "作成" || stem("café") != "café" {
		t.Error("non-ASCII words must not be stemmed")
	}
}

// isWordRune's ASCII fast path says what unicode.IsLetter/IsDigit say.
func TestIsWordRuneASCII(t *testing.T) {
	for r := rune(0); r < 0x80; r++ {
		if isWordRune(r) != (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			t.Errorf("isWordRune(%q) = %v", r, isWordRune(r))
		}
	}
}
