package catalog

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file analyses a search query (issue 15, failure class 4): which index
// terms it asks for and with what weight, and which derived terms
// (misspelling repairs, compounds, tool names written as a phrase) it adds
// once the index vocabulary is known.

// Kinds of query terms. Derived kinds count for a hit's match strength only
// through the query word they came from.
const (
	termWord     uint8 = iota // a term of the query text
	termFuzzy                 // an index term one edit away from an unknown query term
	termCompound              // two query words joined, or an unknown word split in two
	termRelated               // a related term from the semantic table
)

// Weights of query terms that are probably argument values rather than a
// description of the task: words of a file path, URL or e-mail address,
// numbers, and words inside quotes. They still count (a path may name the
// thing to act on) but weigh less than the words around them.
const (
	weightPathWord   = 0.25
	weightNumber     = 0.25
	weightQuotedWord = 0.5
	// Derived terms.
	weightFuzzy    = 0.7
	weightCompound = 0.7
)

// Bounds of the misspelling repair (Index.expand).
const (
	maxRepairs          = 2
	maxRepairQueryTerms = 12
)

// queryTerm is one distinct query term.
type queryTerm struct {
	term string
	qw   float64 // query-side weight
	kind uint8
	// src is the index of the base term (kind termWord) it stands for; a
	// base term points at itself.
	src int
	// word is the query word as written (for Scored.Matched).
	word string
	// whole marks the whole lower-cased form of an identifier-like word
	// ("create_issue"): its parts are terms too, so it counts for the
	// match strength only when matched.
	whole bool
}

// analyzedQuery is a query split into weighted base terms plus its plain
// word sequence (lower-case letter/digit runs, stopwords kept) for phrases.
type analyzedQuery struct {
	terms []queryTerm
	words []string
}

// analyzeQuery tokenizes a query with the index's rules: free-text terms
// plus the whole lower-cased identifier of words written like identifiers
// ("create_issue", "math.factorial", "getURLs"), so they meet the whole
// name tokens of the name field. Repeated terms are merged keeping the
// highest weight. Words of paths, URLs, e-mail addresses, numbers and
// quoted values are down-weighted (see weightPathWord).
func analyzeQuery(q string) analyzedQuery {
	var aq analyzedQuery
	seen := map[string]int{}
	add := func(t, word string, w float64, whole bool) {
		if i, ok := seen[t]; ok {
			if w > aq.terms[i].qw {
				aq.terms[i].qw = w
			}
			aq.terms[i].whole = aq.terms[i].whole && whole
			return
		}
		seen[t] = len(aq.terms)
		aq.terms = append(aq.terms, queryTerm{term: t, qw: w, kind: termWord, src: len(aq.terms), word: word, whole: whole})
	}
	quoted := quotedSpans(q)
	pos := 0
	for _, chunk := range strings.Fields(q) {
		at := strings.Index(q[pos:], chunk) + pos
		pos = at + len(chunk)
		w := 1.0
		if isPathLike(chunk) {
			w = weightPathWord
		} else if inSpans(quoted, at) {
			w = weightQuotedWord
		}
		core := strings.TrimFunc(chunk, func(r rune) bool { return !isWordRune(r) })
		if core != "" && w == 1 && looksLikeIdentifier(core) {
			add(strings.ToLower(core), core, 1, true)
		}
		tokenizeWords(chunk, func(word, t string) {
			ww := w
			if isNumber(t) {
				ww = min(ww, weightNumber)
			}
			add(t, word, ww, false)
		})
		for _, run := range strings.FieldsFunc(chunk, func(r rune) bool { return !isWordRune(r) || isCJK(r) }) {
			aq.words = append(aq.words, strings.ToLower(run))
		}
	}
	return aq
}

// tokenizeWords is tokenizeText that also tells which written word (a
// letter/digit run) each term came from.
func tokenizeWords(s string, f func(word, term string)) {
	for _, run := range strings.FieldsFunc(s, func(r rune) bool { return !isWordRune(r) && !isCJK(r) }) {
		tokenizeText(run, func(t string) { f(run, t) })
	}
}

// quotedSpans returns the byte spans inside matching straight or curly
// quotes or backticks.
func quotedSpans(q string) [][2]int {
	var spans [][2]int
	open := -1
	var closer rune
	for i, r := range q {
		switch {
		case open < 0 && (r == '"' || r == '`' || r == '“'):
			open = i + utf8.RuneLen(r)
			closer = r
			if r == '“' {
				closer = '”'
			}
		case open >= 0 && r == closer:
			spans = append(spans, [2]int{open, i})
			open = -1
		}
	}
	return spans
}

func inSpans(spans [][2]int, at int) bool {
	for _, s := range spans {
		if at >= s[0] && at < s[1] {
			return true
		}
	}
	return false
}

// isPathLike reports whether a whitespace-separated query chunk is a file
// path, URL or e-mail address ("/home/a/b.txt", "C:\dir", "./x",
// "https://…", "a@b.com").
func isPathLike(c string) bool {
	if strings.Contains(c, "://") || strings.HasPrefix(c, "www.") {
		return true
	}
	if at := strings.IndexByte(c, '@'); at > 0 && strings.Contains(c[at:], ".") {
		return true
	}
	if strings.Count(c, "/") >= 1 && (strings.HasPrefix(c, "/") || strings.HasPrefix(c, "./") || strings.HasPrefix(c, "~/") || strings.Count(c, "/") >= 2) {
		return true
	}
	return strings.Count(c, `\`) >= 1 && len(c) > 2
}

// isNumber reports whether a term is all digits (a value, not a word).
func isNumber(t string) bool {
	for i := 0; i < len(t); i++ {
		if t[i] < '0' || t[i] > '9' {
			return false
		}
	}
	return t != ""
}

// looksLikeIdentifier reports whether a query word is written like a tool
// name: it has "_", "-" or "." inside, or an upper-case letter after its
// first rune (camelCase), and no CJK.
func looksLikeIdentifier(w string) bool {
	if strings.IndexFunc(w, isCJK) >= 0 {
		return false
	}
	if strings.ContainsAny(w, "_.-") {
		return true
	}
	for i, r := range w {
		if i > 0 && unicode.IsUpper(r) {
			return true
		}
	}
	return false
}

// nameKey folds a tool name (or a run of query words) to its letters and
// digits, lower-cased: "get_ip", "getIP", "Get IP" all give "getip".
// Names that fold to fewer than 4 characters give "".
func nameKey(s string) string {
	var b strings.Builder
	for _, r := range s {
		if isWordRune(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	if utf8.RuneCountInString(b.String()) < 4 {
		return ""
	}
	return b.String()
}

// expand adds the derived terms of an analyzed query for index ix (read
// lock held): an unknown ASCII term (no live document has it) of at least 5
// letters gets the most frequent index term one edit away (a misspelling:
// "geocding" -> "geocod") or, failing that, its split into two known terms
// ("zipcode" -> "zip", "code"); two adjacent query words are joined when
// the index knows the joined term ("zip codes" -> "zipcode").
func (ix *Index) expand(aq *analyzedQuery) {
	known := func(t string) bool {
		ti := ix.terms[t]
		return ti != nil && ti.df > 0
	}
	seen := map[string]bool{}
	for _, t := range aq.terms {
		seen[t.term] = true
	}
	derive := func(t string, w float64, kind uint8, src int) {
		if seen[t] {
			return
		}
		seen[t] = true
		aq.terms = append(aq.terms, queryTerm{term: t, qw: w, kind: kind, src: src})
	}
	nbase := len(aq.terms)
	repairs := 0
	for i := 0; i < nbase; i++ {
		t := aq.terms[i]
		if known(t.term) || len(t.term) < 5 || !isASCIILetters(t.term) {
			continue
		}
		// Repairs cost ~50 map lookups per letter: at most maxRepairs per
		// query, and none in long queries (a misspelt word matters most
		// in a short one; a long one has other words).
		if repairs == maxRepairs || nbase > maxRepairQueryTerms {
			break
		}
		repairs++
		best, bestDF := "", int32(0)
		edits1(t.term, func(c []byte) {
			if ti := ix.terms[string(c)]; ti != nil && ti.df > bestDF { // no allocation
				best, bestDF = string(c), ti.df
			}
		})
		if best != "" {
			derive(best, t.qw*weightFuzzy, termFuzzy, i)
			continue
		}
		for cut := 3; cut <= len(t.term)-3; cut++ {
			a, b := stem(t.term[:cut]), stem(t.term[cut:])
			if known(a) && known(b) && !isStopword(a) && !isStopword(b) {
				derive(a, t.qw*weightCompound, termCompound, i)
				derive(b, t.qw*weightCompound, termCompound, i)
				break
			}
		}
	}
	for i := 0; i+1 < len(aq.words); i++ {
		a, b := aq.words[i], aq.words[i+1]
		if isStopword(a) || isStopword(b) || !isASCIILetters(a) || !isASCIILetters(b) {
			continue
		}
		joined := stem(a + b)
		if !known(joined) {
			continue
		}
		src := -1
		for j := 0; j < nbase; j++ {
			if aq.terms[j].word == aq.words[i] || aq.terms[j].word == aq.words[i+1] {
				src = j
				break
			}
		}
		if src >= 0 {
			derive(joined, weightCompound, termCompound, src)
		}
	}
}

func isASCIILetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 'a' || s[i] > 'z' {
			return false
		}
	}
	return s != ""
}

// edits1 calls f for every string one deletion, transposition,
// substitution or insertion (of a-z) away from w (ASCII). The slice f gets
// is reused: f must copy what it keeps.
func edits1(w string, f func([]byte)) {
	const letters = "abcdefghijklmnopqrstuvwxyz"
	var arr [72]byte
	b := arr[:0]
	if len(w)+1 > len(arr) {
		b = make([]byte, 0, len(w)+1)
	}
	for i := 0; i < len(w); i++ {
		f(append(append(b[:0], w[:i]...), w[i+1:]...))
		if i+1 < len(w) && w[i] != w[i+1] {
			b = append(b[:0], w...)
			b[i], b[i+1] = b[i+1], b[i]
			f(b)
		}
		b = append(b[:0], w...)
		for j := 0; j < len(letters); j++ {
			if letters[j] != w[i] {
				b[i] = letters[j]
				f(b)
			}
		}
	}
	for i := 0; i <= len(w); i++ {
		b = append(append(append(b[:0], w[:i]...), 'a'), w[i:]...)
		for j := 0; j < len(letters); j++ {
			b[i] = letters[j]
			f(b)
		}
	}
}

// namedDocs calls f with the documents whose name key (nameKey) the query
// spells out: every run of 2 to 4 adjacent query words folded together
// ("using the Get IP API" -> "getip", "ipapi", "getipapi", …) and every
// single word written like an identifier. Read lock held; the phrase keys
// are looked up without allocating.
func (ix *Index) namedDocs(aq *analyzedQuery, f func(ids []int32)) {
	var arr [128]byte
	for i := range aq.words {
		b := append(arr[:0], aq.words[i]...)
		for n := 2; n <= 4 && i+n <= len(aq.words); n++ {
			b = append(b, aq.words[i+n-1]...)
			if utf8.RuneCount(b) >= 4 {
				if ids := ix.names[string(b)]; len(ids) > 0 {
					f(ids)
				}
			}
		}
	}
	for _, t := range aq.terms {
		if t.word != "" && t.kind == termWord && looksLikeIdentifier(t.word) {
			if k := nameKey(t.word); k != "" {
				f(ix.names[k])
			}
		}
	}
}
