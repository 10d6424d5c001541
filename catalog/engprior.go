package catalog

import "math"

// englishWeight returns term's weight in general English text, 0..1: the
// SIF weight a/(a+p) the dense table stores with each term (p is the
// word's Zipf probability from its GloVe frequency rank, a = 1e-3; see
// scripts/embed/gen.go), read back as the stored weight times the norm
// of its int8 row (the row is the unit vector over the weight's scale).
// A term the table lacks, or a binary without the table, weighs 1.
//
// Used by RankParams.EnglishPrior: a catalog's document frequencies say
// how rare a word is in tool text, not whether it says what the tool is
// for; "most", "best", "way", "think" are rare in tool descriptions but
// carry little of a request's meaning.
func englishWeight(term string) float64 {
	t := denseVectors()
	if t == nil {
		return 1
	}
	id, ok := t.ids[term]
	if !ok {
		return 1
	}
	var ss int64
	for _, b := range t.row(id) {
		x := int64(int8(b))
		ss += x * x
	}
	w := float64(t.weight(id)) * math.Sqrt(float64(ss))
	if w <= 0 || w > 1 {
		return 1
	}
	return w
}

// englishIDFs multiplies the query's idfs in sc by englishWeight^pow
// (RankParams.EnglishPrior), keeping the plain ones for plainIDFs, and
// weighs the query's words again (weighUnits).
func englishIDFs(sc *scratch, pow float64) {
	sc.idfsEn = append(sc.idfsEn[:0], sc.idfs...)
	for i := range sc.idfs {
		sc.idfs[i] *= math.Pow(englishWeight(sc.aq.terms[i].term), pow)
	}
	weighUnits(sc)
}

// plainIDFs puts back the idfs englishIDFs changed.
func plainIDFs(sc *scratch) {
	copy(sc.idfs, sc.idfsEn)
	weighUnits(sc)
}
