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
// idf, no stemming and no synonyms). The hint holds, all from the index's
// own vocabulary: the tool's most telling words by idf (so they count more
// than the "the" and "for" of its description), in its own form and the
// catalog's plainest (forecasts, forecast), the other verbs of its name's
// operation (search: find, lookup), related words from the semantic table
// that the catalog uses, and its words in the languages of the word
// tables (weather: wetter, meteo).

// maxHintChars bounds a hint: Claude Code shows at most 100 characters of
// a hint where it lists deferred tools.
const maxHintChars = 100

// Bounds of a hint's parts: the tool's most telling words looked at, and
// related words per word.
const (
	hintTopTerms = 16
	// hintLeadTerms of them come before the other verbs and the
	// translations; hintVerbs is how many other verbs a hint takes.
	hintLeadTerms  = 8
	hintVerbs      = 2
	hintRelPerTerm = 2
	// hintMinRelated is the least weight (table weight, 0..1) of a related
	// word a hint takes: synonyms and close neighbours only.
	hintMinRelated = 0.8
)

// hintData is an index's search hints: the hints made so far, by id, and
// form, which maps an index term (a stem) to the surface word the catalog
// writes it as most often (ties: the shorter, then the first in order):
// "queri" -> "query", "forecast" -> "forecast".
type hintData struct {
	once  sync.Once
	form  map[string]string
	cache sync.Map
}

// hintState returns the index's hintData, making it on first use.
func (ix *Index) hintState() *hintData {
	if h := ix.hints.Load(); h != nil {
		return h
	}
	ix.hints.CompareAndSwap(nil, &hintData{})
	return ix.hints.Load()
}

// surfaceForms builds (once per index state) the catalog's surface word of
// each term of the names and descriptions of its live entries (read lock
// held).
func (ix *Index) surfaceForms(hd *hintData) map[string]string {
	hd.once.Do(func() {
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
		hd.form = form
	})
	return hd.form
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
// separated by spaces.
func (ix *Index) SearchHint(id string) string {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	hd := ix.hintState()
	if h, ok := hd.cache.Load(id); ok {
		return h.(string)
	}
	i, ok := ix.byID[id]
	if !ok {
		return ""
	}
	h := ix.searchHintLocked(i, ix.surfaceForms(hd))
	hd.cache.Store(id, h)
	return h
}

// searchHintLocked is SearchHint for document i (read lock held).
func (ix *Index) searchHintLocked(i int32, forms map[string]string) string {
	d := &ix.docs[i]
	e := d.e
	// own maps each of the entry's terms to its word as the entry writes
	// it (the first form met).
	own := map[string]string{}
	addOwn := func(w string) {
		if t := stem(w); own[t] == "" {
			own[t] = w
		}
	}
	hintWords(e.Name, addOwn)
	hintWords(e.Description, addOwn)
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
		if w == "" || slices.Contains(out, w) || !isASCIILetters(w) {
			return false
		}
		if size+len(w)+1 > maxHintChars+1 {
			return false
		}
		out = append(out, w)
		size += len(w) + 1
		return true
	}
	// 1. The telling words, as the entry writes them: a client that
	// scores every word of a description alike ("the" as "weather")
	// then scores these more. The first hintLeadTerms of them first,
	// the rest after the words of 2 and 3.
	lead := min(hintLeadTerms, len(top))
	for _, st := range top[:lead] {
		put(own[st.t])
	}
	// 2. The other verbs of the name's operation (search: find, lookup).
	if v := d.verb; v > 0 && int(v) <= len(toolVerbGroups) {
		k := 0
		for _, w := range strings.Fields(toolVerbGroups[v-1]) {
			if k < hintVerbs && put(w) {
				k++
			}
		}
	}
	// 3. The most telling word in the languages of the word tables.
	if len(top) > 0 {
		for _, w := range translationsOf(top[0].t) {
			put(w)
		}
	}
	for _, st := range top[lead:] {
		put(own[st.t])
	}
	// 4. The catalog's plainest form of the telling words (forecast for
	// forecasts).
	for _, st := range top {
		put(forms[st.t])
	}
	// 5. Related words of the telling words that the catalog writes.
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
	return strings.Join(out, " ")
}
