package catalog

import (
	_ "embed"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/kljensen/snowball/russian"
)

// Korean, Russian and Thai word tables (so that Korean, Russian and Thai
// queries find English tools and the reverse), built by scripts/gen-langdict.sh
// (scripts/langdict/gen.go) and embedded gzip-compressed, in the format of
// the CC-CEDICT table (zhdict.go): sorted lines "word term term…", the
// terms being English words stemmed as the index stems them; a line with
// no terms is a function word (a particle, a preposition, a polite
// ending), found but with no English. Used like the CC-CEDICT table, in
// tool text and in queries alike: each word found adds its English terms,
// so a query in the language reaches a tool described in English and an
// English query a tool described in the language.
//
//   - Russian (ru_words.gz): keys are Snowball Russian stems (StemRussian),
//     so inflected forms meet ("создать", "создайте" → созда → create);
//     a hand list of the tool vocabulary (scripts/langdict/ru.txt). The
//     generator can add the Mueller English–Russian dictionary read
//     backwards (MUELLER=1 scripts/gen-langdict.sh), but that data is
//     GPL-2.0-or-later, so the shipped table is the hand list alone.
//   - Korean (ko_words.gz) and Thai (th_words.gz): no Korean–English or
//     Thai–English dictionary is shipped by the Go module proxy, npm or
//     Debian, so these are hand lists of the tool vocabulary
//     (scripts/langdict/ko.txt, th.txt), written for this repository.
//     Korean words are found at the start of an eojeol (a space-separated
//     word) or inside it, a particle or verb ending after them belonging
//     to the word (koEnding); Thai runs are segmented by greedy longest
//     match at cluster boundaries.

//go:embed ru_words.gz
var ruWordsGz []byte

//go:embed ko_words.gz
var koWordsGz []byte

//go:embed th_words.gz
var thWordsGz []byte

var (
	ruTab = &lazyTable{gz: ruWordsGz}
	koTab = &lazyTable{gz: koWordsGz}
	thTab = &lazyTable{gz: thWordsGz}
)

// StemRussian returns the Snowball Russian stem of a lower-case Russian
// word, ё read as е (the index's and scripts/langdict/gen.go's stemmer for
// Russian).
func StemRussian(w string) string {
	w = strings.ReplaceAll(w, "ё", "е")
	return russian.Stem(w, false)
}

// isCyrillicWord reports whether the lower-cased word w starts with a
// Cyrillic letter (U+0400–U+04FF: UTF-8 lead bytes 0xD0–0xD3).
func isCyrillicWord(w string) bool {
	return len(w) >= 2 && w[0] >= 0xD0 && w[0] <= 0xD3
}

// emitRussian emits a lower-case Russian word w: its stem to sink, and the
// English terms of the stem to alt; a function word emits nothing.
func emitRussian(w string, sink, alt tokenSink) {
	s := StemRussian(w)
	en, ok := ruTab.get().lookup(s)
	if ok && en == "" {
		return // a function word: в, на, для, мне, пожалуйста
	}
	sink(s)
	if ok {
		forFields(en, alt)
	}
}

// koMaxRunes is the longest Korean word looked up, in syllables.
const koMaxRunes = 6

// isHangulSyllable reports whether r is a precomposed Hangul syllable.
func isHangulSyllable(r rune) bool { return r >= 0xAC00 && r <= 0xD7A3 }

// koEndings are the particles and verb endings that may follow a Korean
// word inside its eojeol (이슈를, 생성해줘, 검색하기): a word of the table
// followed by one of them to the end of the eojeol takes it in. A word of
// one syllable is found only so (찾아줘 is not 찾 + 아줘 unless 아줘 is
// an ending, which it is; 차 inside 자동차 is not found).
var koEndings = map[string]struct{}{}

func init() {
	for _, e := range strings.Fields(`은 는 이 가 을 를 에 에서 에게 께 한테 으로 로 의 와 과 도 만
		까지 부터 이나 나 랑 이랑 하고 처럼 보다 마다 들 들을 들이 들의 들은 들도 들에 에는 에서의 으로의
		하다 해 해줘 해줘요 해주세요 해주십시오 해봐 해봐요 합니다 합니까 하기 하는 한 할 해서 하여 했 했다
		했어 하세요 하십시오 해라 하자 하려면 할래 해요 하고 하면 하기를 해야 된 되는 되다 됩니다 된다 돼 된
		시켜 시켜줘 중 중인 줘 주세요 줘요 봐 봐줘 라 요 다 기 기를 는 서 어 아 아줘 어줘 아주세요 어주세요`) {
		koEndings[e] = struct{}{}
		koMaxEndingBytes = max(koMaxEndingBytes, len(e))
	}
}

// koMaxEndingBytes is the longest of koEndings, in bytes: a longer rest of
// a stretch is no ending, without hashing it.
var koMaxEndingBytes int

// koSegments finds the words of the Korean table in a CJK run and calls f
// with the byte span [lo, hi) of each (with its ending, koEndings) and its
// English terms ("" for a function word), in order.
func koSegments(run string, f func(lo, hi int, en string)) {
	tab := koTab.get()
	if len(tab.offs) == 0 {
		return
	}
	// Linear in the run: a stretch's end is found once per stretch, each
	// position looks koMaxRunes syllables ahead, and the rest of the
	// stretch is hashed only when it is short enough to be an ending (a
	// tool's description is upstream text, of any length).
	stretchEnd := 0
	for base := 0; base < len(run); {
		r, sz := utf8.DecodeRuneInString(run[base:])
		if !isHangulSyllable(r) {
			base += sz
			continue
		}
		if base >= stretchEnd { // a new stretch of Hangul: find its end
			at := base
			for at < len(run) {
				r2, sz2 := utf8.DecodeRuneInString(run[at:])
				if !isHangulSyllable(r2) {
					break
				}
				at += sz2
			}
			stretchEnd = at
		}
		// The byte ends of the next koMaxRunes syllables.
		var ends [koMaxRunes]int
		n, at := 0, base
		for at < stretchEnd && n < koMaxRunes {
			_, sz2 := utf8.DecodeRuneInString(run[at:])
			at += sz2
			ends[n] = at
			n++
		}
		atStart := base == 0 || !prevHangul(run, base)
		step := sz
		for k := n - 1; k >= 0; k-- {
			hi := ends[k]
			en, ok := tab.lookup(run[base:hi])
			if !ok {
				continue
			}
			isEnding := false
			if stretchEnd-hi <= koMaxEndingBytes {
				_, isEnding = koEndings[run[hi:stretchEnd]]
			}
			if k == 0 && !(atStart && (hi == stretchEnd || isEnding)) {
				continue // one syllable: only a whole eojeol with its ending
			}
			if hi < stretchEnd && isEnding {
				hi = stretchEnd
			}
			f(base, hi, en)
			step = hi - base
			break
		}
		base += step
	}
}

// prevHangul reports whether the rune before run[i] is a Hangul syllable.
func prevHangul(run string, i int) bool {
	r, _ := utf8.DecodeLastRuneInString(run[:i])
	return isHangulSyllable(r)
}

// thMaxClusters is the longest Thai word looked up, in clusters.
const thMaxClusters = 12

// thSegments segments a Thai run by greedy longest match against the Thai
// table, at cluster boundaries (starts: the byte offsets of the run's
// clusters, then len(run)), and calls f with the cluster span [lo, hi) of
// each word found and its English terms ("" for a function word), in
// order.
func thSegments(run string, starts []int, f func(lo, hi int, en string)) {
	tab := thTab.get()
	if len(tab.offs) == 0 {
		return
	}
	nc := len(starts) - 1
	for k := 0; k < nc; {
		step := 1
		for m := min(nc, k+thMaxClusters); m > k; m-- {
			if en, ok := tab.lookup(run[starts[k]:starts[m]]); ok {
				f(k, m, en)
				step = m - k
				break
			}
		}
		k += step
	}
}

// cjkSegments calls f with the words of a CJK run found in the Chinese
// (zhSegments) and Korean (koSegments) tables, in order of their byte span
// [lo, hi), with their English terms ("" for a function word).
func cjkSegments(run string, f func(lo, hi int, en string)) {
	han, hangul := false, false
	for _, r := range run {
		switch {
		case isHangulSyllable(r):
			hangul = true
		case r >= 0x2E80 && !isKana(r) && (r < 0xAC00 || r > 0xD7AF):
			han = true
		}
	}
	switch {
	case han && hangul: // rare (Korean with Hanja): both, merged by span
		type seg struct {
			lo, hi int
			en     string
		}
		var segs []seg
		add := func(lo, hi int, en string) { segs = append(segs, seg{lo, hi, en}) }
		zhSegments(run, add)
		koSegments(run, add)
		slices.SortStableFunc(segs, func(a, b seg) int { return a.lo - b.lo })
		end := 0
		for _, s := range segs {
			if s.lo >= end {
				f(s.lo, s.hi, s.en)
				end = s.hi
			}
		}
	case han:
		zhSegments(run, f)
	case hangul:
		koSegments(run, f)
	}
}

// clusterStarts appends to buf the byte offsets of the clusters of a
// no-space script run (a letter or digit with its combining marks; the run
// starts with no mark, see emitClusters) and then len(run).
func clusterStarts(run string, buf []int) []int {
	for i, r := range run {
		if !isMark(r) {
			buf = append(buf, i)
		}
	}
	return append(buf, len(run))
}

// emitThaiWords emits the English terms of the words of the Thai table
// found in a no-space script run (after its cluster n-grams).
func emitThaiWords(run string, sink tokenSink) {
	run = strings.TrimLeftFunc(run, isMark)
	if run == "" || !isThai(run) {
		return
	}
	var offs [64]int
	starts := clusterStarts(run, offs[:0])
	thSegments(run, starts, func(_, _ int, en string) { forFields(en, sink) })
}

// isThai reports whether a no-space script run starts with a Thai letter.
func isThai(run string) bool {
	r, _ := utf8.DecodeRuneInString(run)
	return r >= 0x0E00 && r <= 0x0E7F
}

// emitThaiUnits is emitClusters + emitThaiWords for a query (see
// emitCJKUnits): the same terms in the same order, each with its query
// word. A word of the Thai table is a word (its cluster n-grams its parts,
// its English terms alternatives), a function word counts for none, and
// each stretch of clusters between table words is a word; an n-gram across
// two words counts for none. It returns the next unused word number.
func emitThaiUnits(run string, uf unitSink, unit int) int {
	run = strings.TrimLeftFunc(run, isMark)
	var offs [64]int
	starts := clusterStarts(run, offs[:0])
	nc := len(starts) - 1
	if nc <= 0 {
		return unit
	}
	type seg struct {
		lo, hi int
		en     string
	}
	var segArr [16]seg
	segs := segArr[:0]
	if isThai(run) {
		thSegments(run, starts, func(lo, hi int, en string) { segs = append(segs, seg{lo, hi, en}) })
	}
	// Provisional word ids per cluster (-1: none), numbered on first use.
	var idArr, mapArr [64]int
	id := idArr[:0]
	prov := 0
	for k, si := 0, 0; k < nc; {
		if si < len(segs) && segs[si].lo == k {
			v := -1
			if segs[si].en != "" {
				v = prov
				prov++
			}
			for ; k < segs[si].hi; k++ {
				id = append(id, v)
			}
			si++
			continue
		}
		for ; k < nc && (si == len(segs) || segs[si].lo != k); k++ {
			id = append(id, prov)
		}
		prov++
	}
	actual := mapArr[:0]
	for range prov {
		actual = append(actual, -1)
	}
	word := func(v int) int {
		if v < 0 {
			return -1
		}
		if actual[v] < 0 {
			actual[v] = unit
			unit++
		}
		return actual[v]
	}
	if nc <= clusterGram {
		v := id[0]
		for _, x := range id {
			if x != v {
				v = -1
			}
		}
		uf(run, word(v), false)
	} else {
		for k := 0; k+clusterGram <= nc; k++ {
			v := id[k]
			for _, x := range id[k : k+clusterGram] {
				if x != v {
					v = -1
				}
			}
			uf(run[starts[k]:starts[k+clusterGram]], word(v), false)
		}
	}
	for _, sg := range segs {
		if sg.en != "" {
			v := word(id[sg.lo])
			forFields(sg.en, func(t string) { uf(t, v, true) })
		}
	}
	return unit
}
