//go:build ignore

// train fits the word vectors of the dense table to sentence embeddings
// (tokenlearn-style distillation: a static table whose pooled vectors
// approximate what the sentence model says of whole sentences, not only
// of words alone).
//
//	go run scripts/embed/train.go vocab -corpus C.txt -wordnet DIR -out V.txt
//	go run scripts/embed/train.go fit -corpus C.txt -corpus-vectors C.f32 \
//	    -words V.txt -word-vectors V.f32 -out W.f32 -freq-out F.txt
//
// vocab: the words (letter runs of 2+, camelCase and snake_case split,
// lowercase) that occur at least twice in the corpus, and the single-word
// WordNet lemmas that are tagged in its sense-tagged texts (common English).
//
// fit: each corpus sentence is the SIF-weighted mean of its words' rows
// (a/(a+p), p the word's share of the corpus, a = 1e-3); the rows start
// from the model's embedding of each word alone (V.f32) and move by D,
// the ridge least-squares solution of ‖X(W₀+D) − Y‖² + λ‖D‖² (Y the
// model's sentence embeddings), found by conjugate gradients, one per
// output dimension. Every 20th sentence is held out and the mean cosine of
// its prediction to the model's is printed per 10 iterations. Writes the
// rows (raw format: N×512 float32, the order of -words) and the words in
// corpus frequency order (-freq-out, for gen.go's Zipf weights).
package main

import (
	"bufio"
	"encoding/binary"
	"flag"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

const dims = 512

func main() {
	if len(os.Args) < 2 {
		fail(fmt.Errorf("usage: train vocab|fit [flags]"))
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	corpus := fs.String("corpus", "", "corpus, one sentence a line")
	corpusVec := fs.String("corpus-vectors", "", "the model's embedding of each corpus line (N×512 float32)")
	wordnet := fs.String("wordnet", "/usr/share/wordnet", "WordNet 3.0 dict folder (index.*)")
	words := fs.String("words", "", "vocabulary, one word a line")
	wordVec := fs.String("word-vectors", "", "the model's embedding of each word alone (N×512 float32)")
	out := fs.String("out", "", "output")
	freqOut := fs.String("freq-out", "", "fit: the words in corpus frequency order")
	lambda := fs.Float64("lambda", 0.05, "fit: ridge weight")
	iters := fs.Int("iters", 20, "fit: conjugate-gradient iterations")
	fs.Parse(os.Args[2:])
	switch os.Args[1] {
	case "vocab":
		vocab(*corpus, *wordnet, *out)
	case "fit":
		fit(*corpus, *corpusVec, *words, *wordVec, *out, *freqOut, *lambda, *iters)
	default:
		fail(fmt.Errorf("unknown command %q", os.Args[1]))
	}
}

// tokens splits camelCase and snake_case, lowercases, keeps letter runs of
// 2+ (Latin letters only).
func tokens(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) >= 2 {
			out = append(out, strings.ToLower(string(cur)))
		}
		cur = cur[:0]
	}
	rs := []rune(s)
	for i, r := range rs {
		if !unicode.IsLetter(r) || r > 0x24F {
			flush()
			continue
		}
		if unicode.IsUpper(r) && len(cur) > 0 && (unicode.IsLower(cur[len(cur)-1]) || (i+1 < len(rs) && unicode.IsLower(rs[i+1]))) {
			flush()
		}
		cur = append(cur, r)
	}
	flush()
	return out
}

func lines(p string) []string {
	b, err := os.ReadFile(p)
	if err != nil {
		fail(err)
	}
	l := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	return l
}

func vectors(p string, rows int) [][]float32 {
	raw, err := os.ReadFile(p)
	if err != nil {
		fail(err)
	}
	if len(raw) != rows*dims*4 {
		fail(fmt.Errorf("%s: %d bytes, want %d rows of %d float32", p, len(raw), rows, dims))
	}
	out := make([][]float32, rows)
	for i := range out {
		v := make([]float32, dims)
		for j := range v {
			v[j] = math.Float32frombits(binary.LittleEndian.Uint32(raw[(i*dims+j)*4:]))
		}
		out[i] = v
	}
	return out
}

func counts(sents []string) map[string]int {
	cnt := map[string]int{}
	for _, l := range sents {
		for _, w := range tokens(l) {
			cnt[w]++
		}
	}
	return cnt
}

func vocab(corpus, wordnet, out string) {
	cnt := counts(lines(corpus))
	keep := map[string]bool{}
	for w, c := range cnt {
		if c >= 2 {
			keep[w] = true
		}
	}
	for _, pos := range []string{"noun", "verb", "adj", "adv"} {
		f, err := os.Open(wordnet + "/index." + pos)
		if err != nil {
			fail(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			// lemma pos synset_cnt p_cnt [ptr_symbol...] sense_cnt tagsense_cnt synset_offset...
			p := strings.Fields(sc.Text())
			if strings.HasPrefix(sc.Text(), " ") || len(p) < 4 {
				continue
			}
			pc, _ := strconv.Atoi(p[3])
			if len(p) < 6+pc {
				continue
			}
			tag, _ := strconv.Atoi(p[5+pc])
			if tag > 0 && len(p[0]) >= 2 && !strings.ContainsAny(p[0], "_-'.0123456789") {
				keep[p[0]] = true
			}
		}
		f.Close()
	}
	ws := make([]string, 0, len(keep))
	for w := range keep {
		ws = append(ws, w)
	}
	sort.Strings(ws)
	if err := os.WriteFile(out, []byte(strings.Join(ws, "\n")+"\n"), 0o644); err != nil {
		fail(err)
	}
	fmt.Fprintf(os.Stderr, "%s: %d words\n", out, len(ws))
}

type row struct {
	ids []int32
	a   []float32
}

func fit(corpus, corpusVec, wordsPath, wordVec, out, freqOut string, lambda float64, iters int) {
	words := lines(wordsPath)
	W0 := vectors(wordVec, len(words))
	idx := make(map[string]int32, len(words))
	for i, w := range words {
		idx[w] = int32(i)
	}
	sents := lines(corpus)
	Y := vectors(corpusVec, len(sents))
	cnt := counts(sents)
	var tot float64
	for _, c := range cnt {
		tot += float64(c)
	}
	sif := func(w string) float64 { return 1e-3 / (1e-3 + float64(cnt[w])/tot) }
	var rows []row
	var ys [][]float32
	var held []bool
	for si, l := range sents {
		var r row
		var sum float64
		for _, w := range tokens(l) {
			if i, ok := idx[w]; ok {
				r.ids = append(r.ids, i)
				r.a = append(r.a, float32(sif(w)))
				sum += sif(w)
			}
		}
		if len(r.ids) == 0 {
			continue
		}
		for k := range r.a {
			r.a[k] /= float32(sum)
		}
		rows = append(rows, r)
		ys = append(ys, Y[si])
		held = append(held, si%20 == 0)
	}
	mk := func(n int) [][]float32 {
		o := make([][]float32, n)
		for i := range o {
			o[i] = make([]float32, dims)
		}
		return o
	}
	mulX := func(W, o [][]float32) { // o = X W
		for i, r := range rows {
			oi := o[i]
			clear(oi)
			for k, id := range r.ids {
				a, w := r.a[k], W[id]
				for j := range oi {
					oi[j] += a * w[j]
				}
			}
		}
	}
	mulXT := func(R, o [][]float32) { // o = Xᵀ R over the training rows
		for v := range o {
			clear(o[v])
		}
		for i, r := range rows {
			if held[i] {
				continue
			}
			for k, id := range r.ids {
				a, ov, ri := r.a[k], o[id], R[i]
				for j := range ov {
					ov[j] += a * ri[j]
				}
			}
		}
	}
	pred := mk(len(rows))
	heldCos := func(W [][]float32) float64 {
		mulX(W, pred)
		var s float64
		n := 0
		for i := range rows {
			if !held[i] {
				continue
			}
			var d, n1, n2 float64
			for j := 0; j < dims; j++ {
				d += float64(pred[i][j]) * float64(ys[i][j])
				n1 += float64(pred[i][j]) * float64(pred[i][j])
				n2 += float64(ys[i][j]) * float64(ys[i][j])
			}
			s += d / math.Sqrt(n1*n2+1e-12)
			n++
		}
		return s / float64(n)
	}
	fmt.Fprintf(os.Stderr, "%d sentences with a known word, %d words; held-out cosine, words alone: %.4f\n", len(rows), len(words), heldCos(W0))
	V := len(words)
	R := mk(len(rows))
	mulX(W0, pred)
	for i := range rows {
		if !held[i] {
			for j := 0; j < dims; j++ {
				R[i][j] = ys[i][j] - pred[i][j]
			}
		}
	}
	D, res, p, Ap, Xp, W := mk(V), mk(V), mk(V), mk(V), mk(len(rows)), mk(V)
	mulXT(R, res)
	for v := range p {
		copy(p[v], res[v])
	}
	rr := make([]float64, dims)
	for v := range res {
		for j := 0; j < dims; j++ {
			rr[j] += float64(res[v][j]) * float64(res[v][j])
		}
	}
	for it := 1; it <= iters; it++ {
		mulX(p, Xp)
		mulXT(Xp, Ap)
		pAp := make([]float64, dims)
		for v := range Ap {
			for j := 0; j < dims; j++ {
				Ap[v][j] += float32(lambda) * p[v][j]
				pAp[j] += float64(p[v][j]) * float64(Ap[v][j])
			}
		}
		rrNew := make([]float64, dims)
		for v := range D {
			for j := 0; j < dims; j++ {
				al := float32(rr[j] / pAp[j])
				D[v][j] += al * p[v][j]
				res[v][j] -= al * Ap[v][j]
				rrNew[j] += float64(res[v][j]) * float64(res[v][j])
			}
		}
		for v := range p {
			for j := 0; j < dims; j++ {
				p[v][j] = res[v][j] + float32(rrNew[j]/rr[j])*p[v][j]
			}
		}
		rr = rrNew
		if it%10 == 0 || it == iters {
			for v := range W {
				for j := 0; j < dims; j++ {
					W[v][j] = W0[v][j] + D[v][j]
				}
			}
			fmt.Fprintf(os.Stderr, "iteration %d: held-out cosine %.4f\n", it, heldCos(W))
		}
	}
	buf := make([]byte, V*dims*4)
	for v := range W {
		for j := 0; j < dims; j++ {
			binary.LittleEndian.PutUint32(buf[(v*dims+j)*4:], math.Float32bits(W[v][j]))
		}
	}
	if err := os.WriteFile(out, buf, 0o644); err != nil {
		fail(err)
	}
	byFreq := append([]string(nil), words...)
	sort.SliceStable(byFreq, func(a, b int) bool { return cnt[byFreq[a]] > cnt[byFreq[b]] })
	if freqOut != "" {
		if err := os.WriteFile(freqOut, []byte(strings.Join(byFreq, "\n")+"\n"), 0o644); err != nil {
			fail(err)
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "train:", err)
	os.Exit(1)
}
