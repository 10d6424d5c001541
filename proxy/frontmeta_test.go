package proxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"github.com/mcp-toolsearch/mcp-toolsearch/internal/linewrite"
	"io"
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
// line's one scan (scanFront) give metaTriple and callMembers the same
// answers as scanning them (issue 16), and the record metaTriple makes of
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
		n, a, m, ok := callMembers(raw, rec)
		wn, wa, wm, wok := callMembers(bytes.Clone(raw), nil)
		if ok != wok || !bytes.Equal(n, wn) || !bytes.Equal(a, wa) || !bytes.Equal(m, wm) {
			t.Fatalf("callMembers(%s) from the record = %s %s %s %v, scanning %s %s %s %v", raw, n, a, m, ok, wn, wa, wm, wok)
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

// TestFrontStdioElidesMeta: a 2026-07-28 client over the proxy's stdio
// front (the real proxy server, frontStdio, an upstream over Streamable
// HTTP). Its first tools/call is validated by the go-sdk; later ones with
// the same _meta triple reach the go-sdk without it (frontmeta.go) and
// are answered the same: resultType "complete", the proxy's serverInfo,
// the upstream's content; the client's other _meta keys still reach the
// upstream's tool. A changed triple is validated again (missing
// capabilities: the go-sdk's -32602); a retry after that with the first
// triple is elided again.
func TestFrontStdioElidesMeta(t *testing.T) {
	p, up := testProxy(t, approvalConfig)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	fs := &frontStdio{in: &lineReader{r: inR, max: 1 << 20}, out: linewrite.New(outW), max: 1 << 20}
	done := make(chan error, 1)
	go func() { done <- p.Server("", "stdio").Run(ctx, fs) }()
	defer func() { cancel(); inW.Close(); <-done }()
	lines := bufio.NewScanner(outR)
	lines.Buffer(nil, 1<<20)
	call := func(id int, meta string) map[string]any {
		t.Helper()
		line := `{"jsonrpc":"2.0","id":` + itoa(id) + `,"method":"tools/call","params":{"name":"up__echo","arguments":{"n":` + itoa(id) + `},"_meta":{` + meta + `}}}` + "\n"
		if _, err := io.WriteString(inW, line); err != nil {
			t.Fatal(err)
		}
		if !lines.Scan() {
			t.Fatalf("no answer to %d: %v", id, lines.Err())
		}
		var msg map[string]any
		if err := json.Unmarshal(lines.Bytes(), &msg); err != nil {
			t.Fatalf("answer %s: %v", lines.Text(), err)
		}
		return msg
	}
	const trip = `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"elide-test","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}`
	check := func(id int, msg map[string]any) {
		t.Helper()
		res, _ := msg["result"].(map[string]any)
		if res == nil {
			t.Fatalf("call %d: %v", id, msg)
		}
		si, _ := res["_meta"].(map[string]any)["io.modelcontextprotocol/serverInfo"].(map[string]any)
		text := res["content"].([]any)[0].(map[string]any)["text"]
		if res["resultType"] != "complete" || si["name"] != "mcp-toolsearch" || text != `echo {"n":`+itoa(id)+`}` {
			t.Errorf("call %d: %v", id, res)
		}
	}
	for id := 1; id <= 3; id++ {
		check(id, call(id, trip+`,"x-own":"kept"`))
	}
	if got := call(4, `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`); got["error"] == nil || !strings.Contains(lines.Text(), "clientCapabilities") {
		t.Errorf("changed triple: %s, want the go-sdk's invalid _meta error", lines.Text())
	}
	check(5, call(5, trip))
	fs.mu.Lock()
	c := fs.last
	fs.mu.Unlock()
	c.mu.Lock()
	elided := c.elided
	c.mu.Unlock()
	if elided != 3 {
		t.Errorf("%d requests reached the go-sdk without their _meta triple, want 3 (calls 2, 3, 5)", elided)
	}
	if n := up.count("echo"); n != 4 {
		t.Errorf("upstream ran echo %d times, want 4", n)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
