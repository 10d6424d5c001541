package schemacheck

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// libraryAccepts is ValidateJSON without the fast path: encoding/json's
// decode and jsonschema-go's validator.
func libraryAccepts(s *Schema, raw []byte) bool {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return false
	}
	return s.rs.Validate(v) == nil
}

// fastAccepts is what the fast path says (false without a tree).
func fastAccepts(s *Schema, raw []byte) bool {
	return s.fast != nil && s.fast.accepts(raw)
}

// schemaGen writes random schemas of the keywords the tree decides, mixed
// with annotations, false/true subschemas and (rarely) keywords it refuses.
type schemaGen struct{ r *rand.Rand }

var (
	genKeys     = []string{"a", "b", "c", "é", "a b", "A", "owner", "x"}
	genStrings  = []string{"", "a", "b", "open", "closed", "é", "ab", "abc", "A1", "日本", "a b", "abcd"}
	genNumbers  = []string{"0", "1", "1.5", "-3", "100", "2", "-0", "0.1", "1e308", "1e2", "3"}
	genPatterns = []string{"^a", "b$", "[0-9]+", `^\\w+$`, "é", "^.{2}$", "^[a-z]*$"}
	genTypes    = []string{"null", "boolean", "object", "array", "number", "integer", "string", "foo"}
	genDrafts   = []string{"", "", "", "http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft/2020-12/schema", "http://json-schema.org/draft-04/schema#"}
)

func (g schemaGen) pick(xs []string) string { return xs[g.r.Intn(len(xs))] }

func (g schemaGen) scalar() string {
	switch g.r.Intn(5) {
	case 0, 1:
		return strconvQuote(g.pick(genStrings))
	case 2:
		return g.pick(genNumbers)
	case 3:
		return []string{"true", "false"}[g.r.Intn(2)]
	}
	return "null"
}

func (g schemaGen) schema(depth int) string {
	r := g.r
	if depth > 0 && r.Intn(12) == 0 {
		return []string{"true", "false", "{}", `{"not":{}}`}[r.Intn(4)]
	}
	var m []string
	add := func(k, v string) { m = append(m, strconvQuote(k)+":"+v) }
	switch r.Intn(4) {
	case 0: // no type
	case 1, 2:
		add("type", strconvQuote(g.pick(genTypes)))
	case 3:
		var ts []string
		for range 1 + r.Intn(3) {
			ts = append(ts, strconvQuote(g.pick(genTypes)))
		}
		add("type", "["+strings.Join(ts, ",")+"]")
	}
	if r.Intn(4) == 0 {
		var es []string
		for range r.Intn(4) {
			es = append(es, g.scalar())
		}
		add("enum", "["+strings.Join(es, ",")+"]")
	}
	for _, k := range []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"} {
		if r.Intn(6) == 0 {
			add(k, g.pick(genNumbers))
		}
	}
	for _, k := range []string{"minLength", "maxLength", "minItems", "maxItems"} {
		if r.Intn(6) == 0 {
			add(k, fmt.Sprint(r.Intn(4)))
		}
	}
	if r.Intn(6) == 0 {
		add("pattern", strconvQuote(g.pick(genPatterns)))
	}
	if depth < 3 && r.Intn(3) == 0 {
		add("items", g.schema(depth+1))
	}
	if depth < 3 && r.Intn(2) == 0 {
		var ps []string
		for range r.Intn(4) {
			ps = append(ps, strconvQuote(g.pick(genKeys))+":"+g.schema(depth+1))
		}
		add("properties", "{"+strings.Join(ps, ",")+"}")
	}
	if r.Intn(3) == 0 {
		var rs []string
		for range r.Intn(3) {
			rs = append(rs, strconvQuote(g.pick(genKeys)))
		}
		add("required", "["+strings.Join(rs, ",")+"]")
	}
	if depth < 3 && r.Intn(3) == 0 {
		add("additionalProperties", []string{"true", "false", g.schema(depth + 1)}[r.Intn(3)])
	}
	// Annotations and unknown keywords: validate nothing.
	for _, kv := range [][2]string{{"description", `"d"`}, {"title", `"t"`}, {"format", `"date-time"`}, {"default", `"x"`},
		{"examples", `[1]`}, {"$comment", `"c"`}, {"x-unknown", `{"type":"string"}`}, {"readOnly", "true"}} {
		if r.Intn(10) == 0 {
			add(kv[0], kv[1])
		}
	}
	// Keywords the tree refuses (the schema then has no tree).
	if r.Intn(25) == 0 {
		kv := [][2]string{{"const", g.scalar()}, {"multipleOf", "2"}, {"uniqueItems", "true"}, {"minProperties", "1"},
			{"anyOf", `[{"type":"string"},{"type":"integer"}]`}, {"dependentSchemas", `{"a":{"required":["b"]}}`}, {"patternProperties", `{"^a":{"type":"string"}}`}}[r.Intn(7)]
		add(kv[0], kv[1])
	}
	if depth == 0 {
		if d := g.pick(genDrafts); d != "" {
			add("$schema", strconvQuote(d))
		}
	}
	r.Shuffle(len(m), func(i, j int) { m[i], m[j] = m[j], m[i] })
	return "{" + strings.Join(m, ",") + "}"
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// instanceGen writes random JSON texts shaped after a schema (so that
// many validate), with what decodes differently from its bytes: escapes,
// invalid UTF-8, numbers out of range, repeated keys, blanks.
type instanceGen struct{ r *rand.Rand }

var (
	instStrings = []string{`""`, `"a"`, `"b"`, `"open"`, `"closed"`, `"é"`, `"ab"`, `"abc"`, `"A1"`, `"日本"`, `"a b"`,
		`"\u0061"`, `"a\nb"`, `"\"q"`, "\"\xff\"", "\"a\xc3\"", `"\ud800"`, `"abcd"`, `"12"`}
	instNumbers = []string{"0", "1", "1.5", "-3", "100", "101", "2", "-0", "0.1", "1e308", "1e400", "-1e400", "1E2", "1.0", "3",
		"1e-400", "0.30000000000000004", "99.99999999999999999", "2.0000000000000001"}
)

func (g instanceGen) value(s any, depth int) string {
	r := g.r
	m, _ := s.(map[string]any)
	if m == nil || r.Intn(6) == 0 || depth > 4 {
		return g.random(depth)
	}
	if e, ok := m["enum"].([]any); ok && len(e) > 0 && r.Intn(2) == 0 {
		b, _ := json.Marshal(e[r.Intn(len(e))])
		return string(b)
	}
	var ty string
	switch t := m["type"].(type) {
	case string:
		ty = t
	case []any:
		if len(t) > 0 {
			ty, _ = t[r.Intn(len(t))].(string)
		}
	}
	if ty == "" {
		if _, ok := m["properties"]; ok {
			ty = "object"
		}
	}
	switch ty {
	case "string":
		return instStrings[r.Intn(len(instStrings))]
	case "number", "integer":
		return instNumbers[r.Intn(len(instNumbers))]
	case "boolean":
		return []string{"true", "false"}[r.Intn(2)]
	case "null":
		return "null"
	case "array":
		var items []string
		for range r.Intn(4) {
			items = append(items, g.value(m["items"], depth+1))
		}
		return g.blank() + "[" + strings.Join(items, g.blank()+","+g.blank()) + "]"
	case "object":
		props, _ := m["properties"].(map[string]any)
		var ms []string
		for k, ps := range props {
			if r.Intn(4) != 0 {
				ms = append(ms, strconvQuote(k)+g.blank()+":"+g.blank()+g.value(ps, depth+1))
			}
		}
		if req, ok := m["required"].([]any); ok {
			for _, k := range req {
				if ks, _ := k.(string); ks != "" && props[ks] == nil && r.Intn(2) == 0 {
					ms = append(ms, strconvQuote(ks)+":"+g.random(depth+1))
				}
			}
		}
		if r.Intn(4) == 0 {
			ms = append(ms, g.key()+":"+g.value(m["additionalProperties"], depth+1))
		}
		if len(ms) > 0 && r.Intn(8) == 0 { // a repeated key
			ms = append(ms, ms[r.Intn(len(ms))])
		}
		return "{" + strings.Join(ms, ",") + "}"
	}
	return g.random(depth)
}

func (g instanceGen) key() string {
	return []string{`"a"`, `"b"`, `"z"`, `"\u0061"`, `"é"`, "\"\xe9\"", `"owner"`, `"A"`}[g.r.Intn(8)]
}

func (g instanceGen) blank() string {
	return []string{"", "", "", " ", "\n\t"}[g.r.Intn(5)]
}

func (g instanceGen) random(depth int) string {
	r := g.r
	switch n := r.Intn(8); {
	case n == 0 && depth < 4:
		return "[" + g.random(depth+1) + "," + g.random(depth+1) + "]"
	case n == 1 && depth < 4:
		return "{" + g.key() + ":" + g.random(depth+1) + "}"
	case n == 2:
		return instNumbers[r.Intn(len(instNumbers))]
	case n == 3:
		return []string{"true", "false", "null"}[r.Intn(3)]
	}
	return instStrings[r.Intn(len(instStrings))]
}

// mutate damages a text now and then (truncation, a stray byte, a
// leading zero), so that the reader's grammar is tried too.
func (g instanceGen) mutate(s string) string {
	r := g.r
	if len(s) == 0 || r.Intn(5) != 0 {
		return s
	}
	i := r.Intn(len(s))
	switch r.Intn(5) {
	case 0:
		return s[:i]
	case 1:
		const stray = "x,:{}[]\"\\0-. \x01"
		return s[:i] + string(stray[r.Intn(len(stray))]) + s[i:]
	case 2:
		return s[:i] + s[i+1:]
	case 3:
		return s + " x"
	}
	return strings.Replace(s, "1", "01", 1)
}

// The fast path never accepts what the library refuses, over random
// schemas of the keywords it decides (and some it refuses) and random
// texts shaped after them; and it does accept most of what the library
// accepts.
func TestFastAcceptAgreesWithLibrary(t *testing.T) {
	r := rand.New(rand.NewSource(16))
	sg, ig := schemaGen{r}, instanceGen{r}
	var schemas, trees, texts, libOK, fastOK int
	for range 500 {
		raw := sg.schema(0)
		s, err := Compile(json.RawMessage(raw))
		if err != nil {
			continue
		}
		schemas++
		if s.fast == nil {
			continue
		}
		trees++
		var doc any
		_ = json.Unmarshal([]byte(raw), &doc)
		for range 40 {
			text := []byte(ig.mutate(ig.value(doc, 0)))
			texts++
			lib, fast := libraryAccepts(s, text), fastAccepts(s, text)
			if fast && !lib {
				t.Fatalf("schema %s: the fast path accepts %q, the library refuses it", raw, text)
			}
			if lib {
				libOK++
				if fast {
					fastOK++
				}
			}
			if err := s.ValidateJSON(text); (err == nil) != lib {
				t.Fatalf("schema %s, %q: ValidateJSON %v, library accepts: %v", raw, text, err, lib)
			}
		}
	}
	t.Logf("%d schemas compiled, %d with a tree; %d texts, %d valid, %d of them accepted fast", schemas, trees, texts, libOK, fastOK)
	if trees < schemas*3/4 || fastOK < libOK*3/4 {
		t.Errorf("the fast path decides too little: %d of %d schemas, %d of %d valid texts", trees, schemas, fastOK, libOK)
	}
}

// The inputSchemas of the example catalogs: each one the fast path
// builds a tree for agrees with the library on texts shaped after it.
func TestFastAcceptCatalogSchemas(t *testing.T) {
	files, _ := filepath.Glob("../examples/catalogs/*.jsonl")
	if len(files) == 0 {
		t.Skip("no example catalogs")
	}
	r := rand.New(rand.NewSource(17))
	ig := instanceGen{r}
	var n, trees int
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 4<<20)
		for sc.Scan() {
			var tool struct {
				InputSchema json.RawMessage `json:"inputSchema"`
			}
			if json.Unmarshal(sc.Bytes(), &tool) != nil || len(tool.InputSchema) == 0 {
				continue
			}
			s, err := Compile(tool.InputSchema)
			if err != nil {
				continue
			}
			n++
			if s.fast == nil {
				continue
			}
			trees++
			var doc any
			_ = json.Unmarshal(tool.InputSchema, &doc)
			for range 20 {
				text := []byte(ig.mutate(ig.value(doc, 0)))
				if fastAccepts(s, text) && !libraryAccepts(s, text) {
					t.Fatalf("%s: schema %s: the fast path accepts %q, the library refuses it", f, tool.InputSchema, text)
				}
			}
		}
		fh.Close()
	}
	t.Logf("%d catalog schemas, %d with a tree", n, trees)
}

// Keywords the tree does not decide leave the schema without one; the
// ones it ignores (annotations) do not.
func TestFastTreeKeywords(t *testing.T) {
	for _, tc := range []struct {
		schema string
		tree   bool
	}{
		{`{"type":"object","properties":{"a":{"type":"string","enum":["x"]}},"required":["a"],"additionalProperties":false}`, true},
		{`{"type":"object","description":"d","title":"t","x-extra":1,"$comment":"c","properties":{"a":{"type":"string","format":"uri","default":"x","examples":["y"]}}}`, true},
		{`{"type":"object","$defs":{"d":{"const":1}}}`, true},
		{`true`, true},
		{`false`, true},
		{`{"properties":{"a":{"const":1}}}`, false},
		{`{"properties":{"a":{"multipleOf":2}}}`, false},
		{`{"properties":{"a":{"$ref":"#"}}}`, false},
		{`{"anyOf":[{"type":"string"}]}`, false},
		{`{"type":"array","uniqueItems":true}`, false},
		{`{"type":"array","prefixItems":[{"type":"string"}]}`, false},
		{`{"patternProperties":{"^a":{}}}`, false},
		{`{"propertyNames":{"maxLength":3}}`, false},
		{`{"minProperties":1}`, false},
		{`{"dependentRequired":{"a":["b"]}}`, false},
		{`{"not":{"type":"string"}}`, false},
		{`{"if":{"type":"string"},"then":{"minLength":1}}`, false},
		{`{"enum":[{"a":1}]}`, false},
	} {
		s := mustCompile(t, tc.schema)
		if (s.fast != nil) != tc.tree {
			t.Errorf("%s: tree %v, want %v", tc.schema, s.fast != nil, tc.tree)
		}
	}
}

// Cases where the text decodes to something other than its bytes, or does
// not decode: the fast path leaves them to the library, which gives the
// same answer as before.
func TestFastAcceptEdges(t *testing.T) {
	s := mustCompile(t, `{"type":"object","properties":{"s":{"type":"string","enum":["ab"]},"n":{"type":"integer","maximum":10},"l":{"type":"string","maxLength":1}},"required":["s"],"additionalProperties":false}`)
	for _, tc := range []struct {
		text       string
		fast, want bool
	}{
		{`{"s":"ab"}`, true, true},
		{` { "s" : "ab" , "n" : 10 } `, true, true},
		{`{"s":"ab","n":10.0}`, true, true},
		{`{"s":"ab","n":1e1}`, true, true},
		{`{"s":"a\u0062"}`, false, true},      // an escape: decoded by the library
		{`{"\u0073":"ab"}`, false, true},      // an escaped key
		{`{"s":"ab","n":10.5}`, false, false}, // not an integer
		{`{"s":"ab","n":11}`, false, false},
		{`{"s":"ab","n":1e400}`, false, false}, // does not decode
		{`{"s":"ab","l":"é"}`, true, true},     // one code point
		{"{\"s\":\"ab\",\"l\":\"\xe9\"}", false, true},
		{`{"s":"ab","s":"x"}`, false, false}, // the last one counts
		{`{"s":"x","s":"ab"}`, false, true},
		{`{"s":"ab"} x`, false, false},
		{`{"s":"ab",}`, false, false},
		{`{"s":"ab","n":01}`, false, false},
		{`{"s":"ab","z":1}`, false, false},
		{`{}`, false, false},
		{`[]`, false, false},
	} {
		if got := fastAccepts(s, []byte(tc.text)); got != tc.fast {
			t.Errorf("%s: fast %v, want %v", tc.text, got, tc.fast)
		}
		if got := s.ValidateJSON([]byte(tc.text)) == nil; got != tc.want {
			t.Errorf("%s: valid %v, want %v", tc.text, got, tc.want)
		}
	}
}

// A plain call's arguments are validated without an allocation.
func TestFastAcceptAllocs(t *testing.T) {
	s := mustCompile(t, string(listIssuesSchema(t)))
	args := []byte(`{"owner":"octo","repo":"hello","state":"open","labels":["bug"],"page":2}`)
	if s.fast == nil || !s.fast.accepts(args) {
		t.Fatal("not accepted fast")
	}
	if n := testing.AllocsPerRun(100, func() { _ = s.ValidateJSON(args) }); n != 0 {
		t.Errorf("%v allocations per ValidateJSON, want 0", n)
	}
}

// FuzzFastAccept: for any schema and text, the fast path accepts only
// what the library accepts.
func FuzzFastAccept(f *testing.F) {
	f.Add(string(listIssuesSchema(f)), `{"owner":"octo","repo":"hello","state":"open"}`)
	f.Add(`{"type":"object","properties":{"a":{"type":"array","items":{"type":"integer","minimum":0}}},"additionalProperties":{"type":"string","pattern":"^x"}}`, `{"a":[1,2],"b":"xy"}`)
	f.Add(`{"type":["string","null"],"enum":["a",null,1]}`, `null`)
	f.Add(`{"type":"number","exclusiveMaximum":1}`, `0.99999999999999999`)
	f.Fuzz(func(t *testing.T, schema, text string) {
		s, err := Compile(json.RawMessage(schema))
		if err != nil || s.fast == nil {
			return
		}
		if s.fast.accepts([]byte(text)) && !libraryAccepts(s, []byte(text)) {
			t.Fatalf("schema %s: the fast path accepts %q, the library refuses it", schema, text)
		}
	})
}

// A reference loop that never reaches into the value made jsonschema-go's
// validator recurse until the stack was exhausted (a fatal error of the
// whole process): Compile refuses it; references that go into
// the value (recursion through properties or items) still compile.
func TestCompileRefusesRefLoop(t *testing.T) {
	for _, loop := range []string{
		`{"$ref":"#"}`,
		`{"type":"object","$ref":"#"}`,
		`{"$defs":{"a":{"allOf":[{"$ref":"#/$defs/b"}]},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`,
		`{"anyOf":[{"type":"string"},{"$ref":"#"}]}`,
		`{"not":{"$ref":"#"}}`,
		`{"if":{"type":"string"},"else":{"$ref":"#"}}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"a":{"oneOf":[{"$ref":"#/definitions/a"}]}},"properties":{"x":{"$ref":"#/definitions/a"}}}`,
		`{"dependentSchemas":{"a":{"$ref":"#"}}}`,
		`{"$ref":"#/$defs/x"}`, // not found by the check: refused too (Resolve refuses it anyway)
	} {
		if _, err := Compile(json.RawMessage(loop)); err == nil {
			t.Errorf("%s compiled", loop)
		}
	}
	for _, ok := range []string{
		`{"type":"object","properties":{"child":{"$ref":"#"}}}`,
		`{"type":"array","items":{"$ref":"#"}}`,
		`{"$defs":{"a":{"type":"string"}},"allOf":[{"$ref":"#/$defs/a"}],"anyOf":[{"$ref":"#/$defs/a"}]}`,
		`{"$defs":{"n":{"type":"object","properties":{"next":{"$ref":"#/$defs/n"}}}},"$ref":"#/$defs/n"}`,
		`{"type":"object","properties":{"e":{"enum":[{"$ref":"#"}]},"d":{"default":{"allOf":[]}}}}`,
	} {
		s := mustCompile(t, ok)
		_ = s.ValidateJSON(json.RawMessage(`{"child":{},"next":{"next":{}}}`)) // returns
	}
}

// FuzzCompileTerminates: whatever the schema, Compile and ValidateJSON
// return (a reference loop is refused, not followed without end).
func FuzzCompileTerminates(f *testing.F) {
	f.Add(`{"$defs":{"a":{"allOf":[{"$ref":"#/$defs/b"}]},"b":{"type":"string"}},"$ref":"#/$defs/a"}`, `"x"`)
	f.Add(`{"anyOf":[{"type":"string"},{"$ref":"#/properties/a"}],"properties":{"a":{"if":{"$ref":"#"}}}}`, `{"a":1}`)
	f.Add(`{"$id":"http://x/r","$defs":{"s":{"$id":"s","not":{"$ref":"r"}}},"allOf":[{"$ref":"s"}]}`, `1`)
	f.Fuzz(func(t *testing.T, schema, text string) {
		s, err := Compile(json.RawMessage(schema))
		if err != nil {
			return
		}
		_ = s.ValidateJSON([]byte(text))
	})
}
