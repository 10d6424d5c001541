package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// StepSize is SizeBound's name.
const StepSize = "size"

// MaxTextRunes is the longest text string of a tool that reaches a client,
// in runes (see SizeBound). Real descriptions are far shorter: the longest
// of the 9,765 registry tools in examples/catalogs and ../shared/bench has
// 9,809 characters.
const MaxTextRunes = 16384

// DefaultMaxToolBytes is SizeBound's default bound on one tool (config
// security.max_tool_bytes): 128 KiB. The largest tool definition of the
// registry catalogs is 10 KB.
const DefaultMaxToolBytes = 128 << 10

// SizeBound bounds what one upstream tool puts in front of a client and the
// model (a tool's 1 MB title, schema descriptions,
// outputSchema, annotations and _meta reached the model whole through
// describe, 11.5 MB for one tool). Trust: tool text is not trusted
// (docs/security.md).
//
//   - Every text string longer than MaxTextRunes runes is cut to that many
//     (the last one "…"): the title, the description, annotations.title; in
//     inputSchema and outputSchema (at any depth) every "description",
//     "title" and "$comment" string and the strings of "examples"; every
//     string of the members the MCP Tool type does not know (Tool.Extra);
//     and the same strings of an inputSchema an earlier step kept as
//     received (describe's originalInputSchema). A normalisation, with no
//     original kept. Names, "enum"/"const"/"default" values and _meta are
//     never cut (the model sends values back; _meta is not text).
//   - Then a tool whose definition (its compact JSON, unknown members and
//     the kept original inputSchema included: what describe shows of it)
//     is still over Max bytes is quarantined, naming its size, the bound
//     and its largest member.
//
// It runs last, after the steps that may keep an original. Max <= 0 means
// DefaultMaxToolBytes.
type SizeBound struct{ Max int }

func (SizeBound) Name() string { return StepSize }

func (s SizeBound) Apply(t *Tool) error {
	max := s.Max
	if max <= 0 {
		max = DefaultMaxToolBytes
	}
	if len(t.Raw) <= MaxTextRunes && !t.keptOriginal() {
		// No string of it can hold more runes than the tool has bytes, and
		// the steps before only shrink it (SchemaShape adds a few bytes to
		// a schema, and keeps an original: not this case).
		return nil
	}
	cutText := func(field string, s *string) {
		if out, ok := cutRunes(*s); ok {
			t.Normalise(field+" (cut)", nil, fmt.Sprintf("%s cut from %d to %d characters (longer tool text is not passed on)", field, utf8.RuneCountInString(*s), MaxTextRunes))
			*s = out
		}
	}
	cutText("title", &t.Tool.Title)
	cutText("description", &t.Tool.Description)
	if a := t.Tool.Annotations; a != nil && utf8.RuneCountInString(a.Title) > MaxTextRunes {
		c := *a
		cutText("annotations.title", &c.Title)
		t.Tool.Annotations = &c
	}
	cutJSON := func(field string, raw json.RawMessage, walk func(any) int) (json.RawMessage, error) {
		if len(raw) <= MaxTextRunes {
			return raw, nil
		}
		doc, err := decodeKeepNumbers(raw)
		if err != nil {
			return raw, nil // the schema step reports it
		}
		n := walk(doc)
		if n == 0 {
			return raw, nil
		}
		b, err := json.Marshal(doc)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", field, err)
		}
		t.Normalise(field+" (cut)", nil, fmt.Sprintf("%d strings of %s cut to %d characters (longer tool text is not passed on)", n, field, MaxTextRunes))
		return b, nil
	}
	for _, f := range []struct {
		name string
		v    *any
	}{{"inputSchema", &t.Tool.InputSchema}, {"outputSchema", &t.Tool.OutputSchema}} {
		if raw, ok := (*f.v).(json.RawMessage); ok {
			b, err := cutJSON(f.name, raw, cutSchema)
			if err != nil {
				return err
			}
			*f.v = b
		}
	}
	var err error
	if t.Extra, err = cutJSON("extra members", t.Extra, cutValue); err != nil {
		return err
	}
	for i := range t.diags {
		if d := &t.diags[i]; d.Action == Normalised && d.Field == "inputSchema" {
			if d.Original, err = cutJSON("the inputSchema as received", d.Original, cutSchema); err != nil {
				return err
			}
		}
	}

	if len(t.Raw) <= max && !t.keptOriginal() {
		return nil // cutting only shrinks it
	}
	b, err := json.Marshal(t.Tool)
	if err != nil {
		return fmt.Errorf("the definition does not encode: %v", err)
	}
	size, largest, largestSize := len(b)+len(t.Extra), "", 0
	var members map[string]json.RawMessage
	if json.Unmarshal(b, &members) == nil {
		for k, v := range members {
			if len(v) > largestSize {
				largest, largestSize = k, len(v)
			}
		}
	}
	if len(t.Extra) > largestSize {
		largest, largestSize = "its members the MCP Tool type does not know", len(t.Extra)
	}
	for _, d := range t.diags {
		if d.Action == Normalised && d.Field == "inputSchema" {
			size += len(d.Original)
			if len(d.Original) > largestSize {
				largest, largestSize = "the inputSchema as received", len(d.Original)
			}
		}
	}
	if size <= max {
		return nil
	}
	return fmt.Errorf("the definition is %d bytes after its text was cut, over the bound of %d bytes on one tool (security.max_tool_bytes); its largest member is %s (%d bytes)", size, max, largest, largestSize)
}

// decodeKeepNumbers decodes one JSON value with its numbers as written
// (json.Number), for a step that changes strings of a schema and encodes it
// again: an enum, const or bound past float64's exact integers
// (9007199254740993) must not change when a text string beside it does.
// Trailing bytes other than blanks are an error.
func decodeKeepNumbers(raw []byte) (any, error) {
	var doc any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	if dec.InputOffset() != int64(len(bytes.TrimRight(raw, " \t\r\n"))) {
		return nil, errors.New("invalid character after the top-level value")
	}
	return doc, nil
}

// keptOriginal reports whether an earlier step kept the inputSchema as
// received (describe shows it).
func (t *Tool) keptOriginal() bool {
	for _, d := range t.diags {
		if d.Action == Normalised && d.Field == "inputSchema" && len(d.Original) > 0 {
			return true
		}
	}
	return false
}

// cutRunes is s cut to MaxTextRunes runes, the last one "…", and true;
// s and false when it is not longer.
func cutRunes(s string) (string, bool) {
	if len(s) <= MaxTextRunes || utf8.RuneCountInString(s) <= MaxTextRunes {
		return s, false
	}
	n := 0
	for i := range s {
		if n == MaxTextRunes-1 {
			return s[:i] + "…", true
		}
		n++
	}
	return s, false
}

// cutStr is cutRunes for a decoded JSON value: the cut string and 1 when
// v is a string longer than MaxTextRunes runes, else v and 0.
func cutStr(v any) (any, int) {
	if s, ok := v.(string); ok {
		if out, cut := cutRunes(s); cut {
			return out, 1
		}
	}
	return v, 0
}

// cutSchema cuts the text strings of a decoded schema in place (the keys
// HiddenChars strips: "description", "title", "$comment", "examples"
// strings) and returns how many it cut. Values ("enum", "const",
// "default", "required") are left alone; the names of "properties" and the
// other maps of schemas are not text.
func cutSchema(v any) int {
	n := 0
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			n += cutSchema(e)
		}
	case map[string]any:
		for k, val := range x {
			switch k {
			case "description", "title", "$comment":
				if _, ok := val.(string); ok {
					var c int
					x[k], c = cutStr(val)
					n += c
					continue
				}
			case "examples":
				if arr, ok := val.([]any); ok {
					for i, e := range arr {
						var c int
						arr[i], c = cutStr(e)
						n += c
					}
					continue
				}
			case "properties", "patternProperties", "$defs", "definitions", "dependentSchemas":
				if m, ok := val.(map[string]any); ok {
					for _, sub := range m {
						n += cutSchema(sub)
					}
					continue
				}
			case "required", "enum", "const", "default":
				continue // values, not text
			}
			n += cutSchema(val)
		}
	}
	return n
}

// cutValue cuts every string of a member the MCP Tool type does not know
// (HiddenChars counts them all as model-facing) and returns how many.
func cutValue(v any) int {
	n := 0
	switch x := v.(type) {
	case []any:
		for i, e := range x {
			var c int
			x[i], c = cutStr(e)
			n += c + cutValue(e)
		}
	case map[string]any:
		for k, e := range x {
			var c int
			x[k], c = cutStr(e)
			n += c + cutValue(e)
		}
	}
	return n
}
