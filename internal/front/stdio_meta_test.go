package front

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/jsonscan"
)

func TestMetaTriple(t *testing.T) {
	const pv, ci, cc = `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`, `"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}`, `"io.modelcontextprotocol/clientCapabilities":{}`
	for _, c := range []struct{ in, rest string }{
		{`{"name":"t","_meta":{` + pv + `,` + ci + `,` + cc + `}}`, `{"name":"t"}`},
		{`{"_meta":{` + pv + `,"progressToken":7,` + cc + `},"name":"t","arguments":{"a":[1]}}`, `{"_meta":{"progressToken":7},"name":"t","arguments":{"a":[1]}}`},
		// Blanks between members, and more members than metaTriple keeps
		// from its one scan (it then scans again): the same rest.
		{"{ \"_meta\" : {" + pv + ", \"k\" : 1 ," + cc + "} , \"name\":\"t\" }", `{"_meta":{"k":1},"name":"t"}`},
		{`{"a1":1,"a2":2,"a3":3,"a4":4,"a5":5,"a6":6,"a7":7,"_meta":{` + pv + `,` + cc + `,"k":1},"name":"t"}`, `{"a1":1,"a2":2,"a3":3,"a4":4,"a5":5,"a6":6,"a7":7,"_meta":{"k":1},"name":"t"}`},
		{`{"_meta":{` + pv + `,"m1":1,"m2":2,"m3":3,"m4":4,"m5":5,"m6":6,"m7":7,"m8":8,"m9":9,` + cc + `},"name":"t"}`, `{"_meta":{"m1":1,"m2":2,"m3":3,"m4":4,"m5":5,"m6":6,"m7":7,"m8":8,"m9":9},"name":"t"}`},
		{`{"_meta":{` + pv + `,` + ci + `,` + cc + `},"n":"t","a1":1,"a2":2,"a3":3,"a4":4,"a5":5,"a6":6,"a7":7,"a8":8}`, `{"n":"t","a1":1,"a2":2,"a3":3,"a4":4,"a5":5,"a6":6,"a7":7,"a8":8}`},
	} {
		checkScannedOnce(t, c.in)
		trip, rest, ok := metaTriple([]byte(c.in), nil, nil, nil)
		if !ok || len(trip) == 0 || string(rest) != c.rest {
			t.Errorf("metaTriple(%s) = %q, %s, %v; want rest %s", c.in, trip, rest, ok, c.rest)
		}
	}
	for _, in := range []string{
		`{"name":"t"}`,
		`{"name":"t","_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25",` + cc + `}}`,
		`{"name":"t","_meta":{` + pv + `,` + ci + `}}`, // no capabilities: the go-sdk's error
		`{"name":"t","_meta":{` + pv + `,` + cc + `,"io.modelcontextprotocol/logLevel":"debug"}}`,
		`{"name":"t","_meta":{` + pv + `,` + cc + `,` + cc + `}}`,
		`{"name":"t","_meta":{` + pv + `,` + cc + `},"_meta":{}}`,
		`{"name":"t","_meta":{"io.modelcontextprotocol\/protocolVersion":"2026-07-28",` + cc + `}}`,
		`{"name":"t","_meta":{"io.modelcontextprotocol/protocolVersion":1,` + cc + `}}`,
		`{"name":"t","_meta":[]}`,
		`{"a1":1,"a2":2,"a3":3,"a4":4,"a5":5,"a6":6,"a7":7,"a8":8,"a9":9,"a2":2,"_meta":{` + pv + `,` + cc + `}}`, // a repeat past keySeen's first 8
	} {
		checkScannedOnce(t, in)
		if _, rest, ok := metaTriple([]byte(in), nil, nil, nil); ok {
			t.Errorf("metaTriple(%s): elided to %s", in, rest)
		}
	}
}

// checkScannedOnce: a request line's params read from the record of the
// line's one scan (scanFront) give metaTriple and CallMembers the same
// answers as scanning them, and the record metaTriple makes of
// rest describes rest.
func checkScannedOnce(t *testing.T, params string) {
	t.Helper()
	f := scanFront([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + params + `}`))
	if f.err != nil {
		return // not a request line: nothing reads params
	}
	if params[0] == '{' && !f.pm.Complete(f.params) && strings.Count(params, ",") < 8 {
		t.Fatalf("%s: the line's scan left no record of params", params)
	}
	var restRec jsonscan.Members
	trip, rest, ok := metaTriple(f.params, &f.pm, &f.mm, &restRec)
	wtrip, wrest, wok := metaTriple(bytes.Clone(f.params), nil, nil, nil)
	if ok != wok || !bytes.Equal(trip, wtrip) || !bytes.Equal(rest, wrest) {
		t.Fatalf("metaTriple(%s) from the record = %q %s %v, scanning %q %s %v", params, trip, rest, ok, wtrip, wrest, wok)
	}
	same := func(raw []byte, rec *jsonscan.Members) {
		t.Helper()
		n, a, m, ok := CallMembers(raw, rec)
		wn, wa, wm, wok := CallMembers(bytes.Clone(raw), nil)
		if ok != wok || !bytes.Equal(n, wn) || !bytes.Equal(a, wa) || !bytes.Equal(m, wm) {
			t.Fatalf("CallMembers(%s) from the record = %s %s %s %v, scanning %s %s %s %v", raw, n, a, m, ok, wn, wa, wm, wok)
		}
	}
	same(f.params, &f.pm)
	if ok {
		if !restRec.Complete(rest) && strings.Count(string(rest), ",") < 8 {
			t.Fatalf("metaTriple(%s): no record of rest %s", params, rest)
		}
		same(rest, &restRec)
	}
}
