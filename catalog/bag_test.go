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
	var es []*Entry
	for _, d := range testIndex(t, tools).docs {
		es = append(es, d.e)
	}
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
