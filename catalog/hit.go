package catalog

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxHitDescription is the longest description in a hit, in runes; longer
// descriptions are cut and end with "…" (SPEC §4: hits are compact and safe
// to put back into the prompt; DESIGN "Trust": descriptions shown bounded).
const MaxHitDescription = 200

// MakeHit builds the compact search hit of one entry (SPEC §4 search()).
//
//   - Name is e.Exposed; Source is e.Source(); Score is score.
//   - Description has its white space collapsed to single spaces and is cut
//     to MaxHitDescription runes with a trailing "…".
//   - Input is "unknown" for an untrusted entry (its schema is never walked
//     here; it is deferred until describe), and for a trusted entry whose
//     input schema does not render completely within b; otherwise it is
//     RenderInput's signature. A trusted entry without an input schema
//     gets "{}".
//   - Output is set only for a trusted entry whose output schema renders
//     completely within b (RenderOutput: open schemas get no hint).
func MakeHit(e *Entry, score float64, b Bounds) Hit {
	h := Hit{
		ID:          e.ID,
		Name:        e.Exposed,
		Description: ShortDescription(e.Description, MaxHitDescription),
		Source:      e.Source(),
		Upstream:    e.Upstream,
		Input:       "unknown",
		Score:       score,
	}
	if !e.Trusted {
		return h
	}
	if len(strings.TrimSpace(string(e.InputSchema))) == 0 {
		h.Input = "{}"
	} else if sig, ok := RenderInput(e.InputSchema, b); ok {
		h.Input = sig
	}
	if len(e.OutputSchema) > 0 {
		if sig, ok := RenderOutput(e.OutputSchema, b); ok {
			h.Output = sig
		}
	}
	return h
}

// Hit is MakeHit with the result cached in the snapshot, per entry and
// bounds: rendering a trusted schema costs about 12 µs, and a search
// returns up to 50 hits. The cache lives as long as the snapshot, which is
// replaced on every catalog change.
func (s *Snapshot) Hit(e *Entry, score float64, b Bounds) Hit {
	key := hitKey{e, b}
	if h, ok := s.hits.Load(key); ok {
		hit := h.(Hit)
		hit.Score = score
		return hit
	}
	hit := MakeHit(e, 0, b)
	s.hits.Store(key, hit)
	hit.Score = score
	return hit
}

// Match levels of a search hit (Hit.Match: a
// model needs to know when the catalog has nothing that fits, so it can
// rephrase or say so instead of calling a tool that shares one word).
const (
	MatchStrong  = "strong"  // the tool matches most of the query, or the query names it
	MatchPartial = "partial" // it matches some of the query's informative words
	MatchWeak    = "weak"    // it shares little with the query
)

// Bands of Scored.Strength (the idf-weighted share of the query matched).
const (
	strongStrength  = 0.6
	partialStrength = 0.3
)

// MatchLevel bands a match strength (Scored.Strength, 0..1): "strong" at
// 0.6 or more, "partial" at 0.3 or more, else "weak".
func MatchLevel(strength float64) string {
	switch {
	case strength >= strongStrength:
		return MatchStrong
	case strength >= partialStrength:
		return MatchPartial
	}
	return MatchWeak
}

// SearchNote is the note that goes with search hits when none is a strong
// match (hits in rank order, Match set): "" when one of them is strong
// (the first or a later one: the ranking may put a partial hit before a
// strong one); otherwise a sentence saying so, naming the words the best
// hit matched, and NoStrongAdvice.
func SearchNote(hits []Hit) string {
	if len(hits) == 0 {
		return "no match: nothing in the catalog matches this query. Rephrase it with other words for the action and the object (e.g. \"send email\" instead of an app name), or tell the user that no available tool fits."
	}
	for _, h := range hits {
		if h.Match == MatchStrong {
			return ""
		}
	}
	words := "few of its words"
	if hits[0].Matched != "" {
		words = "only " + strings.Join(quoteAll(strings.Split(hits[0].Matched, ", ")), ", ")
	}
	return "no strong match: the best hit matches " + words + " of the query. " + NoStrongAdvice
}

// NoStrongAdvice is the last sentence of a "no strong match" note
// (SearchNote). A hit that is not strong is still often the right tool
// (on the labelled sets, one of the first five hits is right for 71–100 %
// of the requests that get this note, 43–100 % among 8,010 registry
// tools), so the model is told to check the hits before it calls one or
// gives up, not that none fits.
const NoStrongAdvice = "Check a hit's description before calling it: if none does what was asked, rephrase the query with other words, or tell the user that no available tool fits."

func quoteAll(ws []string) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = `"` + w + `"`
	}
	return out
}

type hitKey struct {
	e *Entry
	b Bounds
}

// ShortDescription collapses runs of white space (and control characters)
// in s to single spaces, trims it, and cuts it to at most max runes, the
// last of which is "…" when it was cut. max <= 0 means no cut.
func ShortDescription(s string, max int) string {
	out := make([]rune, 0, min(len(s), max+1))
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == utf8.RuneError {
			space = len(out) > 0
			continue
		}
		if space {
			out = append(out, ' ')
			space = false
		}
		out = append(out, r)
		if max > 0 && len(out) > max {
			break // enough to know it must be cut
		}
	}
	if max > 0 && len(out) > max {
		out = out[:max-1]
		for len(out) > 0 && out[len(out)-1] == ' ' {
			out = out[:len(out)-1]
		}
		out = append(out, '…')
	}
	return string(out)
}
