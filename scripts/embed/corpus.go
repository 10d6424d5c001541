//go:build ignore

// corpus writes the sentences the dense table is trained on, one a line:
// WordNet 3.0 glosses (Debian's wordnet-base: each synset's first lemma
// with its definition, and its first example sentence; every -every-th
// synset of the noun, verb and adjective files) and the descriptions of
// real MCP tools from JSON Lines tools files (-tools, comma-separated: the
// description alone, and the name split into words followed by the
// description). Lines are cut at 600 bytes; repeated lines are dropped.
// Deterministic for one input. Run by scripts/gen-embed.sh.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

func main() {
	wordnet := flag.String("wordnet", "/usr/share/wordnet", "WordNet 3.0 dict folder (data.noun, data.verb, data.adj)")
	tools := flag.String("tools", "", "tools files (JSON Lines with name and description), comma-separated")
	every := flag.Int("every", 3, "take every n-th synset's gloss")
	out := flag.String("out", "", "output file")
	flag.Parse()
	if *out == "" {
		fail(fmt.Errorf("-out is required"))
	}
	seen := map[string]bool{}
	var lines []string
	add := func(s string) {
		s = strings.Join(strings.Fields(s), " ")
		for len(s) > 600 {
			_, n := utf8.DecodeLastRuneInString(s)
			s = s[:len(s)-n]
		}
		if s != "" && !seen[s] {
			seen[s] = true
			lines = append(lines, s)
		}
	}
	if *tools != "" {
		split := regexp.MustCompile(`([a-z])([A-Z])`)
		for _, p := range strings.Split(*tools, ",") {
			f, err := os.Open(p)
			if err != nil {
				fail(err)
			}
			sc := bufio.NewScanner(f)
			sc.Buffer(make([]byte, 1<<20), 16<<20)
			for n := 1; sc.Scan(); n++ {
				var t struct{ Name, Description string }
				if err := json.Unmarshal(sc.Bytes(), &t); err != nil {
					fail(fmt.Errorf("%s:%d: %v", p, n, err))
				}
				name := split.ReplaceAllString(strings.NewReplacer("_", " ", "-", " ").Replace(t.Name), "$1 $2")
				add(t.Description)
				add(name + ". " + t.Description)
			}
			f.Close()
		}
	}
	for _, pos := range []string{"noun", "verb", "adj"} {
		p := *wordnet + "/data." + pos
		f, err := os.Open(p)
		if err != nil {
			fail(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		k := 0
		for sc.Scan() {
			l := sc.Text()
			head, gloss, ok := strings.Cut(l, "|")
			if strings.HasPrefix(l, "  ") || !ok {
				continue
			}
			k++
			if k%*every != 0 {
				continue
			}
			f := strings.Fields(head)
			if len(f) < 5 {
				continue
			}
			if n, err := strconv.ParseInt(f[3], 16, 32); err != nil || n < 1 {
				continue
			}
			parts := strings.Split(strings.TrimSpace(gloss), ";")
			add(strings.ReplaceAll(f[4], "_", " ") + ": " + strings.TrimSpace(parts[0]))
			for _, e := range parts[1:] {
				if e = strings.TrimSpace(e); strings.HasPrefix(e, `"`) {
					add(strings.Trim(e, `"`))
					break
				}
			}
		}
		f.Close()
	}
	if err := os.WriteFile(*out, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		fail(err)
	}
	fmt.Fprintf(os.Stderr, "%s: %d sentences\n", *out, len(lines))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "corpus:", err)
	os.Exit(1)
}
