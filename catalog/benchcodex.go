package catalog

import (
	"math"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
	"golang.org/x/text/unicode/norm"
)

// codexBM25 is the bench's second baseline: a re-implementation, from its
// public source, of the tool search of OpenAI's Codex CLI (codex-rs,
// `tool_search`): one document per tool made of the tool's qualified name,
// its name, its server name, its title, its description and the names of
// its input schema's top-level properties, joined with spaces, ranked by
// the `bm25` crate's search engine with its default English tokenizer
// (Unicode text folded to ASCII, lower-cased, split on Unicode word
// boundaries (UAX #29: "create_issue" and "3.14" stay one word), NLTK's
// English stop words removed, Snowball's English stemmer), k1 1.2, b 0.75,
// every query token scored (a repeated word counts again), and at most
// codexDefaultLimit results. Differences: the transliteration of non-Latin
// scripts to ASCII is left out (the shared sets are English), and equal
// scores are ordered by tool order. Bench-only: the proxy never uses it.
type codexBM25 struct {
	ids  []string
	post map[string][]plainPosting // term -> documents, tf·(k1+1)/(tf + k1·(1-b+b·dl/avgdl))
	acc  []float64
}

// codexDefaultLimit is the number of results Codex's tool_search returns
// when the model gives no limit.
const codexDefaultLimit = 8

func newCodexBM25(entries []*Entry) *codexBM25 {
	const k1, b = 1.2, 0.75
	c := &codexBM25{post: map[string][]plainPosting{}}
	docs := make([][]string, len(entries))
	total := 0
	for i, e := range entries {
		parts := []string{e.Exposed, e.Name, e.Upstream}
		if strings.TrimSpace(e.Title) != "" {
			parts = append(parts, e.Title)
		}
		if strings.TrimSpace(e.Description) != "" {
			parts = append(parts, e.Description)
		}
		var root paramRoot
		if decodeParamRoot(e.InputSchema, &root) {
			parts = append(parts, sortedKeys(root.Properties)...)
		}
		docs[i] = codexTokens(strings.Join(parts, " "))
		total += len(docs[i])
		c.ids = append(c.ids, e.ID)
	}
	avg := float64(total) / float64(max(len(entries), 1))
	if avg <= 0 {
		avg = 256
	}
	for d, toks := range docs {
		tf := map[string]float64{}
		for _, t := range toks {
			tf[t]++
		}
		for t, f := range tf {
			c.post[t] = append(c.post[t], plainPosting{int32(d), f * (k1 + 1) / (f + k1*(1-b+b*float64(len(toks))/avg))})
		}
	}
	c.acc = make([]float64, len(entries))
	return c
}

// search returns the ids of the top limit tools for q, best first.
func (c *codexBM25) search(q string, limit int) []string {
	qt := codexTokens(q)
	if len(qt) == 0 {
		return nil
	}
	n := float64(len(c.ids))
	var touched []int32
	for _, t := range qt { // a repeated query word counts again
		post := c.post[t]
		df := float64(len(post))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for _, p := range post {
			if c.acc[p.doc] == 0 {
				touched = append(touched, p.doc)
			}
			c.acc[p.doc] += idf * p.tf
		}
	}
	sort.Slice(touched, func(i, j int) bool {
		a, b := touched[i], touched[j]
		if c.acc[a] != c.acc[b] {
			return c.acc[a] > c.acc[b]
		}
		return a < b
	})
	var out []string
	for _, d := range touched {
		if len(out) < limit && c.acc[d] > 0 {
			out = append(out, c.ids[d])
		}
		c.acc[d] = 0
	}
	return out
}

// codexTokens is the bm25 crate's default English tokenizer (see
// codexBM25).
func codexTokens(s string) []string {
	s = foldDiacritics(strings.ToLower(s))
	var out []string
	for _, w := range uaxWords(s) {
		if _, stop := nltkStopwords[w]; stop {
			continue
		}
		out = append(out, english.Stem(w, false))
	}
	return out
}

// foldDiacritics removes combining marks after canonical decomposition
// ("é" -> "e"): the part of the crate's ASCII folding that matters for
// Latin-script text.
func foldDiacritics(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	d := norm.NFD.String(s)
	var b strings.Builder
	for _, r := range d {
		if !unicode.Is(unicode.Mn, r) {
			b.WriteRune(r)
		}
	}
	return norm.NFC.String(b.String())
}

// uaxWords splits s into words the way UAX #29's default word boundaries
// do for the text of tool descriptions: runs of letters, digits, marks and
// "_" (ExtendNumLet), a single "'", "’", "." or ":" between two such
// characters joining them ("can't", "3.14", "math.factorial"); Han,
// Hiragana and the no-space scripts (Thai, …) are one word per character.
func uaxWords(s string) []string {
	var out []string
	start := -1
	isIn := func(r rune) bool {
		return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r)
	}
	single := func(r rune) bool {
		return unicode.In(r, unicode.Han, unicode.Hiragana) || isNoSpaceScript(r)
	}
	flush := func(i int) {
		if start >= 0 {
			out = append(out, s[start:i])
			start = -1
		}
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case single(r):
			flush(i)
			out = append(out, s[i:i+size])
		case isIn(r):
			if start < 0 {
				start = i
			}
		case start >= 0 && (r == '\'' || r == '’' || r == '.' || r == ':'):
			next, _ := utf8.DecodeRuneInString(s[i+size:])
			if i+size < len(s) && isIn(next) && !single(next) {
				break // a joiner inside a word
			}
			flush(i)
		default:
			flush(i)
		}
		i += size
	}
	flush(len(s))
	return out
}

// nltkStopwords is NLTK's English stop word list, the one the bm25 crate's
// default tokenizer removes (through the stop-words crate's "nltk" lists).
var nltkStopwords = func() map[string]struct{} {
	m := map[string]struct{}{}
	for _, w := range strings.Fields(`i me my myself we our ours ourselves you you're you've you'll you'd
		your yours yourself yourselves he him his himself she she's her hers herself it it's its itself
		they them their theirs themselves what which who whom this that that'll these those am is are was
		were be been being have has had having do does did doing a an the and but if or because as until
		while of at by for with about against between into through during before after above below to
		from up down in out on off over under again further then once here there when where why how all
		any both each few more most other some such no nor not only own same so than too very s t can
		will just don don't should should've now d ll m o re ve y ain aren aren't couldn couldn't didn
		didn't doesn doesn't hadn hadn't hasn hasn't haven haven't isn isn't ma mightn mightn't mustn
		mustn't needn needn't shan shan't shouldn shouldn't wasn wasn't weren weren't won won't wouldn
		wouldn't`) {
		m[w] = struct{}{}
	}
	return m
}()
