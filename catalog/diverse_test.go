package catalog

import (
	"slices"
	"strings"
	"testing"
)

// TestDiverseServesEachTask: a request of three tasks whose first task
// has several near-duplicate tools. Without diversify the duplicates of
// the wordiest task take the first places and the other tasks' tools
// come after them; with it, each task's own best tool is in the first
// three.
func TestDiverseServesEachTask(t *testing.T) {
	es := []*Entry{
		ent("sky", "weather_now", "Current weather conditions for a city: temperature, wind, humidity and rain."),
		ent("sky", "weather_hourly", "Hourly weather forecast for a city: temperature, wind, humidity and rain for the next 48 hours."),
		ent("sky", "weather_daily", "Daily weather forecast for a city: temperature, wind, humidity and rain for the next 10 days."),
		ent("sky", "weather_alerts", "Weather alerts for a city: storm, wind and heat warnings."),
		ent("money", "convert_currency", "Convert an amount of money from one currency to another."),
		ent("words", "translate_text", "Translate text into another language."),
		ent("words", "detect_language", "Detect the language of a text."),
	}
	for _, f := range filler {
		up, name, _ := strings.Cut(f[0], ":")
		es = append(es, ent(up, name, f[1]))
	}
	q := "I want the hourly weather forecast for my city with temperature, wind, humidity and rain. Then convert money. Also detect the language."
	want := []string{"mcp:sky:weather_hourly", "mcp:money:convert_currency", "mcp:words:detect_language"}
	// "convert money" names the money upstream: ServerNamed alone would
	// lift its tool; off, the test shows what diversify does.
	p := DefaultRankParams()
	p.ServerNamed = 0
	got := ids(NewIndexWithParams(es, p).Search(q, 5, nil))
	for _, w := range want {
		if i := slices.Index(got, w); i < 0 || i > 2 {
			t.Errorf("%s at %d in %v, want in the first three", w, i, got)
		}
	}
	p.Diverse = 0
	off := ids(NewIndexWithParams(es, p).Search(q, 5, nil))
	missing := 0
	for _, w := range want {
		if i := slices.Index(off, w); i < 0 || i > 2 {
			missing++
		}
	}
	if missing == 0 {
		t.Errorf("without diversify every task's tool is in the first three too (%v): the test no longer shows it", off)
	}
}
