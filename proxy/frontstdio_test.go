package proxy

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/front"
	"github.com/mcp-toolsearch/mcp-toolsearch/internal/linewrite"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestFrontStdioServesClient runs a go-sdk server over front.Stdio and
// writes the client's lines by hand: a refused id, a batch (answered as
// one array before 2025-06-18) and a tools/call.
func TestFrontStdioServesClient(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(_ context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(r.Params.Arguments)}}}, nil
	})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	out := linewrite.New(outW)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- s.Run(ctx, front.NewStdio(inR, out, 1<<20))
	}()
	defer func() { cancel(); inW.Close(); <-done }()
	lines := bufio.NewScanner(outR)
	send := func(l string) {
		t.Helper()
		if _, err := io.WriteString(inW, l+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	next := func() string {
		t.Helper()
		if !lines.Scan() {
			t.Fatalf("no answer: %v", lines.Err())
		}
		return lines.Text()
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	if a := next(); !strings.Contains(a, `"id":1,"result":{`) || !strings.Contains(a, `"protocolVersion":"2025-03-26"`) {
		t.Fatalf("initialize: %s", a)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`)
	if a := next(); !strings.Contains(a, `"id":1.5,"error"`) {
		t.Fatalf("refused id: %s", a)
	}
	send(`[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":"three","method":"ping"}]`)
	var batch []map[string]any
	if a := next(); json.Unmarshal([]byte(a), &batch) != nil || len(batch) != 2 {
		t.Fatalf("batch: %s", a)
	}
	send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"k":"v"}}}`)
	if a := next(); a != `{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"{\"k\":\"v\"}"}]}}` {
		t.Fatalf("tools/call: %s", a)
	}
}

// TestFrontStdioBadLineAnswered: a line that is not a JSON-RPC message
// gets an error answer with id null and the session goes on (before,
// the stdio proxy ended with every call in flight).
func TestFrontStdioBadLineAnswered(t *testing.T) {
	p, _ := testProxy(t, fastPathConfig)
	lc := startLineClient(t, p, true)
	lc.call(1, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}`)
	lc.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for _, c := range []struct {
		line string
		code string
	}{
		{`{"jsonrpc":"2.0","id":40,"method":"ping"`, "-32700"},
		{`BBBB`, "-32700"},
		{`{"jsonrpc":"1.0","id":41,"method":"ping"}`, "-32600"},
		{`{"id":42,"method":"ping"}`, "-32600"},
		{`[{"jsonrpc":"2.0","id":43,"method":"ping"}]`, "-32600"}, // no batches at 2025-11-25
		{`[]`, "-32600"},
		{`{"jsonrpc":"2.0","id":44,"mehtod":"ping"}`, "-32600"}, // neither request nor response
	} {
		lc.send(c.line)
		l := string(lc.next())
		id := "null" // the id is given back when it can be read
		if m := regexp.MustCompile(`"id":(4[0-9])[,}]`).FindStringSubmatch(c.line); m != nil && c.code == "-32600" && c.line[0] == '{' {
			id = m[1]
		}
		if !strings.Contains(l, `"id":`+id+`,`) || !strings.Contains(l, `"code":`+c.code) {
			t.Fatalf("%s: answer %s, want id %s and code %s", c.line, l, id, c.code)
		}
	}
	if l := string(lc.call(2, "tools/call", `{"name":"up__echo","arguments":{}}`)); !strings.Contains(l, `"result"`) {
		t.Fatalf("the session did not go on: %s", l)
	}
}
