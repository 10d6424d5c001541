package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
)

const policyConfig = `
[tool_search]
enabled = false
[upstreams.up]
url = %[1]s
[tools]
allow = ["up__*"]
deny = ["up__delete_thing"]
also_allow = ["up__delete_thing"]
[tools.by_client."reader*"]
allow = ["up__echo"]
`

func listNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	lt, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tool := range lt.Tools {
		out = append(out, tool.Name)
	}
	slices.Sort(out)
	return out
}

// TestPolicyDenyBeatsAllow: the same tool in allow (by glob), also_allow
// (by name) and deny stays denied, is not listed, and calling it gives
// exactly the JSON-RPC error of a tool that does not exist; the upstream
// never sees it.
func TestPolicyDenyBeatsAllow(t *testing.T) {
	p, up := testProxy(t, policyConfig)
	cs := connect(t, p, "writer", nil)
	names := listNames(t, cs)
	if slices.Contains(names, "up__delete_thing") || !slices.Contains(names, "up__echo") {
		t.Fatalf("tools/list = %v: want up__echo and not up__delete_thing", names)
	}
	rows := p.Explain("writer", "")
	for _, r := range rows {
		if r.Exposed == "up__delete_thing" && (r.Allowed || !strings.Contains(r.Rule, `denied by tools.deny "up__delete_thing"`)) {
			t.Errorf("explain row = %+v", r)
		}
	}
	errOf := func(name string) string {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
		var je *jsonrpc.Error
		if !errors.As(err, &je) {
			t.Fatalf("call %s: err = %v, want a JSON-RPC error", name, err)
		}
		// The "did you mean" depends on the name and on the tools the
		// session sees (never the denied one); integration
		// TestDeniedToolUnreachable compares it with a deployment without
		// the tool.
		msg, sug, _ := strings.Cut(je.Message, "; did you mean ")
		if strings.Contains(sug, "delete_thing") {
			t.Errorf("call %s: %q suggests the denied tool", name, je.Message)
		}
		return fmt.Sprintf("%d %s", je.Code, strings.ReplaceAll(msg, name, "NAME"))
	}
	unknown := errOf("up__no_such_tool")
	for _, name := range []string{"up__delete_thing", "UP__DELETE_THING", "mcp:up:delete_thing"} {
		if got := errOf(name); got != unknown {
			t.Errorf("call %s: %q, want the unknown-tool answer %q", name, got, unknown)
		}
	}
	// The call path itself refuses it too (a route that resolved it anyway).
	e := p.Catalog().ByExposed("up__delete_thing")
	if _, err := p.call(context.Background(), p.Env("writer", "").(*session), e, json.RawMessage(`{}`), "cli"); err == nil || !strings.Contains(err.Error(), `unknown tool "up__delete_thing"`) {
		t.Errorf("call path: err = %v", err)
	}
	if n := up.count("delete_thing"); n != 0 {
		t.Errorf("upstream saw %d calls of a denied tool", n)
	}
}

// TestPolicyByClient: clients with different clientInfo.name get different
// subsets from the same proxy, and a call outside the subset is unknown.
func TestPolicyByClient(t *testing.T) {
	p, _ := testProxy(t, policyConfig)
	writer := listNames(t, connect(t, p, "writer", nil))
	reader := connect(t, p, "reader-bot", nil)
	if got := listNames(t, reader); !slices.Equal(got, []string{"up__echo"}) {
		t.Errorf("reader-bot sees %v, want [up__echo]", got)
	}
	if len(writer) < 3 || slices.Equal(writer, []string{"up__echo"}) {
		t.Errorf("writer sees %v, want every tool but up__delete_thing", writer)
	}
	if _, err := reader.CallTool(context.Background(), &mcp.CallToolParams{Name: "up__paid", Arguments: map[string]any{}}); err == nil || !strings.Contains(err.Error(), `unknown tool "up__paid"`) {
		t.Errorf("reader calling up__paid: err = %v", err)
	}
}

// TestPolicyFailsClosed: an allow list matching no tool stops Start,
// naming the entry.
func TestPolicyFailsClosed(t *testing.T) {
	up := startTestUpstream(t)
	text := fmt.Sprintf("[upstreams.up]\nurl = %s\n[tools]\nallow = [\"up__nosuch_tool\"]\n", tomlQuote(up.URL))
	cfg, err := config.Parse([]byte(text), filepath.Join(t.TempDir(), "c.toml"), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(cfg, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	err = p.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), `"up__nosuch_tool"`) {
		t.Fatalf("Start: err = %v, want a fail-closed error naming \"up__nosuch_tool\"", err)
	}
}
