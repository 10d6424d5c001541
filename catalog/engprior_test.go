package catalog

import "testing"

// TestEnglishWeight: english_words.gz's SIF weight is low for a word
// frequent in any English text and near 1 for a topical one; a term the
// table lacks weighs 1.
func TestEnglishWeight(t *testing.T) {
	most, recipe := englishWeight("most"), englishWeight(stem("recipe"))
	if !(most < 0.6 && recipe > 0.9) {
		t.Errorf("englishWeight most %.3f recipe %.3f: want most < 0.6 < 0.9 < recipe", most, recipe)
	}
	if w := englishWeight("zzqxv"); w != 1 {
		t.Errorf("unknown term weighs %.3f, want 1", w)
	}
}

// TestEnglishPriorCoverage: with RankParams.EnglishPrior the coverage
// factor no longer counts "most" as half of "what are the most recent
// vegan recipes" (an example of our own: in a registry "most" is as rare
// as "vegan", but it says nothing about the tool), so the cookbook
// passes two log tools that match "most recent" word for word (without
// the prior a log tool is first; the test checks that too).
func TestEnglishPriorCoverage(t *testing.T) {
	ix := testIndex(t, append([][3]string{
		{"strava:get_recent_activities", "Fetches the most recent activities for the athlete.", ""},
		{"logs:recent_lines", "Returns the most recent lines of a log.", ""},
		{"food:cookbook", "A cookbook: thousands of dishes from every cuisine, searchable by ingredient, diet (vegan, vegetarian, gluten-free) and cooking time, with a recipe of the day.", ""},
	}, filler...))
	first := func() string {
		out := ix.Search("what are the most recent vegan recipes", 3, nil)
		if len(out) == 0 {
			return ""
		}
		return out[0].Entry.Name
	}
	ix.params.Dense = 0 // the prior's own effect
	off := first()
	ix.params.EnglishPrior = 3
	on := first()
	if off == "cookbook" {
		t.Errorf("without EnglishPrior the cookbook is already first: the example shows nothing")
	}
	if on != "cookbook" {
		t.Errorf("EnglishPrior 3: first hit %s, want cookbook", on)
	}
}
