package upstream

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestScanModernParamsAgreesWithDecode: wherever the scan answers, it
// answers as encoding/json reads the params (the server's reading); the
// shapes it leaves to the decode are the ones that read differently.
func TestScanModernParamsAgreesWithDecode(t *testing.T) {
	const v = `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`
	cases := []struct {
		params string
		scans  bool
	}{
		{`{"_meta":{` + v + `},"name":"list_issues","arguments":{"name":"x","uri":"y"}}`, true},
		{`{"name":"a","_meta":{"other":{"k":[1,2]},` + v + `}}`, true},
		{`{"_meta":{` + v + `},"uri":"file:///a b"}`, true},
		{` { "_meta" : { "io.modelcontextprotocol/protocolVersion" : "2025-11-25" } } `, true},
		{`{"_meta":{` + v + `},"name":"\u00e9t\u00e9"}`, false}, // escapes in a value
		{`{"_meta":{` + v + `},"Name":"upper"}`, false},         // encoding/json folds case
		{`{"_meta":{` + v + `},"name":"a","name":"b"}`, false},  // repeated: the last wins
		{`{"_meta":{` + v + `},"n\u0061me":"esc"}`, false},      // escaped member name
		{`{"_meta":{` + v + `},"name":null}`, false},
		{`{"_meta":{` + v + `},"name":7}`, false},
		{`{"_meta":null,"name":"a"}`, false},
		{`{"_meta":{},"name":"a"}`, false},
		{`{"_meta":{` + v + `,` + v + `}}`, false},
		{`{"_meta":{"IO.modelcontextprotocol/protocolVersion":"x",` + v + `}}`, false},
		{`{"_meta":{` + v + `},"name":"` + "\xff" + `"}`, false}, // not UTF-8
		{`[1]`, false},
		{`{"_meta":{` + v + `}`, false},
	}
	for _, c := range cases {
		got, ok := scanModernParams([]byte(c.params))
		if ok != c.scans {
			t.Errorf("scanModernParams(%s): ok %v, want %v", c.params, ok, c.scans)
		}
		want, wantOK := decodeModernParams([]byte(c.params))
		if ok && (!wantOK || got != want) {
			t.Errorf("scanModernParams(%s) = %+v, decode reads %+v (ok %v)", c.params, got, want, wantOK)
		}
	}
}

// TestModernHeadersOfAPlainCall: a 2026-07-28 tools/call gets its three
// headers from the scan, with no decode of params (the allocations are
// the header values and their slices only).
func TestModernHeadersOfAPlainCall(t *testing.T) {
	params := json.RawMessage(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}},"name":"list_issues","arguments":{"owner":"octo","repo":"hello","state":"open"}}`)
	msg := &jsonrpc.Request{Method: "tools/call", Params: params}
	h := http.Header{}
	modernHeaders(context.Background(), h, msg)
	if h.Get("Mcp-Protocol-Version") != "2026-07-28" || h.Get("Mcp-Method") != "tools/call" || h.Get("Mcp-Name") != "list_issues" {
		t.Fatalf("headers %v", h)
	}
	h = make(http.Header, 8)
	allocs := testing.AllocsPerRun(100, func() {
		modernHeaders(context.Background(), h, msg)
	})
	// version and name strings, three header slices
	if allocs > 5 {
		t.Fatalf("modernHeaders of a plain tools/call: %v allocations, want <= 5", allocs)
	}
}
