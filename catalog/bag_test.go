package catalog

import (
	"slices"
	"testing"
)

// Two near-identical tools match the same request words. The request
// gives a latitude and a longitude: the tool that takes them as its
// parameters is the one meant, the other takes one "point" and only
// mentions them in that parameter's description. The field-weighted score
// alone puts the "point" tool first (parameter descriptions weigh more
// than parameter names); the bag score (RankParams.Bag: one bag of name,
// description, server and parameter names) tips the pair.
func TestBagTipsNearTwins(t *testing.T) {
	tools := append([][3]string{
		{"geo:convert_coordinates", "Convert coordinates to another system.",
			`{"type":"object","properties":{"point":{"type":"string","description":"The point: latitude, longitude."},"system":{"type":"string"}}}`},
		{"gis:convert_coordinates", "Convert coordinates to another system.",
			`{"type":"object","properties":{"latitude":{"type":"number","description":"Degrees north."},"longitude":{"type":"number","description":"Degrees east."},"system":{"type":"string"}}}`},
		{"geo:distance", "Distance between two points given by latitude and longitude.", ""},
	}, filler...)
	es := testEntries(t, tools)
	p := DefaultRankParams()
	p.Semantic = 0
	q := "convert the coordinates latitude 48.85 longitude 2.35 to UTM"
	if got := top(NewIndexWithParams(es, p), q, 2); !slices.Equal(got, []string{"mcp:gis:convert_coordinates", "mcp:geo:convert_coordinates"}) {
		t.Errorf("%q: first hits %v, want mcp:gis:convert_coordinates, then mcp:geo:convert_coordinates", q, got)
	}
	p.Bag = 0
	if got := top(NewIndexWithParams(es, p), q, 1); slices.Equal(got, []string{"mcp:gis:convert_coordinates"}) {
		t.Errorf("without the bag score the latitude/longitude tool is first too: the test no longer shows what it changes")
	}
}

// Two tools with the same words in another order: the request follows
// the wording of one of them. Every other signal ties them (the same
// terms, lengths and fields), so without the word-pair signal
// (RankParams.Pairs) the smaller id wins; with it, the tool whose
// description has the request's words side by side does.
func TestPairsFollowWording(t *testing.T) {
	tools := append([][3]string{
		{"a:rates_tool", "Convert currency rates to a report.", ""},
		{"b:rates_tool", "Report rates: convert to currency.", ""},
	}, filler...)
	es := testEntries(t, tools)
	p := DefaultRankParams()
	p.Semantic = 0
	for q, want := range map[string]string{
		"report the rates converted to currency": "mcp:b:rates_tool",
		"currency rates in a report":             "mcp:a:rates_tool",
	} {
		if got := top(NewIndexWithParams(es, p), q, 1); !slices.Equal(got, []string{want}) {
			t.Errorf("%q: first hit %v, want %s", q, got, want)
		}
	}
	p.Pairs = 0
	if got := top(NewIndexWithParams(es, p), "report the rates converted to currency", 1); slices.Equal(got, []string{"mcp:b:rates_tool"}) {
		t.Errorf("without the pair signal the b tool is first too: the test no longer shows what it changes")
	}
}
