package proxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/front"
	"github.com/mcp-toolsearch/mcp-toolsearch/internal/linewrite"
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

// FuzzFrontJSONRPC feeds arbitrary bytes to the stdio front (its own
// transport and fast path, as `serve` runs them) as a client's JSON-RPC
// stream (one message per line) after a valid initialize at 2025-03-26,
// a version that allows batches. A client is not trusted: whatever it
// sends, the proxy must not panic, every line it writes back must be a
// JSON-RPC 2.0 message, every request with a string id (alone or as a
// batch element, well-formed or not: JSON-RPC 2.0 sections 5 and 6) must
// get an answer with that id, the session must end when the client
// closes its side, and the proxy must go on serving other clients (a
// fresh client still lists the tools). Seed corpus:
// testdata/fuzz/FuzzFrontJSONRPC.
func FuzzFrontJSONRPC(f *testing.F) {
	p, _ := testProxy(f, fuzzConfig)
	const initialize = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"
	f.Fuzz(func(t *testing.T, in []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		want := wantAnswered(in)
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		fs := front.NewStdio(inR, linewrite.New(outW), 1<<20)
		ended := make(chan struct{})
		go func() { _ = p.runStdio(ctx, fs); close(ended) }()
		bad := make(chan string, 1)
		var mu sync.Mutex
		answered := map[string]bool{}
		allIn := make(chan struct{})
		readDone := make(chan struct{})
		go func() {
			defer close(readDone)
			sc := bufio.NewScanner(outR)
			sc.Buffer(make([]byte, 64<<10), 64<<20)
			for sc.Scan() {
				var m struct {
					JSONRPC string `json:"jsonrpc"`
				}
				var batch []json.RawMessage
				line := sc.Bytes()
				if json.Unmarshal(line, &batch) != nil {
					batch = []json.RawMessage{line}
				}
				for _, e := range batch {
					if err := json.Unmarshal(e, &m); err != nil || m.JSONRPC != "2.0" {
						select {
						case bad <- string(line):
						default:
						}
					}
					if id, ok := answerID(e); ok {
						mu.Lock()
						answered[id] = true
						all := len(want) > 0 && allAnswered(want, answered)
						mu.Unlock()
						if all {
							select {
							case <-allIn:
							default:
								close(allIn)
							}
						}
					}
				}
			}
			_, _ = io.Copy(io.Discard, outR)
		}()
		go func() {
			_, _ = io.WriteString(inW, initialize)
			_, _ = inW.Write(in)
			_, _ = io.WriteString(inW, "\n"+`{"jsonrpc":"2.0","id":"fuzz-ping","method":"ping"}`+"\n")
			if len(want) > 0 {
				// Answers still to come when the input ends may be cut
				// with the session: wait for them (bounded), then close.
				select {
				case <-allIn:
				case <-time.After(5 * time.Second):
				}
			}
			_ = inW.Close()
		}()
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
		mu.Lock()
		for id := range want {
			if !answered[id] {
				t.Errorf("request id %q got no answer (input %q)", id, in)
			}
		}
		mu.Unlock()
		cs := connect(t, p, "fuzz-check", nil)
		res, err := cs.ListTools(ctx, nil)
		if err != nil || len(res.Tools) == 0 {
			t.Fatalf("after a fuzzed session, a fresh client cannot list tools: %v", err)
		}
		_ = cs.Close()
	})
}

// wantAnswered are the string ids of the requests in the fuzz input that
// must each get an answer: every line that is a JSON object or array of
// them, every object that has a string "id" and no "result" or "error"
// (a request, well-formed or not). Left out, as their answer is rightly
// absent: inputs that cancel requests (notifications/cancelled), ids that
// occur more than once in the input (in flight twice or reused later),
// and inputs with lines longer than the fuzz session's line limit.
func wantAnswered(in []byte) map[string]bool {
	if bytes.Contains(in, []byte("cancelled")) || bytes.Contains(in, []byte(`\u`)) {
		return nil
	}
	want, seen := map[string]bool{}, map[string]int{}
	for _, line := range bytes.Split(in, []byte("\n")) {
		if len(line) > 1<<20 {
			return nil
		}
		var batch []json.RawMessage
		if json.Unmarshal(line, &batch) != nil {
			batch = []json.RawMessage{line}
		}
		for _, e := range batch {
			var m map[string]json.RawMessage
			if json.Unmarshal(e, &m) != nil {
				continue
			}
			var id string
			if json.Unmarshal(m["id"], &id) != nil {
				continue
			}
			seen[id]++
			if _, r := m["result"]; !r {
				if _, e := m["error"]; !e {
					want[id] = true
				}
			}
		}
	}
	for id, n := range seen {
		if n > 1 || id == "fuzz-ping" {
			delete(want, id)
		}
	}
	return want
}

// answerID is the string id of an answer (an object with "result" or
// "error").
func answerID(e []byte) (string, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(e, &m) != nil {
		return "", false
	}
	_, r := m["result"]
	_, er := m["error"]
	var id string
	if (!r && !er) || json.Unmarshal(m["id"], &id) != nil {
		return "", false
	}
	return id, true
}

func allAnswered(want, got map[string]bool) bool {
	for id := range want {
		if !got[id] {
			return false
		}
	}
	return true
}
