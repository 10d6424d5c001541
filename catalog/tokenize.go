package catalog

import (
	_ "embed"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file is the tokenizer of the search index (DESIGN "Search"; SPEC §4:
// "The query may be in any language").
//
// Rules, applied the same way to tool text and to queries:
//   - text is lowercased and split on every rune that is not a letter or a
//     digit (so `_`, `-`, `.`, `/` and spaces all separate words);
//   - words are further split on camelCase boundaries ("createIssue" ->
//     "create", "issue"; "HTTPServer" -> "http", "server");
//   - runs of CJK characters (Han, Hiragana, Katakana, Hangul) become
//     overlapping character bigrams ("作成する" -> "作成", "成す", "する");
//     a run of one character is kept as a unigram. CJK is never stemmed;
//   - runs of Thai, Lao, Myanmar or Khmer (written without spaces between
//     words) become overlapping trigrams of clusters, a cluster being a
//     letter with its combining marks ("ติดตามพัสดุ" -> "ติดต", "ดตา",
//     "ตาม", ...): about a syllable each, no dictionary needed;
//   - Latin words inside CJK text are kept as words ("GitHub issue を作成する"
//     -> "github", "issue", "を作", "作成", "成す", "する");
//   - English words get a light, conservative stemming (plural s/es/ies,
//     -ing, -ed, a final silent e) and a small stopword list is dropped;
//   - a Chinese run is also segmented against a CC-CEDICT word table and
//     each word found adds its English words (see zhdict.go); Korean and
//     Thai words found in their tables add theirs, and a Russian word is
//     indexed by its Snowball stem and adds the stem's (see langdict.go);
//   - a small built-in glossary adds English terms for common CJK words
//     (作成/创建 -> "create", 検索/搜索 -> "search", ...), so that a Japanese or
//     Chinese query finds a tool described in English and the other way
//     round. See cjkGlossary.
//
// Identifier fields (tool names) additionally keep the whole lowercased
// identifier as one token ("create_issue"), see nameTokens.

// isCJK reports whether r belongs to a script that is indexed as character
// n-grams rather than words: Han, Hiragana, Katakana (including the
// prolonged sound mark) or Hangul (bigrams), or a script written without
// spaces between words (see isNoSpaceScript: cluster trigrams).
func isCJK(r rune) bool {
	if r < 0x0E00 {
		return false
	}
	if r < 0x1100 {
		return isNoSpaceScript(r)
	}
	if r >= 0x1780 && r <= 0x17FF { // Khmer
		return true
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) || r == 'ー'
}

// isNoSpaceScript reports whether r is a letter, mark or digit of Thai,
// Lao, Myanmar or Khmer: alphabetic scripts written without spaces between
// words, so that a clause would otherwise be one term. No dictionary is needed: their runs are indexed as overlapping
// trigrams of clusters (a letter with its combining vowel and tone marks,
// see emitClusters), about one syllable each.
func isNoSpaceScript(r rune) bool {
	switch {
	case r >= 0x0E00 && r <= 0x0EFF: // Thai, Lao
	case r >= 0x1000 && r <= 0x109F: // Myanmar
	case r >= 0x1780 && r <= 0x17FF: // Khmer
	default:
		return false
	}
	return unicode.In(r, unicode.L, unicode.M, unicode.Nd)
}

// isMark reports whether r is a combining mark (it belongs to the letter
// before it).
func isMark(r rune) bool { return unicode.In(r, unicode.Mn, unicode.Mc) }

// asciiWord[c] is isWordRune(rune(c)) for an ASCII byte c (the
// tokenizer's loops read ASCII text a byte at a time with no call).
var asciiWord = func() (t [utf8.RuneSelf]bool) {
	for c := range t {
		t[c] = isWordRune(rune(c))
	}
	return t
}()

// isWordRune reports whether r is part of a (non-CJK) word.
func isWordRune(r rune) bool {
	if r < utf8.RuneSelf { // ASCII: what unicode.IsLetter/IsDigit say, without the calls
		c := r | 0x20
		return c >= 'a' && c <= 'z' || r >= '0' && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// tokenSink receives tokens; it lets the index count term frequencies
// without building intermediate slices.
type tokenSink func(tok string)

// Tokenize splits free text (a description, a query) into index terms
// following the rules above. The result may contain repeated terms (term
// frequency matters); it is empty for text with no letters or digits.
func Tokenize(s string) []string {
	var out []string
	tokenizeText(s, func(t string) { out = append(out, t) })
	return out
}

// tokenizeText emits the terms of free text s to sink.
func tokenizeText(s string, sink tokenSink) { tokenizeTextUnits(s, sink, nil, 0) }

// unitSink receives a query term with the query word it counts for in a
// hit's match strength (queryTerm.unit): unit numbers the written words of
// the text tokenized (-1: the term counts for no word, e.g. a CJK bigram
// across two words), alt tells whether the term spells the whole word
// another way (a translation, the joined form of a camelCase word: one of
// them matched is the word matched) rather than being one of its parts
// (the camelCase parts "get" and "url" of getURLs, the bigrams of a CJK
// word: all of them make the word). unitOptional marks a term that is a
// word only where a tool matches it.
type unitSink func(t string, unit int, alt bool)

// unitOptional is the unit of a term that counts as a query word only for
// the hits that match it: a single CJK character standing alone between
// Latin words is mostly a particle or preposition ("在GitHub上创建issue":
// 在, 上), sometimes a word (书, book).
const unitOptional = -2

// tokenizeTextUnits is tokenizeText for a query: with uf set it emits the
// same terms, in the same order, to uf (not sink) with the word each
// belongs to, numbered from unit; it returns the next unused number.
func tokenizeTextUnits(s string, sink tokenSink, uf unitSink, unit int) int {
	i := 0
	for i < len(s) {
		if c := s[i]; c < utf8.RuneSelf && !asciiWord[c] {
			i++ // ASCII space or punctuation: what the default case does
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case isCJK(r):
			j := i + size
			for j < len(s) {
				r2, sz := utf8.DecodeRuneInString(s[j:])
				if !isCJK(r2) {
					break
				}
				j += sz
			}
			if uf != nil {
				unit = emitCJKUnits(s[i:j], uf, unit)
			} else {
				emitCJK(s[i:j], sink)
			}
			i = j
		case isWordRune(r):
			j := i + size
			// plain: ASCII lower-case letters and digits only (then the
			// word is one part, already lower-case: emitPlainWord).
			plain := r < utf8.RuneSelf && !(r >= 'A' && r <= 'Z')
			for j < len(s) {
				if c := s[j]; c < utf8.RuneSelf { // ASCII: isWordRune and never isCJK
					if !asciiWord[c] {
						break
					}
					if c <= 'Z' && c >= 'A' {
						plain = false
					}
					j++
					continue
				}
				plain = false
				r2, sz := utf8.DecodeRuneInString(s[j:])
				if !isWordRune(r2) || isCJK(r2) {
					break
				}
				j += sz
			}
			if isClitic(s, i, j) {
				// dropped
			} else if plain {
				if t, ok := plainTerm(s[i:j]); ok {
					if uf != nil {
						uf(t, unit, false)
					} else {
						sink(t)
					}
				}
				if uf != nil {
					unit++
				}
			} else if uf != nil {
				u, pu := unit, unit
				unit++
				if camelDropsStopword(s[i:j]) {
					// "YouTube": "tube" alone is not the word; only
					// "youtube" spells it, the part counts where matched.
					pu = unitOptional
				}
				emitWord(s[i:j], func(t string) { uf(t, pu, false) }, func(t string) { uf(t, u, true) })
			} else {
				emitWord(s[i:j], sink, sink)
			}
			i = j
		default:
			i += size
		}
	}
	return unit
}

// isClitic reports whether the word s[i:j] is a clitic ("s" of "user's")
// right after an apostrophe that follows a letter.
func isClitic(s string, i, j int) bool {
	if j-i > 2 || i == 0 || !isCliticWord(s[i:j]) {
		return false
	}
	a, n := utf8.DecodeLastRuneInString(s[:i])
	if !isApostrophe(a) {
		return false
	}
	b, _ := utf8.DecodeLastRuneInString(s[:i-n])
	return i-n > 0 && unicode.IsLetter(b)
}

// emitWord splits one run of letters/digits on camelCase and emits each part
// lowercased and stemmed to sink, dropping stopwords. A word with several
// parts is also emitted whole to whole ("GitHub" -> "git", "hub";
// "github"), so brand names written in camelCase still meet their
// lower-case spelling.
func emitWord(w string, sink, whole tokenSink) {
	parts := 0
	splitCamel(w, func(part string) {
		parts++
		if n := len(part); n >= 3 && part[n-1] == 's' && acronymPlural(part, 0, n-1) {
			part = part[:n-1] // "APIs" -> "API", "IDs" -> "ID"
		}
		t := normalizeWord(part)
		if t == "" || isStopword(t) {
			return
		}
		if isCyrillicWord(t) {
			emitRussian(t, sink, whole)
			return
		}
		sink(stem(t))
	})
	if parts > 1 {
		whole(stem(normalizeWord(w)))
	}
}

// plainTerm is what emitWord emits for a word of ASCII lower-case
// letters and digits: the word stemmed, or nothing for a stopword (such
// a word has one camelCase part, lower-case already, and no acronym
// plural).
func plainTerm(w string) (string, bool) {
	if isStopword(w) {
		return "", false
	}
	return stem(w), true
}

// camelDropsStopword reports whether a camelCase part of w other than
// the whole is a stopword ("YouTube": you). It allocates nothing.
func camelDropsStopword(w string) bool {
	for i := 1; i < len(w); i++ { // most words: no upper case after the first letter, no camelCase
		if c := w[i]; c >= utf8.RuneSelf || c >= 'A' && c <= 'Z' {
			break
		} else if i == len(w)-1 {
			return false
		}
	}
	parts, drop := 0, false
	splitCamel(w, func(part string) {
		parts++
		if !drop && len(part) <= 16 {
			var buf [16]byte
			_, drop = stopwords[string(lowerWord(&buf, part))]
		}
	})
	return parts > 1 && drop
}

// splitCamel calls f for each camelCase part of w ("getHTTPResponse2" ->
// "get", "HTTP", "Response2"). Digits stay attached to the preceding part.
func splitCamel(w string, f func(string)) {
	// Fast path: an ASCII word with no upper-case letter after its first
	// byte has no boundary.
	simple := true
	for i := 0; i < len(w); i++ {
		c := w[i]
		if c >= utf8.RuneSelf || i > 0 && c >= 'A' && c <= 'Z' {
			simple = false
			break
		}
	}
	if simple {
		f(w)
		return
	}
	start := 0
	var prev rune = -1
	var prevSize int
	for i, r := range w {
		if prev >= 0 && i > start {
			boundary := false
			if unicode.IsUpper(r) && (unicode.IsLower(prev) || unicode.IsDigit(prev)) {
				boundary = true // fooBar, v2Beta
			} else if unicode.IsLower(r) && unicode.IsUpper(prev) && i-prevSize > start && !acronymPlural(w, start, i) {
				// HTTPServer: the boundary is before the last upper-case rune.
				if p := i - prevSize; p > start {
					f(w[start:p])
					start = p
				}
			}
			if boundary {
				f(w[start:i])
				start = i
			}
		}
		prev = r
		prevSize = utf8.RuneLen(r)
	}
	if start < len(w) {
		f(w[start:])
	}
}

// acronymPlural reports whether the lower-case rune at w[i] is the plural
// "s" of an all-caps acronym w[start:i] ("URLs", "APIs", "IDs"): an "s"
// followed by the end of w, an upper-case letter or a digit. Then "getURLs"
// splits as "get", "URLs" (not "UR", "Ls").
func acronymPlural(w string, start, i int) bool {
	if w[i] != 's' {
		return false
	}
	for _, r := range w[start:i] {
		if !unicode.IsUpper(r) {
			return false
		}
	}
	if i+1 == len(w) {
		return true
	}
	r, _ := utf8.DecodeRuneInString(w[i+1:])
	return unicode.IsUpper(r) || unicode.IsDigit(r)
}

// isApostrophe reports whether r is an apostrophe (straight or curly).
func isApostrophe(r rune) bool { return r == '\'' || r == '’' || r == 'ʼ' }

// isCliticWord reports whether w (one or two letters, any case) is an
// English ending after an apostrophe that carries no meaning for search:
// possessive 's and contractions (don't, I'd, I'm, we'll, we're, we've).
func isCliticWord(w string) bool {
	switch len(w) {
	case 1:
		switch w[0] | 0x20 {
		case 's', 't', 'd', 'm':
			return true
		}
	case 2:
		switch a, b := w[0]|0x20, w[1]|0x20; {
		case a == 'l' && b == 'l', a == 'r' && b == 'e', a == 'v' && b == 'e':
			return true
		}
	}
	return false
}

// normalizeWord lowercases w; ASCII fast path.
func normalizeWord(w string) string {
	ascii := true
	lower := true
	for i := 0; i < len(w); i++ {
		c := w[i]
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
		if c >= 'A' && c <= 'Z' {
			lower = false
		}
	}
	if ascii && lower {
		return w
	}
	if ascii {
		// strings.ToLower's ASCII path scans w again and writes it a byte
		// at a time through a Builder; the same bytes, one copy.
		var buf [64]byte
		if b := lowerInto(buf[:], w); b != nil {
			return string(b)
		}
	}
	return strings.ToLower(w)
}

// emitCJK emits the overlapping bigrams of a CJK run (a unigram for a run of
// one character) plus the glossary terms found in it.
func emitCJK(run string, sink tokenSink) {
	if r, _ := utf8.DecodeRuneInString(run); isNoSpaceScript(r) {
		emitClusters(run, sink)
		emitThaiWords(run, sink)
		return
	}
	n := utf8.RuneCountInString(run)
	if n == 1 {
		sink(run)
	} else {
		// Byte offsets of each rune.
		var offs [64]int
		pos := offs[:0]
		for i := range run {
			pos = append(pos, i)
		}
		pos = append(pos, len(run))
		for k := 0; k+2 < len(pos); k++ {
			sink(run[pos[k]:pos[k+2]])
		}
	}
	cjkSegments(run, func(_, _ int, en string) { forFields(en, sink) })
	// A glossary word can be in run only if its first rune is: one bit
	// test instead of a substring search for most of the words.
	var has uint64
	for _, r := range run {
		has |= runeBit(r)
	}
	for i, g := range cjkGlossary {
		if has&cjkGlossaryFirst[i] != 0 && strings.Contains(run, g.cjk) {
			for _, en := range g.en {
				sink(en)
			}
		}
	}
}

// Script classes of a CJK run (cjkClass), for the words of a query.
const (
	cjkHan = iota
	cjkHiragana
	cjkKatakana
	cjkHangul
)

// cjkClass returns the script class of a rune of a CJK run (Han for
// anything not kana or Hangul).
func cjkClass(r rune) uint8 {
	switch {
	case r >= 0x3040 && r <= 0x309F:
		return cjkHiragana
	case r >= 0x30A0 && r <= 0x30FF, r >= 0x31F0 && r <= 0x31FF, r >= 0xFF66 && r <= 0xFF9F:
		return cjkKatakana // with the prolonged sound mark ー
	case r >= 0xAC00 && r <= 0xD7FF, r >= 0x1100 && r <= 0x11FF, r >= 0x3130 && r <= 0x318F, r >= 0xA960 && r <= 0xA97F:
		return cjkHangul
	}
	return cjkHan
}

// emitCJKUnits is emitCJK for a query: the same terms in the same order,
// each with the query word it belongs to (see unitSink), numbered from
// unit; it returns the next unused number. A CJK run can be a whole
// clause (Chinese and Japanese put no spaces between words), so its words
// are found first:
//   - each word of the CC-CEDICT table (zhSegments) is a word; its
//     English terms are alternatives (alt), its bigrams its parts;
//   - the other characters form a word per stretch of one script (Han,
//     Katakana, Hangul: "ファイル", "생성해줘"), except a single Han
//     character between words and Hiragana (particles and verb endings:
//     "を", "する"), which count for no word unless the run is only that;
//   - a bigram across two words counts for none; a run of one
//     character counts only where matched (unitOptional);
//   - a glossary word adds its English terms as alternatives of the word
//     it starts in (a word of its own when it starts in none: "送る").
//
// Thai, Lao, Myanmar and Khmer runs have no word table: each cluster
// n-gram counts as a word, as before.
func emitCJKUnits(run string, uf unitSink, unit int) int {
	if r, _ := utf8.DecodeRuneInString(run); isNoSpaceScript(r) {
		return emitThaiUnits(run, uf, unit)
	}
	var offs [64]int
	var clsArr, uArr [64]int
	pos, cls, unitOf := offs[:0], clsArr[:0], uArr[:0]
	allHira := true
	for i, r := range run {
		pos = append(pos, i)
		c := int(cjkClass(r))
		cls = append(cls, c)
		unitOf = append(unitOf, -1)
		allHira = allHira && c == cjkHiragana
	}
	n := len(pos)
	pos = append(pos, len(run))
	// The words of the table, as rune spans.
	type seg struct {
		lo, hi int
		en     string
	}
	var segArr [16]seg
	segs := segArr[:0]
	k := 0
	cjkSegments(run, func(lo, hi int, en string) {
		for pos[k] < lo {
			k++
		}
		a := k
		for pos[k] < hi {
			k++
		}
		segs = append(segs, seg{a, k, en})
	})
	for k, si := 0, 0; k < n; {
		if si < len(segs) && segs[si].lo == k {
			if segs[si].en != "" { // a function word counts for no word
				for j := k; j < segs[si].hi; j++ {
					unitOf[j] = unit
				}
				unit++
			}
			k = segs[si].hi
			si++
			continue
		}
		j := k + 1
		for j < n && cls[j] == cls[k] && (si == len(segs) || segs[si].lo != j) {
			j++
		}
		if cls[k] == cjkHiragana && !allHira || cls[k] == cjkHan && j-k == 1 && n > 1 {
			k = j
			continue
		}
		for m := k; m < j; m++ {
			unitOf[m] = unit
		}
		unit++
		k = j
	}
	if n == 1 {
		uf(run, unitOptional, false)
	} else {
		for k := 0; k+1 < n; k++ {
			u := unitOf[k]
			if unitOf[k+1] != u {
				u = -1
			}
			uf(run[pos[k]:pos[k+2]], u, false)
		}
	}
	for _, sg := range segs {
		forFields(sg.en, func(t string) { uf(t, unitOf[sg.lo], true) })
	}
	for _, g := range cjkGlossary {
		if len(g.en) == 0 {
			continue
		}
		at := strings.Index(run, g.cjk)
		if at < 0 {
			continue
		}
		k, _ := slices.BinarySearch(pos, at)
		u := unitOf[k]
		if u < 0 {
			u = unit
			unit++
		}
		for _, en := range g.en {
			uf(en, u, true)
		}
	}
	return unit
}

// forFields calls f with each space-separated field of s (strings.Fields
// without the slice).
func forFields(s string, f func(string)) {
	for s != "" {
		var t string
		t, s, _ = strings.Cut(s, " ")
		if t != "" {
			f(t)
		}
	}
}

// clusterGram is the n of the n-grams of a no-space script run (in
// clusters). Thai syllables are mostly 2–4 clusters: bigrams match too
// widely (like letter pairs in English), trigrams about a syllable.
const clusterGram = 3

// emitClusters emits the overlapping clusterGram-grams of clusters (a
// letter or digit with the combining marks after it) of a run of a
// no-space script; a run of fewer clusters is emitted whole. A mark with
// no letter before it is dropped.
func emitClusters(run string, sink tokenSink) {
	run = strings.TrimLeftFunc(run, isMark)
	var offs [64]int
	starts := offs[:0]
	for i, r := range run {
		if !isMark(r) {
			starts = append(starts, i)
		}
	}
	if len(starts) == 0 {
		return
	}
	starts = append(starts, len(run))
	if len(starts)-1 <= clusterGram {
		sink(run)
		return
	}
	for k := 0; k+clusterGram < len(starts); k++ {
		sink(run[starts[k]:starts[k+clusterGram]])
	}
}

// nameTokens emits the terms of an identifier (a tool name): the whole
// lowercased identifier when it has separators or case changes, then its
// parts as tokenizeText would.
func nameTokens(name string, sink tokenSink) {
	if whole, ok := nameWhole(name); ok {
		sink(whole)
	}
	tokenizeText(name, sink)
}

// nameWhole returns the whole-identifier term nameTokens emits first for
// name, and false when it emits none.
func nameWhole(name string) (string, bool) {
	whole := toLower(strings.TrimSpace(name))
	if whole != "" && utf8.RuneCountInString(whole) <= 128 {
		// Keep the whole identifier only when it differs from its parts.
		if whole != name || hasNonWordRune(whole) {
			return whole, true
		}
	}
	return "", false
}

// hasNonWordRune reports whether s has a rune that is not part of a
// (non-CJK) word: not isWordRune, or isCJK. ASCII is read a byte at a
// time.
func hasNonWordRune(s string) bool {
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if !asciiWord[c] {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if !isWordRune(r) || isCJK(r) {
			return true
		}
		i += size
	}
	return false
}

// stopwords is a deliberately small English list: words that carry no tool
// meaning in queries such as "Can you please find me the ...".
var stopwords = map[string]struct{}{}

func init() {
	for _, w := range strings.Fields(`a an the of to in on for and or is are was were be been
		with by from at as it its this that these those me my i you your we our us he she
		they them their please can could would will shall should do does did what which who
		whom how when where there here some any all also into about than then so if but not
		no such via using use based given want need like just am has have had let`) {
		stopwords[w] = struct{}{}
		maxStopwordLen = max(maxStopwordLen, len(w))
	}
	initStopTable()
	for i := range cjkGlossary {
		for j, en := range cjkGlossary[i].en {
			cjkGlossary[i].en[j] = stem(en)
		}
	}
}

func isStopword(w string) bool {
	if len(w) > maxStopwordLen {
		return false // most index terms: no map look-up (hash) needed
	}
	if maxStopwordLen <= 7 {
		return stopTableHas(w)
	}
	_, ok := stopwords[w]
	return ok
}

// stopTable holds the stopwords (all of at most 7 bytes) as stopKeys in
// an open-addressed table (0: empty), so isStopword is a multiply and a
// probe or two instead of a string hash and a map look-up (about 870,000
// words per 10,000-tool index build).
var stopTable [256]uint64

// stopKey packs a word of 1 to 7 bytes and its length into one integer
// (distinct words, distinct keys; never 0).
func stopKey(w string) uint64 {
	k := uint64(len(w))
	for i := 0; i < len(w); i++ {
		k = k<<8 | uint64(w[i])
	}
	return k
}

// stopSlot is the first slot of key k in stopTable.
func stopSlot(k uint64) int { return int((k * 0x9E3779B97F4A7C15) >> 56) }

// initStopTable fills stopTable from stopwords (when they all fit).
func initStopTable() {
	if maxStopwordLen > 7 {
		return
	}
	for w := range stopwords {
		k := stopKey(w)
		i := stopSlot(k)
		for stopTable[i] != 0 {
			i = (i + 1) % len(stopTable)
		}
		stopTable[i] = k
	}
}

// stopTableHas reports whether w (at most 7 bytes) is in stopTable.
func stopTableHas(w string) bool {
	if w == "" {
		return false
	}
	k := stopKey(w)
	for i := stopSlot(k); ; i = (i + 1) % len(stopTable) {
		switch stopTable[i] {
		case k:
			return true
		case 0:
			return false
		}
	}
}

// maxStopwordLen is the length in bytes of the longest stopword (set by
// init with the list).
var maxStopwordLen int

// stem applies a light English stemmer to an ASCII lower-case word: plural
// s/es/ies, -ing, -ed, -ied, a final silent "e" and a final consonant+"y"
// (so create, creates, created and creating all become "create"; query and
// queries become "queri"). Words with non-ASCII letters, words of 3 letters
// or fewer and words starting with a digit are returned unchanged. It is
// conservative on purpose: over-stemming merges unrelated tool names. The
// words of stem_guard.gz are kept whole where a rule would turn them into
// another word (news is no plural of new, plane no form of plan, pope of
// pop): the word itself, its plural ("planes" -> "plane") and its -ing and
// -ed forms ("coding" -> "code", not "cod").
func stem(w string) string {
	if len(w) <= 3 {
		return w
	}
	for i := 0; i < len(w); i++ {
		if w[i] >= utf8.RuneSelf {
			return w
		}
	}
	if w[0] >= '0' && w[0] <= '9' {
		return w
	}
	if stemGuarded(w) {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies") || strings.HasSuffix(w, "ied"):
		w = w[:len(w)-2] // queries -> queri, applied -> appli
	case strings.HasSuffix(w, "sses"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "xes") || strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes") || strings.HasSuffix(w, "zzes"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "s"):
		if !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is") {
			w = w[:len(w)-1]
			if stemGuarded(w) {
				return w // planes -> plane
			}
		}
	case strings.HasSuffix(w, "ing") && len(w) >= 6 && hasVowel(w[:len(w)-3]):
		w = undoubleGuarded(w[:len(w)-3])
	case strings.HasSuffix(w, "ed") && len(w) >= 5 && !strings.HasSuffix(w, "eed") && hasVowel(w[:len(w)-2]):
		w = undoubleGuarded(w[:len(w)-2])
	}
	if n := len(w); n >= 4 {
		switch {
		case w[n-1] == 'e':
			if stemGuarded(w) {
				return w
			}
			w = w[:n-1]
		case w[n-1] == 'y' && !strings.ContainsRune("aeiou", rune(w[n-2])):
			w = w[:n-1] + "i"
		}
	}
	return w
}

// undoubleGuarded is undouble for what -ing or -ed left, or that with its
// "e" back when it is a guarded word ("cod" of coding -> "code"; "hopp" of
// hopping -> "hop", never "hope").
func undoubleGuarded(w string) string {
	u := undouble(w)
	if len(u) == len(w) && len(w) <= maxGuardLen-1 {
		var buf [maxGuardLen]byte
		if b := append(append(buf[:0], w...), 'e'); stemGuarded(string(b)) {
			return string(b)
		}
	}
	return u
}

//go:embed stem_guard.gz
var stemGuardGz []byte

// stemGuard holds the words of stem_guard.gz (built from WordNet 3.0 by
// scripts/gen-stemguard.sh; licence in LICENSE.wordnet).
var stemGuard = func() map[string]struct{} {
	m := map[string]struct{}{}
	readGzLines(stemGuardGz, func(w string) {
		if w != "" && len(w) <= maxGuardLen {
			m[w] = struct{}{}
		}
	})
	return m
}()

// maxGuardLen bounds the guarded words looked up, in bytes.
const maxGuardLen = 24

// stemGuarded reports whether w is a word of stem_guard.gz.
func stemGuarded(w string) bool {
	if len(w) > maxGuardLen {
		return false
	}
	_, ok := stemGuard[w]
	return ok
}

func hasVowel(s string) bool {
	return strings.ContainsAny(s, "aeiouy")
}

// undouble turns "stopp" into "stop" (but keeps "call", "pass", "buzz").
func undouble(w string) string {
	n := len(w)
	if n >= 3 && w[n-1] == w[n-2] {
		switch w[n-1] {
		case 'l', 's', 'z', 'a', 'e', 'i', 'o', 'u':
			return w
		}
		return w[:n-1]
	}
	return w
}

// cjkGlossary maps common CJK words (Japanese, Simplified Chinese; Korean
// is in the Korean table, langdict.go)
// met in tool-search queries to English stems, so that SPEC §4's "the query
// may be in any language" (the seed's own example query is Japanese:
// "GitHub issue を作成する") reaches tools described in English. Terms are
// written as plain English words and stemmed once at start-up. Order is
// fixed so tokenization is deterministic.
var cjkGlossary = []struct {
	cjk string
	en  []string
}{
	// Japanese
	{"作成", []string{"create"}}, {"新規", []string{"new", "create"}}, {"追加", []string{"add"}},
	{"削除", []string{"delete", "remove"}}, {"更新", []string{"update"}}, {"編集", []string{"edit"}},
	{"一覧", []string{"list"}}, {"検索", []string{"search"}}, {"取得", []string{"get", "fetch"}},
	{"送信", []string{"send"}}, {"送る", []string{"send"}}, {"読み", []string{"read"}},
	{"書き", []string{"write"}}, {"保存", []string{"save"}}, {"表示", []string{"show"}},
	{"実行", []string{"run", "execute"}}, {"天気", []string{"weather"}}, {"予報", []string{"forecast"}},
	{"翻訳", []string{"translate"}}, {"画像", []string{"image"}}, {"ファイル", []string{"file"}},
	{"メール", []string{"email", "mail"}}, {"メッセージ", []string{"message"}},
	{"カレンダー", []string{"calendar"}}, {"予定", []string{"event", "schedule"}},
	{"イベント", []string{"event"}}, {"ユーザー", []string{"user"}}, {"リポジトリ", []string{"repository"}},
	{"課題", []string{"issue"}}, {"イシュー", []string{"issue"}}, {"コメント", []string{"comment"}},
	{"プルリク", []string{"pull", "request"}}, {"支払", []string{"payment"}}, {"請求", []string{"invoice"}},
	{"注文", []string{"order"}}, {"価格", []string{"price"}}, {"株価", []string{"stock", "price"}},
	{"地図", []string{"map"}}, {"住所", []string{"address"}}, {"場所", []string{"location"}},
	{"時間", []string{"time"}}, {"時刻", []string{"time"}}, {"日付", []string{"date"}},
	{"計算", []string{"calculate"}}, {"変換", []string{"convert"}}, {"要約", []string{"summary", "summarize"}},
	{"分析", []string{"analyze", "analysis"}}, {"ダウンロード", []string{"download"}}, {"アップロード", []string{"upload"}},
	{"データベース", []string{"database"}}, {"通知", []string{"notification"}}, {"予約", []string{"book", "reservation"}},
	{"ホテル", []string{"hotel"}}, {"航空券", []string{"flight"}}, {"音楽", []string{"music"}},
	{"動画", []string{"video"}}, {"ニュース", []string{"news"}}, {"開始", []string{"start"}},
	{"停止", []string{"stop"}}, {"設定", []string{"set", "config"}}, {"ブラウザ", []string{"browser"}},
	{"スクリーンショット", []string{"screenshot"}}, {"ページ", []string{"page"}}, {"記事", []string{"article"}},
	{"文書", []string{"document"}}, {"ドキュメント", []string{"document"}}, {"ログ", []string{"log"}},
	{"チャンネル", []string{"channel"}}, {"タスク", []string{"task"}}, {"ブランチ", []string{"branch"}},
	// Simplified Chinese
	{"创建", []string{"create"}}, {"新建", []string{"create", "new"}}, {"添加", []string{"add"}},
	{"删除", []string{"delete", "remove"}}, {"修改", []string{"update", "modify"}}, {"编辑", []string{"edit"}},
	{"列出", []string{"list"}}, {"列表", []string{"list"}}, {"搜索", []string{"search"}},
	{"查询", []string{"query", "search"}}, {"查找", []string{"find", "search"}}, {"获取", []string{"get", "fetch"}},
	{"发送", []string{"send"}}, {"读取", []string{"read"}}, {"写入", []string{"write"}},
	{"显示", []string{"show"}}, {"执行", []string{"execute", "run"}}, {"运行", []string{"run"}},
	{"天气", []string{"weather"}}, {"预报", []string{"forecast"}}, {"翻译", []string{"translate"}},
	{"图片", []string{"image"}}, {"图像", []string{"image"}}, {"文件", []string{"file"}},
	{"邮件", []string{"email", "mail"}}, {"消息", []string{"message"}}, {"日历", []string{"calendar"}},
	{"事件", []string{"event"}}, {"用户", []string{"user"}}, {"仓库", []string{"repository"}},
	{"问题", []string{"issue"}}, {"评论", []string{"comment"}}, {"支付", []string{"payment"}},
	{"订单", []string{"order"}}, {"股票", []string{"stock"}}, {"位置", []string{"location"}},
	{"日期", []string{"date"}}, {"转换", []string{"convert"}}, {"总结", []string{"summary", "summarize"}},
	{"摘要", []string{"summary", "summarize"}}, {"下载", []string{"download"}}, {"上传", []string{"upload"}},
	{"数据库", []string{"database"}}, {"预订", []string{"book"}}, {"酒店", []string{"hotel"}},
	{"航班", []string{"flight"}}, {"视频", []string{"video"}}, {"新闻", []string{"news"}},
	{"网页", []string{"web", "page"}}, {"浏览器", []string{"browser"}}, {"截图", []string{"screenshot"}},
	{"文档", []string{"document"}}, {"日志", []string{"log"}}, {"任务", []string{"task"}},
	// Shared Han (Japanese and Chinese)
	{"更新", nil}, {"分析", nil}, {"计算", []string{"calculate"}}, {"地图", nil}, {"地址", []string{"address"}},
	{"价格", []string{"price"}}, {"音乐", []string{"music"}}, {"通知", nil},
}

// cjkGlossaryFirst[i] is runeBit of the first rune of cjkGlossary[i].cjk.
var cjkGlossaryFirst = func() []uint64 {
	bs := make([]uint64, len(cjkGlossary))
	for i, g := range cjkGlossary {
		r, _ := utf8.DecodeRuneInString(g.cjk)
		bs[i] = runeBit(r)
	}
	return bs
}()

// runeBit is one bit of 64 chosen by r (a one-word set of runes: a clear
// bit means absent).
func runeBit(r rune) uint64 { return 1 << (uint32(r) * 2654435761 >> 26) }

// StemWord is the index's stemmer for one lower-case word (used by the
// generator of the semantic table, scripts/semantic/gen.go, so the table
// and the index agree).
func StemWord(w string) string { return stem(w) }

// IsStopword reports whether a lower-case word is on the index's stopword
// list.
func IsStopword(w string) bool { return isStopword(w) }
