package jsonscan

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// compactCases are texts AppendCompact must treat as json.Compact does.
var compactCases = []string{
	`{}`, `[]`, ` { "a" : [ 1 , 2.5e-3 , -0 , true , false , null , "x\ty" ] } `,
	`"\u00e9\n\"\\\/\b\f\r"`, "\"\xff\xfe invalid utf-8\"", `0`, `-1.0E+10`, `123`,
	`{"a":{"b":{"c":[[[{}]]]}}}`, "\t\r\n[ ]\n",
	// invalid
	``, ` `, `{`, `}`, `[1,]`, `{"a":1,}`, `{"a" 1}`, `{a:1}`, `[1 2]`, `01`, `1.`, `.5`, `1e`, `-`,
	`+1`, `tru`, `nul`, `truex`, `"abc`, "\"a\x01b\"", `"\x"`, `"\u12g4"`, `[1]]`, `[1}`, `{"a":1]`,
	`1 2`, `{"a":1}x`, `NaN`, `[-]`, `["a",]`, `{"":""}`, `{"a":"b","a":"c"}`,
}

func TestAppendCompactSameAsEncodingJSON(t *testing.T) {
	cases := append([]string(nil), compactCases...)
	cases = append(cases, strings.Repeat("[", compactMaxDepth)+strings.Repeat("]", compactMaxDepth),
		strings.Repeat("[", compactMaxDepth+1)+strings.Repeat("]", compactMaxDepth+1))
	for _, c := range cases {
		checkCompact(t, []byte(c))
	}
}

// checkCompact: when AppendCompact takes src, json.Compact accepts it and
// appends the same bytes; when json.Compact accepts src within the depth
// limit, so does AppendCompact; dst is kept either way.
func checkCompact(t *testing.T, src []byte) {
	t.Helper()
	prefix := []byte("pre:")
	got, ok := AppendCompact(bytes.Clone(prefix), src)
	var want bytes.Buffer
	want.Write(prefix)
	err := json.Compact(&want, src)
	switch {
	case ok && err != nil:
		t.Fatalf("AppendCompact took %q, json.Compact refuses it: %v", src, err)
	case ok && !bytes.Equal(got, want.Bytes()):
		t.Fatalf("AppendCompact(%q) = %q, json.Compact gives %q", src, got, want.Bytes())
	case !ok && !bytes.Equal(got, prefix):
		t.Fatalf("AppendCompact(%q) refused it but changed dst to %q", src, got)
	case !ok && err == nil && Depth(src) <= compactMaxDepth:
		t.Fatalf("AppendCompact refused %q, which json.Compact takes", src)
	}
}

func FuzzAppendCompact(f *testing.F) {
	for _, c := range compactCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, src []byte) { checkCompact(t, src) })
}

func BenchmarkAppendCompact(b *testing.B) {
	src := []byte(`{"content":[{"type":"text","text":"[{\"number\":1,\"title\":\"Fix the build\",\"state\":\"open\",\"labels\":[\"bug\",\"ci\"]},{\"number\":2,\"title\":\"Add docs\",\"state\":\"open\"}]"}],"structuredContent":{"issues":[{"number":1,"title":"Fix the build","state":"open"}]},"isError":false}`)
	dst := make([]byte, 0, 1024)
	b.Run("jsonscan", func(b *testing.B) {
		for b.Loop() {
			dst, _ = AppendCompact(dst[:0], src)
		}
	})
	b.Run("encoding_json", func(b *testing.B) {
		buf := bytes.NewBuffer(dst)
		for b.Loop() {
			buf.Reset()
			_ = json.Compact(buf, src)
		}
	})
}
