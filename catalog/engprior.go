package catalog

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"math"
	"strings"
	"sync"
)

// english_words.gz holds the 3,000 index terms most frequent in general
// English with their SIF weight a/(a+p) in thousandths (p the term's Zipf
// probability from its rank in GloVe 6B's frequency order, a = 1e-3; built
// by scripts/gen-engwords.sh, licence in LICENSE.glove beside this file):
// "new" 0.311, "get" 0.636, "look" 0.878, "weather" 0.945.
//
//go:embed english_words.gz
var englishWordsGz []byte

var (
	englishOnce sync.Once
	englishTab  map[string]float64
)

// englishWeight returns term's weight in general English text, 0..1: low
// for the words English uses most, 1 for a term outside the table's 3,000.
//
// A catalog's document frequencies say how rare a word is in tool text,
// not whether it says what the tool is for; "most", "best", "way", "think"
// are rare in tool descriptions but carry little of a request's meaning.
// Used by RankParams.EnglishPrior and by the match strength (generic
// words, matchInfo).
func englishWeight(term string) float64 {
	englishOnce.Do(func() {
		englishTab = map[string]float64{}
		readGzLines(englishWordsGz, func(line string) {
			t, w, ok := strings.Cut(line, " ")
			if !ok {
				return
			}
			n := 0
			for _, c := range w {
				n = n*10 + int(c-'0')
			}
			if n > 0 && n <= 1000 {
				englishTab[t] = float64(n) / 1000
			}
		})
	})
	if w, ok := englishTab[term]; ok {
		return w
	}
	return 1
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

// readGzLines calls f with each line of a gzip-compressed table (nothing
// for a build without the table).
func readGzLines(gz []byte, f func(string)) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return
	}
	sc := bufio.NewScanner(zr)
	for sc.Scan() {
		f(sc.Text())
	}
}
