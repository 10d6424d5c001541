package catalog

import (
	"slices"
	"testing"
)

// Word forms of one root that the light stemmer keeps apart (historic /
// historical, weekly / week, analysis / analyze, generator / generate)
// reach each other through expandVariants; words that only look alike
// (station / stat: -ion is not a rule) do not.
func TestVariantsLinkWordForms(t *testing.T) {
	tools := append([][3]string{
		{"museum:historical_events", "List historical events of a country between two years.", ""},
		{"museum:exhibits", "Search the exhibits of a museum by artist or period.", ""},
		{"reports:week_summary", "Summarize the sales of one week.", ""},
		{"reports:daily_summary", "Summarize the sales of one day.", ""},
		{"text:analyze_sentiment", "Analyze the sentiment of a text.", ""},
		{"text:word_count", "Count the words of a text.", ""},
		{"pw:password_generator", "Strong random passwords.", ""},
		{"db:table_stats", "Row counts and sizes of the tables (stats).", ""},
		{"rail:list_departures", "List departures of a train station.", ""},
	}, filler...)
	es := testEntries(t, tools)
	p := DefaultRankParams()
	p.Semantic = 0 // the variants only, not the WordNet table
	ix := NewIndexWithParams(es, p)
	for _, c := range []struct{ q, want string }{
		{"historic events in Portugal", "mcp:museum:historical_events"},
		{"weekly sales summary", "mcp:reports:week_summary"},
		{"sentiment analysis of this review", "mcp:text:analyze_sentiment"},
		{"generate a strong password", "mcp:pw:password_generator"},
	} {
		if got := top(ix, c.q, 1); !slices.Equal(got, []string{c.want}) {
			t.Errorf("%q: first %v, want %s", c.q, got, c.want)
		}
	}
	// What the variants add, term by term.
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	variants := func(q string) []string {
		aq := analyzeQuery(q)
		ix.resolve(&aq)
		ix.expandVariants(&aq)
		var out []string
		for _, qt := range aq.terms {
			if qt.kind == termVariant {
				out = append(out, qt.term)
			}
		}
		return out
	}
	if got := variants("historic weekly analysis generate"); !slices.Equal(got, []string{"historical", "week", "analyz", "generator"}) {
		t.Errorf("variants %v, want [historical week analyz generator]", got)
	}
	if got := variants("station"); len(got) != 0 {
		t.Errorf("station: variants %v, want none (stat is another word)", got)
	}
}

// A word of an operation verb group used as a noun ("the store hours",
// "my order", "a list of", "New York", "3 posts") does not say which
// operation the query asks for; used as a verb it does.
func TestVerbWordsUsedAsNouns(t *testing.T) {
	group := func(w string) uint16 { return 1 << (toolVerbGroup[stem(w)] - 1) }
	for _, c := range []struct {
		q    string
		want uint16
	}{
		{"store this note in my notebook", group("save")},
		{"what are the store hours of the bakery", 0},
		{"where is my order", 0},
		{"order a pizza", group("buy")},
		{"book a table for two", group("book")},
		{"recommend a book about whales", 0},
		{"a list of the open issues", 0},
		{"list the open issues", group("show")},
		{"weather in New York", 0},
		{"new issue: the build fails", group("create")},
		{"summarize the 3 posts of today", 0},
		{"Post this photo to the team channel", group("send")},
		{"I need the author's posts", 0},
		{"The change of climate in Europe", 0},
	} {
		aq := analyzeQuery(c.q)
		if got := aq.verbMask(); got != c.want {
			t.Errorf("%q: verbs %b, want %b", c.q, got, c.want)
		}
	}
}

// Among many specialised tools, one that matches the whole request
// ranks above one that matches a part of it strongly, here in its name
// (RankParams.Coverage): "translate this text to German" wants the
// translator, not German headlines.
func TestCoverageFavoursWholeMatch(t *testing.T) {
	tools := append([][3]string{
		{"news:german_headlines", "German headlines.", ""},
		{"ling:deepl", "DeepL: translate text between thirty languages, including German, with a formal or informal tone and glossaries.", ""},
		{"ling:detect_language", "Detect the language of a text.", ""},
		{"ling:spell_check", "Check the spelling of a text.", ""},
	}, filler...)
	es := testEntries(t, tools)
	p := DefaultRankParams()
	p.Semantic = 0
	p.Dense = 0
	q := "translate this text to German"
	if got := top(NewIndexWithParams(es, p), q, 1); !slices.Equal(got, []string{"mcp:ling:deepl"}) {
		t.Errorf("%q: first %v, want mcp:ling:deepl", q, got)
	}
	p.Coverage = 0
	if got := top(NewIndexWithParams(es, p), q, 1); slices.Equal(got, []string{"mcp:ling:deepl"}) {
		t.Errorf("without the coverage factor the translator is first too: the test no longer shows what it changes")
	}
}
