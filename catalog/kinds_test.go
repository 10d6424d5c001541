package catalog

import (
	"slices"
	"strings"
	"testing"
)

// TestKindWordsReachTheKind: a request names an amount in currencies
// ("yen", "dollars") and only a tool that says "currency" can answer it.
// The currency tool comes first, through the kind relation (kindWords),
// which the semantic signal carries: without it (Semantic 0) nothing
// leads to it. (A tool that shares the word itself — "euro" in a
// football tool for "250 euros" — still outranks the kind relation,
// which weighs as a related word: bfcl's "I have 100 euro. How much is
// it in USD?" is still a miss.)
func TestKindWordsReachTheKind(t *testing.T) {
	es := []*Entry{
		ent("money", "convert_money", "Convert an amount from one currency to another at today's rate."),
		ent("sport", "euro_cup_results", "Results of the Euro football championship matches."),
		ent("units", "convert_length", "Convert a length between units."),
		ent("sport", "euro_cup_table", "The Euro football championship table."),
	}
	for _, f := range filler {
		up, name, _ := strings.Cut(f[0], ":")
		es = append(es, ent(up, name, f[1]))
	}
	for _, w := range []string{"yen", "euros", "usd", "kilometers", "fahrenheit"} {
		rs := related().of(stem(w))
		if len(rs) == 0 || !slices.Contains([]string{"currenci", "unit"}, related().word(rs[0])) {
			t.Errorf("%s: first relation %v, want its kind", w, rs)
		}
	}
	q := "250 dollars in yen, please."
	if got := ids(NewIndex(es).Search(q, 3, nil)); len(got) == 0 || got[0] != "mcp:money:convert_money" {
		t.Errorf("%q: %v, want convert_money first", q, got)
	}
	p := DefaultRankParams()
	p.Semantic = 0
	p.Dense = 0 // the dense table relates currencies and money too
	if got := ids(NewIndexWithParams(es, p).Search(q, 3, nil)); len(got) > 0 && got[0] == "mcp:money:convert_money" {
		t.Errorf("without the semantic signal convert_money is first too (%v): the test no longer shows the kind relation", got)
	}
	q = "What is 30 miles in kilometers?"
	if got := ids(NewIndex(es).Search(q, 3, nil)); len(got) == 0 || got[0] != "mcp:units:convert_length" {
		t.Errorf("%q: %v, want convert_length first", q, got)
	}
}
