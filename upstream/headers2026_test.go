package upstream

import (
	"context"
	"encoding/json"
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

// TestModernPostHeaderOfAPlainCall: a 2026-07-28 tools/call gets its
// three headers from the scan, with no decode of params, and once its
// map is made no map of its own (the allocations left are the version
// and name strings).
func TestModernPostHeaderOfAPlainCall(t *testing.T) {
	params := json.RawMessage(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}},"name":"list_issues","arguments":{"owner":"octo","repo":"hello","state":"open"}}`)
	msg := &jsonrpc.Request{Method: "tools/call", Params: params}
	c := &httpConn{}
	h := c.modernPostHeader(context.Background(), msg)
	if h.Get("Mcp-Protocol-Version") != "2026-07-28" || h.Get("Mcp-Method") != "tools/call" || h.Get("Mcp-Name") != "list_issues" {
		t.Fatalf("headers %v", h)
	}
	allocs := testing.AllocsPerRun(100, func() {
		c.modernPostHeader(context.Background(), msg)
	})
	if allocs > 2 {
		t.Fatalf("modernPostHeader of a plain tools/call: %v allocations, want <= 2", allocs)
	}
}

// TestModernPostHeaderShared: 2026-07-28 requests with the same version,
// method and name share one header map, made with the connection's
// values; a tool that binds arguments to Mcp-Param-* headers gets a map
// of its own per call; a new session state starts the maps anew; an
// older version gets the shared POST header.
func TestModernPostHeaderShared(t *testing.T) {
	c := &httpConn{}
	call := func(name, extraMeta string) *jsonrpc.Request {
		return &jsonrpc.Request{Method: "tools/call", Params: json.RawMessage(`{"_meta":{` + extraMeta + `"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"` + name + `","arguments":{"q":"v"}}`)}
	}
	ctx := context.Background()
	a1 := c.modernPostHeader(ctx, call("a", ""))
	a2 := c.modernPostHeader(ctx, call("a", `"k":1,`))
	b := c.modernPostHeader(ctx, call("b", ""))
	if a1.Get("Mcp-Name") != "a" || b.Get("Mcp-Name") != "b" || a1.Get("Mcp-Method") != "tools/call" ||
		a1.Get("Mcp-Protocol-Version") != "2026-07-28" || a1.Get("Content-Type") != "application/json" || a1.Get("Accept-Encoding") != "gzip" {
		t.Fatalf("headers a %v, b %v", a1, b)
	}
	a1["X-Probe"] = []string{"1"} // a shared map shows it
	if a2["X-Probe"] == nil || b["X-Probe"] != nil {
		t.Fatalf("calls of one tool do not share one map, or of two tools do")
	}
	delete(a1, "X-Probe")

	bound := paramheader.Bindings(json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","x-mcp-header":"Query"}}}`))
	if len(bound) == 0 {
		t.Fatal("no binding from the schema")
	}
	bctx := context.WithValue(ctx, paramBindingsKey{}, bound)
	p1 := c.modernPostHeader(bctx, call("a", ""))
	p2 := c.modernPostHeader(bctx, call("a", ""))
	if p1.Get("Mcp-Param-Query") == "" || p1.Get("Mcp-Name") != "a" || a1.Get("Mcp-Param-Query") != "" {
		t.Fatalf("bound call headers %v; shared %v", p1, a1)
	}
	p1["X-Probe"] = []string{"1"}
	if p2["X-Probe"] != nil {
		t.Fatal("calls with Mcp-Param-* headers share a map")
	}

	c.mu.Lock() // what Write does on a new session id
	c.sidHdr = []string{"s1"}
	c.postHdr, c.modernHdr = nil, nil
	c.mu.Unlock()
	if a3 := c.modernPostHeader(ctx, call("a", "")); a3.Get("Mcp-Session-Id") != "s1" {
		t.Fatalf("after a session id: %v", a3)
	}

	old := &jsonrpc.Request{Method: "tools/call", Params: json.RawMessage(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"},"name":"a"}`)}
	if h := c.modernPostHeader(ctx, old); h.Get("Mcp-Method") != "" || h.Get("Mcp-Session-Id") != "s1" {
		t.Fatalf("2025-11-25 request headers %v", h)
	}
}
