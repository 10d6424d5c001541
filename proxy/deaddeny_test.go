package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
)

const deadDenyConfig = `
[tool_search]
enabled = true
mode = "tools"
[upstreams.up]
url = %[1]s
[upstreams.other]
url = %[2]s
[tools]
deny = [%[3]q]
`

// TestDeadDenyClosesUpstreamWhileServing: in a search mode `serve`
// answers before the upstreams list; a deny entry that then matches no
// tool of the upstream it names keeps that upstream closed (its tools
// neither listed nor callable, the reason told to the model) instead of
// stopping the proxy; the other upstream serves; a reload with a fixed
// config reopens it, and one with a dead entry again closes it at once.
func TestDeadDenyClosesUpstreamWhileServing(t *testing.T) {
	up, other := startTestUpstream(t), startTestUpstream(t)
	text := func(deny string) string {
		return fmt.Sprintf(deadDenyConfig, tomlQuote(up.URL), tomlQuote(other.URL), deny)
	}
	cfg, err := config.Parse([]byte(text("mcp:up:nope")), filepath.Join(t.TempDir(), "config.toml"), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(cfg, Options{Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	if p.Mode() == "direct" {
		t.Fatalf("mode %s: the test needs a search mode", p.Mode())
	}
	if err := p.StartServing(context.Background(), 30*time.Second); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, p, "model", nil)
	if !p.ups.WaitSettled(context.Background()) {
		t.Fatal("upstreams did not settle")
	}
	deadline := time.Now().Add(30 * time.Second)
	for p.pol().ClosedReason("up") == "" {
		if time.Now().After(deadline) {
			t.Fatal("the upstream the dead deny entry names was never closed")
		}
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case err := <-p.Fatal():
		t.Fatalf("the proxy stops: %v", err)
	default:
	}
	call := func(id string) (string, bool) {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "tool_call", Arguments: map[string]any{"id": id, "args": map[string]any{}}})
		if err != nil {
			return err.Error(), false
		}
		return resultText(res), !res.IsError
	}
	if out, ok := call("mcp:up:echo"); ok || !strings.Contains(out, `"mcp:up:nope"`) || !strings.Contains(out, "closed") {
		t.Errorf("a tool of the closed upstream: ok=%v %s", ok, out)
	}
	if out, ok := call("mcp:other:echo"); !ok {
		t.Errorf("a tool of the other upstream: %s", out)
	}
	up.mu.Lock()
	if up.calls["echo"] != 0 {
		t.Errorf("the closed upstream was called")
	}
	up.mu.Unlock()
	for _, r := range p.Explain("model", "") {
		if r.Upstream == "up" && (r.Allowed || !strings.Contains(r.Rule, `upstream "up" is closed`)) {
			t.Errorf("list row %+v: want denied, the upstream closed", r)
		}
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "tool_search", Arguments: map[string]any{"query": "echo on up"}})
	if err != nil {
		t.Fatal(err)
	}
	if out := resultText(res); strings.Contains(out, `"id":"mcp:up:`) || !strings.Contains(out, `MCP server \"up\" is unavailable (closed: the config's deny entry \"mcp:up:nope\"`) {
		t.Errorf("search: want no tool of up and the reason it is closed:\n%s", out)
	}

	reloadText(t, p, text("mcp:up:delete_thing"))
	if r := p.pol().ClosedReason("up"); r != "" {
		t.Fatalf("closed after a reload with a fixed config: %s", r)
	}
	if out, ok := call("mcp:up:echo"); !ok {
		t.Errorf("after the fix: %s", out)
	}
	reloadText(t, p, text("up__nope"))
	if p.pol().ClosedReason("up") == "" {
		t.Errorf("a reload with a dead deny entry left the upstream open")
	}
	if p.pol().ClosedReason("other") != "" {
		t.Errorf("the other upstream is closed too")
	}
}

// TestDeadDenyAfterRelisting: an upstream that renames a denied tool
// while the proxy serves (notifications/tools/list_changed) is closed at
// its new listing: the tool under its new name is never callable.
func TestDeadDenyAfterRelisting(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "renamer", Version: "1"}, nil)
	var calls atomic.Int32
	add := func(name string) {
		s.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			calls.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		})
	}
	add("echo")
	add("delete_repo")
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(hs.Close)
	p := startProxyText(t, fmt.Sprintf("[tool_search]\nenabled = false\n[upstreams.up]\nurl = %s\n[tools]\ndeny = [\"mcp:up:delete_repo\"]\n", tomlQuote(hs.URL)))
	cs := connect(t, p, "model", nil)
	if names := listNames(t, cs); !slices.Equal(names, []string{"up__echo"}) {
		t.Fatalf("tools/list = %v", names)
	}
	s.RemoveTools("delete_repo")
	add("delete_repository")
	deadline := time.Now().Add(30 * time.Second)
	for p.pol().ClosedReason("up") == "" {
		if time.Now().After(deadline) {
			t.Fatal("the upstream was not closed after renaming its denied tool")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if names := listNames(t, cs); len(names) != 0 {
		t.Errorf("tools/list after the rename = %v, want nothing of the closed upstream", names)
	}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "up__delete_repository", Arguments: map[string]any{}}); err == nil || calls.Load() != 0 {
		t.Errorf("the renamed tool was called: err %v, calls %d", err, calls.Load())
	}
}

// TestDenyOfDisabledUpstream: a deny entry for a tool of a disabled
// upstream is no dead entry while the upstream is off: the start does not
// fail closed on it and nothing is closed.
func TestDenyOfDisabledUpstream(t *testing.T) {
	up := startTestUpstream(t)
	p := startProxyText(t, fmt.Sprintf("[upstreams.up]\nurl = %s\n[upstreams.off]\ncommand = \"nosuch-command\"\nenabled = false\n[tools]\ndeny = [\"mcp:off:delete_thing\", \"off__drop\"]\n", tomlQuote(up.URL)))
	if err := p.CheckPolicy(); err != nil {
		t.Fatalf("CheckPolicy: %v", err)
	}
	if p.pol() != p.polOpen.Load() {
		t.Error("an upstream is closed")
	}
}
