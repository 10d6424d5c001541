package catalog

import (
	_ "embed"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// German, French, Spanish, Portuguese and Italian word tables: hand lists
// of the tool vocabulary (scripts/langdict/de.txt, fr.txt, es.txt, pt.txt,
// it.txt, written for this repository; licence in LICENSE.langdict), built
// by scripts/gen-langdict.sh into sorted gzip-compressed lines "word term
// term…" (the format of the other word tables, langdict.go), keyed by the
// word lower-cased with its accents folded (FoldLatin). A word with no
// terms is a function word of its language (der, quel, qué, che, em).
//
// These languages share the Latin script with English and many words with
// each other ("tempo" is weather in Italian and Portuguese, a speed in
// English), so a text's language is told first, from its function words
// (latinLanguage): then its function words are dropped and its words found
// in the table add their English terms, in a query ("Wie wird das Wetter
// morgen in Berlin?" reaches the weather tools) and in a tool description
// (a tool described in French is found by an English request). A query
// whose language is not told still gets the English of a word the index
// does not know ("Wetter Berlin").

//go:embed de_words.gz
var deWordsGz []byte

//go:embed fr_words.gz
var frWordsGz []byte

//go:embed es_words.gz
var esWordsGz []byte

//go:embed pt_words.gz
var ptWordsGz []byte

//go:embed it_words.gz
var itWordsGz []byte

// latinTabs are the tables in a fixed order (the order a word found in
// several tables is looked up in when no language is told).
var latinTabs = [...]*lazyTable{
	{gz: deWordsGz}, {gz: frWordsGz}, {gz: esWordsGz}, {gz: ptWordsGz}, {gz: itWordsGz},
}

// latinSuffixes are the endings tried, per table, when a word is not found
// as written: plurals and the commonest inflections.
var latinSuffixes = [len(latinTabs)][]string{
	{"en", "n", "e", "s", "er", "es"}, // de
	{"s", "x", "es"},                  // fr
	{"es", "s"},                       // es
	{"es", "s"},                       // pt
	{"i", "e"},                        // it (read with o / a back: libri -> libro)
}

// FoldLatin lower-cases a word and removes the accents of its letters
// ("Löschen" -> "loschen", "météo" -> "meteo"; ß -> ss): the key of the
// Latin-script word tables.
func FoldLatin(w string) string {
	ascii := true
	for i := 0; i < len(w); i++ {
		if w[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return toLower(w)
	}
	var b strings.Builder
	for _, r := range norm.NFD.String(strings.ToLower(w)) {
		switch {
		case unicode.Is(unicode.Mn, r):
		case r == 'ß':
			b.WriteString("ss")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// latinLookup returns the English terms of a folded word in table l ("" for
// a function word) and whether the table has it, trying latinSuffixes when
// the word itself is absent.
func latinLookup(l int, w string) (string, bool) {
	tab := latinTabs[l].get()
	if en, ok := tab.lookup(w); ok {
		return en, true
	}
	if len(w) < 4 {
		return "", false
	}
	for _, sf := range latinSuffixes[l] {
		if !strings.HasSuffix(w, sf) || len(w)-len(sf) < 3 {
			continue
		}
		base := w[:len(w)-len(sf)]
		if l == 4 { // Italian: the plural's vowel for the singular's
			for _, v := range []string{"o", "e", "a"} {
				if en, ok := tab.lookup(base + v); ok && en != "" {
					return en, true
				}
			}
			continue
		}
		if en, ok := tab.lookup(base); ok && en != "" {
			return en, true
		}
	}
	return "", false
}

// latinFunctionWords maps each function word of the tables (folded) to a
// bit per table whose function word it is.
var (
	latinFWOnce sync.Once
	latinFW     map[string]uint8
)

func latinFunctionWord(w string) uint8 {
	latinFWOnce.Do(func() {
		latinFW = map[string]uint8{}
		for l, lt := range latinTabs {
			tab := lt.get()
			for i := range tab.offs {
				if k, en := tab.line(i); en == "" && k != "" {
					latinFW[k] |= 1 << l
				}
			}
		}
	})
	return latinFW[w]
}

// Bounds of latinLanguage: the least function words of a language a text
// needs, and how many of a description's first words are read.
const (
	latinMinFunction = 2
	latinDescWords   = 24
)

// latinLanguage tells the language of text from its words (at most max of
// them, 0: all): the table whose function words it has most of, when that
// is at least latinMinFunction and more than it has English stopwords; a
// word that is an English stopword as well ("in", "a") counts for English
// only. -1 for none (English, or too little to tell).
func latinLanguage(text string, max int) int {
	var count [len(latinTabs)]int
	english, n := 0, 0
	// The words of text, read a byte at a time and stopped after max of
	// them (this runs for every tool description of an index build).
	for i := 0; i < len(text) && (max <= 0 || n < max); {
		r, size := rune(text[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(text[i:])
		}
		if !isWordRune(r) || isCJK(r) {
			i += size
			continue
		}
		j := i + size
		ascii := r < utf8.RuneSelf
		for j < len(text) {
			c := text[j]
			if c < utf8.RuneSelf {
				if !asciiWord[c] {
					break
				}
				j++
				continue
			}
			r2, sz := utf8.DecodeRuneInString(text[j:])
			if !isWordRune(r2) || isCJK(r2) {
				break
			}
			ascii = false
			j += sz
		}
		run := text[i:j]
		i = j
		n++
		if len(run) > latinMaxFunctionBytes {
			continue // no function word is that long
		}
		var buf [16]byte
		var w string
		if ascii {
			w = string(lowerWord(&buf, run)) // no allocation for a map key or a comparison
			if isStopword(w) {
				english++ // and, being English too, it tells no other language ("in", "a")
				continue
			}
		} else {
			w = FoldLatin(run)
		}
		for m, l := latinFunctionWord(w), 0; m != 0; m, l = m>>1, l+1 {
			if m&1 != 0 {
				count[l]++
			}
		}
	}
	best, bn, tie := -1, 0, false
	for l, c := range count {
		switch {
		case c > bn:
			best, bn, tie = l, c, false
		case c == bn && c > 0:
			tie = true
		}
	}
	if best < 0 || tie || bn < latinMinFunction || bn <= english {
		return -1
	}
	return best
}

// latinMaxFunctionBytes bounds the function words of the tables, in bytes
// as written (the longest, "welches", "können", "quelles": 7 or 8).
const latinMaxFunctionBytes = 12

// emitLatinDesc emits the English terms of the words of a description in
// a language of the tables (nothing for other text).
func emitLatinDesc(desc string, sink tokenSink) {
	l := latinLanguage(desc, latinDescWords)
	if l < 0 {
		return
	}
	forEachRun(desc, func(run string) {
		if en, ok := latinLookup(l, FoldLatin(run)); ok && en != "" {
			forFields(en, sink)
		}
	})
}

// expandLatin adds the English terms of a query's words found in the
// tables (read lock held; aq resolved): with the query's language told
// (analyzedQuery.lang), every word of its table, and its function words
// lose their weight; otherwise only words the index does not know, from
// the first table that has them. The English terms stand for the word
// itself (kind termWord, src the word): one of them matched is the word
// matched.
func (ix *Index) expandLatin(aq *analyzedQuery) {
	nbase := len(aq.terms)
	for i := 0; i < nbase; i++ {
		t := &aq.terms[i]
		if t.kind != termWord || t.word == "" || t.whole || aq.lang < 0 && t.ti != nil || strings.IndexFunc(t.word, isCJK) >= 0 {
			continue // (an English query: only words the index does not know)
		}
		w := FoldLatin(t.word)
		var en string
		found := false
		if aq.lang >= 0 {
			en, found = latinLookup(aq.lang, w)
			if found && en == "" {
				aq.terms[i].qw = 0 // a function word of the query's language
				continue
			}
		} else if t.ti == nil {
			for l := range latinTabs {
				if e, ok := latinLookup(l, w); ok && e != "" {
					en, found = e, true
					break
				}
			}
		}
		if !found || en == "" {
			continue
		}
		qw := aq.terms[i].qw
		forFields(en, func(e string) {
			if ti := ix.live1(e); ti != nil {
				aq.derive(e, qw, termWord, i, ti)
			}
		})
		if aq.lang >= 0 {
			// In the told language the word means its English: as
			// written it may be another English word ("tempo"), so only
			// its English is scored (it still weighs as a query word).
			aq.terms[i].translated = true
		}
	}
}

// translationsOf returns the words of the Latin-script tables for an
// English index term, at most one per language (for a tool's search hint,
// hint.go): "weather" -> wetter, meteo, clima, tempo.
func translationsOf(t string) []string {
	latinRevOnce.Do(buildLatinRev)
	return latinRev[t]
}

var (
	latinRevOnce sync.Once
	latinRev     map[string][]string
)

// buildLatinRev maps each English term of the tables to the first word of
// each table that gives it first (one per language, without repeats).
func buildLatinRev() {
	latinRev = map[string][]string{}
	for l := range latinTabs {
		tab := latinTabs[l].get()
		seen := map[string]bool{}
		for i := range tab.offs {
			k, en := tab.line(i)
			if en == "" || !isASCIILetters(k) {
				continue
			}
			first, _, _ := strings.Cut(en, " ")
			if seen[first] {
				continue
			}
			seen[first] = true
			if !containsString(latinRev[first], k) {
				latinRev[first] = append(latinRev[first], k)
			}
		}
	}
}

func containsString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
