package ingest

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// StepHidden is HiddenChars' name.
const StepHidden = "hidden-characters"

// HiddenChars removes, from every model-facing string of a tool,
// characters a person cannot see but a model reads:
//
//   - the Unicode TAG block U+E0000–U+E007F (invisible copies of ASCII:
//     whole instructions fit in them);
//   - zero-width and invisible characters: U+200B–U+200D, U+2060–U+2064,
//     U+FEFF, U+180E, U+00AD (soft hyphen);
//   - bidi controls: U+200E, U+200F, U+061C, U+202A–U+202E, U+2066–U+2069;
//   - variation selectors U+E0100–U+E01EF and U+FE00–U+FE0E, and U+FE0F
//     except one directly after a visible character (the emoji form of
//     "❤️" stays): sequences of them carry hidden data.
//
// Stripped: the title, the description, annotations.title, and in
// inputSchema and outputSchema (at any depth) every "description",
// "title" and "$comment" string and the strings of "examples"; and every
// string of the members the MCP Tool type does not know (Tool.Extra, e.g.
// "execution": their meaning is unknown, so all count). Strings
// the model must send back exactly cannot be changed without breaking
// calls, so a tool whose name, property names (and the other names of
// "patternProperties", "$defs", "definitions", "dependentSchemas",
// "required"), "enum"/"const"/"default" strings or the member names of
// Tool.Extra hold such characters is quarantined in either mode.
//
// Block true quarantines every tool that holds any (config
// security.hidden_characters = "block"); otherwise each field changed is a
// normalisation diagnostic naming how many characters of which kind were
// removed (no original is kept: describe must not show them).
//
// Trust: tool text is not trusted (docs/security.md).
type HiddenChars struct{ Block bool }

func (HiddenChars) Name() string { return StepHidden }

func (h HiddenChars) Apply(t *Tool) error {
	if rs := hiddenIn(t.Tool.Name); len(rs) > 0 {
		return fmt.Errorf("the name holds %s (a name cannot change without breaking calls)", describeHidden(rs))
	}
	type change struct {
		field string
		rs    []rune
	}
	var changes []change
	text := func(field string, s *string) {
		out, rs := StripHidden(*s)
		if len(rs) > 0 {
			changes = append(changes, change{field, rs})
			*s = out
		}
	}
	title, desc := t.Tool.Title, t.Tool.Description
	text("title", &title)
	text("description", &desc)
	var annTitle string
	if t.Tool.Annotations != nil {
		annTitle = t.Tool.Annotations.Title
		text("annotations.title", &annTitle)
	}
	schemas := map[string]json.RawMessage{}
	for field, v := range map[string]any{"inputSchema": t.Tool.InputSchema, "outputSchema": t.Tool.OutputSchema} {
		raw, _ := v.(json.RawMessage)
		if len(raw) == 0 {
			continue
		}
		doc, err := decodeKeepNumbers(raw) // numbers as written
		if err != nil {
			continue // the schema step reports it
		}
		var rs []rune
		if err := stripSchema(doc, &rs); err != nil {
			return fmt.Errorf("%s: %v", field, err)
		}
		if len(rs) > 0 {
			b, err := json.Marshal(doc)
			if err != nil {
				return fmt.Errorf("%s: %v", field, err)
			}
			changes = append(changes, change{field, rs})
			schemas[field] = b
		}
	}
	var extra json.RawMessage
	if len(t.Extra) > 0 {
		doc, err := decodeKeepNumbers(t.Extra)
		if err != nil {
			return fmt.Errorf("a member the MCP Tool type does not know is not valid JSON: %v", err)
		}
		var rs []rune
		if err := stripValue(doc, &rs); err != nil {
			return err
		}
		if len(rs) > 0 {
			b, err := json.Marshal(doc)
			if err != nil {
				return err
			}
			changes = append(changes, change{"extra members", rs})
			extra = b
		}
	}
	if len(changes) == 0 {
		return nil
	}
	if h.Block {
		var parts []string
		for _, c := range changes {
			parts = append(parts, c.field+" holds "+describeHidden(c.rs))
		}
		return fmt.Errorf("%s (security.hidden_characters = \"block\")", strings.Join(parts, "; "))
	}
	t.Tool.Title, t.Tool.Description = title, desc
	if t.Tool.Annotations != nil && t.Tool.Annotations.Title != annTitle {
		a := *t.Tool.Annotations
		a.Title = annTitle
		t.Tool.Annotations = &a
	}
	if s, ok := schemas["inputSchema"]; ok {
		t.Tool.InputSchema = s
	}
	if s, ok := schemas["outputSchema"]; ok {
		t.Tool.OutputSchema = s
	}
	if extra != nil {
		t.Extra = extra
	}
	for _, c := range changes {
		// Field is not "inputSchema": the original must not come back
		// through describe's originalInputSchema.
		t.Normalise(c.field+" (hidden characters)", nil, "removed "+describeHidden(c.rs)+" from "+c.field)
	}
	return nil
}

// stripSchema strips the model-facing strings of a decoded schema in
// place, collecting what it removed; it fails on hidden characters in
// strings that must stay exact.
func stripSchema(v any, rs *[]rune) error {
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			if err := stripSchema(e, rs); err != nil {
				return err
			}
		}
	case map[string]any:
		for k, val := range x {
			switch k {
			case "description", "title", "$comment":
				if s, ok := val.(string); ok {
					out, r := StripHidden(s)
					*rs = append(*rs, r...)
					x[k] = out
					continue
				}
			case "examples":
				if arr, ok := val.([]any); ok {
					for i, e := range arr {
						if s, ok := e.(string); ok {
							out, r := StripHidden(s)
							*rs = append(*rs, r...)
							arr[i] = out
						}
					}
					continue
				}
			case "properties", "patternProperties", "$defs", "definitions", "dependentSchemas":
				// A map of names to schemas: the names are checked, the
				// values walked as schemas (a property may be called
				// "description").
				if m, ok := val.(map[string]any); ok {
					for name, sub := range m {
						if r := hiddenIn(name); len(r) > 0 {
							return fmt.Errorf("the name %q in %q holds %s (names must stay exact: arguments and $ref use them)", visible(name), k, describeHidden(r))
						}
						if err := stripSchema(sub, rs); err != nil {
							return err
						}
					}
					continue
				}
			case "required", "enum", "const", "default":
				if r := hiddenInValue(val); len(r) > 0 {
					return fmt.Errorf("%q holds %s (values the model sends back must stay exact)", k, describeHidden(r))
				}
				continue // values, not schemas
			}
			if err := stripSchema(val, rs); err != nil {
				return err
			}
		}
	}
	return nil
}

// stripValue strips every string of a member the MCP Tool type does not
// know (its meaning is unknown, so every string counts as model-facing),
// collecting what it removed; a key holding hidden characters fails (keys
// are names a client matches exactly).
func stripValue(v any, rs *[]rune) error {
	switch x := v.(type) {
	case []any:
		for i, e := range x {
			if s, ok := e.(string); ok {
				out, r := StripHidden(s)
				*rs = append(*rs, r...)
				x[i] = out
				continue
			}
			if err := stripValue(e, rs); err != nil {
				return err
			}
		}
	case map[string]any:
		for k, e := range x {
			if r := hiddenIn(k); len(r) > 0 {
				return fmt.Errorf("the member name %q holds %s (names must stay exact)", visible(k), describeHidden(r))
			}
			if s, ok := e.(string); ok {
				out, r := StripHidden(s)
				*rs = append(*rs, r...)
				x[k] = out
				continue
			}
			if err := stripValue(e, rs); err != nil {
				return err
			}
		}
	}
	return nil
}

func hiddenInValue(v any) []rune {
	switch x := v.(type) {
	case string:
		return hiddenIn(x)
	case []any:
		var out []rune
		for _, e := range x {
			out = append(out, hiddenInValue(e)...)
		}
		return out
	case map[string]any:
		var out []rune
		for k, e := range x {
			out = append(out, hiddenIn(k)...)
			out = append(out, hiddenInValue(e)...)
		}
		return out
	}
	return nil
}

// isHidden reports whether r is a hidden character; prev is the rune
// before it (utf8.RuneError at the start).
func isHidden(r, prev rune) bool {
	switch {
	case r >= 0xE0000 && r <= 0xE007F, // TAG block
		r >= 0x200B && r <= 0x200F, // zero-width space/non-joiner/joiner, LRM, RLM
		r >= 0x202A && r <= 0x202E, // bidi embeddings and overrides
		r >= 0x2060 && r <= 0x2064, // word joiner, invisible operators
		r >= 0x2066 && r <= 0x2069, // bidi isolates
		r == 0xFEFF, r == 0x180E, r == 0x061C, r == 0x00AD,
		r >= 0xE0100 && r <= 0xE01EF, // variation selectors supplement
		r >= 0xFE00 && r <= 0xFE0E:
		return true
	case r == 0xFE0F: // emoji presentation: kept once after a visible character
		return prev == utf8.RuneError || isHidden(prev, utf8.RuneError) || prev == 0xFE0F
	}
	return false
}

// StripHidden returns s without its hidden characters (see HiddenChars)
// and the characters it removed, in order. When something is removed,
// each invalid UTF-8 byte becomes U+FFFD; otherwise s is returned as is.
func StripHidden(s string) (string, []rune) {
	var removed []rune
	var b strings.Builder
	prev := utf8.RuneError
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if isHidden(r, prev) {
			if removed == nil {
				b.Grow(len(s))
				b.WriteString(s[:i])
			}
			removed = append(removed, r)
		} else if removed != nil {
			if r == utf8.RuneError && size == 1 {
				// An invalid byte becomes U+FFFD (as JSON encoding makes it
				// anyway), so that bytes around a removed character cannot
				// join into a new one.
				b.WriteRune(utf8.RuneError)
			} else {
				b.WriteString(s[i : i+size])
			}
		}
		prev = r
		i += size
	}
	if removed == nil {
		return s, nil
	}
	return b.String(), removed
}

func hiddenIn(s string) []rune {
	_, rs := StripHidden(s)
	return rs
}

func visible(s string) string { out, _ := StripHidden(s); return out }

// displayName is a tool name safe to print to a person's terminal: quoted
// with escapes when it holds hidden or non-printable characters.
func displayName(s string) string {
	if len(hiddenIn(s)) == 0 && strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) < 0 {
		return s
	}
	return strconv.QuoteToASCII(s)
}

// describeHidden says how many hidden characters of which kinds rs holds,
// e.g. "14 hidden characters (12 TAG, 2 zero-width: U+E0041, U+200B, …)".
func describeHidden(rs []rune) string {
	kinds := map[string]int{}
	seen := map[rune]bool{}
	var firsts []rune
	for _, r := range rs {
		kinds[hiddenKind(r)]++
		if !seen[r] && len(firsts) < 4 {
			seen[r] = true
			firsts = append(firsts, r)
		}
	}
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	sort.Strings(names)
	var ks, cps []string
	for _, k := range names {
		ks = append(ks, fmt.Sprintf("%d %s", kinds[k], k))
	}
	for _, r := range firsts {
		cps = append(cps, fmt.Sprintf("U+%04X", r))
	}
	more := ""
	if len(seen) < countDistinct(rs) {
		more = ", …"
	}
	noun := "hidden characters"
	if len(rs) == 1 {
		noun = "hidden character"
	}
	return fmt.Sprintf("%d %s (%s: %s%s)", len(rs), noun, strings.Join(ks, ", "), strings.Join(cps, ", "), more)
}

func countDistinct(rs []rune) int {
	m := map[rune]bool{}
	for _, r := range rs {
		m[r] = true
	}
	return len(m)
}

func hiddenKind(r rune) string {
	switch {
	case r >= 0xE0000 && r <= 0xE007F:
		return "TAG"
	case r == 0x200E || r == 0x200F || r == 0x061C || r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069:
		return "bidi"
	case r >= 0xE0100 && r <= 0xE01EF || r >= 0xFE00 && r <= 0xFE0F:
		return "variation selector"
	default:
		return "zero-width"
	}
}
