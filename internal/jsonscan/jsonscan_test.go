package jsonscan

import (
	"errors"
	"strings"
	"testing"
)

func TestObject(t *testing.T) {
	var keys, vals []string
	depth, err := Object([]byte(` {"a" : 1, "b\"c":{"x":[1,{"y":"}"}]}, "d":null,"e":"s"} `), func(k, v []byte) bool {
		keys = append(keys, string(k))
		vals = append(vals, string(v))
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(keys, "|") != `a|b\"c|d|e` || vals[1] != `{"x":[1,{"y":"}"}]}` || vals[3] != `"s"` {
		t.Fatalf("keys %q vals %q", keys, vals)
	}
	if depth != 4 {
		t.Fatalf("depth %d, want 4", depth)
	}
	for _, bad := range []string{`{not json}`, `{"a":1`, `{"a" 1}`, `{"a":[1}`, `{"a":1}x`, `{"a":tru}`, `{"a":"x` + "\n" + `"}`} {
		if _, err := Object([]byte(bad), func(k, v []byte) bool { return true }); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
	for _, notObj := range []string{`[1,2,3]`, `"x"`, ``, `  `} {
		if _, err := Object([]byte(notObj), func(k, v []byte) bool { return true }); !errors.Is(err, ErrNotObject) {
			t.Errorf("%q: %v, want ErrNotObject", notObj, err)
		}
	}
	if d, err := Object([]byte(`{}`), nil); err != nil || d != 1 {
		t.Fatalf("{}: %d %v", d, err)
	}
}

func TestArrayAndDepth(t *testing.T) {
	var got []string
	if err := Array([]byte(`[ {"a":1}, 2 ,"x"]`), func(e []byte) bool { got = append(got, string(e)); return true }); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "|") != `{"a":1}|2|"x"` {
		t.Fatalf("%q", got)
	}
	deep := strings.Repeat(`{"a":`, 1500) + "1" + strings.Repeat("}", 1500)
	if d := Depth([]byte(deep)); d != 1500 {
		t.Fatalf("depth %d", d)
	}
	end, d, err := Value([]byte(deep), 0)
	if err != nil || end != len(deep) || d != 1500 {
		t.Fatalf("Value: %d %d %v", end, d, err)
	}
	if d := Depth([]byte(`{"s":"[[[[\"]]"}`)); d != 1 {
		t.Fatalf("strings counted: %d", d)
	}
}

func BenchmarkObject(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","id":12,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 1000) + `"}],"isError":false}}`)
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	for b.Loop() {
		_, _ = Object(msg, func(k, v []byte) bool { return true })
	}
}
