package jsonscan

import (
	"bytes"
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

// checkNested compares ObjectNested and ObjectMembers with Object on data:
// the same depth and error, the members fn sees, and records that hold
// exactly the members Object shows of the object they were made from.
func checkNested(t *testing.T, data []byte, key string) {
	t.Helper()
	type kv struct{ k, v string }
	var want, got []kv
	var last []byte
	wd, werr := Object(data, func(k, v []byte) bool { want = append(want, kv{string(k), string(v)}); return true })
	var in Members
	gd, gerr := ObjectNested(data, key, &in, func(k, v []byte) bool {
		got = append(got, kv{string(k), string(v)})
		if string(k) == key {
			last = v
		}
		return true
	})
	if wd != gd || (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
		t.Fatalf("%q: ObjectNested %d %v, Object %d %v", data, gd, gerr, wd, werr)
	}
	if len(want) != len(got) {
		t.Fatalf("%q: members %q, want %q", data, got, want)
	}
	for i := range want {
		if want[i] != got[i] {
			t.Fatalf("%q: members %q, want %q", data, got, want)
		}
	}
	checkRecord := func(m *Members, obj []byte) {
		t.Helper()
		if !m.Complete(obj) {
			return
		}
		var inner []kv
		if _, err := Object(obj, func(k, v []byte) bool { inner = append(inner, kv{string(k), string(v)}); return true }); err != nil {
			t.Fatalf("%q: a Complete record of malformed %q: %v", data, obj, err)
		}
		if len(inner) != m.Len() {
			t.Fatalf("%q: record of %q has %d members, Object shows %d", data, obj, m.Len(), len(inner))
		}
		for i := range inner {
			if k, v := m.At(obj, i); string(k) != inner[i].k || string(v) != inner[i].v {
				t.Fatalf("%q: record member %d %q:%q, want %q", data, i, k, v, inner[i])
			}
		}
	}
	if len(last) > 0 {
		checkRecord(&in, last)
		if gerr == nil && last[0] == '{' && len(want) > 0 {
			if _, err := Object(last, nil); err == nil && len(want) <= maxMembers && !in.Complete(last) {
				// a well-formed inner object of few members is recorded
				n := 0
				_, _ = Object(last, func(_, _ []byte) bool { n++; return true })
				if n <= maxMembers && Depth(last) < 64 {
					t.Fatalf("%q: inner object %q not recorded", data, last)
				}
			}
		}
	} else if in.Complete(data) {
		t.Fatalf("%q: a record without a member %q", data, key)
	}
	// Two levels: the same depth and error; in2 holds the last "_meta"
	// object of the object in records.
	var in1, in2 Members
	d2, err2 := ObjectNested2(data, key, &in1, "_meta", &in2, func(_, _ []byte) bool { return true })
	if d2 != wd || (err2 == nil) != (werr == nil) || werr != nil && werr.Error() != err2.Error() {
		t.Fatalf("%q: ObjectNested2 %d %v, Object %d %v", data, d2, err2, wd, werr)
	}
	if len(last) > 0 && in1.Complete(last) {
		checkRecord(&in1, last)
		var meta []byte
		_, _ = Object(last, func(k, v []byte) bool {
			if string(k) == "_meta" {
				meta = v
			}
			return true
		})
		if len(meta) > 0 {
			checkRecord(&in2, meta)
			if _, merr := Object(meta, nil); merr == nil && !in2.Complete(meta) && strings.Count(string(meta), ",") < maxMembers && Depth(meta) < 60 {
				t.Fatalf("%q: inner _meta %q not recorded", data, meta)
			}
		}
	}
	var all Members
	md, merr := ObjectMembers(data, &all)
	if md != wd || (merr == nil) != (werr == nil) {
		t.Fatalf("%q: ObjectMembers %d %v, Object %d %v", data, md, merr, wd, werr)
	}
	checkRecord(&all, data)
	if merr == nil && len(want) <= maxMembers && len(data) > 0 && data[0] == '{' && data[len(data)-1] == '}' && !all.Complete(data) {
		t.Fatalf("%q: not recorded", data)
	}
}

func TestObjectNested(t *testing.T) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":[1,{"b":2}]},"_meta":{"k":"v"}}}`,
		`{"params":{"a":1},"params":{"b":2}}`,
		`{"params":{"a":1},"params":3}`,
		`{"params":{"_meta":{"a":1},"x":2,"_meta":{"b":[2]}}}`,
		`{"params":{"_meta":{"a":1}},"params":{"x":1}}`,
		`{"params":{"_meta":{"a" 1}}}`,
		`{"params":{"_meta":{"a":1},"x":tru}}`,
		`{"params":{"a" 1}}`,
		`{"params":{"a":tru}}`,
		`{"params":{"a":1}x}`,
		`{"params":{"a":1,}}`,
		`{"params":{}}`,
		` {"params":{"a":1}} `,
		`{"params":{"1":1,"2":2,"3":3,"4":4,"5":5,"6":6,"7":7,"8":8,"9":9}}`,
		`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8}`,
		`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9}`,
		`{"params":{"a":"x` + "\n" + `"}}`,
		`{"params":{"a":[}}`,
		`[1]`, ``, `{"params":`, `{"params":{"a":1}`,
	} {
		checkNested(t, []byte(s), "params")
	}
	var m Members
	obj := []byte(`{"a":1}`)
	if _, err := ObjectMembers(obj, &m); err != nil || !m.Complete(obj) || m.Complete(bytes.Clone(obj)) {
		t.Fatalf("a record belongs to its own text: %v", err)
	}
}

func FuzzObjectNested(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":[1,{"b":2}]},"_meta":{"k":"v"}}}`,
		`{"params":{"a":1},"params":{"b":2}}`, `{"params":{"a" 1}}`, `{"params":{"_meta":{"a":1},"_meta":{"b":2}}}`, `{"result":{"content":[],"isError":true}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkNested(t, data, "params")
		checkNested(t, data, "result")
	})
}
