package catalog

import (
	"slices"
	"strings"
	"testing"
)

// TestDiverseTwinGivesWay: a request of three tasks where the first task
// has two tools that say the same thing (road_trip_cost repeats
// the other: every query word the second of them matches, the first
// matches too). The repeat outscores the third task's tool, though by
// less than RankParams.Diverse's ratio; it shows the model nothing new,
// so the third task's tool takes the third place
// (RankParams.DiverseTwin).
func TestDiverseTwinGivesWay(t *testing.T) {
	es := []*Entry{
		ent("travel", "trip_cost", "Estimate the fuel cost of a road trip from its distance, the fuel price and the car's fuel use."),
		ent("travel", "road_trip_cost", "Estimate the fuel cost of a road trip from distance, fuel price and fuel use."),
		ent("travel", "book_hotel", "Book a hotel room in a city for given dates."),
		ent("food", "find_restaurant", "Find restaurants near a place, by cuisine."),
	}
	for _, f := range filler {
		up, name, _ := strings.Cut(f[0], ":")
		es = append(es, ent(up, name, f[1]))
	}
	q := "Estimate the fuel cost of a road trip of 420 km: fuel price 1.9 per litre, fuel use 6.5 litres. Then book a hotel room in Lyon for Friday. Finally, find a vegan restaurant near the hotel."
	want := [][]string{{"mcp:travel:trip_cost", "mcp:travel:road_trip_cost"}, {"mcp:travel:book_hotel"}, {"mcp:food:find_restaurant"}}
	run := func(twin float64) []Scored {
		p := DefaultRankParams()
		p.DiverseTwin = twin
		return NewIndexWithParams(es, p).Search(q, 5, nil)
	}
	firstThree := func(hits []Scored) int {
		n := 0
		got := ids(hits)
		for _, task := range want {
			for _, w := range task {
				if i := slices.Index(got, w); i >= 0 && i <= 2 {
					n++
					break
				}
			}
		}
		return n
	}
	if got := run(DefaultRankParams().DiverseTwin); firstThree(got) != 3 {
		t.Errorf("first hits %v, want a tool of each task %v in the first three", ids(got), want)
	}
	off := run(0)
	if firstThree(off) == 3 {
		t.Errorf("with DiverseTwin 0 every task's tool is in the first three too (%v): the test no longer shows it", ids(off))
	}
	for _, h := range off {
		t.Logf("off: %-28s %.3f", h.Entry.ID, h.Score)
	}
}
