package catalog

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestRenderInputShapes(t *testing.T) {
	cases := []struct{ schema, want string }{
		{`{"type":"object","properties":{"id":{"type":"string"},"mode":{"enum":["drip","flood"]}},"required":["id"]}`,
			`{ id: string; mode?: "drip" | "flood" }`},
		{`{"type":"object","properties":{"n":{"type":"integer"},"x":{"type":"number"},"ok":{"type":"boolean"}},"required":["n","x","ok"]}`,
			`{ n: number; x: number; ok: boolean }`},
		{`{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string"}},"rows":{"type":"array","items":{"type":"object","properties":{"id":{"type":"string"},"paid":{"type":"boolean"}},"required":["id","paid"]}}}}`,
			`{ tags?: string[]; rows?: Array<{ id: string; paid: boolean }> }`},
		{`{"type":"object","properties":{"v":{"type":["string","null"]},"w":{"type":"string","nullable":true}}}`,
			`{ v?: string | null; w?: string | null }`},
		{`{"type":"object","properties":{"u":{"anyOf":[{"type":"string"},{"type":"number"}]},"o":{"oneOf":[{"const":"a"},{"const":1}]}}}`,
			`{ u?: string | number; o?: "a" | 1 }`},
		{`{"type":"object","additionalProperties":{"type":"number"}}`, `{ [k: string]: number }`},
		{`{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":{"type":"boolean"},"required":["a"]}`,
			`{ a: string; [k: string]: boolean }`},
		{`{"type":"object","properties":{"p":{"$ref":"#/$defs/Pt"},"q":{"$ref":"#/definitions/Q"}},"$defs":{"Pt":{"type":"object","properties":{"x":{"type":"number"}},"required":["x"]}},"definitions":{"Q":{"type":"string"}}}`,
			`{ p?: { x: number }; q?: string }`},
		{`{"type":"object","properties":{"my-key":{"type":"string"},"any":{}}}`, `{ "my-key"?: string; any?: unknown }`},
		{`{"type":"object","properties":{}}`, `{}`},
		{`{"type":"object","properties":{"both":{"allOf":[{"type":"object","properties":{"a":{"type":"string"}}},{"anyOf":[{"type":"string"},{"type":"null"}]}]}}}`,
			`{ both?: { a?: string } & (string | null) }`},
		{`{"type":"object","properties":{"pair":{"type":"array","prefixItems":[{"type":"string"},{"type":"number"}]}}}`,
			`{ pair?: [string, number] }`},
		{`{"type":"object","properties":{"s":{"enum":["a\"b","<x>"]}}}`, `{ s?: "a\"b" | "<x>" }`},
	}
	for _, c := range cases {
		got, ok := RenderInput(json.RawMessage(c.schema), Bounds{})
		if !ok || got != c.want {
			t.Errorf("RenderInput(%s)\n got %q complete=%v\nwant %q", c.schema, got, ok, c.want)
		}
	}
}

func TestRenderIncomplete(t *testing.T) {
	many := func(n int, f func(i int) string) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = f(i)
		}
		return strings.Join(parts, ",")
	}
	cases := map[string]string{
		"empty":          ``,
		"invalid JSON":   `{"type":`,
		"trailing data":  `{} {}`,
		"not a schema":   `[1,2]`,
		"recursive ref":  `{"type":"object","properties":{"n":{"$ref":"#/$defs/Node"}},"$defs":{"Node":{"type":"object","properties":{"next":{"$ref":"#/$defs/Node"}}}}}`,
		"remote ref":     `{"$ref":"https://example.com/s.json"}`,
		"missing ref":    `{"$ref":"#/$defs/Nope"}`,
		"too many props": `{"type":"object","properties":{` + many(25, func(i int) string { return fmt.Sprintf(`"p%d":{"type":"string"}`, i) }) + `}}`,
		"too many enums": `{"type":"object","properties":{"e":{"enum":[` + many(13, func(i int) string { return fmt.Sprint(i) }) + `]}}}`,
		"too many union": `{"anyOf":[` + many(9, func(int) string { return `{"type":"string"}` }) + `]}`,
		"too deep":       strings.Repeat(`{"type":"object","properties":{"a":`, 5) + `{"type":"string"}` + strings.Repeat(`}}`, 5),
		"too long":       `{"type":"object","properties":{` + many(20, func(i int) string { return fmt.Sprintf(`"property_number_%d":{"type":"string"}`, i) }) + `}}`,
		"unknown type":   `{"type":"strange"}`,
	}
	for name, s := range cases {
		if sig, ok := RenderInput(json.RawMessage(s), Bounds{}); ok {
			t.Errorf("%s: complete with %q, want incomplete", name, sig)
		}
	}
	// Depth 4 is within the default bound.
	ok4 := strings.Repeat(`{"type":"object","properties":{"a":`, 4) + `{"type":"string"}` + strings.Repeat(`}}`, 4)
	if sig, ok := RenderInput(json.RawMessage(ok4), Bounds{}); !ok || sig != `{ a?: { a?: { a?: { a?: string } } } }` {
		t.Errorf("depth 4: %q %v", sig, ok)
	}
	// A bound can be raised.
	if _, ok := RenderInput(json.RawMessage(cases["too many props"]), Bounds{MaxProps: 30, MaxLen: 1000}); !ok {
		t.Error("raised MaxProps still incomplete")
	}
}

func TestRenderOutputOpenIsIncomplete(t *testing.T) {
	for _, s := range []string{`{}`, `true`, `{"type":"object"}`, `{"type":"object","properties":{"x":{}}}`, `{"type":"array"}`} {
		if sig, ok := RenderOutput(json.RawMessage(s), Bounds{}); ok {
			t.Errorf("RenderOutput(%s) = %q complete; open schemas get no hint", s, sig)
		}
	}
	sig, ok := RenderOutput(json.RawMessage(`{"type":"array","items":{"type":"object","properties":{"id":{"type":"string"},"paid":{"type":"boolean"}},"required":["id","paid"]}}`), Bounds{})
	if !ok || sig != `Array<{ id: string; paid: boolean }>` {
		t.Errorf("output hint: %q %v", sig, ok)
	}
	// The same open part is fine in an input signature.
	if sig, ok := RenderInput(json.RawMessage(`{"type":"object","properties":{"x":{}}}`), Bounds{}); !ok || sig != `{ x?: unknown }` {
		t.Errorf("input with open part: %q %v", sig, ok)
	}
}

// hostileSchemas are large or deep inputs that must cost bounded time.
func hostileSchemas() map[string][]byte {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i := 0; b.Len() < 1<<20; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"p%d":{"type":"string","description":"padding padding padding padding"}`, i)
	}
	b.WriteString(`}}`)
	deep := strings.Repeat(`{"type":"object","properties":{"a":`, 200) + `{"type":"string"}` + strings.Repeat(`}}`, 200)
	// 400 KiB of nested arrays: under the byte cap, far over any depth.
	arr := strings.Repeat("[", 200<<10) + strings.Repeat("]", 200<<10)
	// Exponential $ref fan-out ("billion laughs"): each level refers to the
	// previous one twice.
	var refs strings.Builder
	refs.WriteString(`{"$ref":"#/$defs/d30","$defs":{"d0":{"type":"string"}`)
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&refs, `,"d%d":{"anyOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]}`, i, i-1, i-1)
	}
	refs.WriteString(`}}`)
	return map[string][]byte{"1MB": []byte(b.String()), "depth200": []byte(deep), "nested arrays": []byte(arr), "ref fan-out": []byte(refs.String())}
}

func TestRenderHostileSchemasIncomplete(t *testing.T) {
	for name, s := range hostileSchemas() {
		if sig, ok := RenderInput(s, Bounds{}); ok {
			t.Errorf("%s: complete (%d bytes of signature), want incomplete", name, len(sig))
		}
		if _, ok := RenderOutput(s, Bounds{}); ok {
			t.Errorf("%s: output complete, want incomplete", name)
		}
		var n int
		walkParams(s, func(string, string) { n++ })
		if n > maxIndexParams {
			t.Errorf("%s: walkParams visited %d params", name, n)
		}
	}
}

// BenchmarkRenderHostile measures the bounded cost of hostile schemas
// (a 1 MB schema is rejected by size; the others are walked within the
// node and depth budgets).
func BenchmarkRenderHostile(b *testing.B) {
	for name, s := range hostileSchemas() {
		b.Run(strings.ReplaceAll(name, " ", "_"), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				RenderInput(s, Bounds{})
			}
		})
	}
}

func BenchmarkRenderInputTypical(b *testing.B) {
	s := json.RawMessage(`{"type":"object","properties":{"owner":{"type":"string"},"repo":{"type":"string"},"title":{"type":"string"},"body":{"type":"string"},"labels":{"type":"array","items":{"type":"string"}},"state":{"enum":["open","closed"]}},"required":["owner","repo","title"]}`)
	for i := 0; i < b.N; i++ {
		RenderInput(s, Bounds{})
	}
}

// FuzzRenderInput: any bytes render without panicking, a complete
// signature respects MaxLen, and the index's parameter walk stays bounded.
func FuzzRenderInput(f *testing.F) {
	for _, s := range []string{
		`{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`,
		`{"$ref":"#/$defs/a","$defs":{"a":{"$ref":"#/$defs/a"}}}`,
		`{"anyOf":[{"type":"string"},{"type":"null"}]}`,
		`{"type":"array","items":[{"type":"string"}]}`,
		`[[[[`, `true`, `{"enum":[{"a":1}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, render := range []func(json.RawMessage, Bounds) (string, bool){RenderInput, RenderOutput} {
			sig, ok := render(data, Bounds{})
			if ok && len(sig) > DefaultBounds().MaxLen {
				t.Fatalf("complete signature of %d bytes", len(sig))
			}
			if !ok && sig != "" {
				t.Fatalf("incomplete with signature %q", sig)
			}
		}
		n := 0
		walkParams(data, func(string, string) { n++ })
		if n > maxIndexParams {
			t.Fatalf("%d params", n)
		}
	})
}
