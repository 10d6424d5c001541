package modes

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
)

func toolNamesOf(ts []*mcp.Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

func TestToolsListsThreeToolsAndDirectOnly(t *testing.T) {
	env := newTestEnv(t)
	s := &Tools{API: testAPI()}
	got := toolNamesOf(s.Tools(env))
	if want := []string{ToolSearch, ToolDescribe, ToolCall, "memory__read_graph"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("tools = %v, want %v", got, want)
	}
	// What is behind: the total (direct-only left out) and every upstream with its count.
	n := len(env.Snapshot().Entries) - 1
	counts := map[string]int{}
	for _, e := range env.Snapshot().Entries {
		if !e.DirectOnly {
			counts[e.Upstream]++
		}
	}
	for _, tl := range s.Tools(env)[:1] {
		if !strings.Contains(tl.Description, "tools from 4 MCP servers") || !strings.Contains(tl.Description, "registry (") {
			t.Errorf("%s description does not say what is behind it: %q", tl.Name, tl.Description)
		}
		for up, c := range counts {
			if !strings.Contains(tl.Description, up+" ("+itoa(c)+")") {
				t.Errorf("%s description lacks %s (%d)", tl.Name, up, c)
			}
		}
		if !strings.Contains(tl.Description, "holds "+itoa(n)+" tools") {
			t.Errorf("%s description lacks the total %d: %q", tl.Name, n, tl.Description)
		}
	}
	// The summary is said once on the whole surface:
	// tool_search's description, not the instructions or the other tools.
	for _, surf := range []Surface{s, &Tools{API: testAPI(), Directory: true}, &Code{API: testAPI(), Timeout: time.Second}} {
		whole := surf.Instructions(env)
		for _, tl := range surf.Tools(env) {
			whole += "\n" + tl.Description
		}
		if c := strings.Count(whole, "registry ("); c != 1 {
			t.Errorf("%s: the catalog summary appears %d times on the surface, want once", surf.Mode(), c)
		}
		if !strings.Contains(surf.Instructions(env), itoa(n)+" MCP tools") {
			t.Errorf("%s: instructions lack the tool count: %q", surf.Mode(), surf.Instructions(env))
		}
	}
	// A denied tool is not counted.
	env.deny["mcp:github:create_issue"] = true
	if d := s.Tools(env)[0].Description; !strings.Contains(d, "github ("+itoa(counts["github"]-1)+")") {
		t.Errorf("denied tool still counted: %q", d)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestSearchLimits(t *testing.T) {
	env := newTestEnv(t)
	api := testAPI()
	for _, tc := range []struct {
		limit, want int
	}{{0, 8}, {3, 3}, {20, 20}, {21, 20}, {1000, 20}} {
		hits, err := api.Search(env, "list", tc.limit, ViaTool)
		if err != nil || len(hits) != tc.want {
			t.Errorf("limit %d: %d hits, %v; want %d", tc.limit, len(hits), err, tc.want)
		}
	}
	if _, err := api.Search(env, "list", -1, ViaTool); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Errorf("limit -1: %v, want an error naming the limit", err)
	}
	if _, err := api.Search(env, "   ", 0, ViaTool); err == nil {
		t.Errorf("empty query: no error")
	}
	// Through the tool: 0 and negative limits are errors the model sees.
	s := &Tools{API: api}
	for _, l := range []int{0, -5} {
		r, err := s.Call(context.Background(), env, ToolSearch, args(t, map[string]any{"query": "list", "limit": l}))
		if err != nil || !r.IsError || !strings.Contains(resultText(t, r), "limit") {
			t.Errorf("tool_search limit %d: %v %v", l, r, err)
		}
	}
}

func TestSearchHitsByTrust(t *testing.T) {
	env := newTestEnv(t)
	hits, err := testAPI().Search(env, "create_issue", 20, ViaTool)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, h := range hits {
		seen[h.Upstream] = true
		switch h.Upstream {
		case "github":
			if h.Source != "mcp/trusted" || !strings.HasPrefix(h.Input, "{ ") {
				t.Errorf("trusted hit %s: source %s input %q", h.ID, h.Source, h.Input)
			}
		default:
			if h.Source != "mcp/untrusted" || h.Input != "unknown" || h.Output != "" {
				t.Errorf("untrusted hit %s: source %s input %q output %q", h.ID, h.Source, h.Input, h.Output)
			}
		}
		if h.ID == "mcp:memory:read_graph" {
			t.Errorf("a direct-only tool is a hit")
		}
	}
	if !seen["github"] || !seen["gitlab"] || !seen["registry"] {
		t.Errorf("create_issue hits cover %v, want github, gitlab and registry", seen)
	}
	// Denied entries are never hits.
	env.deny["mcp:github:create_issue"] = true
	hits, _ = testAPI().Search(env, "create_issue", 20, ViaTool)
	for _, h := range hits {
		if h.ID == "mcp:github:create_issue" {
			t.Errorf("a denied tool is a hit")
		}
	}
}

func TestDescribeResolve(t *testing.T) {
	env := newTestEnv(t)
	api := testAPI()
	d, err := api.Describe(env, "mcp:github:create_issue", ViaTool)
	if err != nil {
		t.Fatal(err)
	}
	e := env.Snapshot().ByID("mcp:github:create_issue")
	if string(d.InputSchema) != string(e.InputSchema) {
		t.Errorf("inputSchema is not the upstream's bytes:\n%s\n%s", d.InputSchema, e.InputSchema)
	}
	// By exposed name and by unique original name.
	byName := map[string]int{}
	for _, e := range env.Snapshot().Entries {
		byName[strings.ToLower(e.Name)]++
	}
	unique := ""
	for _, e := range env.Snapshot().Entries {
		if byName[strings.ToLower(e.Name)] == 1 && !e.DirectOnly && unique == "" {
			unique = e.Name
		}
	}
	for _, ref := range []string{"github__create_issue", unique} {
		if _, err := api.Describe(env, ref, ViaTool); err != nil {
			t.Errorf("describe %q: %v", ref, err)
		}
	}
	// Ambiguous: the candidate ids.
	_, err = api.Describe(env, "create_issue", ViaTool)
	if err == nil || !strings.Contains(err.Error(), "ambiguous") || !strings.Contains(err.Error(), "mcp:github:create_issue") || !strings.Contains(err.Error(), "mcp:gitlab:create_issue") {
		t.Errorf("ambiguous: %v", err)
	}
	// Unknown: up to three suggestions.
	_, err = api.Describe(env, "mcp:github:creat_issue", ViaTool)
	if err == nil || !strings.Contains(err.Error(), "did you mean") || !strings.Contains(err.Error(), "mcp:github:create_issue") || strings.Count(err.Error(), "mcp:") > 4 {
		t.Errorf("unknown: %v", err)
	}
	// A denied tool is unknown, and never a suggestion.
	env.deny["mcp:github:create_issue"] = true
	_, err = api.Describe(env, "mcp:github:create_issue", ViaTool)
	if err == nil || strings.Contains(strings.SplitN(err.Error(), ";", 2)[1], "mcp:github:create_issue") {
		t.Errorf("denied: %v", err)
	}
	// Direct-only tools are outside the catalog.
	if _, err := api.Describe(env, "mcp:memory:read_graph", ViaTool); err == nil {
		t.Errorf("describe of a direct-only tool succeeded")
	}
}

func TestToolCallEnvelope(t *testing.T) {
	env := newTestEnv(t)
	img := &mcp.ImageContent{Data: []byte{1, 2, 3}, MIMEType: "image/png"}
	env.special = map[string]func(json.RawMessage) (*mcp.CallToolResult, error){
		"mcp:registry:create_issue": func(json.RawMessage) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"n": 1, "ok": true}`}}}, nil
		},
		"mcp:gitlab:create_issue": func(json.RawMessage) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "not json"}, img}, IsError: true}, nil
		},
		"mcp:github:list_issues": func(json.RawMessage) (*mcp.CallToolResult, error) {
			// As the proxy's call path hands an upstream's JSON-RPC error on.
			return nil, NewUpstreamError("github", &jsonrpc.Error{Code: -32042, Message: "MCP error -32042: boom", Data: json.RawMessage(`{"url":"https://example.com/auth"}`)})
		},
	}
	s := &Tools{API: testAPI()}
	call := func(a any) (*mcp.CallToolResult, map[string]any) {
		t.Helper()
		r, err := s.Call(context.Background(), env, ToolCall, args(t, a))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if r.StructuredContent != nil {
			structured(t, r, &m)
		}
		return r, m
	}
	// structuredContent -> details; missing and null args -> {}.
	for _, a := range []any{
		map[string]any{"id": "mcp:github:create_issue"},
		map[string]any{"id": "mcp:github:create_issue", "args": nil},
	} {
		r, m := call(a)
		if r.IsError || !reflect.DeepEqual(m["result"].(map[string]any)["details"], map[string]any{"tool": "create_issue", "arguments": map[string]any{}}) {
			t.Errorf("call %v: %v", a, m)
		}
		if resultText(t, r) != string(mustMarshal(r.StructuredContent)) {
			t.Errorf("the text block is not the envelope")
		}
	}
	// A lone JSON text block -> its parsed JSON.
	_, m := call(map[string]any{"id": "mcp:registry:create_issue", "args": map[string]any{}})
	if d := m["result"].(map[string]any)["details"]; !reflect.DeepEqual(d, map[string]any{"n": 1.0, "ok": true}) {
		t.Errorf("details of a lone JSON text = %v", d)
	}
	if m["tool"].(map[string]any)["id"] != "mcp:registry:create_issue" {
		t.Errorf("envelope tool = %v", m["tool"])
	}
	// isError and non-text blocks: the envelope keeps isError, images stay blocks.
	r, m := call(map[string]any{"id": "mcp:gitlab:create_issue"})
	if !r.IsError || len(r.Content) != 2 || !reflect.DeepEqual(r.Content[1], mcp.Content(img)) {
		t.Errorf("isError/image result: %+v", r)
	}
	if _, ok := m["result"].(map[string]any)["details"]; ok {
		t.Errorf("details set for a non-JSON text")
	}
	if stub := m["result"].(map[string]any)["content"].([]any)[1].(map[string]any); stub["type"] != "image" || stub["data"] != nil {
		t.Errorf("the envelope carries the image instead of a stub: %v", stub)
	} else if stub["omitted"] != "returned as content block 2 of this tool_call result" {
		t.Errorf("tool_call stub = %q", stub["omitted"])
	}
	// Through the bridge the stub says where the block really goes.
	envl, _, err := s.API.Call(context.Background(), env, "mcp:gitlab:create_issue", nil, ViaBridge)
	if err != nil {
		t.Fatal(err)
	}
	if o := envl.Result["content"].([]any)[1].(map[string]any)["omitted"].(string); strings.Contains(o, "tool_call") || !strings.Contains(o, "tool_search_code result") {
		t.Errorf("bridge stub = %q", o)
	}
	// An upstream JSON-RPC error: an isError result with one clean line,
	// the code and data in structuredContent.
	r, m = call(map[string]any{"id": "mcp:github:list_issues", "args": map[string]any{"owner": "o", "repo": "r"}})
	if want := `tool_call mcp:github:list_issues: upstream "github": boom`; !r.IsError || resultText(t, r) != want {
		t.Errorf("JSON-RPC error: %q, want %q", resultText(t, r), want)
	}
	if want := map[string]any{"error": map[string]any{"upstream": "github", "code": -32042.0, "data": map[string]any{"url": "https://example.com/auth"}, "message": resultText(t, r)}}; !reflect.DeepEqual(m, want) {
		t.Errorf("structuredContent = %v, want %v", m, want)
	}
	// Unknown id: no call made.
	before := len(env.calls)
	r, _ = call(map[string]any{"id": "mcp:nowhere:x"})
	if !r.IsError || len(env.calls) != before {
		t.Errorf("unknown id: %v, calls %v", resultText(t, r), env.calls)
	}
	// Bad arguments to the tool itself.
	r2, err := s.Call(context.Background(), env, ToolCall, json.RawMessage(`[1]`))
	if err != nil || !r2.IsError {
		t.Errorf("bad tool_call arguments: %v %v", r2, err)
	}
}

func mustMarshal(v any) []byte { b, _ := json.Marshal(v); return b }

func TestToolsModeNames(t *testing.T) {
	env := newTestEnv(t)
	s := &Tools{API: testAPI()}
	ctx := context.Background()
	// Direct-only: callable. Catalog names: unknown in tools mode. Denied: the same unknown.
	if r, err := s.Call(ctx, env, "memory__read_graph", nil); err != nil || r.IsError {
		t.Errorf("direct-only call: %v %v", r, err)
	}
	var je *jsonrpc.Error
	if _, err := s.Call(ctx, env, "github__create_issue", nil); !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("catalog name in tools mode: %v", err)
	}
	env.deny["mcp:memory:read_graph"] = true
	_, err := s.Call(ctx, env, "memory__read_graph", nil)
	_, absent := s.Call(ctx, newTestEnvWithout(t, "memory", "read_graph"), "memory__read_graph", nil)
	if !errors.As(err, &je) || absent == nil || err.Error() != absent.Error() || !strings.HasPrefix(err.Error(), `unknown tool "memory__read_graph"`) || strings.Contains(err.Error(), "memory:read_graph") {
		t.Errorf("denied direct-only: %v, want the answer of a deployment without it: %v", err, absent)
	}
	if slices.Contains(toolNamesOf(s.Tools(env)), "memory__read_graph") {
		t.Errorf("denied direct-only tool listed")
	}
}

func TestDirectoryMode(t *testing.T) {
	env := newTestEnv(t)
	d := &Tools{API: testAPI(), Directory: true, DirectoryMaxChars: 2000, Pinned: []string{"github__create_issue", "mcp:gitlab:create_issue", "no_such_tool"}}
	ins := d.Instructions(env)
	i := strings.Index(ins, "Tool directory")
	if i < 0 {
		t.Fatalf("no directory in instructions: %q", ins)
	}
	dir := ins[i:]
	tools := d.Tools(env)
	if !strings.HasSuffix(tools[0].Description, dir) {
		t.Errorf("tool_search description does not carry the same directory")
	}
	if n := len([]rune(dir)); n > 2000 {
		t.Errorf("directory is %d chars, bound 2000", n)
	}
	ls := strings.Split(strings.TrimRight(dir, "\n"), "\n")
	var names []string
	for _, l := range ls[1 : len(ls)-1] {
		n, _, _ := strings.Cut(strings.TrimPrefix(l, "- "), ":")
		names = append(names, n)
		if env.Snapshot().ByExposed(n) == nil {
			t.Errorf("directory line %q names no catalog tool", l)
		}
	}
	if !slices.IsSorted(names) || slices.Contains(names, "memory__read_graph") {
		t.Errorf("directory names unsorted or holding a direct-only tool: %v", names)
	}
	if !strings.Contains(ls[len(ls)-1], "more tools") {
		t.Errorf("last line %q", ls[len(ls)-1])
	}
	// The same catalog gives the same bytes, whatever was searched in between.
	_, _ = d.Call(context.Background(), env, ToolSearch, args(t, map[string]any{"query": "zzz unusual user text"}))
	if d.Instructions(env) != ins || d.Tools(env)[0].Description != tools[0].Description {
		t.Errorf("directory changed between two calls on the same snapshot")
	}
	// A rebuilt catalog with the same tools: the same bytes.
	if d.Instructions(newTestEnv(t)) != ins {
		t.Errorf("directory differs between two catalogs of the same tools")
	}
	// Pinned tools with full schemas (unknown pins ignored).
	got := toolNamesOf(tools)
	if want := []string{ToolSearch, ToolDescribe, ToolCall, "memory__read_graph", "github__create_issue", "gitlab__create_issue"}; !reflect.DeepEqual(got, want) {
		t.Errorf("tools = %v, want %v", got, want)
	}
	if string(tools[4].InputSchema.(json.RawMessage)) != string(env.Snapshot().ByID("mcp:github:create_issue").InputSchema) {
		t.Errorf("pinned tool without its exact schema")
	}
	// A hidden directory name is hydrated and called through env.Call.
	r, err := d.Call(context.Background(), env, names[len(names)-1], args(t, map[string]any{"a": 1}))
	if err != nil || r.IsError || env.calls[len(env.calls)-1] != env.Snapshot().ByExposed(names[len(names)-1]).ID {
		t.Errorf("hidden name %s: %v %v %v", names[len(names)-1], r, err, env.calls)
	}
	// A denied one is unknown.
	env.deny[env.Snapshot().ByExposed(names[0]).ID] = true
	if _, err := d.Call(context.Background(), env, names[0], nil); err == nil {
		t.Errorf("denied directory name callable")
	}
	if strings.Contains(d.Instructions(env), "- "+names[0]+":") {
		t.Errorf("denied tool still in the directory")
	}
	// Small directory bound: still bounded.
	small := &Tools{API: testAPI(), Directory: true, DirectoryMaxChars: 500}
	if s := small.directory(env); len([]rune(s)) > 500 {
		t.Errorf("500-char directory is %d chars", len([]rune(s)))
	}
	// No tool the session may see: no empty directory; while upstreams
	// are still starting (initialize is answered at once), a pointer to
	// where it comes once tools are ready.
	for _, e := range env.Snapshot().Entries {
		env.deny[e.ID] = true
	}
	if ins := d.Instructions(startingEnv{env}); strings.Contains(ins, "Tool directory (") || !strings.Contains(ins, "in tool_search's description once tools are ready") {
		t.Errorf("instructions without a tool while upstreams start: %q", ins)
	}
	if ins := d.Instructions(env); strings.Contains(ins, "Tool directory") {
		t.Errorf("instructions without a tool, none starting: %q", ins)
	}
	if desc := d.Tools(env)[0].Description; strings.Contains(desc, "Tool directory") {
		t.Errorf("tool_search description without a tool: %q", desc)
	}
}

// TestHostileSchemasBounded: a trusted tool with a 1 MB schema and one with
// a depth-200 schema: search, describe and the hit stay bounded and exact.
func TestHostileSchemasBounded(t *testing.T) {
	env := hostileEnv(t)
	api := testAPI()
	for _, id := range []string{"mcp:hostile:huge", "mcp:hostile:deep"} {
		d, err := api.Describe(env, id, ViaTool)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Input) > catalog.DefaultBounds().MaxLen+8 {
			t.Errorf("%s: input hint of %d bytes", id, len(d.Input))
		}
		if string(d.InputSchema) != string(env.Snapshot().ByID(id).InputSchema) {
			t.Errorf("%s: describe changed the schema", id)
		}
	}
	hits, err := api.Search(env, "megabyte schema", 2, ViaTool)
	if err != nil || len(hits) == 0 || hits[0].ID != "mcp:hostile:huge" {
		t.Errorf("search: %v %v", hits, err)
	}
}

// TestHitsOfADownUpstream: while an upstream is down its tools stay
// searchable and describable, and their hits say why they are unavailable.
func TestHitsOfADownUpstream(t *testing.T) {
	env := newTestEnv(t)
	api := testAPI()
	env.cat.SetUnavailable("github", "exited with status 1: boom")
	hits, err := api.Search(env, "create a GitHub issue", 5, ViaTool)
	if err != nil {
		t.Fatal(err)
	}
	seen := false
	for _, h := range hits {
		switch h.Upstream {
		case "github":
			seen = true
			if h.Unavailable != "exited with status 1: boom" {
				t.Errorf("hit %s: unavailable = %q", h.ID, h.Unavailable)
			}
		default:
			if h.Unavailable != "" {
				t.Errorf("hit %s of a ready upstream marked unavailable: %q", h.ID, h.Unavailable)
			}
		}
	}
	if !seen {
		t.Fatalf("no github hit among %v", hits)
	}
	d, err := api.Describe(env, "mcp:github:create_issue", ViaTool)
	if err != nil || d.Unavailable == "" {
		t.Fatalf("describe of a down upstream's tool: %v %+v", err, d)
	}
	env.cat.SetUnavailable("github", "")
	if d, _ := api.Describe(env, "mcp:github:create_issue", ViaTool); d.Unavailable != "" {
		t.Fatalf("still unavailable after it came back: %q", d.Unavailable)
	}
}

// A client that listed the tools before a reload changed the mode calls a
// tool of the old mode: the answer names the mode's tools and says to list
// them again, not a "did you mean" of catalog tools with like names.
func TestOtherModeToolCalled(t *testing.T) {
	env := newTestEnv(t)
	for _, tc := range []struct {
		mode Surface
		name string
		want string
	}{
		{&Code{API: testAPI()}, ToolSearch, "its tool is tool_search_code"},
		{&Code{API: testAPI()}, ToolCall, "its tool is tool_search_code"},
		{&Tools{API: testAPI()}, ToolSearchCode, "its tools are tool_search, tool_describe and tool_call"},
		{&Tools{API: testAPI(), Directory: true}, ToolSearchCode, "its tools are tool_search, tool_describe and tool_call"},
		{Direct{}, ToolSearch, "search is off"},
	} {
		_, err := tc.mode.Call(context.Background(), env, tc.name, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "list the tools again") || strings.Contains(err.Error(), "did you mean") {
			t.Errorf("%s mode, %s: %v, want %q", tc.mode.Mode(), tc.name, err, tc.want)
		}
	}
	// An upstream tool whose original name is tool_call (an upstream that
	// is itself a proxy in tools mode) does not take the call of the
	// proxy's own tool.
	var mem []*catalog.Entry
	for _, e := range env.cat.Snapshot().Entries {
		if e.Upstream == "memory" {
			c := *e
			mem = append(mem, &c)
		}
	}
	env.cat.SetTools("memory", append(mem, &catalog.Entry{Name: ToolCall, Description: "Call a tool.", InputSchema: json.RawMessage(`{"type":"object"}`)}))
	if env.Snapshot().ByID("mcp:memory:tool_call") == nil {
		t.Fatal("the upstream's tool_call is not in the catalog")
	}
	if _, err := (&Code{API: testAPI()}).Call(context.Background(), env, ToolCall, nil); err == nil || !strings.Contains(err.Error(), "its tool is tool_search_code") {
		t.Errorf("code mode, tool_call beside an upstream's tool_call: %v", err)
	}
}
