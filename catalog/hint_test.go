package catalog

import (
	"strings"
	"testing"
)

// A tool's search hint (SearchHint, for clients that score words
// themselves): its most telling words first, the other verbs of its
// operation, its words in the tables' languages; at most maxHintChars of
// lower-case words. Measured with a re-implementation of Claude Code's
// scoring it lifts a one-word request that only the hint has.
func TestSearchHint(t *testing.T) {
	tools := append([][3]string{
		{"wx:search_forecasts", "Searches weather forecasts for any city in the world.", ""},
	}, filler...)
	ix := testIndex(t, tools)
	h := ix.SearchHint("mcp:wx:search_forecasts")
	if len(h) == 0 || len(h) > maxHintChars || h != strings.ToLower(h) {
		t.Fatalf("hint %q: want 1..%d lower-case characters", h, maxHintChars)
	}
	words := strings.Fields(h)
	for _, want := range []string{"forecasts", "weather", "find", "vorhersage"} {
		found := false
		for _, w := range words {
			found = found || w == want
		}
		if !found {
			t.Errorf("hint %q lacks %q", h, want)
		}
	}
	if ix.SearchHint("mcp:no:such_tool") != "" {
		t.Errorf("unknown id has a hint")
	}
	// The Claude Code scorer: "vorhersage" (German) is only in the hint.
	var es []*Entry
	for _, d := range ix.docs {
		es = append(es, d.e)
	}
	hints := make([]string, len(es))
	for i, e := range es {
		hints[i] = ix.SearchHint(e.ID)
	}
	if got := newClaudeSearch(es, nil).search("vorhersage", 5); len(got) != 0 {
		t.Errorf("without hints vorhersage finds %v", got)
	}
	if got := newClaudeSearch(es, hints).search("vorhersage", 5); len(got) == 0 || got[0] != "mcp:wx:search_forecasts" {
		t.Errorf("with hints vorhersage finds %v, want search_forecasts", got)
	}
}
