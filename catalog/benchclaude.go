package catalog

import (
	"sort"
	"strings"
)

// claudeSearch is the bench's third baseline: a re-implementation of the
// keyword search of Claude Code's ToolSearch tool over deferred MCP tools,
// built from its documented behaviour. Each tool is named
// "mcp__<server>__<tool>"; its name parts are the words between "__" and
// "_". The query is lower-cased and split on white space (punctuation stays
// on the words); each query word adds, per tool:
//
//   - 12 when it equals a name part, else 6 when a name part contains it;
//   - 3 when the tool has scored nothing so far and its name (with "_" read
//     as spaces) contains it;
//   - 4 when it is a whole word (JavaScript's \b, ASCII word characters) of
//     the tool's search hint (_meta["anthropic/searchHint"], white space
//     collapsed);
//   - 2 when it is a whole word of the tool's description (lower-cased).
//
// No idf, no stemming, no stop words; tools scoring 0 are dropped, the rest
// sorted by score (ties in tool order) and the first claudeDefaultLimit
// returned. A query equal to a tool's name returns that tool alone.
// Bench-only: the proxy never uses it.
type claudeSearch struct {
	ids   []string
	names map[string]int // lower-case "mcp__server__tool" -> tool
	// The index of the scorer's tests: tools by name part, the distinct
	// name parts (for "a part contains the word"), and tools by the ASCII
	// word runs of their description and of their hint (a query word made
	// of word characters matches \bword\b exactly where it is a run).
	partDocs  map[string][]int32
	partList  []string
	descWords map[string][]int32
	hintWords map[string][]int32
	desc      []string // lower-case description
	hint      []string // lower-case search hint ("" for none)
	acc       []int
	stamp     []int // per tool: the query word number that last scored its name
	// inside caches, per query word, the tools with a name part that
	// contains it but is not it (query words repeat across a bench).
	inside map[string][]int32
}

// claudeDefaultLimit is ToolSearch's default max_results.
const claudeDefaultLimit = 5

// newClaudeSearch indexes entries; hints, when not nil, holds each entry's
// search hint (by index).
func newClaudeSearch(entries []*Entry, hints []string) *claudeSearch {
	c := &claudeSearch{names: map[string]int{}, partDocs: map[string][]int32{}, descWords: map[string][]int32{}, hintWords: map[string][]int32{}}
	addWords := func(m map[string][]int32, s string, d int32) {
		seen := map[string]bool{}
		for _, w := range jsWordRuns(s) {
			if !seen[w] {
				seen[w] = true
				m[w] = append(m[w], d)
			}
		}
	}
	for i, e := range entries {
		d := int32(i)
		name := strings.ToLower("mcp__" + benchSanitize(e.Upstream) + "__" + e.Name)
		if _, ok := c.names[name]; !ok {
			c.names[name] = i
		}
		seen := map[string]bool{}
		for _, p := range strings.Split(strings.TrimPrefix(name, "mcp__"), "__") {
			for _, q := range strings.Split(p, "_") {
				if q != "" && !seen[q] {
					seen[q] = true
					if c.partDocs[q] == nil {
						c.partList = append(c.partList, q)
					}
					c.partDocs[q] = append(c.partDocs[q], d)
				}
			}
		}
		h := ""
		if hints != nil {
			h = strings.ToLower(strings.Join(strings.Fields(hints[i]), " "))
		}
		desc := strings.ToLower(e.Description)
		addWords(c.descWords, desc, d)
		addWords(c.hintWords, h, d)
		c.ids = append(c.ids, e.ID)
		c.desc = append(c.desc, desc)
		c.hint = append(c.hint, h)
	}
	c.acc = make([]int, len(entries))
	c.stamp = make([]int, len(entries))
	return c
}

// search returns the ids of the top limit tools for q, best first. (The
// scorer's fallback of 3 points for a word inside the name read with
// spaces never fires: such a word is inside a name part and has scored 6.)
func (c *claudeSearch) search(q string, limit int) []string {
	ql := strings.TrimSpace(strings.ToLower(q))
	if i, ok := c.names[ql]; ok {
		return []string{c.ids[i]}
	}
	var touched []int32
	add := func(d int32, v int) {
		if c.acc[d] == 0 {
			touched = append(touched, d)
		}
		c.acc[d] += v
	}
	for k, t := range strings.Fields(ql) {
		word := k + 1 // stamps: this word scored the tool's name already
		for _, d := range c.partDocs[t] {
			add(d, 12)
			c.stamp[d] = word
		}
		for _, d := range c.insideParts(t) {
			if c.stamp[d] != word {
				add(d, 6)
				c.stamp[d] = word
			}
		}
		c.wholeWord(t, c.hintWords, c.hint, func(d int32) { add(d, 4) })
		c.wholeWord(t, c.descWords, c.desc, func(d int32) { add(d, 2) })
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
		if len(out) < limit {
			out = append(out, c.ids[d])
		}
		c.acc[d] = 0
	}
	clear(c.stamp)
	return out
}

// insideParts returns the tools with a name part that contains t and is
// not t (a tool may be listed more than once).
func (c *claudeSearch) insideParts(t string) []int32 {
	if ds, ok := c.inside[t]; ok {
		return ds
	}
	var ds []int32
	for _, p := range c.partList {
		if p != t && strings.Contains(p, t) {
			ds = append(ds, c.partDocs[p]...)
		}
	}
	if c.inside == nil {
		c.inside = map[string][]int32{}
	}
	c.inside[t] = ds
	return ds
}

// wholeWord calls f for each tool whose text (texts[d], indexed by its
// word runs in words) matches \bt\b.
func (c *claudeSearch) wholeWord(t string, words map[string][]int32, texts []string, f func(int32)) {
	runs := jsWordRuns(t)
	if len(runs) == 1 && runs[0] == t {
		for _, d := range words[t] {
			f(d)
		}
		return
	}
	if len(runs) == 0 {
		return // only punctuation: \b cannot match around it in most texts; ignored
	}
	// A word with punctuation: a tool can match only if it has its word
	// runs; check those with the pattern itself.
	for _, d := range words[runs[0]] {
		if jsWholeWord(texts[d], t) {
			f(d)
		}
	}
}

// jsWordRuns returns the maximal runs of ASCII word characters of s.
func jsWordRuns(s string) []string {
	var out []string
	start := -1
	for i := 0; i <= len(s); i++ {
		if i < len(s) && jsWord(s[i]) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			out = append(out, s[start:i])
			start = -1
		}
	}
	return out
}

func jsWord(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// jsWholeWord reports whether the regular expression \bterm\b (JavaScript,
// no "u" flag: word characters are ASCII letters, digits and "_") matches
// somewhere in s.
func jsWholeWord(s, term string) bool {
	if term == "" {
		return false
	}
	boundary := func(i int) bool { // between s[i-1] and s[i]
		a := i > 0 && jsWord(s[i-1])
		b := i < len(s) && jsWord(s[i])
		return a != b
	}
	for from := 0; ; {
		k := strings.Index(s[from:], term)
		if k < 0 {
			return false
		}
		at := from + k
		if boundary(at) && boundary(at+len(term)) {
			return true
		}
		from = at + 1
	}
}
