package proxy

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/fakeupstream"
)

// TestInvalidResultInJSONTerms: an upstream whose tools/call result does
// not decode as a CallToolResult (a string where an object belongs, a
// string where "content" wants an array) is described in JSON terms on
// tool_call and (the string) on a direct tools/call, not with the decoder's Go types
// (such as `… into Go value of type struct { mcp.res; Content
// []*mcp.wireContent … }`).
func TestInvalidResultInJSONTerms(t *testing.T) {
	sc := &fakeupstream.Scenario{
		Tools: func() string {
			return `[{"name":"str","inputSchema":{"type":"object"}},{"name":"content","inputSchema":{"type":"object"}},{"name":"deep","inputSchema":{"type":"object"}}]`
		},
		Raw: func(s *fakeupstream.Session, m *fakeupstream.Msg) bool {
			if m.Method != "tools/call" {
				return false
			}
			if strings.Contains(string(m.Params), `"name":"str"`) {
				s.Result(m.ID, `"notanobject"`)
			} else if strings.Contains(string(m.Params), `"name":"deep"`) {
				// JSON, nested past encoding/json's limit.
				s.Result(m.ID, `{"content":[],"structuredContent":{"a":`+strings.Repeat("[", 10001)+strings.Repeat("]", 10001)+`}}`)
			} else {
				s.Result(m.ID, `{"content":"notalist"}`)
			}
			return true
		},
	}
	hs := httptest.NewServer(&fakeupstream.HTTP{Scenario: sc})
	t.Cleanup(hs.Close)
	want := map[string]string{
		"str":     `upstream "bad" sent an invalid tool result: the result is a string where MCP wants an object`,
		"content": `upstream "bad" sent an invalid tool result: "content" is a string where MCP wants an array`,
		"deep":    `upstream "bad" sent an invalid tool result: nested deeper than 10000 levels (the JSON decoder's limit) at byte`,
	}
	for _, mode := range []string{"tools", "off"} {
		conf := fmt.Sprintf("[tool_search]\nmode = \"tools\"\n[upstreams.bad]\nurl = %s\n", tomlQuote(hs.URL))
		if mode == "off" {
			conf = fmt.Sprintf("[tool_search]\nenabled = false\n[upstreams.bad]\nurl = %s\n", tomlQuote(hs.URL))
		}
		logs := &syncBuffer{}
		p := startProxyIn(t, t.TempDir(), conf, nil, Options{Logger: slog.New(slog.NewTextHandler(logs, nil))})
		cs := connect(t, p, "unit-invalid-result", nil)
		for tool, w := range want {
			if mode == "off" && tool != "str" {
				// A result object whose members look like a
				// CallToolResult's is passed on as the upstream wrote
				// it on a direct tools/call (passthrough); the client
				// decodes it.
				continue
			}
			params := &mcp.CallToolParams{Name: "bad__" + tool, Arguments: map[string]any{}}
			if mode == "tools" {
				params = &mcp.CallToolParams{Name: "tool_call", Arguments: map[string]any{"id": "bad__" + tool, "args": map[string]any{}}}
			}
			r, err := cs.CallTool(context.Background(), params)
			got := ""
			if err != nil {
				got = err.Error()
			} else {
				got = resultText(r)
			}
			if !strings.Contains(got, w) || strings.Contains(got, "Go value") || strings.Contains(got, "wireContent") {
				t.Errorf("mode %s, tool %s:\n got %s\nwant %s, without Go types", mode, tool, got, w)
			}
		}
		// The operator sees it too, once a minute per upstream.
		if n := strings.Count(logs.String(), "upstream sent an invalid tool result"); n != 1 || !strings.Contains(logs.String(), "upstream=bad tool=") {
			t.Errorf("mode %s: want one WARN naming upstream and tool, got %d:\n%s", mode, n, logs.String())
		}
	}
}
