package front

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
	"github.com/mcp-toolsearch/mcp-toolsearch/modes"
)

// envelopeHit is a hit with characters encoding/json escapes.
var envelopeHit = catalog.Hit{ID: "mcp:gh:list_issues", Name: "gh__list_issues", Description: "List <issues> & PRs\u2028é",
	Source: "mcp", Upstream: "gh", Input: "{owner: string, repo: string}"}

// plainResult reports whether raw, decoded as a JSON value, is a plain
// result: top-level members among content, structuredContent, isError
// (a boolean), _meta (an object or null) and resultType, every content
// block exactly {"type": "text", "text": string}. Anything else is for
// the decoded way only.
func plainResult(raw string) bool {
	var m map[string]any
	if json.Unmarshal([]byte(raw), &m) != nil || m == nil {
		return false
	}
	for k, v := range m {
		switch k {
		case "content", "structuredContent", "resultType":
		case "isError":
			if _, ok := v.(bool); !ok {
				return false
			}
		case "_meta":
			if _, ok := v.(map[string]any); !ok && v != nil {
				return false
			}
		default:
			return false
		}
	}
	content, ok := m["content"].([]any)
	if !ok {
		return false
	}
	for _, c := range content {
		b, isObj := c.(map[string]any)
		if _, isText := b["text"].(string); !isObj || len(b) != 2 || b["type"] != "text" || !isText {
			return false
		}
	}
	return true
}

// decodedEnvelope is what the decoded way gives for raw: the envelope's
// JSON (modes.MakeEnvelope over the go-sdk's decoding) and the tools/call
// result's JSON as the front writes it (encoding/json without HTML
// escaping, as go-sdk jsonrpc2), or ok false when the decoded way refuses
// raw.
func decodedEnvelope(t *testing.T, raw string) (env, result []byte, ok bool) {
	t.Helper()
	var res mcp.CallToolResult
	if err := json.Unmarshal([]byte(raw), &res); err != nil {
		return nil, nil, false
	}
	if !plainResult(raw) {
		return nil, nil, false
	}
	e, err := modes.MakeEnvelope(envelopeHit, &res, modes.ViaTool)
	if err != nil {
		t.Fatal(err)
	}
	env, err = json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(modes.EnvelopeResult(e, &res)); err != nil {
		t.Fatal(err)
	}
	return env, bytes.TrimRight(buf.Bytes(), "\n"), true
}

// checkRawEnvelope: AppendEnvelope and AppendToolCallResult write for raw
// exactly the bytes of the decoded way, or refuse. It reports whether
// the raw way took raw.
func checkRawEnvelope(t *testing.T, raw string) bool {
	t.Helper()
	wantEnv, wantRes, plain := decodedEnvelope(t, raw)
	prefix := []byte("xyz")
	got, ok := AppendEnvelope(prefix, envelopeHit, []byte(raw))
	if !bytes.HasPrefix(got, prefix) {
		t.Fatalf("%s: dst's bytes changed: %q", raw, got)
	}
	if !ok {
		if len(got) != len(prefix) {
			t.Errorf("%s: refused but dst grew: %q", raw, got)
		}
		return false
	}
	if !plain {
		t.Errorf("%s: taken raw, but the decoded way refuses it", raw)
		return true
	}
	got = got[len(prefix):]
	if !bytes.Equal(got, wantEnv) {
		t.Errorf("%s: envelope\n raw way %s\n decoded %s", raw, got, wantEnv)
	}
	var isErr struct {
		IsError bool `json:"isError"`
	}
	_ = json.Unmarshal([]byte(raw), &isErr)
	if r := AppendToolCallResult(nil, got, isErr.IsError); !bytes.Equal(r, wantRes) {
		t.Errorf("%s: tools/call result\n raw way %s\n decoded %s", raw, r, wantRes)
	}
	return true
}

// TestAppendEnvelope: the envelope and the tool_call result built as bytes
// equal the decoded way's byte for byte, over plain results with every
// kind of value; what is not plain, or not sure to come out the same, is
// refused (the decoded way then answers).
func TestAppendEnvelope(t *testing.T) {
	taken := []string{
		`{"content":[{"type":"text","text":"hello"}]}`,
		`{"content":[{"type":"text","text":"{\"tool\":\"list_issues\",\"arguments\":{\"owner\":\"octo\",\"repo\":\"hello\",\"state\":\"open\"}}"}],"structuredContent":{"tool":"list_issues","arguments":{"owner":"octo","repo":"hello","state":"open"}}}`,
		`{"content":[{"type":"text","text":"{\"a\":1,\"b\":[1,2.5,\"x\"]}"}]}`,
		`{"content":[{"type":"text","text":" {\"b\" : 1 , \"a\":[ true,false,null ]}\n"}]}`,
		`{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"isError":true}`,
		`{"content":[{"type":"text","text":"x"}],"isError":false,"resultType":"complete"}`,
		`{"content":[{"type":"text","text":"x"}],"structuredContent":{"n":12345678901,"s":"é"}}`,
		`{"content":[{"type":"text","text":"[1]"}],"structuredContent":null}`,
		`{"content":[{"type":"text","text":"[1]"}],"structuredContent":null,"isError":true}`,
		`{"content":[],"structuredContent":[1,2]}`,
		`{"content":[],"structuredContent":[1,2],"isError":true}`,
		`{"content":[{"type":"text","text":"x"}],"_meta":{}}`,
		`{"content":[{"type":"text","text":"x"}],"_meta":{ }}`,
		`{"content":[{"type":"text","text":"x"}],"_meta":{"k":{"v":true}}}`,
		`{"content":[{"type":"text","text":"x"}],"_meta":{"z":1,"a":2},"isError":true,"structuredContent":{"q":"<&>"}}`,
		`{"content":[{"type":"text","text":"x"}],"_meta":null}`,
		`{"content":[{"type":"text","text":"\"quoted\""}]}`,
		`{"content":[{"type":"text","text":"12"}]}`,
		`{"content":[{"type":"text","text":"not json {"}]}`,
		`{"content":[{"type":"text","text":""}]}`,
		`{"content":[{"text":"<b>&amp;</b> \u2028 \u2029 \u0001 \b\f\n\r\t \/ \u00e9 \ud83d\ude00 😀","type":"text"}]}`,
		"{\"content\":[{\"type\":\"text\",\"text\":\"x\"}],\"structuredContent\":{\"e\":\"\u2028\",\"h\":\"<>&\"}}",
		`  {  "structuredContent" : { "b" : [ 1 , { "d" : 1.50 , "c" : -0 } ] , "a" : "" } , "content" : [ { "text" : "t" , "type" : "text" } ] }  `,
		`{"content":[{"type":"text","text":"x"}],"structuredContent":{"f":[0.1,1e21,1e20,1e-7,0.000001,1E+3,-2.5e-10,12345678901234567890,3.0,100,0,-0.0,1.7976931348623157e308]}}`,
		`{"content":[{"type":"text","text":"x"}],"structuredContent":{"ü":1,"u":2,"Z":3,"_":4,"a b":5,"":6}}`,
		`{"content":[{"type":"text","text":"x"}],"structuredContent":"just a string"}`,
		`{"content":[{"type":"text","text":"x"}],"structuredContent":{"deep":[[[[{"a":[{"b":{}}]}]]]],"empty":[]}}`,
	}
	for _, raw := range taken {
		if !checkRawEnvelope(t, raw) {
			t.Errorf("%s: refused, want it taken raw", raw)
		}
	}
	refused := []string{
		// not plain (the decoded way, as before)
		`{"content":[{"type":"image","data":"AA==","mimeType":"image/png"}]}`,
		`{"content":[{"type":"text","text":"x","annotations":{"priority":1}}]}`,
		`{"content":[{"type":"text","text":"x","_meta":{"a":1}}]}`,
		`{"content":[{"type":"text","text":"x"}],"task":{"taskId":"t"}}`,
		`{"content":null}`,
		`{"structuredContent":{}}`,
		`{"content":[{"type":"text","text":"x"}],"isError":"yes"}`,
		`{"content":[{"type":"text","text":"x"}],"_meta":[1]}`,
		`[1]`,
		`{"content":`,
		// plain, but not sure to come out the same: refused
		`{"content":[{"type":"text","text":"x"}],"structuredContent":{"a\u0062":1}}`,
		`{"content":[{"type":"text","text":"x"}],"structuredContent":{"a":1,"a":2}}`,
		`{"content":[{"type":"text","text":"x"}],"structuredContent":{"b":1,"a":2,"b":3}}`,
		`{"content":[{"type":"text","text":"x"}],"content":[]}`,
		`{"content":[{"type":"text","text":"x"}],"structuredContent":{"n":1e400}}`,
		`{"content":[{"type":"text","text":"x"}],"structuredContent":"\ud800"}`,
		"{\"content\":[{\"type\":\"text\",\"text\":\"\xff\"}]}",
		`{"content":[{"type":"text","text":"x"}],"structuredContent":01}`,
		`{"content":[{"type":"text","text":"x"}],"structuredContent":[1,]}`,
		`{"content":[{"type":"text","text":"x"}],"structuredContent":tru}`,
		`{"content":[{"type":"text","text":"x"}],"resultType":complete}`,
		`{"content":[{"type":"text","text":"x"}]} x`,
		`{"content":[{"type":"text","text":"{\"a\":1e999}"}]}`,
		`{"content":[{"type":"text","text":"1e400"}]}`,
		`{"content":[{"type":"te\u0078t","text":"x"}]}`,
		`{"content":[{"type":"text","text":"x"}],"structuredContent":` + strings.Repeat("[", 300) + strings.Repeat("]", 300) + `}`,
	}
	for _, raw := range refused {
		if checkRawEnvelope(t, raw) {
			t.Errorf("%s: taken raw, want it refused", raw)
		}
	}
}

// TestAppendEnvelopeRandom: random JSON values, written with random
// blanks and key order, as structuredContent and as a lone text block.
func TestAppendEnvelopeRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(16))
	took := 0
	const n = 3000
	for i := 0; i < n; i++ {
		v := randomJSON(rng, 0)
		text := randomJSON(rng, 0)
		var raw string
		switch i % 3 {
		case 0:
			raw = `{"content":[{"type":"text","text":` + quoteRandom(text) + `}],"structuredContent":` + v + `}`
		case 1:
			raw = `{"content":[{"type":"text","text":` + quoteRandom(text) + `}]` + ws(rng) + `,"isError":true}`
		default:
			raw = `{"_meta":` + randomObject(rng, 1) + `,"content":[{"type":"text","text":` + quoteRandom(v) + `},{"type":"text","text":"b"}]}`
		}
		if checkRawEnvelope(t, raw) {
			took++
		} else if testing.Verbose() && took < 40 {
			t.Logf("refused: %s", raw)
		}
		if t.Failed() {
			t.Fatalf("stopped at case %d", i)
		}
	}
	t.Logf("%d of %d random results taken raw", took, n)
	if took < n*9/10 {
		t.Errorf("only %d of %d random results taken raw", took, n)
	}
}

var randomStrings = []string{"", "a", "octo", "<b>", "&amp;", "é", "日本", "😀", "\u2028", "\u2029", "\x01", "\t\n", `"`, `\`, "/", "\u007f", "\ufeff", "a b"}

func randomString(rng *rand.Rand) string {
	var b strings.Builder
	for i := rng.Intn(4); i >= 0; i-- {
		b.WriteString(randomStrings[rng.Intn(len(randomStrings))])
	}
	return b.String()
}

var randomNumbers = []string{"0", "-0", "1", "-1", "0.5", "1.0", "1e3", "1E+3", "2.5e-10", "1e21", "1e20", "123456789012345678901234", "0.000001", "0.0000001", "3.14159265358979323846", "-7e-7", "9007199254740993", "1.7976931348623157e308", "5e-324"}

// quoteRandom is s as a JSON string, escaped at random (\u escapes,
// \/, raw UTF-8): the same string however it is written.
func quoteRandom(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.ReplaceAll(strings.TrimSpace(b.String()), "/", `\/`)
}

func ws(rng *rand.Rand) string {
	return []string{"", "", " ", "\n", "\t ", "\r\n"}[rng.Intn(6)]
}

func randomJSON(rng *rand.Rand, depth int) string {
	k := rng.Intn(7)
	if depth > 3 {
		k = rng.Intn(4)
	}
	switch k {
	case 0:
		return randomNumbers[rng.Intn(len(randomNumbers))]
	case 1:
		return quoteRandom(randomString(rng))
	case 2:
		return []string{"true", "false", "null"}[rng.Intn(3)]
	case 3:
		s := randomString(rng)
		// \u escapes for every rune, surrogate pairs included
		var b strings.Builder
		b.WriteByte('"')
		for _, r := range s {
			if r > 0xFFFF {
				r -= 0x10000
				fmt.Fprintf(&b, `\u%04X\u%04x`, 0xD800+(r>>10), 0xDC00+(r&0x3FF))
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		}
		b.WriteByte('"')
		return b.String()
	case 4, 5:
		return randomObject(rng, depth)
	}
	var b strings.Builder
	b.WriteString("[" + ws(rng))
	for i := rng.Intn(4); i > 0; i-- {
		b.WriteString(randomJSON(rng, depth+1))
		if i > 1 {
			b.WriteString(ws(rng) + "," + ws(rng))
		}
	}
	b.WriteString(ws(rng) + "]")
	return b.String()
}

var randomKeys = []string{"a", "b", "B", "_meta", "é", "z1", "z10", "z2", "", "a b", "<k>", "日"}

func randomObject(rng *rand.Rand, depth int) string {
	var b strings.Builder
	b.WriteString("{" + ws(rng))
	keys := rng.Perm(len(randomKeys))[:rng.Intn(5)]
	for i, k := range keys {
		if i > 0 {
			b.WriteString(ws(rng) + "," + ws(rng))
		}
		b.WriteString(quoteRandom(randomKeys[k]) + ws(rng) + ":" + ws(rng) + randomJSON(rng, depth+1))
	}
	b.WriteString(ws(rng) + "}")
	return b.String()
}

// FuzzAppendEnvelope: for any upstream result, the raw way writes the
// decoded way's bytes or refuses (go test ./modes -fuzz FuzzAppendEnvelope).
func FuzzAppendEnvelope(f *testing.F) {
	for _, s := range []string{
		`{"content":[{"type":"text","text":"{\"b\":1,\"a\":[1.5e3,\"\\u2028\"]}"}],"structuredContent":{"z":{"y":null,"x":"<&>"},"a":-0}}`,
		`{"content":[{"type":"text","text":"x"}],"_meta":{"b":1,"a":2},"isError":true}`,
		`{"content":[]}`,
		`{"content":[{"type":"text","text":""}}}`, // a closing bracket too many
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		checkRawEnvelope(t, raw)
	})
}

// TestValidNumber: the JSON number grammar (RFC 8259 section 6), as
// encoding/json's scanner reads it.
func TestValidNumber(t *testing.T) {
	for _, s := range []string{"0", "-0", "1", "-12", "0.5", "10.25", "1e3", "1E+3", "1e-3", "-0.0e0", "123456789012345678901234"} {
		if !validNumber([]byte(s)) || !json.Valid([]byte(s)) {
			t.Errorf("%s: not a number", s)
		}
	}
	for _, s := range []string{"", "-", "01", "1.", ".5", "1e", "1e+", "+1", "0x1", "1.5.2", "NaN", "1 ", "--1", "1e3.5"} {
		if validNumber([]byte(s)) || json.Valid([]byte(s)) && s != "1 " {
			t.Errorf("%s: taken as a number", s)
		}
	}
}

// TestAppendHit: the tool of tool_call's envelope written as bytes equals
// json.Marshal's output for it: HTML characters, line separators, control
// characters, empty optional members; a score or invalid UTF-8 take
// json.Marshal itself.
func TestAppendHit(t *testing.T) {
	for _, h := range []catalog.Hit{
		{},
		{ID: "mcp:gh:list_issues", Name: "gh__list_issues", Description: "List issues <b>&</b> \u2028 \u2029 \x01 \b\f\n\r\t \"q\" \\ é 😀", Source: "mcp", Upstream: "gh", Input: "owner, repo"},
		{ID: "a", Output: "o", Match: "strong", Matched: "x, y", Related: "r", Unavailable: "down"},
		{ID: "a", Score: 0.5},
		{ID: "a\xffb", Name: "n"},
	} {
		want, err := json.Marshal(&h)
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendHit([]byte("prefix"), &h)
		if err != nil || string(got) != "prefix"+string(want) {
			t.Errorf("appendHit(%+v) = %s, %v\nwant prefix%s", h, got, err, want)
		}
	}
}

// TestAppendStringAsEncodingJSON: appendString's runs and escapes write
// what encoding/json writes for every ASCII byte, the line separators
// (also at a string's end) and their UTF-8 neighbours.
func TestAppendStringAsEncodingJSON(t *testing.T) {
	var cases []string
	for c := range utf8.RuneSelf {
		cases = append(cases, string(rune(c)), "ab"+string(rune(c))+"cd")
	}
	for r := rune(0x2000); r < 0x2100; r++ {
		cases = append(cases, string(r), "x"+string(r), string(r)+"é😀<")
	}
	cases = append(cases, "", "\u2028\u2029", "plain text with no escapes at all")
	for _, s := range cases {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendString(nil, s); string(got) != string(want) {
			t.Errorf("appendString(%q) = %s, want %s", s, got, want)
		}
		if got := appendString(nil, []byte(s)); string(got) != string(want) {
			t.Errorf("appendString([]byte %q) = %s, want %s", s, got, want)
		}
	}
}
