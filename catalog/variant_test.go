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
	var es []*Entry
	for _, d := range testIndex(t, tools).docs {
		es = append(es, d.e)
	}
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
