package proxy

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/modes"
)

// TestCLIReachesDirectOnly: the command line's call and describe reach a
// direct-only tool by its exposed name or id (a client reaches it with
// tools/call; the CLI has no other way), while tool_call and tool_describe
// still point the model at tools/call.
func TestCLIReachesDirectOnly(t *testing.T) {
	p, _ := testProxy(t, "[tool_search]\nmode = \"tools\"\n[upstreams.t]\nurl = %s\ndirect_only = [\"echo\"]\n")
	env := p.Env("", "")
	for _, ref := range []string{"t__echo", "mcp:t:echo"} {
		e, res, err := p.CallRef(context.Background(), env, ref, json.RawMessage(`{"x":1}`))
		if err != nil || res.IsError || e.ID != "mcp:t:echo" {
			t.Fatalf("call %s: %v %+v", ref, err, res)
		}
		if got := res.Content[0].(*mcp.TextContent).Text; got != `echo {"x":1}` {
			t.Errorf("call %s: %q", ref, got)
		}
		if d, err := p.API().Describe(env, ref, modes.ViaCLI); err != nil || d == nil {
			t.Errorf("describe %s: %v", ref, err)
		}
	}
	if _, err := p.API().Describe(env, "t__echo", modes.ViaTool); err == nil || !strings.Contains(err.Error(), "listed directly (direct-only)") {
		t.Errorf("tool_describe of a direct-only tool: %v", err)
	}
	if _, err := p.API().Resolve(env, "t__echo", modes.ViaTool); err == nil || !strings.Contains(err.Error(), "call it with tools/call") {
		t.Errorf("tool_call's resolve of a direct-only tool: %v", err)
	}
}
