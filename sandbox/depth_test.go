package sandbox

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dop251/goja"
)

// nest is a body prefix that builds a, an array nested depth levels deep
// ([] is one level, [[]] two).
func nest(depth int) string {
	return fmt.Sprintf("let a = []; for (let i = 1; i < %d; i++) a = [a];\n", depth)
}

// TestDeepValues: values nested deeper than
// MaxValueDepth end with an error naming the limit — the returned value,
// the arguments of a bridge call, a console.log argument, a thrown value —
// never a dead worker; and a value 100,000 levels deep is refused at once
// (JSON.stringify's circular-structure check is quadratic in the depth:
// 48 s of worker CPU before the limit). A value at the limit still passes.
func TestDeepValues(t *testing.T) {
	p := newPool(t, nil)
	fb := &fakeBridge{}
	run := func(body string) *Result {
		t.Helper()
		return p.Run(context.Background(), body, 8*time.Second, fb.serve)
	}
	tooDeep := fmt.Sprintf("the returned value is nested deeper than %d levels", MaxValueDepth)
	for _, depth := range []int{MaxValueDepth + 1, 10000, 100000} {
		r := run(nest(depth) + "return a;")
		if r.OK || r.TimedOut || !strings.Contains(r.Error, tooDeep) {
			t.Errorf("return of depth %d: ok=%v timedOut=%v error %.200q; want %q", depth, r.OK, r.TimedOut, r.Error, tooDeep)
		}
	}
	r := run(nest(MaxValueDepth) + "return a;")
	if !r.OK || !strings.HasPrefix(string(r.Value), strings.Repeat("[", MaxValueDepth)+"]") {
		t.Errorf("return of depth %d (the limit): ok=%v error %q value %.40s", MaxValueDepth, r.OK, r.Error, r.Value)
	}
	r = run(nest(MaxValueDepth) + "return {a};")
	if r.OK || !strings.Contains(r.Error, tooDeep) {
		t.Errorf("{a} of depth %d: ok=%v error %q", MaxValueDepth+1, r.OK, r.Error)
	}

	argsDeep := fmt.Sprintf("the arguments of openclaw.tools.call are nested deeper than %d levels", MaxValueDepth)
	for _, depth := range []int{MaxValueDepth + 1, 20000, 100000} {
		r := run(nest(depth) + "try { await openclaw.tools.call('mcp:gh:create_issue', {a}); } catch (e) { return e.message; }")
		if !r.OK || !strings.Contains(string(r.Value), argsDeep) {
			t.Errorf("call arguments of depth %d: ok=%v error %q value %.200s; want %q", depth+1, r.OK, r.Error, r.Value, argsDeep)
		}
	}
	fb.mu.Lock()
	reached := len(fb.ops)
	fb.mu.Unlock()
	if reached != 0 {
		t.Errorf("%d too-deep calls reached the bridge", reached)
	}
	r = run(nest(MaxValueDepth-1) + "return (await openclaw.tools.call('mcp:gh:create_issue', {a})).tool;")
	if !r.OK || string(r.Value) != `"mcp:gh:create_issue"` {
		t.Errorf("call arguments at the limit: ok=%v error %q value %s", r.OK, r.Error, r.Value)
	}

	r = run(nest(100000) + "console.log(a); console.log('next'); return 1;")
	if !r.OK || len(r.Logs) != 2 || !strings.Contains(r.Logs[0].Text, fmt.Sprintf("nested deeper than %d levels", MaxValueDepth)) || r.Logs[1].Text != "next" {
		t.Errorf("console.log of depth 100000: ok=%v error %q logs %+v", r.OK, r.Error, r.Logs)
	}
	r = run(nest(100000) + "throw a;")
	if r.OK || r.TimedOut || strings.Contains(r.Error, "worker died") || !strings.Contains(r.Error, "nested deeper than") {
		t.Errorf("throw of depth 100000: ok=%v timedOut=%v error %.200q", r.OK, r.TimedOut, r.Error)
	}
}

// BenchmarkStringifyBounded measures what the depth check costs
// JSON.stringify: a 20,000-element array of small objects (about 830 KB
// of JSON, 140,000 values), plain and with stringifyBounded's replacer.
func BenchmarkStringifyBounded(b *testing.B) {
	w := &jsWorker{pending: map[int64]*pendingCall{}}
	w.setup()
	v, err := w.vm.RunString(`const o = []; for (let i = 0; i < 20000; i++) o.push({a: i, b: "xx", c: [1, 2, {d: null}]}); o`)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("plain", func(b *testing.B) {
		for b.Loop() {
			if _, err := w.jsonStringify(goja.Undefined(), v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("bounded", func(b *testing.B) {
		for b.Loop() {
			if _, deep, err := w.stringifyBounded(v, MaxValueDepth); err != nil || deep {
				b.Fatal(err, deep)
			}
		}
	})
}
