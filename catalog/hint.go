package catalog

import (
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
)

// This file writes a tool's search hint: a short line of words for clients
// whose own tool search scores the words of each tool (Claude Code's
// ToolSearch reads it from the tool's _meta["anthropic/searchHint"] and
// adds points for each query word found in it as a whole word, with no
// stemming and no synonyms). The hint holds words a request for the tool
// may use that its name and description do not hold as written, all taken
// from the index's own vocabulary: the plain form of the tool's most
// telling words where its text has only other forms (forecasts, forecast),
// the other verbs of its name's operation (search: find, lookup), their
// related words from the semantic table that the catalog uses, and their
// words in the languages of the word tables (weather: wetter, météo).

// maxHintChars bounds a hint: Claude Code shows at most 100 characters of
// a hint where it lists deferred tools.
const maxHintChars = 100

// Bounds of a hint's parts: the tool's most telling words looked at, and
// related words per word.
const (
	hintTopTerms   = 4
	hintRelPerTerm = 2
	// hintMinRelated is the least weight (table weight, 0..1) of a related
	// word a hint takes: synonyms and close neighbours only.
	hintMinRelated = 0.8
)

// hintVocab maps an index term (a stem) to the surface word the catalog
// writes it as most often (ties: the shorter, then the first in order):
// "queri" -> "query", "forecast" -> "forecast".
type hintVocab struct {
	once sync.Once
	form map[string]string
}

// surfaceForms builds (once per index) the catalog's surface word of each
// term of the names and descriptions of its live entries (read lock held).
func (ix *Index) surfaceForms() map[string]string {
	ix.hints.once.Do(func() {
		counts := map[string]map[string]int{}
		add := func(w string) {
			t := stem(w)
			m := counts[t]
			if m == nil {
				m = map[string]int{}
				counts[t] = m
			}
			m[w]++
		}
		for i := range ix.docs {
			if ix.dead[i] {
				continue
			}
			e := ix.docs[i].e
			hintWords(e.Name, add)
			hintWords(e.Description, add)
		}
		form := make(map[string]string, len(counts))
		for t, m := range counts {
			best, bn := "", 0
			for w, n := range m {
				if n > bn || n == bn && (len(w) < len(best) || len(w) == len(best) && w < best) {
					best, bn = w, n
				}
			}
			form[t] = best
		}
		ix.hints.form = form
	})
	return ix.hints.form
}

// hintWords calls f with each lower-case ASCII word of 3 or more letters of
// s that is not a stopword, camelCase and snake_case split.
func hintWords(s string, f func(string)) {
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !isWordRune(r) }) {
		splitCamel(w, func(p string) {
			p = normalizeWord(p)
			if len(p) >= 3 && isASCIILetters(p) && !isStopword(p) {
				f(p)
			}
		})
	}
}

// SearchHint returns the search hint of the live entry with this id ("" for
// none or an unknown id): at most maxHintChars of lower-case words,
// separated by spaces, none of which the entry's name or description holds
// as a word already.
func (ix *Index) SearchHint(id string) string {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	i, ok := ix.byID[id]
	if !ok {
		return ""
	}
	forms := ix.surfaceForms()
	d := &ix.docs[i]
	e := d.e
	have := map[string]bool{}
	hintWords(e.Name, func(w string) { have[w] = true })
	hintWords(e.Description, func(w string) { have[w] = true })
	// The tool's most telling terms: name and description terms by their
	// weight in the entry (name counts double) times idf.
	type scoredTerm struct {
		t string
		w float64
	}
	var top []scoredTerm
	n := float64(ix.live)
	for _, tt := range d.terms {
		f := 2*float64(tt.tf[fieldName]) + float64(tt.tf[fieldDesc])
		if f == 0 || !isASCIILetters(tt.term) || len(tt.term) < 3 {
			continue
		}
		ti := ix.terms[tt.term]
		if ti == nil || ti.df <= 0 {
			continue
		}
		df := float64(ti.df)
		top = append(top, scoredTerm{tt.term, math.Log1p(f) * math.Log(1+(n-df+0.5)/(df+0.5))})
	}
	sort.SliceStable(top, func(a, b int) bool {
		if top[a].w != top[b].w {
			return top[a].w > top[b].w
		}
		return top[a].t < top[b].t
	})
	if len(top) > hintTopTerms {
		top = top[:hintTopTerms]
	}
	var out []string
	size := 0
	put := func(w string) bool {
		if w == "" || have[w] || slices.Contains(out, w) || !isASCIILetters(w) {
			return false
		}
		if size+len(w)+1 > maxHintChars+1 {
			return false
		}
		out = append(out, w)
		size += len(w) + 1
		return true
	}
	// 1. The plain written form of the telling words.
	for _, st := range top {
		put(forms[st.t])
	}
	// 2. The other verbs of the name's operation.
	if v := d.verb; v > 0 && int(v) <= len(toolVerbGroups) {
		k := 0
		for _, w := range strings.Fields(toolVerbGroups[v-1]) {
			if k < 3 && put(w) {
				k++
			}
		}
	}
	// 3. Related words of the telling words that the catalog writes.
	if ix.params.Semantic > 0 {
		tab := related()
		for _, st := range top {
			k := 0
			for _, r := range tab.of(st.t) {
				if k == hintRelPerTerm || r.weight() < hintMinRelated {
					break
				}
				if put(forms[tab.word(r)]) {
					k++
				}
			}
		}
	}
	// 4. The telling words in the languages of the word tables.
	for _, st := range top[:min(2, len(top))] {
		for _, w := range translationsOf(st.t) {
			put(w)
		}
	}
	return strings.Join(out, " ")
}
