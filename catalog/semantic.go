package catalog

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"sort"
	"strings"
	"sync"
)

// The semantic signal: a related-terms table built from WordNet
// 3.0 (Debian's wordnet-base; licence in LICENSE.wordnet beside this file)
// by scripts/semantic/gen.go, shipped in the binary (1.2 MB gzip). A query
// term adds its related terms that the index knows as derived query terms
// (kind termRelated) with weight table weight × RankParams.Semantic, so
// the final score is a linear mix of the lexical BM25F score and a BM25F
// score over the related terms. No network at run time.

//go:embed related_wordnet.gz
var relatedWordNet []byte

// relatedGloVe is the second table: each word's nearest words by the
// cosine similarity of GloVe word vectors (scripts/gen-wordvec.sh;
// licence in LICENSE.glove beside this file), words used in the same
// contexts (flight: airline, airport; diet: calorie, nutrition) that
// WordNet's synonyms and hypernyms do not reach.
//
//go:embed related_glove.gz
var relatedGloVe []byte

// gloveWeight scales the GloVe table's weights (cosine similarity) against
// WordNet's (1 for a synonym).
const gloveWeight = 0.5

// relTable is the merged related-terms table in a compact form: every
// word once in one string (vocab entries are substrings of it), the
// relations of all words in one array. About 5 MiB of heap for the ~75,000
// words and ~405,000 relations of both tables (a map of per-word slices of
// strings took 24 MiB), parsed in about a third of the time.
type relTable struct {
	vocab []string // word id → word (substrings of one string)
	keys  []uint32 // ids of the words that have relations, sorted by word
	start []uint32 // relations of keys[i]: rels[start[i]:start[i+1]]
	rels  []relRef // strongest first within a word
}

// relRef is one relation: the related word's id and its weight in
// twentieths (WordNet tenths × 2, GloVe tenths × 2 × gloveWeight), so
// weight() gives the same float64 the table's tenths × scale give.
type relRef struct {
	id uint32
	w  uint16
}

func (r relRef) weight() float64 { return float64(r.w) / 20 }

// of returns word's relations, strongest first (nil when it has none).
func (t *relTable) of(word string) []relRef {
	i := sort.Search(len(t.keys), func(i int) bool { return t.vocab[t.keys[i]] >= word })
	if i == len(t.keys) || t.vocab[t.keys[i]] != word {
		return nil
	}
	return t.rels[t.start[i]:t.start[i+1]]
}

// word returns the word of a relation.
func (t *relTable) word(r relRef) string { return t.vocab[r.id] }

var (
	relatedOnce  sync.Once
	relatedTable *relTable
)

// related returns the table, parsing it once (about 75,000 words).
func related() *relTable {
	relatedOnce.Do(func() {
		b := relBuilder{ids: map[string]uint32{}}
		b.groups(toolVerbGroups, toolVerbWeight)
		b.groups(toolNounGroups, toolVerbWeight)
		b.kinds(kindWords, toolVerbWeight)
		b.read(relatedWordNet, 2)
		b.read(relatedGloVe, 2*gloveWeight)
		relatedTable = b.table()
	})
	return relatedTable
}

// relBuilder collects both tables before they are packed into a relTable.
type relBuilder struct {
	ids   map[string]uint32
	words []string
	lists [][]relRef // by word id
}

func (b *relBuilder) id(w []byte) uint32 {
	if id, ok := b.ids[string(w)]; ok {
		return id
	}
	id := uint32(len(b.words))
	s := string(w)
	b.ids[s] = id
	b.words = append(b.words, s)
	b.lists = append(b.lists, nil)
	return id
}

// read adds a gzip-compressed table ("word rel:weight …", weights in
// tenths; scale turns tenths into twentieths); a relation already there
// keeps its larger weight.
func (b *relBuilder) read(table []byte, scale float64) {
	zr, err := gzip.NewReader(bytes.NewReader(table))
	if err != nil {
		return // a build without the table
	}
	sc := bufio.NewScanner(zr)
	for sc.Scan() {
		fs := bytes.Fields(sc.Bytes())
		if len(fs) < 2 {
			continue
		}
		key := b.id(fs[0])
		rs := b.lists[key]
		for _, f := range fs[1:] {
			i := bytes.LastIndexByte(f, ':')
			if i <= 0 {
				continue
			}
			w := 0
			for _, c := range f[i+1:] {
				w = w*10 + int(c-'0')
			}
			rs = addRel(rs, relRef{b.id(f[:i]), uint16(float64(w) * scale)})
		}
		b.lists[key] = rs
	}
}

// toolVerbGroups are the verbs that tool names and requests use for the
// same operation (one group a line; stemmed like index terms when read).
// WordNet and GloVe relate general English senses ("find": encounter,
// happen, breakthrough; nothing from "find" to "search", nor between
// "save" and "write"), not the operations of an API, where a request
// says "find" or "look up" and the tool is named search_*, or says "save"
// and the tool is write_file. The groups are the usual verbs of CRUD and
// messaging APIs, not taken from any bench set.
var toolVerbGroups = []string{
	"find search lookup look seek locate query",
	"get fetch retrieve obtain read load",
	"show display list view",
	"save write store persist",
	"create make add new",
	"delete remove erase",
	"update edit modify change",
	"run execute launch invoke",
	"stop cancel terminate kill",
	"buy purchase order",
	"book reserve",
	"send post deliver",
}

// toolNounGroups are the nouns that tools and requests use for the same
// thing in software (one group a line, related both ways like
// toolVerbGroups). WordNet's senses are general English ("folder": a
// booklet; "repo": a repurchase agreement), so a request for "the files in
// my photos folder" did not reach a tool that lists a directory. The
// groups are the everyday names of the objects of file, mail, calendar,
// chat, code and media APIs, not taken from any bench set.
var toolNounGroups = []string{
	"folder directory dir",
	"file document doc",
	"photo picture image pic",
	"email mail inbox",
	"message chat dm",
	"repository repo",
	"issue ticket bug",
	"meeting event appointment",
	"song track music",
	"movie film",
	"spreadsheet sheet workbook",
	"website site webpage",
}

// readVerbGroups is how many of toolVerbGroups (the first ones: find, get,
// show) only read or look up; keep them first when editing the list: a request for one of them is served by a tool of another
// (find the weather: get_weather, search_weather, show_weather).
const readVerbGroups = 3

// readVerbs is the mask of the read-only groups.
const readVerbs = 1<<readVerbGroups - 1

// toolVerbGroup maps a stemmed verb of toolVerbGroups to 1 + its group.
var toolVerbGroup = func() map[string]uint8 {
	m := map[string]uint8{}
	for i, g := range toolVerbGroups {
		for _, w := range strings.Fields(g) {
			m[stem(w)] = uint8(i + 1)
		}
	}
	return m
}()

// nameVerb returns 1 + the toolVerbGroups group of the first part of a
// tool name ("search_nodes": find…; "createEntities": create…) or, when
// that is none, of the first part after its last dot ("hotel.book":
// book…), or 0.
func nameVerb(name string) uint8 {
	return nameVerbFirst(name, firstVerb(name))
}

// nameVerbFirst is nameVerb given v, firstVerb(name) (the index build
// takes it from the name's first term, already tokenized).
func nameVerbFirst(name string, v uint8) uint8 {
	if v != 0 {
		return v
	}
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		return firstVerb(name[i+1:]) // "hotel_room_pricing.get", "hotel.book"
	}
	return 0
}

// firstVerb is the toolVerbGroups group (1-based) of the first word of
// s, or 0.
func firstVerb(s string) uint8 {
	var v uint8
	first := true
	tokenizeText(s, func(t string) {
		if first {
			v = toolVerbGroup[t]
			first = false
		}
	})
	return v
}

// verbMismatch reports whether a tool whose name starts with a verb of
// group v (1-based; 0: none) does another operation than every verb of
// the query (mask: bit g-1 for each group g the query asks for): its
// group is not asked for, and it is not the case that both it and an
// asked group only read.
func verbMismatch(v uint8, mask uint16) bool {
	if v == 0 || mask == 0 || mask&(1<<(v-1)) != 0 {
		return false
	}
	return !(int(v) <= readVerbGroups && mask&readVerbs != 0)
}

// noVerbAsked is the verb mask of a query that asks for no operation
// verb at all (no bit of toolVerbGroups can be all ones).
const noVerbAsked = ^uint16(0)

// destructiveVerb reports whether a tool's name verb (1 + its
// toolVerbGroups group) deletes or stops something.
func destructiveVerb(v uint8) bool {
	return v != 0 && destructiveGroups&(1<<(v-1)) != 0
}

// destructiveGroups is the mask of the groups of delete and stop.
var destructiveGroups = uint16(1)<<(toolVerbGroup["delet"]-1) | uint16(1)<<(toolVerbGroup["stop"]-1)

// verbMask returns the operation verbs the query asks for: bit g-1 for
// each toolVerbGroups group g of a full-weight query word used as a verb
// (queryTerm.verbUse: "store this note" asks to save, "the store hours"
// does not).
func (aq *analyzedQuery) verbMask() uint16 {
	var m uint16
	for _, a := range aq.asks {
		if a.kind == listQuestion { // "which files are …": a listing, which only reads
			m |= 1 << (toolVerbGroup["list"] - 1)
		}
	}
	for i := range aq.terms {
		if qt := &aq.terms[i]; qt.kind == termWord && qt.qw >= 1 && qt.verbUse {
			if g := toolVerbGroup[qt.term]; g != 0 {
				m |= 1 << (g - 1)
			}
		}
	}
	return m
}

// toolVerbWeight is the weight of a tool-verb relation, in twentieths.
const toolVerbWeight = 20

// groups adds every pair of words of each group as related, both ways.
func (b *relBuilder) groups(groups []string, w uint16) {
	for _, g := range groups {
		ws := strings.Fields(g)
		for _, x := range ws {
			key := b.id([]byte(stem(x)))
			for _, y := range ws {
				if y != x {
					b.lists[key] = addRel(b.lists[key], relRef{b.id([]byte(stem(y))), w})
				}
			}
		}
	}
}

// kinds relates each word of a kindWords line to the line's first word
// (one way: "euro" reaches "currency", not the reverse), stemmed.
func (b *relBuilder) kinds(lines []string, w uint16) {
	for _, l := range lines {
		ws := strings.Fields(l)
		kind := b.id([]byte(stem(ws[0])))
		for _, x := range ws[1:] {
			key := b.id([]byte(stem(x)))
			b.lists[key] = addRel(b.lists[key], relRef{kind, w})
		}
	}
}

// kindWords name a kind (the first word of a line) by one of its members:
// a request says "100 euro in USD" or "12 miles in kilometers" where the
// tool says "currency" or "unit". WordNet relates a currency name to its
// country's monetary unit, not to "currency", and "yen" first to
// "yearn". The members are ISO 4217 codes, the names of widely traded
// currencies and the common units of length, mass, volume and
// temperature, not taken from any bench set; words that are also common
// English words (won, real, rand, pound, mark, meter, foot) are left out.
var kindWords = []string{
	"currency dollar euro yen usd eur gbp jpy cny rmb inr chf cad aud rupee yuan renminbi franc peso ruble rouble krona krone kronor zloty forint lira baht ringgit rupiah dirham riyal dinar shekel sterling",
	"unit kilometer kilometre mile centimeter centimetre millimeter millimetre inch feet yard ounce gram kilogram milligram liter litre milliliter gallon celsius fahrenheit kelvin",
	"temperature celsius fahrenheit kelvin",
}

// addRel adds r to rs, or raises the weight of the same word in rs.
func addRel(rs []relRef, r relRef) []relRef {
	for i := range rs {
		if rs[i].id == r.id {
			rs[i].w = max(rs[i].w, r.w)
			return rs
		}
	}
	return append(rs, r)
}

// table packs the collected relations: one string for all words, one
// array for all relations (strongest first per word, ties in table order).
func (b *relBuilder) table() *relTable {
	n, size := 0, 0
	for _, w := range b.words {
		size += len(w)
	}
	var sb strings.Builder
	sb.Grow(size)
	for _, w := range b.words {
		sb.WriteString(w)
	}
	all := sb.String()
	t := &relTable{vocab: make([]string, len(b.words))}
	off := 0
	for i, w := range b.words {
		t.vocab[i] = all[off : off+len(w)]
		off += len(w)
	}
	for id, rs := range b.lists {
		if len(rs) > 0 {
			t.keys = append(t.keys, uint32(id))
			n += len(rs)
		}
	}
	sort.Slice(t.keys, func(i, j int) bool { return t.vocab[t.keys[i]] < t.vocab[t.keys[j]] })
	t.start = make([]uint32, 0, len(t.keys)+1)
	t.rels = make([]relRef, 0, n)
	for _, id := range t.keys {
		rs := b.lists[id]
		sort.SliceStable(rs, func(i, j int) bool { return rs[i].w > rs[j].w })
		t.start = append(t.start, uint32(len(t.rels)))
		t.rels = append(t.rels, rs...)
	}
	t.start = append(t.start, uint32(len(t.rels)))
	return t
}

// Bounds of the expansion, for latency: related terms per query term and
// per query, and the largest share of documents a related term may have
// (a related term as common as "get" adds cost and no meaning).
const (
	maxRelatedPerTerm  = 4
	maxRelatedPerQuery = 16
	maxRelatedDFShare  = 0.05
	relatedLongQuery   = 24
)

// expandRelated adds, for each base term of the query, up to
// maxRelatedPerTerm related terms of the table that live documents have
// (read lock held).
func (ix *Index) expandRelated(aq *analyzedQuery) {
	tab := related()
	nbase := len(aq.terms)
	maxDF := int32(max(1, float64(ix.live)*maxRelatedDFShare))
	total := 0
	budget := maxRelatedPerQuery
	if nbase > relatedLongQuery {
		budget = 0
	}
	for i := 0; i < nbase && total < budget; i++ {
		t := aq.terms[i]
		if t.kind != termWord {
			continue
		}
		added := 0
		for _, r := range tab.of(t.term) {
			if added == maxRelatedPerTerm || total == budget {
				break
			}
			rt := tab.word(r)
			if _, ok := aq.seen[rt]; ok {
				continue
			}
			if !ix.termFilter.mayHave(rt) {
				continue
			}
			ti := ix.terms[rt]
			if ti == nil || ti.df <= 0 || ti.df > maxDF {
				continue
			}
			total++
			added++
			aq.derive(rt, t.qw*r.weight(), termRelated, i, ti)
		}
	}
}

// questionWord is a question word of a query (analyzedQuery.asks): its
// questionTerms row and the index of the first query term written after
// it.
type questionWord struct {
	kind int
	next int
}

// questionTerms are what a question word asks for, as tool text names it:
// "When was the Treaty of Lisbon signed?" wants a date tool, "Where is
// …" a location, "Who was …" a person. The words are stopwords, so without
// this the question's own kind was lost.
var questionTerms = [...][]string{
	{"date", "time", "year"},
	{"location", "place", "address"},
	{"person", "people", "name"},
	{"list"},
}

// questionKind returns the questionTerms row of a query word (as written,
// trimmed), -1 for none.
func questionKind(w string) int {
	if len(w) < 3 || len(w) > 5 {
		return -1
	}
	var buf [16]byte
	switch string(lowerWord(&buf, w)) {
	case "when":
		return 0
	case "where":
		return 1
	case "who", "whom":
		return 2
	}
	return -1
}

// listQuestion is the questionTerms row of a question that asks for a
// listing (asksForList).
const listQuestion = 3

// asksForList reports whether a question word (as written) followed by
// next and the chunk after it asks which things of a kind there are:
// "which files are …", "what tools are …", "what's in …" ask for a
// listing (questionTerms' "list").
func asksForList(w, next, after string) bool {
	var buf [16]byte
	switch string(lowerWord(&buf, w)) {
	case "what's", "whats":
		n := string(lowerWord(&buf, strings.TrimFunc(next, func(r rune) bool { return !isWordRune(r) })))
		return n == "in" || n == "inside"
	case "which", "what":
	default:
		return false
	}
	n := strings.TrimFunc(next, func(r rune) bool { return !isWordRune(r) })
	a := string(lowerWord(&buf, strings.TrimFunc(after, func(r rune) bool { return !isWordRune(r) })))
	return len(n) > 3 && n[len(n)-1] == 's' && !strings.HasSuffix(n, "ss") && (a == "are" || a == "exist" || a == "do")
}

// expandQuestions adds, for each question word of the query, the terms
// of its questionTerms row that the index knows, as related terms (scored
// at the semantic weight) in the clause of the words after it. They
// stand for no query word: each is its own source, so a hit's match
// strength does not count them.
func (ix *Index) expandQuestions(aq *analyzedQuery) {
	for _, a := range aq.asks {
		if a.next >= len(aq.terms) || aq.terms[a.next].kind != termWord {
			continue
		}
		segs := aq.terms[a.next].segs
		for _, w := range questionTerms[a.kind] {
			t := stem(w)
			if _, ok := aq.seen[t]; ok {
				continue
			}
			ti := ix.live1(t)
			if ti == nil || ti.df > int32(max(1, float64(ix.live)*maxRelatedDFShare)) {
				continue
			}
			aq.seen[t] = len(aq.terms)
			aq.terms = append(aq.terms, queryTerm{term: t, qw: 1, kind: termRelated, src: len(aq.terms), ti: ti, segs: segs, unit: -1})
		}
	}
}
