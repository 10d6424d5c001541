package modes

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
)

// Tools is the "tools" mode (SPEC §3): tool_search, tool_describe and
// tool_call, plus the direct-only tools. With Directory set it is the
// "directory" mode: the same three tools, a bounded directory of tool
// names in the instructions and in tool_search's description, the pinned
// tools with full schemas, and hidden directory names callable directly.
type Tools struct {
	API API
	// Directory turns on directory mode.
	Directory bool
	// DirectoryMaxChars bounds the directory text (characters, not bytes).
	DirectoryMaxChars int
	// Pinned are tool references (exposed names or ids) shown with full
	// schemas in directory mode.
	Pinned []string
	// AlwaysLoad holds the upstreams' always_load settings (upstream name
	// -> value); an upstream not in it has its direct-only and pinned
	// tools listed with AlwaysLoadKey, as the surface's own tools are.
	AlwaysLoad map[string]bool
}

// Mode returns "tools" or "directory".
func (t *Tools) Mode() string {
	if t.Directory {
		return "directory"
	}
	return "tools"
}

// Tools lists the three tools, the direct-only tools and, in directory
// mode, the pinned tools.
func (t *Tools) Tools(env Env) []*mcp.Tool {
	sum := summary(env)
	searchDesc := "Search the tool catalog behind this server. " + sum +
		" Returns hits {id, name, description, input, ...}, best first; input is a TypeScript-style signature, or \"unknown\": tool_describe the id first. Run hits with tool_call."
	if d := t.directory(env); d != "" {
		searchDesc += "\n\n" + d
	}
	out := []*mcp.Tool{
		{
			Name:        ToolSearch,
			Description: searchDesc,
			InputSchema: json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"query":{"type":"string","description":"the task, in any language, e.g. \"create a GitHub issue\""},"limit":{"type":"integer","minimum":1,"maximum":%d,"description":"hits wanted (default %d)"}},"required":["query"]}`, t.API.Limits.Max, t.API.Limits.Default)),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, Title: "Search tools"},
		},
		{
			Name:        ToolDescribe,
			Description: "The full description and exact JSON input and output schemas of a tool from tool_search, by its hit id.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","description":"a hit's id"}},"required":["id"]}`),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, Title: "Describe a tool"},
		},
		{
			Name:        ToolCall,
			Description: "Run a tool from tool_search: id is its hit id, args its arguments. Returns {tool, result}: the tool's own result, its JSON output in result.details.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","description":"a hit's id"},"args":{"type":"object","description":"the tool's arguments, per its input schema"}},"required":["id"]}`),
			Annotations: &mcp.ToolAnnotations{Title: "Call a tool"},
		},
	}
	for _, tool := range out {
		setAlwaysLoad(tool, true)
	}
	shown := map[string]bool{}
	for _, e := range allowedEntries(env, func(e *catalog.Entry) bool { return e.DirectOnly }) {
		out = append(out, setAlwaysLoad(EntryTool(e), alwaysLoadOf(t.AlwaysLoad, e.Upstream, true)))
		shown[e.ID] = true
	}
	if t.Directory {
		for _, e := range t.pinned(env) {
			if !shown[e.ID] {
				out = append(out, setAlwaysLoad(EntryTool(e), alwaysLoadOf(t.AlwaysLoad, e.Upstream, true)))
				shown[e.ID] = true
			}
		}
	}
	return out
}

// pinned resolves the pinned references among the entries the session may see.
func (t *Tools) pinned(env Env) []*catalog.Entry {
	snap := env.Snapshot()
	var out []*catalog.Entry
	for _, ref := range t.Pinned {
		if e, _ := snap.Resolve(ref, env.Allowed); e != nil {
			out = append(out, e)
		}
	}
	return out
}

// Instructions carries the directory in directory mode; in tools mode a
// short hint on how to use the three tools. A directory with no tool is
// not written as an empty list; when upstreams are still starting (a
// client's initialize is answered at once, and the instructions are sent
// once) the instructions point to tool_search's description, which is
// listed again when tools are added.
func (t *Tools) Instructions(env Env) string {
	head := "This server fronts a catalog of " + countTools(env) + ". Find tools with tool_search, read exact schemas with tool_describe, run them with tool_call." + startingInstructions(env) + unavailableSummary(env)
	if !t.Directory {
		return head
	}
	d := t.directory(env)
	if d == "" {
		if len(starting(env)) > 0 {
			return head + " The tool directory is in tool_search's description once tools are ready."
		}
		return head
	}
	return head + "\n\n" + d
}

// directory renders the bounded, sorted directory of the session's
// catalog: one line per tool, "name: first sentence of the description";
// "" outside directory mode and when the session sees no tool.
// It depends only on the catalog snapshot and policy, never on user text,
// so the same snapshot always gives the same bytes (prompt caches stay valid).
func (t *Tools) directory(env Env) string {
	if !t.Directory {
		return ""
	}
	es := allowedEntries(env, func(e *catalog.Entry) bool { return !e.DirectOnly })
	if len(es) == 0 {
		return ""
	}
	sort.Slice(es, func(i, j int) bool { return es[i].Exposed < es[j].Exposed })
	max := t.DirectoryMaxChars
	if max <= 0 {
		max = 6000
	}
	var b strings.Builder
	b.WriteString("Tool directory (call a name directly, or via tool_call; use tool_describe for schemas):\n")
	used := len([]rune(b.String()))
	for i, e := range es {
		line := "- " + e.Exposed
		if d := catalog.ShortDescription(e.Description, 80); d != "" {
			line += ": " + d
		}
		line += "\n"
		n := len([]rune(line))
		tail := fmt.Sprintf("… and %d more tools: use tool_search.\n", len(es)-i)
		if used+n+len([]rune(tail)) > max {
			b.WriteString(tail)
			return b.String()
		}
		b.WriteString(line)
		used += n
	}
	return b.String()
}

// Call handles the three tools; other names are direct-only tools, or in
// directory mode pinned or hidden directory names (hydrated from the same
// authorized catalog and run through the same call path).
func (t *Tools) Call(ctx context.Context, env Env, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	waitStarting(ctx, env)
	switch name {
	case ToolSearch:
		m, err := ownArgs(name, args, "query", "limit")
		if err != nil {
			return errorResult("tool_search: %v", err), nil
		}
		q, err := stringArg(m, "query", true, name)
		if err != nil {
			return errorResult("tool_search: %v", err), nil
		}
		limit, set, err := intArg(m, "limit")
		if err != nil {
			return errorResult("tool_search: %v", err), nil
		}
		if set && limit <= 0 {
			return errorResult("tool_search: limit must be at least 1, got %d", limit), nil
		}
		_, end := startSpan(ctx, env, spanSearch) // (trace.go)
		hits, err := t.API.Search(env, q, limit, ViaTool)
		end(err)
		if err != nil {
			return errorResult("tool_search: %v", err), nil
		}
		if note := searchNoteFor(env, catalog.SearchNote(hits), q); note != "" {
			return jsonResult(map[string]any{"hits": hits, "note": note})
		}
		return jsonResult(map[string]any{"hits": hits})
	case ToolDescribe:
		m, err := ownArgs(name, args, "id")
		if err != nil {
			return errorResult("tool_describe: %v", err), nil
		}
		id, err := stringArg(m, "id", true, name)
		if err != nil {
			return errorResult("tool_describe: %v", err), nil
		}
		d, err := t.API.Describe(env, id, ViaTool)
		if err != nil {
			return errorResult("tool_describe: %v", err), nil
		}
		return jsonResult(d)
	case ToolCall:
		m, err := ownArgs(name, args, "id", "args")
		if err != nil {
			return errorResult("tool_call: %v", err), nil
		}
		id, err := stringArg(m, "id", true, name)
		if err != nil {
			return errorResult("tool_call: %v", err), nil
		}
		callArgs, err := ToolArguments(m["args"], "`args`")
		if err != nil {
			return errorResult("tool_call %s: %v", clipRef(id), err), nil
		}
		res, err := t.API.callEnveloped(ctx, env, id, callArgs)
		if err != nil {
			return callErrorResult(id, err), nil
		}
		return res, nil
	}
	e := resolveCallable(env, name)
	if e == nil {
		return nil, notExposed(env, name, ToolCall, t.Directory)
	}
	if e.DirectOnly {
		return env.Call(ctx, e, args, ViaDirect)
	}
	if t.Directory {
		return env.Call(ctx, e, args, ViaDirectory)
	}
	return nil, notExposed(env, name, ToolCall, false)
}

// jsonResult returns v as JSON text and as structuredContent.
func jsonResult(v any) (*mcp.CallToolResult, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: json.RawMessage(b)}, nil
}
