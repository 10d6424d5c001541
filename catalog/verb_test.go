package catalog

import (
	"strings"
	"testing"
)

// TestNoVerbAskedNoDestructiveTool: a one-task request that names no
// operation ("got a recipe for tonight?") asks for nothing
// destructive, so a delete_*/stop_* tool that shares its object word
// (short name, short description: BM25F's favourite) no longer comes
// first; with a delete verb in the request it still does.
func TestNoVerbAskedNoDestructiveTool(t *testing.T) {
	es := []*Entry{
		ent("cook", "delete_recipe", "Delete a recipe."),
		ent("cook", "recipe_ideas", "Suggests dishes and cooking ideas for a cuisine, a diet such as vegetarian or vegan, and a budget; returns a recipe for each."),
		ent("cook", "stop_timer", "Stop the kitchen timer."),
		ent("cook", "timer_status", "Shows how long the kitchen timer for a dish has left to run, in minutes and seconds, and when it was started."),
	}
	for _, f := range filler {
		up, name, _ := strings.Cut(f[0], ":")
		es = append(es, ent(up, name, f[1]))
	}
	ix := NewIndex(es)
	for q, want := range map[string]string{
		"got a recipe for tonight?":      "mcp:cook:recipe_ideas",
		"the kitchen timer":              "mcp:cook:timer_status",
		"delete my vegetarian recipe":    "mcp:cook:delete_recipe",
		"please stop the kitchen timer!": "mcp:cook:stop_timer",
	} {
		if got := ids(ix.Search(q, 3, nil)); len(got) == 0 || got[0] != want {
			t.Errorf("%q: %v, want %s first", q, got, want)
		}
	}
	// Without the rule the short destructive tools win: the example
	// shows what it changes.
	p := DefaultRankParams()
	p.ReadWriteMismatch = 1
	off := NewIndexWithParams(es, p)
	for q, bad := range map[string]string{"got a recipe for tonight?": "mcp:cook:delete_recipe", "the kitchen timer": "mcp:cook:stop_timer"} {
		if got := ids(off.Search(q, 3, nil)); len(got) == 0 || got[0] != bad {
			t.Errorf("without the rule %q: %v, want %s first (the test no longer shows the rule)", q, got, bad)
		}
	}
	if !destructiveVerb(nameVerb("delete_recipe")) || !destructiveVerb(nameVerb("stopTimer")) || !destructiveVerb(nameVerb("job.cancel")) || destructiveVerb(nameVerb("get_recipe")) || destructiveVerb(0) {
		t.Error("destructiveVerb: want delete/stop groups only")
	}
}
