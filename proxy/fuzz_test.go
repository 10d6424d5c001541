package proxy

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fuzzConfig is the tools mode over the test upstream, so that a fuzzed
// session can reach search, describe, the call path and the passthrough
// methods.
const fuzzConfig = `
[tool_search]
enabled = true
mode = "tools"
[upstreams.up]
url = %[1]s
`

// FuzzFrontJSONRPC feeds arbitrary bytes to the front as a client's
// JSON-RPC stream (stdio framing: one message per line) after a valid
// initialize. A client is not trusted: whatever it sends, the proxy must
// not panic, every line it writes back must be a JSON-RPC 2.0 message,
// the session must end when the client closes its side, and the proxy must
// go on serving other clients (a fresh client still lists the tools).
// Seed corpus: testdata/fuzz/FuzzFrontJSONRPC.
func FuzzFrontJSONRPC(f *testing.F) {
	p, _ := testProxy(f, fuzzConfig)
	srv := p.Server("", "stdio")
	const initialize = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"
	f.Fuzz(func(t *testing.T, in []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		ss, err := srv.Connect(ctx, &mcp.IOTransport{Reader: inR, Writer: outW}, nil)
		if err != nil {
			t.Fatal(err)
		}
		bad := make(chan string, 1)
		readDone := make(chan struct{})
		go func() {
			defer close(readDone)
			sc := bufio.NewScanner(outR)
			sc.Buffer(make([]byte, 64<<10), 64<<20)
			for sc.Scan() {
				var m struct {
					JSONRPC string `json:"jsonrpc"`
				}
				if err := json.Unmarshal(sc.Bytes(), &m); err != nil || m.JSONRPC != "2.0" {
					select {
					case bad <- string(sc.Bytes()):
					default:
					}
				}
			}
			_, _ = io.Copy(io.Discard, outR)
		}()
		go func() {
			_, _ = io.WriteString(inW, initialize)
			_, _ = inW.Write(in)
			_, _ = io.WriteString(inW, "\n"+`{"jsonrpc":"2.0","id":"fuzz-ping","method":"ping"}`+"\n")
			_ = inW.Close()
		}()
		ended := make(chan struct{})
		go func() { _ = ss.Wait(); close(ended) }()
		select {
		case <-ended:
		case <-ctx.Done():
			t.Fatalf("the session did not end after the client closed its side (input %q)", in)
		}
		_ = inR.Close()
		_ = outW.Close()
		<-readDone
		select {
		case line := <-bad:
			t.Errorf("the proxy wrote a line that is not a JSON-RPC 2.0 message: %.300q (input %q)", line, in)
		default:
		}
		cs := connect(t, p, "fuzz-check", nil)
		res, err := cs.ListTools(ctx, nil)
		if err != nil || len(res.Tools) == 0 {
			t.Fatalf("after a fuzzed session, a fresh client cannot list tools: %v", err)
		}
		_ = cs.Close()
	})
}
