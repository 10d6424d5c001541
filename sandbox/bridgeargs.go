package sandbox

import (
	"strings"

	"github.com/dop251/goja"
)

// bridgeArgs is the JSON array of a bridge call's arguments, each argument
// written by the original JSON.stringify (stringifyBounded; an argument
// JSON has no text for, such as undefined or a function, is null, as in
// an array), the brackets and commas around them by the worker itself.
//
// Why not JSON.stringify of an array holding the arguments, as before:
// that array was a script-visible object, so a script
// that had set Object.prototype.toJSON or Array.prototype.toJSON, or an
// accessor at an array index on Array.prototype, changed the array itself
// and broke every bridge call of its run ("search: arguments are not a
// JSON array"). What this guards against: model-written code, untrusted,
// breaking the bridge's own framing, by mistake or on purpose; no object
// of the script takes part in it now. What it does not change: each
// argument is the script's own value and is written as JSON.stringify
// writes it, its toJSON methods included (Date.prototype.toJSON gives a
// date's ISO text, as in any JavaScript runtime); a toJSON the script put
// on a prototype therefore still changes its own arguments, and a call
// that then fails says so (protoNote). It is not a security boundary: the
// parent checks every call's arguments anyway (the worker's messages are
// untrusted, readMessages).
//
// tooDeep and err are stringifyBounded's: an argument nested deeper than
// MaxValueDepth levels, or a throw of the script's own toJSON, getter or
// Proxy trap.
func (w *jsWorker) bridgeArgs(args []goja.Value) (raw string, tooDeep bool, err error) {
	var b strings.Builder
	b.WriteByte('[')
	for i, a := range args {
		if i > 0 {
			b.WriteByte(',')
		}
		js, deep, err := w.stringifyBounded(a, MaxValueDepth)
		if deep || err != nil {
			return "", deep, err
		}
		if js == nil || goja.IsUndefined(js) {
			b.WriteString("null")
			continue
		}
		b.WriteString(js.String())
	}
	b.WriteByte(']')
	return b.String(), false, nil
}

// protoNote is ": this run's code set Object.prototype.toJSON" (and/or
// Array.prototype.toJSON) followed by why, when the script has put a
// toJSON on the prototype of plain objects or of arrays; "" otherwise. A
// bridge call that fails adds it to its error (checked when it fails, so
// calls that succeed pay nothing), so the model reads why its
// arguments were not what it wrote.
func (w *jsWorker) protoNote(why string) string {
	var set []string
	if w.objectProto != nil && hasOwn(w.objectProto, "toJSON") {
		set = append(set, "Object.prototype.toJSON")
	}
	if w.arrayProto != nil && hasOwn(w.arrayProto, "toJSON") {
		set = append(set, "Array.prototype.toJSON")
	}
	if len(set) == 0 {
		return ""
	}
	return "; note: this run's code set " + strings.Join(set, " and ") + why
}

// hasOwn reports whether o has an own property named key, without running
// any code of the script (no getter, no Proxy trap: o is a built-in
// prototype).
func hasOwn(o *goja.Object, key string) bool {
	for _, k := range o.GetOwnPropertyNames() {
		if k == key {
			return true
		}
	}
	return false
}
