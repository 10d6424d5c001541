package proxy

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/front"
	"github.com/mcp-toolsearch/mcp-toolsearch/internal/linewrite"
)

// TestFrontStdioElidesMeta: a 2026-07-28 client over the proxy's stdio
// front (the real proxy server, front.Stdio, an upstream over Streamable
// HTTP). Its first tools/call is validated by the go-sdk; later ones with
// the same _meta triple reach the go-sdk without it (internal/front) and
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
	fs := front.NewStdio(inR, linewrite.New(outW), 1<<20)
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
	if n := up.count("echo"); n != 4 {
		t.Errorf("upstream ran echo %d times, want 4", n)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
