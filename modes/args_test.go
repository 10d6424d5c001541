package modes

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Argument-shape mistakes in tool_call (and the other
// own tools) are rejected or repaired before any upstream sees them, with an
// error that names the fix.
func TestToolCallArgumentShapes(t *testing.T) {
	env := newTestEnv(t)
	s := &Tools{API: testAPI()}
	for _, tc := range []struct {
		name, tool, args string
		want             string // "" = the call reaches the tool
		gotArgs          string // what the tool received
	}{
		{"args as a JSON string holding an object is parsed", ToolCall, `{"id":"mcp:github:create_issue","args":"{\"title\":\"x\"}"}`, "", `{"title":"x"}`},
		{"args as a plain string", ToolCall, `{"id":"mcp:github:create_issue","args":"title=x"}`, "`args` must be an object", ""},
		{"args as an array", ToolCall, `{"id":"mcp:github:create_issue","args":[{"title":"x"}]}`, "`args` must be an object with the tool's arguments by name, e.g. {\"path\": \"/tmp/a.txt\"}; got an array", ""},
		{"args as a number", ToolCall, `{"id":"mcp:github:create_issue","args":3}`, "got a number", ""},
		{"flat arguments", ToolCall, `{"id":"mcp:github:create_issue","title":"x","owner":"o"}`, "`owner`, `title` are not a key of tool_call, which takes only `id` and `args`: put the tool's own arguments inside `args`", ""},
		{"arguments instead of args", ToolCall, `{"id":"mcp:github:create_issue","arguments":{"title":"x"}}`, "unknown key `arguments`: did you mean `args`?", ""},
		{"missing id", ToolCall, `{"args":{"title":"x"}}`, "`id` is required", ""},
		{"name instead of id", ToolCall, `{"name":"mcp:github:create_issue","args":{}}`, "unknown key `name`: did you mean `id`?", ""},
		{"id not a string", ToolCall, `{"id":7}`, "`id` must be a string, got a number", ""},
		{"arguments not an object", ToolCall, `["mcp:github:create_issue"]`, "arguments must be an object", ""},
		{"describe without id", ToolDescribe, `{}`, "tool_describe: `id` is required", ""},
		{"describe with tool", ToolDescribe, `{"tool":"mcp:github:create_issue"}`, "did you mean `id`?", ""},
		{"search with q", ToolSearch, `{"q":"issue"}`, "did you mean `query`?", ""},
		// The example in a shape error is the model's own call, corrected.
		{"flat arguments: example is the call itself", ToolCall, `{"id":"mcp:filesystem:write_file","path":"p.txt","content":"x"}`, `e.g. {"id": "mcp:filesystem:write_file", "args": {"content":"x","path":"p.txt"}}`, ""},
		{"arguments: example moves them", ToolCall, `{"id":"mcp:filesystem:read_text_file","arguments":{"path":"p.txt"}}`, `did you mean ` + "`args`" + `? e.g. {"id": "mcp:filesystem:read_text_file", "args": {"path":"p.txt"}}`, ""},
		{"missing id: placeholder", ToolCall, `{"args":{"path":"p.txt"}}`, `e.g. {"id": "<id of a tool_search hit>", "args": {"path":"p.txt"}}`, ""},
		{"name for id: example keeps it", ToolCall, `{"name":"mcp:memory:search_nodes","args":{"query":"x"}}`, `e.g. {"id": "mcp:memory:search_nodes", "args": {"query":"x"}}`, ""},
		{"describe with tool: example keeps it", ToolDescribe, `{"tool":"mcp:memory:open_nodes"}`, `e.g. {"id": "mcp:memory:open_nodes"}`, ""},
		{"huge flat arguments: keys only", ToolCall, `{"id":"mcp:filesystem:write_file","path":"p.txt","content":"` + strings.Repeat("x", 400) + `"}`, `e.g. {"id": "mcp:filesystem:write_file", "args": {"content": …, "path": …}}`, ""},
		{"search limit as a word", ToolSearch, `{"query":"issue","limit":"five"}`, "tool_search: `limit` must be an integer, got a string", ""},
		{"search limit as an object", ToolSearch, `{"query":"issue","limit":{"n":5}}`, "tool_search: `limit` must be an integer, got an object", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env.calls, env.gotArgs = nil, nil
			r, err := s.Call(context.Background(), env, tc.tool, json.RawMessage(tc.args))
			if err != nil {
				t.Fatal(err)
			}
			text := resultText(t, r)
			if tc.want == "" {
				if r.IsError || len(env.gotArgs) != 1 || env.gotArgs[0] != tc.gotArgs {
					t.Fatalf("want the call to reach the tool with %s; got %q (tool received %v)", tc.gotArgs, text, env.gotArgs)
				}
				return
			}
			if !r.IsError || !strings.Contains(text, tc.want) {
				t.Errorf("got %q, want an error containing %q", text, tc.want)
			}
			if strings.Contains(text, "create_issue") && !strings.Contains(tc.args, "create_issue") {
				t.Errorf("got %q: an example naming a tool the model did not call", text)
			}
			if strings.Contains(text, "not holding a JSON object") && !strings.Contains(tc.want, "`args`") {
				t.Errorf("got %q: the JSON-object remark belongs to `args` only", text)
			}
			if len(env.calls) != 0 {
				t.Errorf("the upstream saw the call: %v", env.calls)
			}
		})
	}
	// A numeric string for tool_search's integer `limit` is taken as the
	// integer, like a JSON string holding `args`.
	for _, limit := range []string{`"1"`, `" 2 "`, `2`} {
		r, err := s.Call(context.Background(), env, ToolSearch, json.RawMessage(`{"query":"issue","limit":`+limit+`}`))
		if err != nil || r.IsError {
			t.Fatalf("limit %s: %v %q", limit, err, resultText(t, r))
		}
		var sc struct{ Hits []json.RawMessage }
		b, _ := json.Marshal(r.StructuredContent)
		if json.Unmarshal(b, &sc) != nil || len(sc.Hits) == 0 || len(sc.Hits) > 2 || (limit == `"1"` && len(sc.Hits) != 1) {
			t.Errorf("limit %s: %d hits (%s)", limit, len(sc.Hits), b)
		}
	}
	// tool_search_code: a slip in its one key.
	c := &Code{API: testAPI()}
	r, err := c.Call(context.Background(), env, ToolSearchCode, json.RawMessage(`{"script":"return 1"}`))
	if err != nil || !r.IsError || !strings.Contains(resultText(t, r), "did you mean `code`?") {
		t.Errorf("tool_search_code {script}: %v %v", r, err)
	}
}

// The same mistakes through the code bridge.
func TestBridgeArgumentShapes(t *testing.T) {
	env := newTestEnv(t)
	c := newTestCode(t, 1)
	_, out := runCode(t, c, env, `const out = {};
const tries = {
  stringArgs: () => openclaw.tools.call("mcp:github:create_issue", '{"title":"x"}'),
  arrayArgs: () => openclaw.tools.call("mcp:github:create_issue", ["x"]),
  objectFirst: () => openclaw.tools.call({id: "mcp:github:create_issue", args: {}}),
  objectFirstOther: () => openclaw.tools.call({id: "mcp:filesystem:write_file", args: {path: "a"}}),
  threeArgs: () => openclaw.tools.call("mcp:github:create_issue", "x", "y"),
  searchNumber: () => openclaw.tools.search("issue", 2),
  searchNumericString: () => openclaw.tools.search("issue", {limit: "1"}),
  searchWordLimit: () => openclaw.tools.search("issue", {limit: "two"}),
};
for (const [k, f] of Object.entries(tries)) {
  try { const r = await f(); out[k] = Array.isArray(r) ? "hits:" + r.length : "ok:" + JSON.stringify(r.result.details.arguments); }
  catch (e) { out[k] = "error:" + e.message; }
}
return out;`)
	if !out.OK {
		t.Fatal(out.Error)
	}
	var got map[string]string
	if err := json.Unmarshal(out.Value, &got); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"stringArgs":          `ok:{"title":"x"}`,
		"arrayArgs":           "error:openclaw.tools.call mcp:github:create_issue: openclaw.tools.call's second argument (args) must be an object",
		"objectFirst":         "error:openclaw.tools.call(id, args): the first argument is the tool id (a string)",
		"objectFirstOther":    `error:openclaw.tools.call(id, args): the first argument is the tool id (a string), the second the tool's arguments, e.g. openclaw.tools.call("mcp:filesystem:write_file", {"path":"a"}); got an object`,
		"threeArgs":           "error:openclaw.tools.call(id, args) takes two arguments",
		"searchNumber":        "hits:2",
		"searchNumericString": "hits:1",
		"searchWordLimit":     "error:openclaw.tools.search: `limit` must be an integer, got a string",
	} {
		if !strings.HasPrefix(got[k], want) {
			t.Errorf("%s: %q, want %q…", k, got[k], want)
		}
	}
	if len(env.calls) != 1 {
		t.Errorf("upstream calls = %v, want only the repaired one", env.calls)
	}
}

// A tools/call of a hidden catalog tool's name in tools or
// code mode points to the route; a denied tool stays identical to unknown.
func TestHiddenCatalogNamePointsToTheRoute(t *testing.T) {
	env := newTestEnv(t)
	for _, tc := range []struct {
		s    Surface
		want string
	}{
		{&Tools{API: testAPI()}, `call it with tool_call: {"id": "mcp:github:create_issue"`},
		{&Code{API: testAPI()}, `return await openclaw.tools.call("mcp:github:create_issue"`},
	} {
		for _, name := range []string{"github__create_issue", "mcp:github:create_issue"} {
			_, err := tc.s.Call(context.Background(), env, name, json.RawMessage(`{}`))
			var je *jsonrpc.Error
			if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || !strings.Contains(je.Message, tc.want) || !strings.HasPrefix(je.Message, `unknown tool "`+name+`"`) {
				t.Errorf("%s: call %s: %v, want -32602 with %q", tc.s.Mode(), name, err, tc.want)
			}
		}
		env.deny["mcp:github:create_issue"] = true
		_, denied := tc.s.Call(context.Background(), env, "github__create_issue", json.RawMessage(`{}`))
		_, unknown := tc.s.Call(context.Background(), newTestEnvWithout(t, "github", "create_issue"), "github__create_issue", json.RawMessage(`{}`))
		if denied == nil || unknown == nil || denied.Error() != unknown.Error() || strings.Contains(denied.Error(), "github:create_issue") {
			t.Errorf("%s: denied %v differs from absent %v", tc.s.Mode(), denied, unknown)
		}
		delete(env.deny, "mcp:github:create_issue")
	}
	if len(env.calls) != 0 {
		t.Errorf("calls reached the upstream: %v", env.calls)
	}
}

// A body that returns nothing, and a missing await, get a hint.
func TestCodeHints(t *testing.T) {
	env := newTestEnv(t)
	c := newTestCode(t, 1)
	for _, tc := range []struct{ body, want string }{
		{`const hits = await openclaw.tools.search("issue"); hits.length;`, "the body returned nothing: end it with `return …`"},
		{`const hits = openclaw.tools.search("issue"); return hits[0].id;`, "openclaw.tools.search(…) returns a Promise: did you forget `await` before it?"},
		{`const d = openclaw.tools.describe("mcp:github:create_issue")
return {d}`, "openclaw.tools.describe(…) returns a Promise: did you forget `await`"},
		{`return null`, ""},
		{`const [a, b] = await Promise.all([
  openclaw.tools.search("create issue"),
  openclaw.tools.search("create entities in the knowledge graph"),
]);
return {a: a.length, b: {}};`, ""},
	} {
		r, out := runCode(t, c, env, tc.body)
		text := resultText(t, r)
		if out.Hint == "" != (tc.want == "") || !strings.Contains(out.Hint, tc.want) || (tc.want != "" && !strings.Contains(text, tc.want)) {
			t.Errorf("body %q: hint %q, text %q; want %q", tc.body, out.Hint, text, tc.want)
		}
	}
}

// In the bridge an upstream's JSON-RPC error rejects with
// one clean message and carries upstream, code and data as properties.
func TestBridgeUpstreamErrorProps(t *testing.T) {
	env := newTestEnv(t)
	env.special = map[string]func(json.RawMessage) (*mcp.CallToolResult, error){
		"mcp:github:list_issues": func(json.RawMessage) (*mcp.CallToolResult, error) {
			return nil, NewUpstreamError("github", &jsonrpc.Error{Code: -32042, Message: "MCP error -32042: auth needed", Data: json.RawMessage(`{"url":"https://example.com/auth"}`)})
		},
	}
	c := newTestCode(t, 1)
	_, out := runCode(t, c, env, `try { await openclaw.tools.call("mcp:github:list_issues", {owner: "o", repo: "r"}); return "no error"; }
catch (e) { return {message: e.message, upstream: e.upstream, code: e.code, data: e.data}; }`)
	var got map[string]any
	if err := json.Unmarshal(out.Value, &got); err != nil || !out.OK {
		t.Fatalf("%s %v", out.Error, err)
	}
	want := map[string]any{"message": `upstream "github": auth needed`, "upstream": "github", "code": -32042.0, "data": map[string]any{"url": "https://example.com/auth"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the script saw %v\nwant %v", got, want)
	}
}
