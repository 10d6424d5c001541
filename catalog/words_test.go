package catalog

import (
	"slices"
	"testing"
)

// A hit's match strength counts each query word once, however many terms
// it gave: the translations of a Chinese or Japanese word are alternatives
// (one matched is the word matched), GitHub's parts git and hub and its
// joined form "github" spell one word, and a Japanese particle or a bigram
// across two words counts for none. Before, 创建 counted as five words
// (the bigram, found, establish, creat) and GitHub as three, so the tool
// that matches the whole request was "partial". Examples of our own.
func TestQueryWordsCountOnce(t *testing.T) {
	ix := testIndex(t, append([][3]string{
		{"scrape:get_urls", "Get the links of a web page.", ""},
		{"gh:list_issues", "List the issues of a GitHub repository.", ""},
	}, filler...))
	for _, c := range []struct {
		query, want string
		words       int // query words (queryTerm.unit)
	}{
		{"创建 GitHub issue", "mcp:gh:create_issue", 3},           // create a GitHub issue
		{"在GitHub上创建issue", "mcp:gh:create_issue", 3},           // create an issue on GitHub: 在 and 上 count only where matched
		{"GitHub issue を作成する", "mcp:gh:create_issue", 3},        // を and する count for no word
		{"GitHub 이슈 생성", "mcp:gh:create_issue", 3},              // 이슈 issue, 생성 create (the Korean table)
		{"GitHub 이슈를 생성해줘", "mcp:gh:create_issue", 3},           // the particle 를 and the ending 해줘 belong to their words
		{"создайте задачу на GitHub", "mcp:gh:create_issue", 3}, // на is a function word; создайте, задачу inflected
		{"create a GitHub issue", "mcp:gh:create_issue", 3},     // the English request
		{"getURLs of this page", "mcp:scrape:get_urls", 2},      // getURLs, page
		{"send an e-mail message", "mcp:mail:send_email", 4},    // e and mail are two words
	} {
		aq := analyzeQuery(c.query)
		if aq.nunits != c.words {
			var ts []string
			for _, qt := range aq.terms {
				ts = append(ts, qt.term+"/"+string(rune('0'+qt.unit)))
			}
			t.Errorf("%q: %d query words %v, want %d", c.query, aq.nunits, ts, c.words)
		}
		res := ix.Search(c.query, 3, nil)
		if len(res) == 0 || res[0].Entry.ID != c.want {
			t.Errorf("%q: top %v, want %s", c.query, res, c.want)
			continue
		}
		wantLevel := MatchStrong
		if got := MatchLevel(res[0].Strength); got != wantLevel {
			t.Errorf("%q: %s strength %.3f (%s), want %s", c.query, c.want, res[0].Strength, got, wantLevel)
		}
	}
	// The same tool for the same request in two languages gets the same
	// strength.
	zh, en := ix.Search("创建 GitHub issue", 1, nil), ix.Search("create GitHub issue", 1, nil)
	if len(zh) == 0 || len(en) == 0 || zh[0].Strength != en[0].Strength {
		t.Errorf("创建 GitHub issue %v vs create GitHub issue %v: strengths differ", zh, en)
	}
	// A tool matching only "GitHub issue" matches two of three words, one
	// matching only 创建 (through "create") one of three.
	for _, s := range ix.Search("创建 GitHub issue", 10, nil) {
		if s.Entry.ID == "mcp:gh:list_issues" && (s.Strength < 0.5 || s.Strength >= 0.9) {
			t.Errorf("list_issues for 创建 GitHub issue: strength %.3f, want about 2/3", s.Strength)
		}
	}
}

// An unknown query word split in two known terms (zipcode -> zip, code)
// is matched by both halves together; one half alone is its share of the
// word: a compress tool that has "zip" is no strong match for "zipcode"
// (it was: 0.8, as if zip were the word).
func TestSplitWordNeedsBothHalves(t *testing.T) {
	ix := testIndex(t, append([][3]string{
		{"post:postal_area", "Describe the area a zip code covers.", ""},
		{"zip:compress", "Compress files into a zip archive.", ""},
	}, filler...))
	res := ix.Search("zipcode", 5, nil)
	if len(res) < 2 || res[0].Entry.ID != "mcp:post:postal_area" || res[0].Strength < strongStrength {
		t.Fatalf("zipcode: %+v, want postal_area first and strong", res)
	}
	for _, s := range res[1:] {
		if s.Entry.ID == "mcp:zip:compress" && (s.Strength >= strongStrength || len(s.Matched) > 0) {
			t.Errorf("compress: strength %.3f, matched %v, want below strong and not matched", s.Strength, s.Matched)
		}
	}
}

// The query tokenizer that numbers words emits exactly the index
// tokenizer's terms, in the same order, so ranking is unchanged.
func TestUnitTokenizerSameTerms(t *testing.T) {
	for _, s := range []string{
		"创建 GitHub issue", "GitHub issue を作成する", "把这段文字翻译成英文", "送るメールを作成",
		"ファイル", "书", "を", "GitHub 이슈를 생성해줘", "ขอพยากรณ์อากาศกรุงเทพพรุ่งนี้",
		"getURLs listAPIsAndIDs HTTPServer", "the user's repositories", "查询火车站列车时刻表 and 天气预报",
		"создать issue на GitHub", "GitHub 이슈를 생성해 주세요", "พัสดุของฉันอยู่ที่ไหน", "Удалить файлы на сервере",
		"ส่งอีเมลหาทีม", "이슈 生成", "이슈生成를",
	} {
		var got []string
		tokenizeTextUnits(s, nil, func(t string, _ int, _ bool) { got = append(got, t) }, 0)
		if want := Tokenize(s); !slices.Equal(got, want) {
			t.Errorf("%q: unit tokenizer %q, index tokenizer %q", s, got, want)
		}
	}
}

// A possessive 's or a contraction ending is no query word (the index
// tokenizer dropped it; the query's, which cuts a chunk into runs first,
// kept "s" and "t" as words no tool has, so "the user's repositories"
// was a partial match for list_repos).
func TestQueryDropsClitics(t *testing.T) {
	for q, want := range map[string]int{"the user's repositories": 2, "don't delete it": 2 /* don, delete */, "the users’ files": 2} {
		aq := analyzeQuery(q)
		for _, qt := range aq.terms {
			if qt.term == "s" || qt.term == "t" {
				t.Errorf("%q: term %q", q, qt.term)
			}
		}
		if aq.nunits != want {
			t.Errorf("%q: %d words, want %d", q, aq.nunits, want)
		}
	}
	ix := testIndex(t, append([][3]string{{"gh:list_repos", "List the repositories of a user.", ""}}, filler...))
	if res := ix.Search("the user's repositories", 3, nil); len(res) == 0 || res[0].Entry.ID != "mcp:gh:list_repos" || res[0].Strength < strongStrength {
		t.Errorf("the user's repositories: %+v, want list_repos first and strong", res)
	}
}
