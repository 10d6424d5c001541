//go:build ignore

// gen builds catalog/related_wordnet.gz, the semantic signal's
// related-terms table, from WordNet 3.0 as Debian's wordnet-base package
// installs it (/usr/share/wordnet). Run it with scripts/gen-semantic.sh;
// the output is deterministic for one WordNet version.
//
// For every single-word lemma of WordNet (letters only, 3+ characters) and
// its first three senses (WordNet orders senses by frequency: weights 1,
// 0.7, 0.5), it collects the single-word lemmas of the same synset
// (synonyms), of lemma-level "derivationally related form" and "pertainym"
// pointers (x0.8), of "similar to" and "also see" synsets (x0.6) and of
// noun hypernyms and verb hypernyms (x0.5), plus the irregular forms of
// the *.exc files (1.0). Both sides are reduced with the search index's
// own stemmer (catalog.StemWord); each word keeps its 12 strongest
// relations. Output lines: "word rel:weight rel:weight …" (weight in
// tenths), sorted, gzip-compressed.
package main

import (
	"bufio"
	"compress/gzip"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
)

type synset struct {
	words []string
	ptrs  []ptr
}

type ptr struct {
	sym    string
	offset string
	pos    byte
	src    int // 1-based source word index in this synset; 0 = whole synset
	dst    int // 1-based target word index; 0 = whole synset
}

func main() {
	dir := flag.String("wordnet", "/usr/share/wordnet", "WordNet dict folder")
	out := flag.String("out", "catalog/related_wordnet.gz", "output file")
	flag.Parse()
	syn := map[string]*synset{} // "pos:offset"
	for _, pos := range []string{"noun", "verb", "adj", "adv"} {
		readData(filepath.Join(*dir, "data."+pos), syn)
	}
	rel := map[string]map[string]float64{}
	addRel := func(a, b string, w float64) {
		if !single(a) || !single(b) {
			return
		}
		sa, sb := catalog.StemWord(a), catalog.StemWord(b)
		if sa == sb || catalog.IsStopword(sa) || catalog.IsStopword(sb) {
			return
		}
		m := rel[sa]
		if m == nil {
			m = map[string]float64{}
			rel[sa] = m
		}
		if w > m[sb] {
			m[sb] = w
		}
	}
	senseW := []float64{1, 0.7, 0.5}
	for _, pos := range []string{"noun", "verb", "adj", "adv"} {
		f, err := os.Open(filepath.Join(*dir, "index."+pos))
		must(err)
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(line, "  ") {
				continue
			}
			fs := strings.Fields(line)
			lemma, p := fs[0], fs[1][0]
			if p == 's' {
				p = 'a'
			}
			nptr, _ := strconv.Atoi(fs[3])
			offs := fs[4+nptr+2:]
			for si, off := range offs {
				if si >= len(senseW) {
					break
				}
				w := senseW[si]
				s := syn[key(p, off)]
				if s == nil {
					continue
				}
				me := 0
				for i, x := range s.words {
					if x == lemma {
						me = i + 1
					}
				}
				for _, x := range s.words {
					addRel(lemma, x, w)
				}
				for _, pt := range s.ptrs {
					t := syn[key(pt.pos, pt.offset)]
					if t == nil {
						continue
					}
					var f float64
					switch pt.sym {
					case "+", "\\":
						f = 0.8
					case "&", "^":
						f = 0.6
					case "@", "@i":
						f = 0.5
					default:
						continue
					}
					if pt.src != 0 && pt.src != me {
						continue // a lexical pointer of another word of the synset
					}
					for j, x := range t.words {
						if pt.dst == 0 || pt.dst == j+1 {
							addRel(lemma, x, w*f)
						}
					}
				}
			}
		}
		must(sc.Err())
		f.Close()
	}
	for _, pos := range []string{"noun", "verb", "adj", "adv"} {
		f, err := os.Open(filepath.Join(*dir, pos+".exc"))
		must(err)
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fs := strings.Fields(sc.Text())
			for _, base := range fs[1:] {
				addRel(fs[0], base, 1)
			}
		}
		f.Close()
	}
	words := make([]string, 0, len(rel))
	for w := range rel {
		words = append(words, w)
	}
	sort.Strings(words)
	fo, err := os.Create(*out)
	must(err)
	zw, err := gzip.NewWriterLevel(fo, gzip.BestCompression)
	must(err)
	bw := bufio.NewWriter(zw)
	n := 0
	for _, w := range words {
		type rw struct {
			r string
			w float64
		}
		var rs []rw
		for r, x := range rel[w] {
			rs = append(rs, rw{r, x})
		}
		sort.Slice(rs, func(i, j int) bool {
			if rs[i].w != rs[j].w {
				return rs[i].w > rs[j].w
			}
			return rs[i].r < rs[j].r
		})
		if len(rs) > 12 {
			rs = rs[:12]
		}
		bw.WriteString(w)
		for _, r := range rs {
			fmt.Fprintf(bw, " %s:%d", r.r, int(r.w*10+0.5))
		}
		bw.WriteByte('\n')
		n++
	}
	must(bw.Flush())
	must(zw.Close())
	must(fo.Close())
	fmt.Fprintf(os.Stderr, "%s: %d words\n", *out, n)
}

func key(pos byte, off string) string { return string(pos) + ":" + off }

// single reports whether a WordNet lemma is one plain word of 3+ letters.
func single(w string) bool {
	if len(w) < 3 {
		return false
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}

func readData(path string, syn map[string]*synset) {
	f, err := os.Open(path)
	must(err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "  ") {
			continue
		}
		if i := strings.Index(line, " | "); i >= 0 {
			line = line[:i]
		}
		fs := strings.Fields(line)
		off, pos := fs[0], fs[2][0]
		if pos == 's' {
			pos = 'a'
		}
		wc, _ := strconv.ParseInt(fs[3], 16, 32)
		s := &synset{}
		k := 4
		for i := 0; i < int(wc); i++ {
			w := strings.ToLower(fs[k])
			if j := strings.IndexByte(w, '('); j >= 0 { // adjective markers: "big(a)"
				w = w[:j]
			}
			s.words = append(s.words, w)
			k += 2
		}
		pc, _ := strconv.Atoi(fs[k])
		k++
		for i := 0; i < pc; i++ {
			p := ptr{sym: fs[k], offset: fs[k+1], pos: fs[k+2][0]}
			if p.pos == 's' {
				p.pos = 'a'
			}
			st := fs[k+3]
			a, _ := strconv.ParseInt(st[:2], 16, 32)
			b, _ := strconv.ParseInt(st[2:], 16, 32)
			p.src, p.dst = int(a), int(b)
			s.ptrs = append(s.ptrs, p)
			k += 4
		}
		syn[key(pos, off)] = s
	}
	must(sc.Err())
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
