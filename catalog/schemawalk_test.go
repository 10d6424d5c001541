package catalog

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// schemaCases are schemas on the edges of what fastParamRoot decides:
// cases, escapes, repeats, type mismatches, invalid JSON.
var schemaCases = []string{
	`{}`,
	`{"type":"object","properties":{}}`,
	`{"type":"object","properties":{"path":{"type":"string","description":"File path"}}}`,
	`{"properties":{"a":{"description":"x","properties":{"b":{"description":"y","properties":{"c":{"description":"z","properties":{"d":{}}}}}}}}}`,
	`{"properties":{"a":{"items":{"properties":{"b":{"items":{"properties":{"c":{"description":"deep"}}}}}}}}}`,
	`{"properties":{"a":{"items":[{"type":"string"}]}}}`,
	`{"properties":{"a":{"description":5}}}`,
	`{"properties":{"a":{"description":null}}}`,
	`{"properties":{"a":true}}`,
	`{"properties":[]}`,
	`{"properties":null}`,
	`{"Properties":{"a":{}}}`,
	`{"PROPERTIES":{"a":{}}}`,
	`{"properties":{"a":{"Description":"case"}}}`,
	`{"properties":{"a":{"descriptıon":"dotless"}}}`,
	`{"properties":{"a":{"deſcription":"long s"}}}`,
	`{"properties":{"a":{"descr\u0069ption":"escaped key"}}}`,
	`{"properties":{"a\u00e9":{"description":"escaped name"}}}`,
	`{"properties":{"é":{"description":"caf\u00e9 \"quoted\" \\ \/ \b\f\n\r\t \ud83d\ude00 \ud800"}}}`,
	"{\"properties\":{\"a\":{\"description\":\"bad \xff utf8\"}}}",
	"{\"properties\":{\"\xfe\":{\"description\":\"bad key\"}}}",
	`{"properties":{"a":{"description":"one","description":"two"}}}`,
	`{"properties":{"a":{"description":"one"},"a":{"type":"string"}}}`,
	`{"properties":{"a":{}},"properties":{"b":{}}}`,
	`{"properties":{"a":{"type":"number","minimum":-1.5e+10,"maximum":0,"enum":[1,2.5,-0,1E3,true,false,null,"s",[],{}]}}}`,
	`{"properties":{"a":{"type":"number","minimum":01}}}`,
	`{"properties":{"a":{"type":"number","minimum":1.}}}`,
	`{"properties":{"a":{"type":"number","minimum":-}}}`,
	`{"properties":{"a":{}}} x`,
	`{"properties":{"a":{}},}`,
	`{"properties":{"a":{},}}`,
	`{"properties":{"a" {}}}`,
	`{"properties":{"a":{}}`,
	`{"properties":{"a":{"description":"ctl` + "\x01" + `"}}}`,
	`{"properties":{"a":{"description":"\x"}}}`,
	`{"properties":{"a":{"description":"\u12"}}}`,
	`{"properties":{"a":{"default":tru}}}`,
	`{"properties":{"a":{"default":nul}}}`,
	` {"properties" : { "a" : { "description" : "spaced" } } } `,
	`{"description":"root desc is no field","items":{"properties":{"x":{}}},"properties":{"q":{"items":{"description":"not a field","properties":{"r":{"description":"R"}}}}}}`,
	`{"properties":{"a":{"items":{"Properties":{"b":{}}}}}}`,
	`{"properties":{"a":{"properties":{"b":{"properties":{"c":{"properties":{"x":{"description":"level 4"}}}}}}}}}`,
	`{"properties":{"a":{"properties":{"b":{"items":{"properties":{"c":{"description":"L3 via items"}}}}}}}}`,
	`{"properties":{"a":{"properties":{"b":{"properties":{"c":{"Description":"leaf case"}}}}}}}`,
	`{"properties":{"a":{"properties":{"b":{"properties":{"c":{"description":"x"},"c":{}}}}}}}`,
}

// decodeBoth decodes s with fastParamRoot and with encoding/json
// (decodeParamRoot's way); ok is what fastParamRoot reported.
func decodeBoth(s []byte) (fast, slow paramRoot, slowOK, ok bool) {
	raw := bytes.TrimSpace(s)
	if len(raw) == 0 || raw[0] != '{' {
		return
	}
	ok = fastParamRoot(raw, &fast)
	err := json.Unmarshal(raw, &slow)
	_, typeErr := err.(*json.UnmarshalTypeError)
	slowOK = err == nil || typeErr
	return
}

// TestFastParamRootAgreesWithJSON: wherever fastParamRoot answers, its
// result is encoding/json's (and the JSON was valid for encoding/json);
// it answers for the plain schemas, and for every schema of the bench's
// tool sets but a few.
func TestFastParamRootAgreesWithJSON(t *testing.T) {
	for _, c := range schemaCases {
		fast, slow, slowOK, ok := decodeBoth([]byte(c))
		if ok && (!slowOK || !reflect.DeepEqual(fast, slow)) {
			t.Errorf("%s: fast %+v, encoding/json %+v (ok %v)", c, fast, slow, slowOK)
		}
	}
	for _, c := range schemaCases[:5] {
		if _, _, _, ok := decodeBoth([]byte(c)); !ok {
			t.Errorf("%s: fastParamRoot gave up on a plain schema", c)
		}
	}
	d := benchDataDir(t)
	if d == "" {
		return
	}
	files, _ := filepath.Glob(filepath.Join(d, "*", "tools.jsonl"))
	n, taken := 0, 0
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			continue
		}
		tools, err := LoadBenchTools(f)
		if err != nil {
			continue
		}
		for _, e := range BenchEntries(tools, "") {
			fast, slow, slowOK, ok := decodeBoth(e.InputSchema)
			if len(bytes.TrimSpace(e.InputSchema)) == 0 {
				continue
			}
			n++
			if ok {
				taken++
				if !slowOK || !reflect.DeepEqual(fast, slow) {
					t.Errorf("%s %s: fast and encoding/json differ", f, e.ID)
				}
			}
		}
	}
	t.Logf("bench schemas: %d, decided by fastParamRoot: %d", n, taken)
	if taken < n*99/100 {
		t.Errorf("fastParamRoot decided %d of %d bench schemas, want >= 99%%", taken, n)
	}
}

// FuzzFastParamRoot: fastParamRoot never disagrees with encoding/json.
func FuzzFastParamRoot(f *testing.F) {
	for _, c := range schemaCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fast, slow, slowOK, ok := decodeBoth(b)
		if ok && (!slowOK || !reflect.DeepEqual(fast, slow)) {
			t.Errorf("%q: fast %+v, encoding/json %+v (ok %v)", b, fast, slow, slowOK)
		}
	})
}
