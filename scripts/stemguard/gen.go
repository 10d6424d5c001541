//go:build ignore

// gen builds catalog/stem_guard.gz, the words the search index's light
// stemmer keeps whole because its suffix rules would turn them into
// another English word (catalog/tokenize.go, stem): "news" is no plural of
// "new", "plane" no inflection of "plan", "pope" of "pop". The words are
// WordNet 3.0's single-word lemmas (Debian's wordnet-base; licence in
// catalog/LICENSE.wordnet) w such that
//
//   - w ends in "s" and what the plural rule leaves (w less "s", "es", or
//     "ies" read as "y") is a lemma, but none of those forms is a noun or a
//     verb, so w cannot be its plural or its third person ("news": "new"
//     is an adjective; "analytics", "economics", "politics" likewise);
//   - or w ends in "e" (4 letters or more) and w less its "e" is a lemma
//     ("plane"/"plan", "code"/"cod", "rate"/"rat", "write"/"writ").
//
// Output: one word a line, sorted, gzip-compressed. Usage:
//
//	go run scripts/stemguard/gen.go -wordnet /usr/share/wordnet -out catalog/stem_guard.gz
package main

import (
	"bufio"
	"compress/gzip"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	dir := flag.String("wordnet", "/usr/share/wordnet", "WordNet 3.0 dict folder (index.noun, …)")
	out := flag.String("out", "catalog/stem_guard.gz", "output")
	flag.Parse()
	pos := map[string]map[string]bool{} // lemma -> parts of speech
	for _, p := range []string{"noun", "verb", "adj", "adv"} {
		f, err := os.Open(filepath.Join(*dir, "index."+p))
		if err != nil {
			fail(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			l := sc.Text()
			if strings.HasPrefix(l, " ") {
				continue // the licence header
			}
			w, _, _ := strings.Cut(l, " ")
			if !letters(w) {
				continue
			}
			if pos[w] == nil {
				pos[w] = map[string]bool{}
			}
			pos[w][p] = true
		}
		f.Close()
	}
	var keep []string
	for w := range pos {
		n := len(w)
		if n < 4 {
			continue
		}
		switch {
		case w[n-1] == 's' && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
			bases := []string{w[:n-1]}
			if strings.HasSuffix(w, "es") {
				bases = append(bases, w[:n-2])
			}
			if strings.HasSuffix(w, "ies") {
				bases = append(bases, w[:n-3]+"y")
			}
			lemma, inflectable := false, false
			for _, b := range bases {
				if ps := pos[b]; ps != nil {
					lemma = true
					inflectable = inflectable || ps["noun"] || ps["verb"]
				}
			}
			if lemma && !inflectable {
				keep = append(keep, w)
			}
		case w[n-1] == 'e' && pos[w[:n-1]] != nil:
			keep = append(keep, w)
		}
	}
	sort.Strings(keep)
	f, err := os.Create(*out)
	if err != nil {
		fail(err)
	}
	zw, _ := gzip.NewWriterLevel(f, gzip.BestCompression)
	for _, w := range keep {
		fmt.Fprintln(zw, w)
	}
	if err := zw.Close(); err != nil {
		fail(err)
	}
	if err := f.Close(); err != nil {
		fail(err)
	}
	fmt.Fprintf(os.Stderr, "stemguard: %d words\n", len(keep))
}

func letters(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return w != ""
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "stemguard:", err)
	os.Exit(1)
}
