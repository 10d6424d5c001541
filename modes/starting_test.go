package modes

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// startingEnv is a testEnv whose upstreams "filesystem" and "memory" are
// still starting.
type startingEnv struct{ *testEnv }

func (startingEnv) Starting() []string { return []string{"filesystem", "memory"} }

// While upstreams start, every search answer,
// the catalog summary, the instructions and a code run that searched say
// so, and no note tells the model to give up.
func TestStartingUpstreamsNamed(t *testing.T) {
	env := startingEnv{newTestEnv(t)}
	const st = "2 MCP servers still starting: filesystem, memory"
	s := &Tools{API: testAPI()}
	for _, tc := range []struct{ query, want string }{
		{"zzqx blorf", "no match yet: nothing in the catalog matches this query, but " + st + ", and their tools are not in the catalog yet. Search again in a moment"},
		{"create an issue", st + ": their tools are not in these hits yet; search again in a moment if none of these fits."},
		{"issue weather forecast banana", st + ", and their tools are not in the catalog yet: search again in a moment"},
	} {
		r, err := s.Call(context.Background(), env, ToolSearch, json.RawMessage(`{"query":"`+tc.query+`"}`))
		if err != nil || r.IsError {
			t.Fatalf("%s: %v %v", tc.query, r, err)
		}
		var sc struct{ Note string }
		b, _ := json.Marshal(r.StructuredContent)
		_ = json.Unmarshal(b, &sc)
		if !strings.Contains(sc.Note, tc.want) || strings.Contains(sc.Note, "tell the user") {
			t.Errorf("%s: note %q\nwant it to contain %q", tc.query, sc.Note, tc.want)
		}
	}
	if d := s.Tools(env)[0].Description; !strings.Contains(d, st+"; a search finds their tools once they are ready.") {
		t.Errorf("tool_search description: %q", d)
	}
	for _, sf := range []Surface{s, &Tools{API: testAPI(), Directory: true}, &Code{API: testAPI()}} {
		if in := sf.Instructions(env); !strings.Contains(in, st+"; a search finds their tools once they are ready.") {
			t.Errorf("%s instructions: %q", sf.Mode(), in)
		}
	}
	// Without starting upstreams nothing changes.
	if in := s.Instructions(newTestEnv(t)); strings.Contains(in, "starting") {
		t.Errorf("instructions: %q", in)
	}
	c := newTestCode(t, 1)
	r, err := c.Call(context.Background(), env, ToolSearchCode, json.RawMessage(`{"code":"return (await openclaw.tools.search(\"create an issue\")).length"}`))
	if err != nil || r.IsError {
		t.Fatalf("code: %v %v", r, err)
	}
	var out CodeOutput
	b, _ := json.Marshal(r.StructuredContent)
	if json.Unmarshal(b, &out) != nil || !strings.HasPrefix(out.Hint, st+": their tools are not in the catalog yet") {
		t.Errorf("code hint: %q", out.Hint)
	}
}

// A reference that is not in the catalog gets
// the reason when there is one: its MCP server is still starting (by id
// and by exposed name, through tool_call, describe and a direct tools/call
// in directory mode), the tool is direct-only (listed to the client, to be
// called with tools/call), or it is one of this server's own tools; never
// a "did you mean" pointing at another server's tool. Other references
// keep the plain answer.
func TestUnknownToolReasons(t *testing.T) {
	env := startingEnv{newTestEnv(t)} // memory is starting
	s := &Tools{API: testAPI()}
	text := func(r any, err error) string {
		if err != nil {
			return err.Error()
		}
		b, _ := json.Marshal(r)
		return string(b)
	}
	const starting = `MCP server \"memory\" is still starting and its tools are not in the catalog yet; retry in a moment`
	for _, tc := range []struct{ tool, args, want, not string }{
		{ToolCall, `{"id":"mcp:memory:search_nodes","args":{}}`, `unknown tool \"mcp:memory:search_nodes\": ` + starting, "did you mean"},
		{ToolCall, `{"id":"memory__search_nodes"}`, `unknown tool \"memory__search_nodes\": ` + starting, "did you mean"},
		{ToolDescribe, `{"id":"mcp:memory:add_observations"}`, `unknown tool \"mcp:memory:add_observations\": ` + starting, "did you mean"},
		{ToolCall, `{"id":"mcp:memory:read_graph"}`, `\"mcp:memory:read_graph\" is listed directly (direct-only), not in the catalog: call it with tools/call by the name \"memory__read_graph\"`, "did you mean"},
		{ToolCall, `{"id":"memory__read_graph"}`, `call it with tools/call by the name \"memory__read_graph\"`, "registry"},
		{ToolCall, `{"id":"tool_search","args":{"query":"x"}}`, `\"tool_search\" is one of this server's own tools, not a catalog tool: call it with tools/call`, "did you mean"},
		// A server that is not starting: the plain answer with its suggestions.
		{ToolCall, `{"id":"mcp:github:create_isue"}`, `unknown tool \"mcp:github:create_isue\"; did you mean mcp:github:create_issue`, "starting"},
	} {
		got := text(s.Call(context.Background(), env, tc.tool, json.RawMessage(tc.args)))
		if !strings.Contains(got, tc.want) || strings.Contains(got, tc.not) {
			t.Errorf("%s %s:\n got %s\nwant %s (and not %q)", tc.tool, tc.args, got, tc.want, tc.not)
		}
	}
	// A direct tools/call in directory mode (every tool is called directly).
	d := &Tools{API: testAPI(), Directory: true}
	_, err := d.Call(context.Background(), env, "memory__search_nodes", json.RawMessage(`{}`))
	if err == nil || !strings.Contains(err.Error(), `unknown tool "memory__search_nodes": MCP server "memory" is still starting`) {
		t.Errorf("directory tools/call memory__search_nodes: %v", err)
	}
	// The same reference with memory up: no starting reason.
	if got := text(s.Call(context.Background(), newTestEnv(t), ToolCall, json.RawMessage(`{"id":"mcp:memory:search_nodes"}`))); strings.Contains(got, "starting") {
		t.Errorf("memory up: %s", got)
	}
}
