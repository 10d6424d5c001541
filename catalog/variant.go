package catalog

// This file links a query word to other word forms of the same root that
// the light stemmer (stem) keeps apart on purpose: historic/historical,
// generator/generate, weekly/week, analysis/analyze, religious/religion.
// Tools and requests name the same thing in different forms ("historic
// dates" for a tool that "retrieves historical events"), and only the
// semantic table linked them, at its low weight.

// variantSuffixes are pairs of stem endings (as stem leaves them) that
// mark one root: a query term ending in the first gets the index term
// ending in the second, when that term exists. Each rule is listed both
// ways. They are general English derivations, not taken from any bench set.
// Left out because they link too many unrelated words: -ion (station /
// stat, question / quest, action / act) and -ive (active / act).
var variantSuffixes = [...][2]string{
	{"ical", "ic"}, {"ic", "ical"}, // historical / historic
	{"al", ""}, {"", "al"}, // removal / remov(e), educational / education
	{"ation", ""}, {"", "ation"}, // recommendation / recommend, reservation / reserv(e)
	{"ication", "i"}, {"i", "ication"}, // notification / notifi (notify)
	{"or", ""}, {"", "or"}, // generator / generat(e), editor / edit
	{"er", ""}, {"", "er"}, // tracker / track, reader / read
	{"ment", ""}, {"", "ment"}, // assessment / assess
	{"li", ""}, {"", "li"}, // weekli (weekly) / week
	{"ious", "ion"}, {"ion", "ious"}, // religious / religion
	{"ysis", "yz"}, {"yz", "ysis"}, {"ysis", "ys"}, {"ys", "ysis"}, // analysis / analyz(e), analys(e)
}

// Bounds of the variant look-up: the root left after removing an ending
// has at least minVariantRoot letters (so "pay"+"ment" and "ear"+"li"
// are not linked), and queries of more than variantLongQuery terms get no
// variants (their other words carry them; it bounds the look-ups).
const (
	minVariantRoot   = 4
	variantLongQuery = 32
	// weightVariant is the weight of a variant relative to the query
	// term's (0.15, 0.3, 0.5, 0.7 tried with TestTuneRankParams; see
	// docs/design.md "Search").
	weightVariant = 0.3
)

// expandVariants adds, for each base term of the query (ASCII letters),
// the index terms that are another form of its root (variantSuffixes),
// with weight weightVariant of the term's (read lock held).
func (ix *Index) expandVariants(aq *analyzedQuery) {
	nbase := len(aq.terms)
	if nbase > variantLongQuery {
		return
	}
	var arr [64]byte
	for i := 0; i < nbase; i++ {
		t := aq.terms[i]
		if t.kind != termWord || t.whole || len(t.term)+7 > len(arr) || !isASCIILetters(t.term) {
			continue
		}
		for _, sf := range variantSuffixes {
			from, to := sf[0], sf[1]
			root := len(t.term) - len(from)
			if root < minVariantRoot || t.term[root:] != from {
				continue
			}
			b := append(append(arr[:0], t.term[:root]...), to...)
			if !ix.termFilter.mayHaveBytes(b) {
				continue
			}
			ti := ix.terms[string(b)] // no allocation
			if ti == nil || ti.df <= 0 {
				continue
			}
			if _, ok := aq.seen[string(b)]; ok {
				continue
			}
			aq.derive(string(b), t.qw*weightVariant, termVariant, i, ti)
		}
	}
}
