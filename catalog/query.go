package catalog

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file analyses a search query: which index
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
	termVariant               // another derivational form of a query term's root (expandVariants)
)

// Weights of query terms that are probably argument values rather than a
// description of the task: words of a file path, URL or e-mail address,
// numbers, and words inside quotes. They still count (a path may name the
// thing to act on) but weigh less than the words around them.
const (
	weightPathWord   = 0.25
	weightNumber     = 0.25
	weightQuotedWord = 0.5
	// A verb that frames a request to the assistant rather than naming
	// the task: "show me", "tell me", "help me", "give us", "find me" (see
	// isFramingVerb). It matched tools named show_*, help, get_* first.
	weightFraming = 0.25
	// A word that names the user's own thing rather than a kind of tool:
	// "photos" in "my photos folder", "work" in "our work calendar"
	// (namesInstance).
	weightInstanceName = 0.25
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
	// base term points at itself. src2, when not 0, is 1 + the index of a
	// second base term it stands for (two query words joined into one
	// compound: "zip codes" -> zipcode).
	src  int
	src2 int
	// word is the query word as written (for Scored.Matched).
	word string
	// whole marks the whole lower-cased form of an identifier-like word
	// ("create_issue"): its parts are terms too, so it counts for the
	// match strength only when matched.
	whole bool
	// ti is the term's entry in the index searched (nil when no live
	// document has it), looked up once per query (Index.resolve).
	ti *termInfo
	// segs has bit j set when the term is in the query's clause j (see
	// analyzedQuery.nseg).
	segs uint8
	// verbUse is set when at least one occurrence of the term can be a
	// verb: not a noun by position (see nounPosition). Only such terms
	// say which operation the query asks for (RankParams.VerbMismatch).
	verbUse bool
	// unit is the query word a base term counts for in a hit's match
	// strength (Index.coverage), numbered below analyzedQuery.nunits; -1
	// for none (a CJK bigram across two words, a Japanese particle, an
	// identifier whole, a derived term: it counts through src). A word
	// written as one can give several terms: alt marks a term that spells
	// the whole word another way (a translation of a CJK word, "github"
	// for GitHub): one of them matched is the word matched; the word's
	// other terms are its parts ("get" and "url" of getURLs, the bigrams
	// of a CJK word), of which the matched share counts.
	unit int32
	alt  bool
	// opt marks a term that counts as a query word only for the hits
	// that match it, like an identifier whole (unitOptional).
	opt bool
	// translated marks a word of a query in a told Latin-script language
	// that the word tables translate (expandLatin): its English terms are
	// scored in its place.
	translated bool
	// pair, on one half of an unknown query word split in two (zipcode
	// -> zip, code), is 1 + the index of the other half: the halves stand
	// for the word only together.
	pair int
}

// analyzedQuery is a query split into weighted base terms plus its plain
// word sequence (lower-case letter/digit runs, stopwords kept) for phrases.
// Its slices and map are reused from query to query (pooled with the
// index's scratch).
type analyzedQuery struct {
	terms []queryTerm
	words []string
	// seq is the query's terms in the order written (indexes into
	// terms; the words' own terms, not identifier wholes or derived
	// terms), for the pairs of adjacent terms (RankParams.Pairs).
	seq  []int32
	seen map[string]int // term -> index in terms
	// nseg is the number of clauses of the query that have terms: a
	// request for several things ("Get the weather in Paris. Then book a
	// table for two.") is split at sentence ends and at words that start
	// a further task (see isClauseStart), at most maxSegs clauses.
	nseg int
	// task[j] is set when clause j asks for something (isRequestWord,
	// a question, or a task-start word): a clause that only gives
	// context ("I missed another deadline!") is no task of its own.
	task [maxSegs]bool
	// overview is set when the query's first sentence is followed by one
	// that starts "First, …" (isFirstStep): that sentence sums up the
	// tasks that follow ("I need help planning a fashion event. First,
	// get the school's schedule, then …") and is no task of its own.
	overview bool
	// asks holds the question words of the query that name what the
	// answer is (when, where, who; questionTerms), each with the index of
	// the first term written after it (its clause), for expandQuestions.
	asks []questionWord
	// lang is the Latin-script language the query is written in (an index
	// of latinTabs, latin.go; -1: English or not told).
	lang int
	// nunits is the number of query words (queryTerm.unit); unitMap maps
	// the word numbers of the chunk being read (tokenizeWords) to them.
	nunits  int
	unitMap []int32
}

// maxSegs bounds the clauses of one query (the last one takes the rest):
// 8, the bits of queryTerm.segs. 6 lumped the last tasks of the longest
// multi-task requests (sealtools: 102 of 2,054 queries reached 6) together.
const maxSegs = 8

// maxSeq bounds analyzedQuery.seq: the first 64 terms of a query give its
// word pairs.
const maxSeq = 64

// analyzeQuery tokenizes a query with the index's rules (see
// analyzedQuery.analyze) into a new analyzedQuery.
func analyzeQuery(q string) analyzedQuery {
	var aq analyzedQuery
	aq.analyze(q)
	return aq
}

// analyze resets aq to the analysis of query q: free-text terms plus the
// whole lower-cased identifier of words written like identifiers
// ("create_issue", "math.factorial", "getURLs"), so they meet the whole
// name tokens of the name field. Repeated terms are merged keeping the
// highest weight. Words of paths, URLs, e-mail addresses, numbers and
// quoted values are down-weighted (see weightPathWord).
func (aq *analyzedQuery) analyze(q string) {
	aq.terms, aq.words, aq.seq = aq.terms[:0], aq.words[:0], aq.seq[:0]
	aq.nunits = 0
	aq.lang = latinLanguage(q, 0)
	if aq.seen == nil {
		aq.seen = map[string]int{}
	}
	clear(aq.seen)
	// seg is the current clause; segTerms counts the terms it has, and
	// newSeg asks for a new clause before the next term.
	seg, segTerms, newSeg := 0, 0, false
	// verbOK is whether the current chunk can be a verb (nounPosition);
	// prev is the chunk before it and sentenceStart whether it starts a
	// sentence.
	verbOK, prev, sentenceStart := true, "", true
	// pendingTask marks the clause about to start as a task (a request
	// word came before its first term).
	pendingTask := false
	aq.task = [maxSegs]bool{}
	aq.overview = false
	aq.asks = aq.asks[:0]
	markTask := func() {
		if newSeg && segTerms > 0 && seg+1 < maxSegs {
			pendingTask = true
		} else {
			aq.task[seg] = true
		}
	}
	// add adds term t of written word word with weight w; u is its word
	// number in the chunk (tokenizeWords; -1: none) and alt whether it
	// spells the whole word (queryTerm.unit).
	add := func(t, word string, w float64, whole bool, u int, alt bool) {
		if newSeg && segTerms > 0 && seg+1 < maxSegs {
			seg, segTerms = seg+1, 0
			aq.task[seg] = pendingTask
			pendingTask = false
		}
		newSeg = false
		segTerms++
		if i, ok := aq.seen[t]; ok {
			if w > aq.terms[i].qw {
				aq.terms[i].qw = w
			}
			aq.terms[i].whole = aq.terms[i].whole && whole
			aq.terms[i].segs |= 1 << seg
			aq.terms[i].verbUse = aq.terms[i].verbUse || verbOK
			if aq.terms[i].unit < 0 && u >= 0 { // "GitHub": the identifier whole "github" is also the word's joined form
				aq.terms[i].unit, aq.terms[i].alt = aq.unitFor(u), alt
			}
			aq.terms[i].opt = aq.terms[i].opt && u == unitOptional
			return
		}
		aq.seen[t] = len(aq.terms)
		aq.terms = append(aq.terms, queryTerm{term: t, qw: w, kind: termWord, src: len(aq.terms), word: word, whole: whole, segs: 1 << seg, verbUse: verbOK, unit: aq.unitFor(u), alt: alt, opt: u == unitOptional})
	}
	var quoted [][2]int
	// Not strings.ContainsAny: with a non-ASCII quote in the set it
	// decodes every rune of q and searches the set for it.
	if strings.IndexByte(q, '"') >= 0 || strings.IndexByte(q, '`') >= 0 || strings.Contains(q, "“") {
		quoted = quotedSpans(q)
	}
	for at := 0; at < len(q); {
		// The next whitespace-separated chunk, at byte offset at.
		r, size := utf8.DecodeRuneInString(q[at:])
		if unicode.IsSpace(r) {
			at += size
			continue
		}
		end := at + size
		for end < len(q) {
			r, size = utf8.DecodeRuneInString(q[end:])
			if unicode.IsSpace(r) {
				break
			}
			end += size
		}
		chunk := q[at:end]
		w := 1.0
		if isPathLike(chunk) {
			w = weightPathWord
		} else if inSpans(quoted, at+max(0, strings.IndexFunc(chunk, isWordRune))) { // the span starts after the quote
			w = weightQuotedWord
		}
		at = end
		core := strings.TrimFunc(chunk, func(r rune) bool { return !isWordRune(r) })
		next := nextChunk(q, at) // once per chunk: it is read by four checks
		if w == 1 && namesInstance(prev, next) {
			w = weightInstanceName
		}
		verbOK = !nounPosition(prev, core, next, sentenceStart)
		if sentenceStart && seg == 0 && segTerms > 0 && isFirstStep(chunk, next) {
			aq.overview = true
		}
		if qk := questionKind(core); qk >= 0 {
			aq.asks = append(aq.asks, questionWord{kind: qk, next: len(aq.terms)})
		} else if len(core) >= 4 && asksForList(core, next, chunkAfter(q, at, next)) {
			aq.asks = append(aq.asks, questionWord{kind: listQuestion, next: len(aq.terms)})
		}
		if isClauseStart(chunk, next) {
			newSeg = true
			markTask()
		} else if isRequestWord(core, verbOK) {
			markTask()
		}
		if w == 1 && isFramingVerb(core) && isMeUs(next) {
			w = weightFraming
		}
		if w == 1 && isGreeting(core, chunk, len(aq.words) == 0, next) {
			w = weightFraming
		}
		if core != "" && w == 1 && looksLikeIdentifier(core) {
			add(strings.ToLower(core), core, 1, true, -1, false)
		}
		aq.unitMap = aq.unitMap[:0]
		tokenizeWords(chunk, func(word, t string, u int, alt bool) {
			ww := w
			if isNumber(t) {
				ww = min(ww, weightNumber)
			}
			add(t, word, ww, false, u, alt)
			if len(aq.seq) < maxSeq {
				aq.seq = append(aq.seq, int32(aq.seen[t]))
			}
		})
		forEachRun(chunk, func(run string) { aq.words = append(aq.words, normalizeWord(run)) })
		prev, sentenceStart = chunk, false
		if strings.HasSuffix(chunk, "?") {
			markTask()
		}
		if endsSentence(chunk) {
			newSeg = true
			sentenceStart = true
		}
	}
	aq.nseg = 0
	if len(aq.terms) > 0 {
		aq.nseg = seg + 1
	}
	aq.mergeSmallClauses()
}

// unitFor returns the query word number (queryTerm.unit) of word u of
// the chunk being read, numbering it on first use (-1 for -1).
func (aq *analyzedQuery) unitFor(u int) int32 {
	if u < 0 {
		return -1
	}
	for len(aq.unitMap) <= u {
		aq.unitMap = append(aq.unitMap, -1)
	}
	if aq.unitMap[u] < 0 {
		aq.unitMap[u] = int32(aq.nunits)
		aq.nunits++
	}
	return aq.unitMap[u]
}

// nounPosition reports whether a query word (core, as written; prev is
// the chunk before it, next the chunk after it, sentenceStart whether it
// starts a sentence) stands where English puts a noun, not a verb: after
// a determiner, possessive or number ("the store", "my order", "a book",
// "3 posts"), before "of" ("a list of", "the order of"), or capitalised
// inside a sentence ("New York", "Apple Store"). Many operation verbs are
// also nouns (store, order, book, post, list, change, show, record), and
// as nouns they say nothing about the operation asked for.
func nounPosition(prev, core, next string, sentenceStart bool) bool {
	if len(core) < 2 {
		return false
	}
	if c := core[0]; !sentenceStart && c >= 'A' && c <= 'Z' && core[1] >= 'a' && core[1] <= 'z' {
		return true
	}
	// "of", "of," or "Of" (no allocation: this runs for every query word).
	if len(next) >= 2 && next[0]|0x20 == 'o' && next[1]|0x20 == 'f' && (len(next) == 2 || next[2] < utf8.RuneSelf && !isWordRune(rune(next[2]))) {
		return true
	}
	if strings.HasSuffix(prev, "'s") || prev != "" && prev[0] >= '0' && prev[0] <= '9' && isNumber(prev) {
		return true
	}
	var buf [16]byte
	switch string(lowerWord(&buf, prev)) {
	case "the", "a", "an", "my", "your", "our", "their", "his", "her", "its", "this", "that",
		"these", "those", "each", "every", "another", "which", "whose", "no":
		return true
	}
	return false
}

// minClauseWords is the least number of full-weight words a clause needs
// to count as a task of its own; a smaller one ("Can you help?",
// "Thanks.", "[PDF link]") joins the clause before it (the first one, the
// clause after it).
const minClauseWords = 2

// mergeSmallClauses joins clauses with fewer than minClauseWords words of
// full weight to a neighbour and renumbers the rest.
func (aq *analyzedQuery) mergeSmallClauses() {
	if aq.nseg < 2 {
		return
	}
	var words [maxSegs]int
	for _, t := range aq.terms {
		if t.qw < 1 || t.whole {
			continue
		}
		for j := 0; j < aq.nseg; j++ {
			if t.segs&(1<<j) != 0 {
				words[j]++
			}
		}
	}
	// to[j] is the clause j goes to, numbered among the kept clauses;
	// an overview (analyzedQuery.overview) goes to none: its words count
	// for the whole query only.
	var to [maxSegs]int
	kept := 0
	drop0 := aq.overview
	if drop0 { // an overview of one step is that step's own clause
		steps := 0
		for j := 1; j < aq.nseg; j++ {
			if words[j] >= minClauseWords && aq.task[j] {
				steps++
			}
		}
		drop0 = steps >= 2
	}
	for j := 0; j < aq.nseg; j++ {
		if j == 0 && drop0 {
			to[j] = -1
		} else if words[j] >= minClauseWords && aq.task[j] {
			to[j] = kept
			kept++
		} else {
			to[j] = -1
		}
	}
	if kept == aq.nseg {
		return
	}
	if kept == 0 {
		kept = 1
	}
	for j := 0; j < aq.nseg; j++ {
		if to[j] >= 0 || j == 0 && drop0 {
			continue
		}
		to[j] = 0
		for k := j - 1; k >= 0; k-- { // the kept clause before it
			if to[k] >= 0 && words[k] >= minClauseWords && aq.task[k] {
				to[j] = to[k]
				break
			}
		}
	}
	for i := range aq.terms {
		var m uint8
		for j := 0; j < aq.nseg; j++ {
			if aq.terms[i].segs&(1<<j) != 0 && to[j] >= 0 {
				m |= 1 << to[j]
			}
		}
		aq.terms[i].segs = m
	}
	aq.nseg = kept
}

// endsSentence reports whether a query chunk ends a sentence or clause:
// its last rune is '.', '?', '!', ';' (or the CJK full stop or question
// mark) and it is not a one-letter abbreviation ("e.g.", "U.S.").
func endsSentence(chunk string) bool {
	r, n := utf8.DecodeLastRuneInString(chunk)
	switch r {
	case '?', '!', ';', '。', '？', '！', '；':
		return true
	case '.':
		prev := strings.TrimRightFunc(chunk[:len(chunk)-n], func(r rune) bool { return r == '.' || r == '"' || r == '\'' || r == ')' })
		word := prev[strings.LastIndexFunc(prev, func(r rune) bool { return !isWordRune(r) })+1:]
		return utf8.RuneCountInString(word) > 1 || isNumber(word)
	}
	return false
}

// isClauseStart reports whether a query word (as written: chunk, with its
// punctuation; next is the chunk after it) starts a further task of a
// request: "Additionally, …", "Then …", "Next, …", "Finally …", "Also …",
// "After that, …". "Next" and "plus" count only capitalized or before a
// comma ("next week" is no new task).
func isClauseStart(chunk, next string) bool {
	w := strings.TrimFunc(chunk, func(r rune) bool { return !isWordRune(r) })
	var buf [16]byte
	switch string(lowerWord(&buf, w)) {
	case "additionally", "also", "then", "finally", "lastly", "afterwards", "afterward",
		"furthermore", "moreover", "besides", "secondly", "thirdly":
		return true
	case "next", "plus":
		return w[0] >= 'A' && w[0] <= 'Z' || strings.HasSuffix(chunk, ",")
	case "after":
		n := string(lowerWord(&buf, strings.TrimFunc(next, func(r rune) bool { return !isWordRune(r) })))
		return n == "that" || n == "this" || n == "which"
	case "second", "third", "fourth", "last":
		return w[0] >= 'A' && w[0] <= 'Z' || strings.HasSuffix(chunk, ",")
	case "and":
		// "convert 10 dollars to euros and make a deposit": "and" before
		// a verb in the imperative starts a second task ("salt and
		// pepper", "read and write files" do not split: a clause needs
		// two words of its own, see mergeSmallClauses).
		return isTaskVerb(strings.TrimFunc(next, func(r rune) bool { return !isWordRune(r) }))
	}
	return false
}

// isFirstStep reports whether a query word (as written: chunk, with its
// punctuation; next is the chunk after it) at a sentence start opens the
// first of several steps: "First, …", "Firstly …", "First of all, …",
// "To begin (with), …", "To start, …". The sentence before it then sums
// up the request (analyzedQuery.overview).
func isFirstStep(chunk, next string) bool {
	w := strings.TrimFunc(chunk, func(r rune) bool { return !isWordRune(r) })
	var buf [16]byte
	n := strings.TrimFunc(next, func(r rune) bool { return !isWordRune(r) })
	switch string(lowerWord(&buf, w)) {
	case "first":
		return strings.HasSuffix(chunk, ",") || strings.EqualFold(n, "of")
	case "firstly":
		return true
	case "to":
		return strings.EqualFold(n, "begin") || strings.EqualFold(n, "start")
	}
	return false
}

// isRequestWord reports whether a query word (as written; verb tells
// whether it stands where a verb can) asks for something: a task verb
// used as a verb, or a word that frames a request (need, want, like,
// please, help, can, could, would, let, show, tell, give).
func isRequestWord(w string, verb bool) bool {
	var buf [16]byte
	switch string(lowerWord(&buf, w)) {
	case "need", "want", "like", "please", "help", "can", "could", "would", "let", "wish":
		return true
	}
	return verb && isTaskVerb(w)
}

// isTaskVerb reports whether w (as written) is a common English verb in the
// imperative or infinitive that names a task a tool does ("make",
// "convert", "book", "send"); after "and" it starts a further task. Only
// the base form: "and books" or "and sent" do not start one.
func isTaskVerb(w string) bool {
	var buf [16]byte
	_, ok := taskVerbs[string(lowerWord(&buf, w))]
	return ok
}

// taskVerbs are the verbs of isTaskVerb: general-purpose action verbs of
// requests to tools (look-up, create/change, communicate, compute,
// transact), not taken from any bench set.
var taskVerbs = map[string]struct{}{}

func init() {
	for _, v := range strings.Fields(`add analyze analyse apply archive arrange assess book buy calculate
		call cancel change check choose classify compare compute convert copy count create
		delete deposit design detect download draft draw edit email estimate evaluate
		explain export extract fetch fill find forecast format generate get give identify
		import install invite list load locate log look make map merge monitor move
		notify open optimize order paint pay perform plan play play post predict print
		provide publish purchase query rank rate read recommend record register remind
		remove rename reply report request reserve reset resize retrieve return review run
		save scan schedule search sell send set share show sign simulate solve sort split
		start stop store submit subscribe suggest summarize summarise tell test track
		transfer translate update upload validate verify visualize withdraw write`) {
		taskVerbs[v] = struct{}{}
	}
}

// derive adds a derived query term (a repair, compound or related term)
// unless the query has that term already.
func (aq *analyzedQuery) derive(t string, w float64, kind uint8, src int, ti *termInfo) {
	if _, ok := aq.seen[t]; ok {
		return
	}
	aq.seen[t] = len(aq.terms)
	aq.terms = append(aq.terms, queryTerm{term: t, qw: w, kind: kind, src: src, ti: ti, segs: aq.terms[src].segs, unit: -1})
}

// forEachRun calls f for each run of word runes (letters and digits) of s
// that has no CJK rune; CJK runes separate runs.
func forEachRun(s string, f func(run string)) {
	start := -1
	for i, r := range s {
		if isWordRune(r) && !isCJK(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			f(s[start:i])
			start = -1
		}
	}
	if start >= 0 {
		f(s[start:])
	}
}

// tokenizeWords is tokenizeText that also tells which written word (a
// run of letters, digits and CJK runes) each term came from, and which
// query word it counts for in the match strength (unit, numbered from 0
// in s; alt: the term spells the whole word, see unitSink).
func tokenizeWords(s string, f func(word, term string, unit int, alt bool)) {
	start, unit := -1, 0
	for i, r := range s {
		if isWordRune(r) || isCJK(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			run := s[start:i]
			if !isClitic(s, start, i) { // "user's": the run "s" alone cannot tell
				unit = tokenizeTextUnits(run, nil, func(t string, u int, alt bool) { f(run, t, u, alt) }, unit)
			}
			start = -1
		}
	}
	if start >= 0 && !isClitic(s, start, len(s)) {
		run := s[start:]
		tokenizeTextUnits(run, nil, func(t string, u int, alt bool) { f(run, t, u, alt) }, unit)
	}
}

// quotedSpans returns the byte spans inside matching straight or curly
// quotes or backticks.
//
// A span holding more than half of the query is not a value: it is the
// request itself, quoted (data sets and clients that wrap a whole prompt in
// quotes: 200 of the 1,150 bfcl queries are), and its words keep their
// full weight.
func quotedSpans(q string) [][2]int {
	spans := quotedSpansAll(q)
	n := len(strings.TrimSpace(q))
	return slices.DeleteFunc(spans, func(s [2]int) bool { return 2*(s[1]-s[0]) > n })
}

// quotedSpansAll returns the byte spans inside every pair of quotes of q.
func quotedSpansAll(q string) [][2]int {
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
	// ASCII (most words) in one pass: no CJK, and an upper-case rune is
	// an ASCII capital.
	id := false
	for i := 0; i < len(w); i++ {
		c := w[i]
		if c >= utf8.RuneSelf {
			return looksLikeIdentifierRunes(w)
		}
		id = id || c == '_' || c == '.' || c == '-' || i > 0 && c >= 'A' && c <= 'Z'
	}
	return id
}

// looksLikeIdentifierRunes is looksLikeIdentifier for a word with a
// non-ASCII rune.
func looksLikeIdentifierRunes(w string) bool {
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
	var buf [64]byte
	return string(appendNameKey(buf[:0], s))
}

// appendNameKey appends nameKey(s) to b and returns it, or returns nil
// when the key is "" (under 4 characters).
func appendNameKey(b []byte, s string) []byte {
	n := len(b)
	ascii := true
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf { // ASCII: no decoding, no calls
			if asciiWord[c] {
				if c >= 'A' && c <= 'Z' {
					c += 'a' - 'A'
				}
				b = append(b, c)
			}
			i++
			continue
		}
		ascii = false
		r, size := utf8.DecodeRuneInString(s[i:])
		if isWordRune(r) {
			b = utf8.AppendRune(b, unicode.ToLower(r))
		}
		i += size
	}
	if ascii && len(b)-n < 4 || !ascii && utf8.RuneCount(b[n:]) < 4 {
		return nil
	}
	return b
}

// resolve looks up every term of aq in ix (read lock held) once, so the
// expansion, the scoring and the match strength need no further lookups.
func (ix *Index) resolve(aq *analyzedQuery) {
	for i := range aq.terms {
		aq.terms[i].ti = ix.live1(aq.terms[i].term)
	}
}

// live1 returns the termInfo of t when a live document has t, else nil.
func (ix *Index) live1(t string) *termInfo {
	if ti := ix.terms[t]; ti != nil && ti.df > 0 {
		return ti
	}
	return nil
}

// expand adds the derived terms of an analyzed query for index ix (read
// lock held; aq resolved): an unknown ASCII term (no live document has it)
// of at least 5 letters gets the most frequent index term one edit away (a
// misspelling: "geocding" -> "geocod") or, failing that, its split into
// two known terms ("zipcode" -> "zip", "code"); two adjacent query words
// are joined when the index knows the joined term ("zip codes" ->
// "zipcode").
func (ix *Index) expand(aq *analyzedQuery) {
	nbase := len(aq.terms)
	repairs := 0
	for i := 0; i < nbase; i++ {
		t := aq.terms[i]
		if t.ti != nil || len(t.term) < 5 || !isASCIILetters(t.term) {
			continue
		}
		// Repairs cost ~50 map lookups per letter: at most maxRepairs per
		// query, and none in long queries (a misspelt word matters most
		// in a short one; a long one has other words).
		if repairs == maxRepairs || nbase > maxRepairQueryTerms {
			break
		}
		repairs++
		var best *termInfo
		var bestTerm string
		edits1(t.term, func(c []byte) {
			if !ix.termFilter.mayHaveBytes(c) {
				return
			}
			if ti := ix.terms[string(c)]; ti != nil && (best == nil || ti.df > best.df) { // no allocation
				best, bestTerm = ti, string(c)
			}
		})
		if best != nil && best.df > 0 {
			aq.derive(bestTerm, t.qw*weightFuzzy, termFuzzy, i, best)
			continue
		}
		// The word as written, not its stem: "zipcode" splits as zip +
		// code, where its stem "zipcod" would leave "cod".
		w := t.term
		if lw := normalizeWord(t.word); isASCIILetters(lw) && stem(lw) == t.term {
			w = lw
		}
		for cut := 3; cut <= len(w)-3; cut++ {
			a, b := stem(w[:cut]), stem(w[cut:])
			if isStopword(a) || isStopword(b) {
				continue
			}
			if ta, tb := ix.live1(a), ix.live1(b); ta != nil && tb != nil {
				aq.derive(a, t.qw*weightCompound, termCompound, i, ta)
				aq.derive(b, t.qw*weightCompound, termCompound, i, tb)
				// The halves are parts of the word, not alternatives:
				// "zip" alone (a compress tool) is no zip code.
				ia, ib := aq.seen[a], aq.seen[b]
				if aq.terms[ia].kind == termCompound && aq.terms[ia].src == i {
					aq.terms[ia].pair = ib + 1
				}
				if aq.terms[ib].kind == termCompound && aq.terms[ib].src == i {
					aq.terms[ib].pair = ia + 1
				}
				break
			}
		}
	}
	for i := 0; i+1 < len(aq.words); i++ {
		a, b := aq.words[i], aq.words[i+1]
		if !isASCIILetters(a) || !isASCIILetters(b) || isStopword(a) || isStopword(b) {
			continue
		}
		// a+b stays on the stack (when short) unless the index knows it.
		key := stem(a + b)
		if !ix.termFilter.mayHave(key) {
			continue
		}
		ti := ix.live1(key)
		if ti == nil {
			continue
		}
		joined := strings.Clone(key)
		src, src2 := -1, -1
		for j := 0; j < nbase; j++ {
			if w := aq.terms[j].word; w == a || w == b {
				if src < 0 {
					src = j
				} else if w != aq.terms[src].word && src2 < 0 {
					src2 = j
				}
			}
		}
		if src >= 0 {
			n := len(aq.terms)
			aq.derive(joined, weightCompound, termCompound, src, ti)
			if len(aq.terms) > n && src2 >= 0 {
				aq.terms[n].src2 = src2 + 1 // "zip codes" -> zipcode stands for both words
			}
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
			if len(b) >= 4 && ix.nameFilter.mayHaveBytes(b) && utf8.RuneCount(b) >= 4 {
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

// isFramingVerb reports whether w (as written) is a verb that, followed by
// "me" or "us", frames a request to the assistant ("Show me all
// individuals convicted of…", "Can you help me find…"). Verbs that name a
// task even then ("remind me", "email me", "call me") are not in the list,
// nor "find": "Find me a used bike" asks for a search, the operation that
// tools named find_*/search_* do (held-out half 0.7615 → 0.7618,
// bfcl 0.8814 → 0.8825, +dis 0.8634 → 0.8653; "get me" and "fetch me"
// taken out too lost bfcl 0.0014 on the tuning half, so they stay).
func isFramingVerb(w string) bool {
	var buf [16]byte
	switch string(lowerWord(&buf, w)) {
	case "show", "tell", "give", "help", "get", "provide", "assist", "guide", "fetch":
		return true
	}
	return false
}

// isGreeting reports whether a query word (core; chunk is it with its
// punctuation, first tells whether it is the query's first word, next is
// the chunk after it) greets or thanks the assistant rather than naming
// the task: "Hello, I'm seeking a career path…", "Hey there! …",
// "… thank you!". Real requests often start so, and the word matched tools
// named hello_* or HeyGen first. It counts only at the start of the query,
// before punctuation, or (thank) before "you".
func isGreeting(core, chunk string, first bool, next string) bool {
	var buf [16]byte
	switch string(lowerWord(&buf, core)) {
	case "hello", "hi", "hey", "greetings", "thanks", "thank", "cheers":
	default:
		return false
	}
	if first || len(chunk) > len(core) {
		return true
	}
	n := string(lowerWord(&buf, strings.TrimFunc(next, func(r rune) bool { return !isWordRune(r) })))
	return n == "you" || n == "there" || n == "u"
}

// isMeUs reports whether a query chunk is the pronoun "me" or "us" (any
// case, punctuation around it ignored).
func isMeUs(chunk string) bool {
	var buf [16]byte
	w := string(lowerWord(&buf, strings.TrimFunc(chunk, func(r rune) bool { return !isWordRune(r) })))
	return w == "me" || w == "us"
}

// namesInstance reports whether the query word between prev and next
// names one of the user's things: prev is a possessive ("my", "our",
// "your", "their", "his", "her") and next a software object that people
// name ("folder", "calendar", "channel", …): in "my photos folder" the
// folder is the tool's object and "photos" only which one.
func namesInstance(prev, next string) bool {
	var buf [16]byte
	switch string(lowerWord(&buf, prev)) {
	case "my", "our", "your", "their", "his", "her":
	default:
		return false
	}
	n := normalizeWord(strings.TrimFunc(next, func(r rune) bool { return !isWordRune(r) }))
	_, ok := instanceNouns[stem(n)]
	return ok
}

// instanceNouns are the (stemmed) software objects people give names to.
var instanceNouns = func() map[string]struct{} {
	m := map[string]struct{}{}
	for _, w := range strings.Fields(`folder directory dir file document repository repo project channel
		calendar inbox account drive bucket database table sheet spreadsheet notebook board playlist
		album list workspace server branch`) {
		m[stem(w)] = struct{}{}
	}
	return m
}()

// chunkAfter returns the chunk of q after next, the chunk at or after
// byte offset at ("" at the end).
func chunkAfter(q string, at int, next string) string {
	i := strings.Index(q[at:], next)
	if next == "" || i < 0 {
		return ""
	}
	return nextChunk(q, at+i+len(next))
}

// nextChunk returns the whitespace-separated chunk of q that starts at or
// after byte offset at ("" at the end).
func nextChunk(q string, at int) string {
	rest := strings.TrimLeftFunc(q[at:], unicode.IsSpace)
	if i := strings.IndexFunc(rest, unicode.IsSpace); i >= 0 {
		return rest[:i]
	}
	return rest
}

// lowerWord returns w lower-cased in buf (ASCII letters only), or nil when
// w is longer than buf: the key words the query analysis compares with
// are all short ASCII, and strings.ToLower allocated for every
// capitalised word of every query.
func lowerWord(buf *[16]byte, w string) []byte { return lowerInto(buf[:], w) }

// lowerInto returns w with its ASCII letters lower-cased, written into
// buf, or nil when w is longer than buf.
func lowerInto(buf []byte, w string) []byte {
	if len(w) > len(buf) {
		return nil
	}
	b := buf[:len(w)]
	for i := 0; i < len(w); i++ {
		c := w[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		b[i] = c
	}
	return b
}
