package catalog

import (
	"slices"
	"testing"
)

// The bench's re-implementations of the clients' own tool searches
// (benchcodex.go, benchclaude.go), on examples of our own.

func TestCodexTokens(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		// Porter2 stems, NLTK stop words, snake_case kept whole (UAX #29).
		{"Creates new GitHub issues in the repository", []string{"creat", "new", "github", "issu", "repositori"}},
		{"create_issue can't 3.14 math.factorial", []string{"create_issu", "can't", "3.14", "math.factori"}},
		{"Café météo: get-weather", []string{"cafe", "meteo", "get", "weather"}},
	} {
		if got := codexTokens(c.in); !slices.Equal(got, c.want) {
			t.Errorf("codexTokens(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestCodexBM25Ranks(t *testing.T) {
	es := []*Entry{
		{ID: "a", Name: "list_files", Exposed: "fs__list_files", Upstream: "fs", Description: "List the files of a directory."},
		{ID: "b", Name: "get_weather", Exposed: "wx__get_weather", Upstream: "wx", Description: "Current weather and forecasts for a city."},
		{ID: "c", Name: "read_file", Exposed: "fs__read_file", Upstream: "fs", Description: "Read a file."},
	}
	c := newCodexBM25(es)
	if got := c.search("weather forecast for Paris", 8); len(got) != 1 || got[0] != "b" {
		t.Errorf("weather query: %v, want [b] (forecast matches forecasts through the stemmer)", got)
	}
	// The name's snake_case words are one token: "files" reaches list_files
	// through its description only, and "list_files" itself is a token.
	if got := c.search("directory files", 8); len(got) == 0 || got[0] != "a" {
		t.Errorf("directory query: %v, want a first", got)
	}
}

func TestClaudeSearchScores(t *testing.T) {
	es := []*Entry{
		{ID: "a", Name: "list_files", Upstream: "fs", Description: "List the files of a directory."},
		{ID: "b", Name: "get_weather", Upstream: "wx", Description: "Current weather and forecasts for a city."},
		{ID: "c", Name: "forecast", Upstream: "meteo", Description: "Hourly data."},
	}
	c := newClaudeSearch(es, nil)
	// "weather": a name part of b (12) and a description word (2).
	if got := c.search("weather", 5); !slices.Equal(got, []string{"b"}) {
		t.Errorf("weather: %v", got)
	}
	// "forecast" is a name part of c (12); b's "forecasts" is no whole
	// word match (no stemming).
	if got := c.search("forecast", 5); !slices.Equal(got, []string{"c"}) {
		t.Errorf("forecast: %v", got)
	}
	// "file" is inside the part "files" (6); punctuation stays on a word:
	// "directory?" is no \bdirectory?\b match in a's description.
	if got := c.search("file directory?", 5); !slices.Equal(got, []string{"a"}) {
		t.Errorf("file directory?: %v", got)
	}
	// The exact name returns that tool alone.
	if got := c.search("mcp__wx__get_weather", 5); !slices.Equal(got, []string{"b"}) {
		t.Errorf("exact name: %v", got)
	}
	// A hint adds 4 per whole word: c's hint makes "weather" reach it too,
	// below b (14 against 4).
	h := newClaudeSearch(es, []string{"", "", "weather temperature"})
	if got := h.search("weather", 5); !slices.Equal(got, []string{"b", "c"}) {
		t.Errorf("weather with hints: %v", got)
	}
}

func TestJSWholeWord(t *testing.T) {
	for _, c := range []struct {
		s, term string
		want    bool
	}{
		{"get the weather.", "weather", true},
		{"weatherman", "weather", false},
		{"e.g. chicago", "e.g", true},
		{"is it sunny?", "sunny?", false}, // \b after "?" needs a word character
		{"sunny?x", "sunny?", true},
	} {
		if got := jsWholeWord(c.s, c.term); got != c.want {
			t.Errorf("jsWholeWord(%q, %q) = %v, want %v", c.s, c.term, got, c.want)
		}
	}
}
