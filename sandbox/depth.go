package sandbox

import (
	"fmt"

	"github.com/dop251/goja"
)

// MaxValueDepth is how deeply arrays and objects may nest, one inside the
// other, in a value that leaves a script as JSON: the returned value, the
// arguments of a bridge call (each argument counted on its own), a
// console argument. [] is one level, [[]] or {"a": {}} two.
//
// Trust: the script is model-written and untrusted. Without the limit a
// deep value killed the worker (Go's encoding/json refuses more than 10,000
// levels, so the worker could not send its result or its call: "exited
// with status 1 without a result"), and goja's JSON.stringify checks for a
// circular structure by scanning the whole path at every level, so its
// work grows with the square of the depth (100,000 levels: 48 s of worker
// CPU before anything was sent). 1,000 levels is far
// past any value a model returns or a tool takes, leaves Go's limit room
// for the envelopes around the value, and costs the check under a million
// steps. The cap is applied while stringify walks (stringifyBounded), so a
// too-deep value costs at most MaxValueDepth levels of that walk.
const MaxValueDepth = 1000

// stringifyBounded is JSON.stringify(v) with the original stringify
// (captured before the script ran), stopped as soon as it meets an array or
// object nested deeper than limit levels: it then returns tooDeep = true
// (err is the stop). Levels count from v itself: with v an array of a
// bridge call's arguments, pass MaxValueDepth+1 so that each argument may
// nest MaxValueDepth levels.
//
// How: stringify calls a replacer for every value it writes, with the
// holder (the array or object the value is in) as this. The replacer keeps
// the path from the root to the current holder (stringify walks depth
// first, so the holder is always on the path), so the depth of a value is
// the length of the path, found in amortized constant time; values pass
// through it unchanged, so the output, and the user code stringify runs
// (toJSON, getters, Proxy traps), are exactly those of JSON.stringify(v).
func (w *jsWorker) stringifyBounded(v goja.Value, limit int) (js goja.Value, tooDeep bool, err error) {
	var path []*goja.Object // path[0] is stringify's root holder {"": v}
	replacer := w.vm.ToValue(func(call goja.FunctionCall) goja.Value {
		value := call.Argument(1)
		holder, _ := call.This.(*goja.Object)
		if len(path) == 0 {
			path = append(path, holder)
		}
		for len(path) > 1 && path[len(path)-1] != holder {
			path = path[:len(path)-1]
		}
		if o, ok := value.(*goja.Object); ok {
			if _, isFunc := goja.AssertFunction(o); !isFunc {
				if len(path) > limit {
					tooDeep = true
					panic(w.vm.NewTypeError(fmt.Sprintf("value nested deeper than %d levels", limit)))
				}
				path = append(path, o)
			}
		}
		return value
	})
	js, err = w.jsonStringify(goja.Undefined(), v, replacer)
	return js, tooDeep, err
}
