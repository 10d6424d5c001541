package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
)

// TestRemovedUpstreamReason: after a config reload removes an
// upstream, a call to one of its former tools says that its MCP server was
// removed from the configuration — by id and by exposed name, through
// tool_call and a direct tools/call — instead of "unknown tool" with a
// suggestion from another server. A tool the session's policy denies keeps
// the plain answer (SPEC §6), and so does every name after the next reload.
func TestRemovedUpstreamReason(t *testing.T) {
	up := startTestUpstream(t)
	base := fmt.Sprintf("[upstreams.keep]\nurl = %[1]s\n[upstreams.gone]\nurl = %[1]s\n", tomlQuote(up.URL))
	const removed = `MCP server "gone", which provided this tool, was removed from the proxy's configuration (config reload)`
	reload := reloadText
	keepOnly := func(mode string) string {
		return mode + fmt.Sprintf("[upstreams.keep]\nurl = %s\n[tools]\ndeny = [\"*__paid\"]\n", tomlQuote(up.URL))
	}

	t.Run("tools mode", func(t *testing.T) {
		mode := "[tool_search]\nenabled = true\nmode = \"tools\"\n"
		p := startProxyText(t, mode+base)
		cs := connect(t, p, "removed-tools", nil)
		if r := callTool(t, cs, "tool_call", map[string]any{"id": "mcp:gone:echo", "args": map[string]any{}}); r.IsError {
			t.Fatalf("before the reload: %s", resultText(r))
		}
		reload(t, p, keepOnly(mode))
		for _, ref := range []string{"mcp:gone:echo", "gone__echo", "GONE__Echo"} {
			r := callTool(t, cs, "tool_call", map[string]any{"id": ref, "args": map[string]any{}})
			if got := resultText(r); !r.IsError || !strings.Contains(got, fmt.Sprintf("unknown tool %q: ", ref)+removed) || strings.Contains(got, "did you mean") {
				t.Errorf("tool_call %s after the reload: isError=%v %s\nwant %s", ref, r.IsError, got, removed)
			}
		}
		// Denied by the new policy: the answer a tool that never existed gets.
		r := callTool(t, cs, "tool_call", map[string]any{"id": "mcp:gone:paid", "args": map[string]any{}})
		if got := resultText(r); !r.IsError || strings.Contains(got, "removed") {
			t.Errorf("denied former tool: %s", got)
		}
		// A name that never existed: the plain answer.
		r = callTool(t, cs, "tool_call", map[string]any{"id": "mcp:gone:nosuch", "args": map[string]any{}})
		if got := resultText(r); !r.IsError || strings.Contains(got, "removed") {
			t.Errorf("never existed: %s", got)
		}
		// The next reload forgets the removed upstream's tools.
		reload(t, p, keepOnly(mode))
		r = callTool(t, cs, "tool_call", map[string]any{"id": "mcp:gone:echo", "args": map[string]any{}})
		if got := resultText(r); !r.IsError || strings.Contains(got, "removed") {
			t.Errorf("after the next reload: %s", got)
		}
	})

	t.Run("direct mode", func(t *testing.T) {
		mode := "[tool_search]\nenabled = false\n"
		p := startProxyText(t, mode+base)
		cs := connect(t, p, "removed-direct", nil)
		callTool(t, cs, "gone__echo", map[string]any{})
		reload(t, p, keepOnly(mode))
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "gone__echo", Arguments: map[string]any{}})
		if err == nil || !strings.Contains(err.Error(), `unknown tool "gone__echo": `+removed) {
			t.Errorf("tools/call gone__echo after the reload: %v\nwant %s", err, removed)
		}
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(res.Tools, func(tl *mcp.Tool) bool { return strings.HasPrefix(tl.Name, "gone__") }) {
			b, _ := json.Marshal(res.Tools)
			t.Errorf("tools/list still lists the removed upstream's tools: %s", b)
		}
	})
}

// reloadText reloads p with the config text (no environment variables).
func reloadText(t *testing.T, p *Proxy, text string) {
	t.Helper()
	next, err := config.Parse([]byte(text), filepath.Join(t.TempDir(), "config.toml"), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Reload(context.Background(), next); err != nil {
		t.Fatal(err)
	}
}
