package catalog

import (
	"math"
	"sort"
	"strings"
)

// plainBM25 is the bench's baseline (shared/bench/README.md): a plain BM25
// (k1 1.2, b 0.75) over one bag of words made of the tool's name, server,
// description and top-level property names, with case/snake splitting and
// nothing else (no stemming, no stopwords, no CJK bigrams, no fields). It
// is computed on the data a bench runs, so the printed baseline always
// matches the tools and queries given. Bench-only: the proxy never uses it.
type plainBM25 struct {
	ids   []string
	lens  []float64
	avg   float64
	post  map[string][]plainPosting
	score []float64
}

type plainPosting struct {
	doc int32
	tf  float64
}

// plainTokens lowercases s and splits it on every rune that is not a
// letter or digit and on camelCase boundaries.
func plainTokens(s string, f func(string)) {
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !isWordRune(r) }) {
		splitCamel(w, func(p string) { f(strings.ToLower(p)) })
	}
}

func newPlainBM25(entries []*Entry) *plainBM25 {
	p := &plainBM25{post: map[string][]plainPosting{}}
	var total float64
	for i, e := range entries {
		tf := map[string]float64{}
		n := 0.0
		add := func(t string) { tf[t]++; n++ }
		plainTokens(e.Name, add)
		plainTokens(e.Upstream, add)
		plainTokens(e.Description, add)
		var root paramRoot
		if decodeParamRoot(e.InputSchema, &root) {
			for name := range root.Properties {
				plainTokens(name, add)
			}
		}
		for t, c := range tf {
			p.post[t] = append(p.post[t], plainPosting{int32(i), c})
		}
		p.ids = append(p.ids, e.ID)
		p.lens = append(p.lens, n)
		total += n
	}
	p.avg = max(total/float64(max(len(entries), 1)), 1)
	p.score = make([]float64, len(entries))
	return p
}

// search returns the ids of the top limit tools for q (ties by id).
func (p *plainBM25) search(q string, limit int) []string {
	const k1, b = 1.2, 0.75
	seen := map[string]bool{}
	var touched []int32
	n := float64(len(p.ids))
	plainTokens(q, func(t string) {
		if seen[t] {
			return
		}
		seen[t] = true
		post := p.post[t]
		if len(post) == 0 {
			return
		}
		df := float64(len(post))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for _, ps := range post {
			if p.score[ps.doc] == 0 {
				touched = append(touched, ps.doc)
			}
			p.score[ps.doc] += idf * ps.tf * (k1 + 1) / (ps.tf + k1*(1-b+b*p.lens[ps.doc]/p.avg))
		}
	})
	sort.Slice(touched, func(i, j int) bool {
		a, c := touched[i], touched[j]
		if p.score[a] != p.score[c] {
			return p.score[a] > p.score[c]
		}
		return p.ids[a] < p.ids[c]
	})
	var out []string
	for i, d := range touched {
		if i < limit {
			out = append(out, p.ids[d])
		}
	}
	for _, d := range touched {
		p.score[d] = 0
	}
	return out
}
