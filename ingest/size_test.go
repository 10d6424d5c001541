package ingest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestSizeBoundCutsText: text strings past MaxTextRunes
// are cut wherever a client or the model reads them — title, description,
// annotations.title, schema descriptions at any depth, examples, unknown
// members, the inputSchema kept as received — while names and values stay
// exact and a small tool passes untouched.
func TestSizeBoundCutsText(t *testing.T) {
	long := strings.Repeat("é", MaxTextRunes+10)
	js := jsonStr(long)
	p := New(SchemaShape{}, SizeBound{Max: 1 << 20})
	r := p.Run("up", raws(
		`{"name":"big","title":`+js+`,"description":`+js+`,"annotations":{"title":`+js+`},
		  "inputSchema":{"properties":{"a":{"type":"string","description":`+js+`,"examples":[`+js+`],"enum":[`+js+`],"default":`+js+`}}},
		  "outputSchema":{"type":"object","$comment":`+js+`},
		  "x-later":{"note":`+js+`}}`,
		`{"name":"small","description":"short","inputSchema":{"type":"object"}}`,
	))
	if len(r.Tools) != 2 || r.Quarantined() != 0 {
		t.Fatalf("tools %d, diagnostics %v", len(r.Tools), r.Diagnostics)
	}
	big := r.Tools[0]
	cut := func(what, s string) {
		t.Helper()
		if n := utf8.RuneCountInString(s); n != MaxTextRunes || !strings.HasSuffix(s, "…") {
			t.Errorf("%s: %d runes, want %d ending in …", what, n, MaxTextRunes)
		}
	}
	cut("title", big.Title)
	cut("description", big.Description)
	cut("annotations.title", big.Annotations.Title)
	var in struct {
		Properties map[string]struct {
			Description string   `json:"description"`
			Examples    []string `json:"examples"`
			Enum        []string `json:"enum"`
			Default     string   `json:"default"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(big.InputSchema.(json.RawMessage), &in); err != nil {
		t.Fatal(err)
	}
	a := in.Properties["a"]
	cut("inputSchema description", a.Description)
	cut("inputSchema examples", a.Examples[0])
	if a.Enum[0] != long || a.Default != long {
		t.Error("enum and default values must stay exact")
	}
	if strings.Contains(string(big.OutputSchema.(json.RawMessage)), long) {
		t.Error("outputSchema $comment not cut")
	}
	if strings.Contains(string(r.Extra["big"]), long) {
		t.Error("unknown member's string not cut")
	}
	var orig json.RawMessage
	for _, d := range r.Diagnostics {
		if d.Field == "inputSchema" {
			orig = d.Original
		}
		if d.Field != "inputSchema" && d.Original != nil {
			t.Errorf("a cut keeps no original: %v", d)
		}
	}
	if orig == nil || strings.Contains(string(orig), `"description":`+js) {
		t.Errorf("the inputSchema as received (describe's originalInputSchema) must be cut too: %.200s", orig)
	}
	if !strings.Contains(fmt.Sprint(r.Diagnostics), "description cut from 16394 to 16384 characters") {
		t.Errorf("diagnostics should say what was cut: %v", r.Diagnostics)
	}
	if r.Tools[1].Description != "short" {
		t.Error("small tool changed")
	}
}

// TestSizeBoundQuarantinesBulk: what cutting text cannot shrink (a 50,000
// value enum, a 1 MB _meta) over the bound quarantines the tool, naming
// its size, the bound and its largest member; its neighbour stays.
func TestSizeBoundQuarantinesBulk(t *testing.T) {
	var enum []string
	for i := 0; i < 50000; i++ {
		enum = append(enum, fmt.Sprintf(`"e%d"`, i))
	}
	p := New(SchemaShape{}, SizeBound{})
	r := p.Run("up", raws(
		`{"name":"enums","inputSchema":{"type":"object","properties":{"a":{"enum":[`+strings.Join(enum, ",")+`]}}}}`,
		`{"name":"meta","inputSchema":{"type":"object"},"_meta":{"x":`+jsonStr(strings.Repeat("M", 1<<20))+`}}`,
		`{"name":"ok","inputSchema":{"type":"object"}}`,
	))
	if len(r.Tools) != 1 || r.Tools[0].Name != "ok" {
		t.Fatalf("want only ok, got %d tools: %v", len(r.Tools), r.Diagnostics)
	}
	got := fmt.Sprint(r.Diagnostics)
	for _, want := range []string{
		"enums quarantined (size): the definition is",
		"over the bound of 131072 bytes on one tool (security.max_tool_bytes); its largest member is inputSchema",
		"meta quarantined (size)", "its largest member is _meta (1048584 bytes)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("diagnostics lack %q:\n%.600s", want, got)
		}
	}
}

// TestSizeBoundKeepsNumbers: a schema rewritten because a text string of
// it was cut keeps its numbers as written: an integer past 2^53 (an enum,
// const or bound the upstream validates against) is not rounded to the
// nearest float64 (9007199254740993 became 9007199254740992).
func TestSizeBoundKeepsNumbers(t *testing.T) {
	js := jsonStr(strings.Repeat("x", MaxTextRunes+10))
	p := New(SchemaShape{}, SizeBound{Max: 1 << 20})
	r := p.Run("up", raws(`{"name":"n","inputSchema":{"type":"object","properties":{"id":{"type":"integer","description":`+js+`,"enum":[9007199254740993],"maximum":12345678901234567891,"minimum":0.1000000000000000055511151231257827}}}}`))
	if len(r.Tools) != 1 {
		t.Fatalf("tools %d, diagnostics %v", len(r.Tools), r.Diagnostics)
	}
	in := string(r.Tools[0].InputSchema.(json.RawMessage))
	if strings.Contains(in, strings.Repeat("x", MaxTextRunes+10)) {
		t.Fatal("the description was not cut")
	}
	for _, num := range []string{"9007199254740993", "12345678901234567891", "0.1000000000000000055511151231257827"} {
		if !strings.Contains(in, num) {
			t.Errorf("%s changed: %.300s…", num, in[len(in)-300:])
		}
	}
}
