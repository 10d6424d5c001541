package catalog

import (
	"slices"
	"strings"
	"testing"
)

// The Korean, Russian and Thai word tables (langdict.go) add English terms
// to the words they know, in tool text and in queries: a particle or verb
// ending stays with its Korean word, Russian inflections meet at their
// stem, a Thai run is cut at its words. Examples of our own.
func TestLangTablesAddEnglish(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string // English terms (stemmed) expected among the terms
		not  []string // terms that must not be there
	}{
		{"이슈를 생성해줘", []string{"issu", "creat"}, nil},
		{"파일 목록을 보여주세요", []string{"fil", "list"}, nil},
		{"자동차", nil, []string{"tea"}}, // no one-syllable word inside an eojeol
		{"создайте задачу", []string{"creat", "issu", "task"}, []string{"создайте"}},
		{"создать задачи", []string{"creat", "issu"}, nil},
		{"Удалить файлы на сервере", []string{"delet", "fil", "server"}, []string{"на"}},
		{"ติดตามสถานะพัสดุ", []string{"track", "status", "parcel"}, nil},
		{"พยากรณ์อากาศ", []string{"forecast", "weather"}, nil},
	} {
		got := Tokenize(c.text)
		for _, w := range c.want {
			if !slices.Contains(got, w) {
				t.Errorf("%q: terms %q lack %q", c.text, got, w)
			}
		}
		for _, w := range c.not {
			if slices.Contains(got, w) {
				t.Errorf("%q: terms %q have %q", c.text, got, w)
			}
		}
	}
}

// A Korean particle, a Russian preposition and a Thai function word count
// for no query word, so the tool matching every content word is a strong
// match; the words are counted as written, once each.
func TestLangFunctionWordsCountForNone(t *testing.T) {
	for q, want := range map[string]int{
		"이슈를 생성해 주세요":               2, // issue, create (주세요: please)
		"создайте задачу на GitHub": 3, // create, issue, GitHub (на: on)
		"พัสดุของฉันอยู่ที่ไหน":     1, // parcel (of my, is, where: function words)
		"ส่งอีเมลหาทีม":             3, // send, email, find (หา); ทีม (team, unknown) has no n-gram of its own
	} {
		if aq := analyzeQuery(q); aq.nunits != want {
			var ts []string
			for _, qt := range aq.terms {
				ts = append(ts, qt.term)
			}
			t.Errorf("%q: %d query words (%q), want %d", q, aq.nunits, ts, want)
		}
	}
}

func TestStemRussian(t *testing.T) {
	for w, want := range map[string]string{"создать": "созда", "создайте": "созда", "задачу": "задач", "задачи": "задач", "всё": "все"} {
		if got := StemRussian(w); got != want {
			t.Errorf("StemRussian(%q) = %q, want %q", w, got, want)
		}
	}
}

// TestKoSegmentsLongRun: a stretch of Hangul is segmented in linear work
// (every position rescanned and hashed the rest of the
// stretch; 32,000 syllables took 13.5 s). 200,000 syllables, with a known
// word at both ends, are cut as before at the ends; a quadratic cut would
// run for hours.
func TestKoSegmentsLongRun(t *testing.T) {
	run := "이슈" + strings.Repeat("갃", 200000) + " 이슈를"
	var got []string
	koSegments(run, func(lo, hi int, en string) { got = append(got, run[lo:hi]+"="+en) })
	if len(got) != 2 || !strings.HasPrefix(got[0], "이슈=") || !strings.HasPrefix(got[1], "이슈를=") {
		t.Fatalf("segments %q, want 이슈 at the start and 이슈를 at the end", got)
	}
}
