package modes

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestPrototypeEditsKeepBridge: a run whose code edits the
// prototypes JSON.stringify consults (Object.prototype.toJSON,
// Array.prototype.toJSON, an accessor at an array index) broke its own
// bridge calls with "search: arguments are not a JSON array": the worker
// put the arguments in a script-visible array and stringified that. The
// worker now writes the array around the arguments itself, so the calls go
// through; a call whose own arguments the edit changed fails with a
// message naming the edit.
func TestPrototypeEditsKeepBridge(t *testing.T) {
	env := newTestEnv(t)
	c := newTestCode(t, 1)
	for _, edit := range []string{
		`Object.prototype.toJSON = function () { return "tampered"; };`,
		`Array.prototype.toJSON = function () { return {not: "an array"}; };`,
		`Object.defineProperty(Array.prototype, "0", {get() { return "x"; }, set(v) {}, configurable: true});`,
		`Object.defineProperty(Array.prototype, "length", {value: 0, writable: false});`,
	} {
		r, out := runCode(t, c, env, edit+`
const hits = await openclaw.tools.search("create a GitHub issue", 3);
const d = await openclaw.tools.describe(hits[0].id);
return {n: hits.length, id: d.id};`)
		if !out.OK || r.IsError {
			t.Errorf("%s\n  the run's own bridge calls failed: %s", edit, resultText(t, r))
			continue
		}
		var v struct {
			N  int    `json:"n"`
			ID string `json:"id"`
		}
		if err := json.Unmarshal(out.Value, &v); err == nil && (v.N == 0 || v.ID == "") {
			t.Errorf("%s\n  value %s", edit, out.Value)
		}
	}

	// The edit changes the call's own arguments ({limit: 3} is written
	// "tampered" by the script's toJSON): the error says so.
	r, out := runCode(t, c, env, `Object.prototype.toJSON = function () { return "tampered"; };
return await openclaw.tools.search("create a GitHub issue", {limit: 3});`)
	if out.OK {
		t.Fatalf("options turned into a string by the script's toJSON were accepted: %s", out.Value)
	}
	got := resultText(t, r)
	t.Logf("%s", got)
	if !strings.Contains(got, "Object.prototype.toJSON") {
		t.Errorf("the error does not name the script's edit:\n%s", got)
	}
}
