//go:build ignore

// gen builds the Korean, Russian and Thai word tables of the search
// tokenizer (catalog/ko_words.gz, ru_words.gz, th_words.gz;
// see catalog/langdict.go) from the hand lists beside it
// (scripts/langdict/ko.txt, ru.txt, th.txt, written for this repository)
// and, for Russian, the Mueller English–Russian dictionary as Debian's
// mueller7-dict ships it (usr/share/dictd/mueller7.index and
// mueller7.dict.dz; GPL-2+, scripts/langdict/LICENSE.mueller) read backwards;
// only with -mueller-*: the shipped table is built without it.
//
// A hand list has one word a line: "word: english words" (the English
// words of the word, most fitting first; none for a function word, which
// the tokenizer drops or counts for no query word); '#' starts a comment.
// English words are stemmed as the index stems them (catalog.StemWord);
// Russian words are keyed by their Snowball stem (catalog.StemRussian).
//
// From Mueller, for each English headword (one word of 3+ letters, not a
// stopword), the Russian translations of its first three senses of each
// part of speech (the text of a sense up to its first ';', parentheses
// and labels such as _разг. dropped, items of one Russian word) give
// stem → headword; a stem keeps the 3 headwords it translates best (the
// earliest sense, then the earliest place in it, then the longer entry:
// common words have long entries). A stem of the hand list keeps the hand
// list's words only. Output: sorted lines "key term term…". Usage:
//
//	go run scripts/langdict/gen.go -lang ru -hand scripts/langdict/ru.txt \
//		-mueller-index mueller7.index -mueller-dict mueller7.dict.dz -out catalog/ru_words.gz
//	go run scripts/langdict/gen.go -lang ko -hand scripts/langdict/ko.txt -out catalog/ko_words.gz
//	go run scripts/langdict/gen.go -lang de -hand scripts/langdict/de.txt -out catalog/de_words.gz
//
// German, French, Spanish, Portuguese and Italian (de, fr, es, pt, it) are
// hand lists too, keyed by the word as written with its accents folded
// (catalog.FoldLatin).
package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"regexp"
	"sort"
	"strings"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
)

var (
	senseRE  = regexp.MustCompile(`^\s*(?:\d+\.\s*(?:_[^\s.]+\.\s*)*)?(\d+)\)\s*(.*)$`)
	posRE    = regexp.MustCompile(`^\s*\d+\.\s*((?:_[^\s.]+\.\s*)+)([а-яё].*)$`)
	labelRE  = regexp.MustCompile(`_[^\s.]+\.?`)
	parensRE = regexp.MustCompile(`\([^)]*\)|\{[^}]*\}|\[[^\]]*\]`)
	ruWordRE = regexp.MustCompile(`^[а-яё]+(-[а-яё]+)?$`)
	enWordRE = regexp.MustCompile(`^[a-z]{3,}$`)
)

func main() {
	lang := flag.String("lang", "", "ko, ru, th, or de, fr, es, pt, it")
	hand := flag.String("hand", "", "hand list")
	mIndex := flag.String("mueller-index", "", "mueller7.index (Russian only)")
	mDict := flag.String("mueller-dict", "", "mueller7.dict.dz (Russian only)")
	out := flag.String("out", "", "output .gz")
	flag.Parse()
	key := func(w string) string { return w }
	switch *lang {
	case "ru":
		key = func(w string) string { return catalog.StemRussian(w) }
	case "de", "fr", "es", "pt", "it":
		// Latin-script languages: words as written, lower-cased, accents
		// folded (catalog/latin.go looks them up so).
		key = catalog.FoldLatin
	}
	table := map[string][]string{}
	handKeys := map[string]bool{}
	f, err := os.Open(*hand)
	if err != nil {
		log.Fatal(err)
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l, _, _ := strings.Cut(sc.Text(), "#")
		w, en, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		w = strings.ToLower(strings.TrimSpace(w))
		if w == "" {
			continue
		}
		k := key(w)
		terms := table[k]
		en = strings.TrimSpace(en)
		if handKeys[k] && (len(terms) == 0) != (en == "") {
			log.Fatalf("%s: %q is a function word and a word (stem %q)", *hand, w, k)
		}
		for _, e := range strings.Fields(strings.ToLower(en)) {
			if e = catalog.StemWord(e); !contains(terms, e) {
				terms = append(terms, e)
			}
		}
		table[k] = terms
		handKeys[k] = true
	}
	if err := sc.Err(); err != nil {
		log.Fatal(err)
	}
	f.Close()
	nHand := len(table)
	if *lang == "ru" && *mIndex != "" {
		addMueller(table, handKeys, *mIndex, *mDict)
	}
	keys := make([]string, 0, len(table))
	for k := range table {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	o, err := os.Create(*out)
	if err != nil {
		log.Fatal(err)
	}
	zw, _ := gzip.NewWriterLevel(o, gzip.BestCompression)
	bw := bufio.NewWriter(zw)
	for _, k := range keys {
		if len(table[k]) == 0 {
			fmt.Fprintf(bw, "%s\n", k)
		} else {
			fmt.Fprintf(bw, "%s %s\n", k, strings.Join(table[k], " "))
		}
	}
	if err := bw.Flush(); err != nil {
		log.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		log.Fatal(err)
	}
	if err := o.Close(); err != nil {
		log.Fatal(err)
	}
	log.Printf("%s: %d words (%d from the hand list) -> %s", *lang, len(keys), nHand, *out)
}

// cand is an English headword for a Russian stem, with how well it fits.
type cand struct {
	en              string
	sense, pos, len int
}

// addMueller adds the Russian stems of the Mueller dictionary read
// backwards (see the package comment) to table, leaving hand keys alone.
func addMueller(table map[string][]string, hand map[string]bool, index, dict string) {
	df, err := os.Open(dict)
	if err != nil {
		log.Fatal(err)
	}
	zr, err := gzip.NewReader(df) // dictzip is gzip with an index in the header
	if err != nil {
		log.Fatal(err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		log.Fatal(err)
	}
	xf, err := os.ReadFile(index)
	if err != nil {
		log.Fatal(err)
	}
	cands := map[string][]cand{}
	for _, l := range strings.Split(string(xf), "\n") {
		p := strings.Split(l, "\t")
		if len(p) != 3 {
			continue
		}
		hw := p[0]
		if !enWordRE.MatchString(hw) || catalog.IsStopword(hw) {
			continue
		}
		off, n := b64(p[1]), b64(p[2])
		if off+n > len(data) {
			continue
		}
		body := data[off : off+n]
		en := catalog.StemWord(hw)
		for _, line := range strings.Split(string(body), "\n") {
			var sense int
			var text string
			if m := senseRE.FindStringSubmatch(line); m != nil {
				fmt.Sscan(m[1], &sense)
				text = m[2]
			} else if m := posRE.FindStringSubmatch(line); m != nil {
				sense, text = 1, m[2]
			} else {
				continue
			}
			if sense > 3 {
				continue
			}
			text, _, _ = strings.Cut(text, ";")
			text = parensRE.ReplaceAllString(text, "")
			if strings.ContainsAny(text, "()") {
				continue // a parenthesis over two lines
			}
			text = labelRE.ReplaceAllString(text, "")
			for i, item := range strings.Split(text, ",") {
				item = strings.ToLower(strings.TrimSpace(item))
				if !ruWordRE.MatchString(item) {
					continue
				}
				k := catalog.StemRussian(item)
				if hand[k] || len([]rune(k)) < 2 {
					continue
				}
				cands[k] = append(cands[k], cand{en, sense, i, n})
			}
		}
	}
	for k, cs := range cands {
		sort.SliceStable(cs, func(i, j int) bool {
			a, b := cs[i], cs[j]
			if a.sense != b.sense {
				return a.sense < b.sense
			}
			if a.pos != b.pos {
				return a.pos < b.pos
			}
			return a.len > b.len
		})
		var terms []string
		for _, c := range cs {
			if !contains(terms, c.en) {
				terms = append(terms, c.en)
			}
			if len(terms) == 3 {
				break
			}
		}
		table[k] = terms
	}
}

// b64 decodes a dictd index number (base 64, A–Z a–z 0–9 + /).
func b64(s string) int {
	const digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*64 + bytes.IndexByte([]byte(digits), s[i])
	}
	return n
}

func contains(s []string, w string) bool {
	for _, x := range s {
		if x == w {
			return true
		}
	}
	return false
}
