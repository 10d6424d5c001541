package goja

import (
	"errors"
	"testing"
)

type noMethodsPoint struct {
	X, Y int
}

func (p noMethodsPoint) Sum() int       { return p.X + p.Y }
func (p *noMethodsPoint) Scale(k int)   { p.X *= k; p.Y *= k }
func (p noMethodsPoint) String() string { return "point" }

// A Go value handed to a script shows its fields, not its methods; fmt.Stringer and error
// still give its string form, and Go functions stay callable.
func TestGoValueMethodsNotExposed(t *testing.T) {
	vm := New()
	if err := vm.Set("p", &noMethodsPoint{X: 1, Y: 2}); err != nil {
		t.Fatal(err)
	}
	if err := vm.Set("e", errors.New("boom")); err != nil {
		t.Fatal(err)
	}
	if err := vm.Set("add", func(a, b int) int { return a + b }); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		script string
		want   any
	}{
		{"p.X + p.Y", int64(3)},
		{"typeof p.Sum", "undefined"},
		{"typeof p.Scale", "undefined"},
		{"Object.keys(p).join()", "X,Y"},
		{"String(p)", "point"},
		{"String(e)", "boom"},
		{"typeof e.Error", "undefined"},
		{"add(2, 3)", int64(5)},
		{"p.X = 7; p.X", int64(7)},
		{"'Sum' in p", false},
	} {
		script, want := c.script, c.want
		v, err := vm.RunString(script)
		if err != nil {
			t.Fatalf("%s: %v", script, err)
		}
		if got := v.Export(); got != want {
			t.Errorf("%s = %#v, want %#v", script, got, want)
		}
	}
}
