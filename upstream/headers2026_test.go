package upstream

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/paramheader"
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

// TestModernHeaders: a 2026-07-28 request's POST gets MCP-Protocol-Version,
// Mcp-Method and Mcp-Name from its params; a tool that binds arguments to
// Mcp-Param-* headers gets those too; the session's id goes on every POST;
// an older version's request gets none of the 2026-07-28 headers.
func TestModernHeaders(t *testing.T) {
	c := &httpConn{sessionID: "s1"}
	call := func(name string) *jsonrpc.Request {
		return &jsonrpc.Request{Method: "tools/call", Params: json.RawMessage(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"` + name + `","arguments":{"q":"v"}}`)}
	}
	header := func(ctx context.Context, r *jsonrpc.Request) http.Header {
		h := c.postHeader()
		c.setModernHeaders(ctx, h, r)
		return h
	}
	ctx := context.Background()
	a := header(ctx, call("a"))
	if a.Get("Mcp-Name") != "a" || a.Get("Mcp-Method") != "tools/call" || a.Get("Mcp-Protocol-Version") != "2026-07-28" ||
		a.Get("Content-Type") != "application/json" || a.Get("Mcp-Session-Id") != "s1" || a.Get("Mcp-Param-Query") != "" {
		t.Fatalf("headers %v", a)
	}
	bound := paramheader.Bindings(json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","x-mcp-header":"Query"}}}`))
	if len(bound) == 0 {
		t.Fatal("no binding from the schema")
	}
	if p := header(context.WithValue(ctx, paramBindingsKey{}, bound), call("a")); p.Get("Mcp-Param-Query") == "" || p.Get("Mcp-Name") != "a" {
		t.Fatalf("bound call headers %v", p)
	}
	old := &jsonrpc.Request{Method: "tools/call", Params: json.RawMessage(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"},"name":"a"}`)}
	if h := header(ctx, old); h.Get("Mcp-Method") != "" || h.Get("Mcp-Session-Id") != "s1" {
		t.Fatalf("2025-11-25 request headers %v", h)
	}
}
