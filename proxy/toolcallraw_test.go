package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/front"
	"github.com/mcp-toolsearch/mcp-toolsearch/modes"
)

// TestToolCallAnswerBytes: tool_call's answer, written by the stdio front
// from the bytes the front builds for a plain raw result
// (session.CallEnveloped), is byte for byte the result the decoded way builds from the
// same upstream result (modes.MakeEnvelope, modes.EnvelopeResult, written
// as the go-sdk writes results) for a 2025-11-25 client; for a 2026-07-28
// client the envelope text and structuredContent are the same, with
// resultType "complete" and the proxy's serverInfo. Results the call path
// decodes (output validation) and isError results are compared too.
func TestToolCallAnswerBytes(t *testing.T) {
	p, up := testProxy(t, "[tool_search]\nenabled = true\nmode = \"tools\"\n[upstreams.up]\nurl = %[1]s\ntrusted = true\n")
	ctx := context.Background()
	c := mcp.NewClient(&mcp.Implementation{Name: "ref", Version: "1"}, nil)
	direct, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: up.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	api := apiFor(p.conf())
	// want is the decoded way's tools/call result for tool with args.
	want := func(tool string, args json.RawMessage) []byte {
		res, err := direct.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		e, _ := p.catalog().Snapshot().Resolve("mcp:up:"+tool, nil)
		if e == nil {
			t.Fatalf("no catalog entry for %s", tool)
		}
		envl, err := modes.MakeEnvelope(p.catalog().Snapshot().Hit(e, 0, api.Bounds), res, modes.ViaTool)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := front.MarshalResult(&buf, modes.EnvelopeResult(envl, res)); err != nil {
			t.Fatal(err)
		}
		return bytes.TrimSpace(buf.Bytes())
	}
	calls := []struct {
		tool string
		args map[string]any
		raw  bool // the answer is written from modes' bytes
	}{
		{"echo", map[string]any{"a": "<b>&</b>\u2028", "n": []any{1.5, 1e21, 1e-7, 12345678901}, "z": map[string]any{"y": true, "b": nil}}, true},
		{"echo", map[string]any{}, true},
		{"failing", map[string]any{"amount": 1}, false},                 // an isError result: decoded (redaction)
		{"paid", map[string]any{"paid": true, "lines": []any{}}, false}, // trusted with an outputSchema: validated, decoded
	}
	const trip = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c26","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	for _, modern := range []bool{false, true} {
		t.Run(fmt.Sprintf("modern=%v", modern), func(t *testing.T) {
			lc := startLineClient(t, p, true)
			params := func(s string) string {
				if modern {
					return `{` + trip + `,` + s[1:]
				}
				return s
			}
			if !modern {
				lc.call(1, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}`)
				lc.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			}
			lc.call(2, "ping", params(`{}`))
			for i, c := range calls {
				args, _ := json.Marshal(c.args)
				a, _ := json.Marshal(map[string]any{"id": "mcp:up:" + c.tool, "args": json.RawMessage(args)})
				line := lc.call(10+i, "tools/call", params(fmt.Sprintf(`{"name":"tool_call","arguments":%s}`, a)))
				var msg struct {
					Result json.RawMessage `json:"result"`
				}
				if err := json.Unmarshal(line, &msg); err != nil || msg.Result == nil {
					t.Fatalf("%s: %s (%v)", c.tool, line, err)
				}
				w := want(c.tool, args)
				if !modern {
					if !bytes.Equal(msg.Result, w) {
						t.Errorf("%s:\n got  %s\n want %s", c.tool, msg.Result, w)
					}
					continue
				}
				var got, ref map[string]json.RawMessage
				if err := json.Unmarshal(msg.Result, &got); err != nil {
					t.Fatal(err)
				}
				_ = json.Unmarshal(w, &ref)
				for _, k := range []string{"content", "structuredContent", "isError"} {
					if !bytes.Equal(got[k], ref[k]) {
						t.Errorf("%s: %s\n got  %s\n want %s", c.tool, k, got[k], ref[k])
					}
				}
				// The raw answer is stamped after its members (stampRaw); the
				// decoded one has _meta first (the go-sdk's field order).
				if raw := bytes.HasPrefix(msg.Result, []byte(`{"content":`)); raw != c.raw {
					t.Errorf("%s: written from modes' bytes %v, want %v: %s", c.tool, raw, c.raw, msg.Result)
				}
				if string(got["resultType"]) != `"complete"` || !strings.Contains(string(got["_meta"]), `/serverInfo"`) {
					t.Errorf("%s: 2026-07-28 result without resultType or serverInfo: %s", c.tool, msg.Result)
				}
			}
		})
	}
}
