package catalog

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"io"
	"strings"
	"sync"
	"unicode/utf8"
)

// The Chinese–English word table: 129,152
// Chinese words of 2–4 characters (simplified and traditional) with up to
// three English words each, built from CC-CEDICT by scripts/gen-zhdict.sh
// (scripts/zhdict/gen.go; licence CC BY-SA 4.0, catalog/LICENSE.cedict),
// embedded gzip-compressed (1.3 MB; 3.8 MB in memory once loaded). A run of Chinese characters, in tool
// text and in queries alike, is segmented by greedy longest match against
// it and each word found adds its English words as terms (beside the
// character bigrams and the hand glossary), so an English query reaches a
// tool described only in Chinese and the other way round. Loaded on first
// use (the first Chinese text indexed or searched).

//go:embed zh_cedict.gz
var zhCedict []byte

// zhMaxRunes is the longest word of the table, in characters.
const zhMaxRunes = 4

// wordTable is a word table decompressed (CC-CEDICT's: 3.3 MB): lines
// "word term term…", sorted by word, and the byte offset of each line, for
// binary search (about 3.8 MB in all for CC-CEDICT's; a map would take
// 17 MB and a second to build). A line with no terms is a function word
// (a particle, a preposition): it is found, with no English.
type wordTable struct {
	data string
	offs []uint32
	// klen is the byte length of each line's word (maxKeyLen: that or
	// longer, found by scanning); keys is a filter over the words, so a
	// word not in the table (most of the candidates a segmentation tries)
	// is mostly answered without the binary search.
	klen []uint8
	keys keyFilter
}

// maxKeyLen is the longest word length wordTable.klen holds.
const maxKeyLen = 255

// lazyTable is a gzip-compressed embedded word table, decompressed on
// first use.
type lazyTable struct {
	once sync.Once
	gz   []byte
	tab  wordTable
}

// get returns the table (empty when it cannot be read: a build without it).
func (l *lazyTable) get() *wordTable {
	l.once.Do(func() {
		zr, err := gzip.NewReader(bytes.NewReader(l.gz))
		if err != nil {
			return // a build without the table: bigrams and glossary only
		}
		raw, err := io.ReadAll(zr)
		if err != nil {
			return
		}
		data := string(raw)
		n := bytes.Count(raw, []byte{'\n'}) + 1
		offs := make([]uint32, 0, n)
		klen := make([]uint8, 0, n)
		keys := newKeyFilter(n)
		for at := 0; at < len(data); {
			offs = append(offs, uint32(at))
			l := data[at:]
			nl := strings.IndexByte(l, '\n')
			if nl >= 0 {
				l = l[:nl]
			}
			k, _, _ := strings.Cut(l, " ")
			klen = append(klen, uint8(min(len(k), maxKeyLen)))
			keys.add(k)
			if nl < 0 {
				break
			}
			at += nl + 1
		}
		l.tab = wordTable{data: data, offs: offs, klen: klen, keys: keys}
	})
	return &l.tab
}

var zhTab = &lazyTable{gz: zhCedict}

func zhWords() *wordTable { return zhTab.get() }

// line returns the key and the terms of line i.
func (t *wordTable) line(i int) (key, terms string) {
	l := t.data[t.offs[i]:]
	if nl := strings.IndexByte(l, '\n'); nl >= 0 {
		l = l[:nl]
	}
	key, terms, _ = strings.Cut(l, " ")
	return key, terms
}

// key returns the word of line i.
func (t *wordTable) key(i int) string {
	if n := t.klen[i]; n < maxKeyLen {
		return t.data[t.offs[i] : t.offs[i]+uint32(n)]
	}
	k, _ := t.line(i)
	return k
}

// lookup returns the space-separated English terms of word w.
func (t *wordTable) lookup(w string) (string, bool) {
	if !t.keys.mayHave(w) {
		return "", false
	}
	lo, hi := 0, len(t.offs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if t.key(m) < w {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(t.offs) {
		if k, terms := t.line(lo); k == w {
			return terms, true
		}
	}
	return "", false
}

// zhSegments segments a CJK run by greedy longest match against the word
// table and calls f with the byte span [lo, hi) of each word found (2 to
// zhMaxRunes characters) and its space-separated English terms, in order.
func zhSegments(run string, f func(lo, hi int, en string)) {
	if !hasHan(run) {
		return
	}
	tab := zhWords()
	if len(tab.offs) == 0 {
		return
	}
	for base := 0; base < len(run); {
		rest := run[base:]
		// Byte ends of the next zhMaxRunes runes.
		var ends [zhMaxRunes]int
		n, at := 0, 0
		for n < zhMaxRunes && at < len(rest) {
			_, sz := utf8.DecodeRuneInString(rest[at:])
			at += sz
			ends[n] = at
			n++
		}
		step := ends[0]
		for k := n - 1; k >= 1; k-- { // words of 2+ characters
			if en, ok := tab.lookup(rest[:ends[k]]); ok {
				f(base, base+ends[k], en)
				step = ends[k]
				break
			}
		}
		base += step
	}
}

// hasHan reports whether s has a Han character.
func hasHan(s string) bool {
	for _, r := range s {
		if r >= 0x2E80 && isCJK(r) && !isKana(r) && (r < 0xAC00 || r > 0xD7AF) {
			return true
		}
	}
	return false
}

// isKana reports whether r is Hiragana, Katakana or the prolonged sound mark.
func isKana(r rune) bool { return r >= 0x3040 && r <= 0x30FF }
