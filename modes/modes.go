// Package modes turns the catalog into the surface a model sees (SPEC §3):
// direct ("off": every allowed tool), "tools" (tool_search, tool_describe,
// tool_call), "directory" (the three tools plus a bounded directory) and
// "code" (tool_search_code). Each surface lists its tools and handles calls
// to them. Modes reach upstreams only through Env.Call, the proxy's single
// call path, so no mode can bypass policy, approval or telemetry.
package modes

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
)

// Names of the tools the search surfaces expose. Upstream tools never get
// these names (catalog.AssignNames reserves them).
const (
	ToolSearch     = "tool_search"
	ToolDescribe   = "tool_describe"
	ToolCall       = "tool_call"
	ToolSearchCode = "tool_search_code"
)

// Reserved lists the names of the modes' own tools.
var Reserved = []string{ToolSearch, ToolDescribe, ToolCall, ToolSearchCode}

// Via says which route a search, describe or call took, for telemetry.
const (
	ViaDirect    = "direct"    // a tools/call of an exposed name
	ViaTool      = "tool"      // tool_search / tool_describe / tool_call
	ViaBridge    = "bridge"    // openclaw.tools.* inside tool_search_code
	ViaDirectory = "directory" // a hidden directory name, hydrated
	// ViaCLI: the command line's describe and call, which stand for a
	// client's tools/call as much as for tool_call: a direct-only tool
	// resolves too.
	ViaCLI = "cli"
)

// Env is what a surface gets from the proxy for one client session: the
// catalog, this session's policy, and the single call path.
type Env interface {
	// Snapshot is the current catalog.
	Snapshot() *catalog.Snapshot
	// Allowed reports whether this session's policy allows the entry
	// (SPEC §6). Denied entries are invisible: never listed, searched,
	// described or named in suggestions.
	Allowed(e *catalog.Entry) bool
	// Call runs one tool call through the proxy's single call path (policy
	// again, approval, upstream call with timeout, output validation,
	// telemetry). A JSON-RPC error from the upstream comes back as an error
	// wrapping *jsonrpc.Error.
	Call(ctx context.Context, e *catalog.Entry, args json.RawMessage, via string) (*mcp.CallToolResult, error)
	// Searched and Described record telemetry.
	Searched(query string, hits int, via string)
	Described(id string, found bool, via string)
}

// SandboxOwner is implemented by Envs that say whose code runs are whose
// (the proxy: one owner per client session), so that the sandbox shares its
// slots between sessions (sandbox.WithOwner).
type SandboxOwner interface {
	SandboxOwner(ctx context.Context) string
}

// SearchIndexer is implemented by Envs that search an index of their own
// for a snapshot (the proxy: one built over only the entries the session's
// policy allows, so denied tools do not shift scores). Otherwise the
// snapshot's index is searched, filtered by Allowed.
type SearchIndexer interface {
	SearchIndex(snap *catalog.Snapshot) *catalog.Index
}

// DeniedRecorder is implemented by Envs that record attempts to describe or
// call a tool the session's policy denies: the client
// gets the same answer as for an unknown tool (SPEC §6), so the attempt is
// visible only here. ref is what the client named (id, exposed or original
// name); via is one of the Via* constants.
type DeniedRecorder interface {
	Denied(e *catalog.Entry, ref, via string)
}

// noteDenied tells env about ref when it names a tool of the catalog (an
// exact exposed name, an id or a unique original name, direct-only tools
// included) that the session's policy denies.
func noteDenied(env Env, ref, via string) {
	dr, ok := env.(DeniedRecorder)
	if !ok {
		return
	}
	snap := env.Snapshot()
	e := snap.ByExposed(ref)
	if e == nil {
		e, _ = snap.Resolve(ref, nil)
	}
	if e != nil && !env.Allowed(e) {
		dr.Denied(e, ref, via)
	}
}

// Limits are the search limits of SPEC §4, already clamped by config.
type Limits struct {
	Default int // search_default_limit, 1..Max
	Max     int // max_search_limit, 1..50
}

// Surface is one mode.
type Surface interface {
	// Mode is "direct", "tools", "directory" or "code".
	Mode() string
	// Tools is the tools/list result for the session.
	Tools(env Env) []*mcp.Tool
	// Instructions is the server instructions text for the session ("" for none).
	Instructions(env Env) string
	// Call handles a tools/call of name. An unknown or denied name gives
	// ErrUnknownTool (a JSON-RPC invalid-params error), the same for both.
	Call(ctx context.Context, env Env, name string, args json.RawMessage) (*mcp.CallToolResult, error)
}

// ErrUnknownTool is the answer to a call of a name the session cannot see.
// A denied tool gets exactly the same answer (SPEC §6: no hint that it exists).
func ErrUnknownTool(name string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", name)}
}

// unknownDirect is ErrUnknownTool for a direct tools/call of name, with
// the "did you mean" that describe gives (suggest) among the tools the session may see, each shown as label
// names it (the exposed name where the mode calls it directly, else its
// id). The suggestions depend only on name and the tools the session may
// see, so a denied tool's answer is the one it would get if the tool did
// not exist (SPEC §6).
func unknownDirect(env Env, name string, label func(*catalog.Entry) string) error {
	if st := absentRef(env, name); st != "" { // removed.go
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q: %s", clipRef(name), st)}
	}
	sug := suggest(env.Snapshot(), name, env.Allowed, label)
	if sug == "" {
		return ErrUnknownTool(name)
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q; %s", name, sug)}
}

// notExposed is the answer to a tools/call of name in a mode that does not
// list it: ErrUnknownTool, with a pointer to the route
// when name is an exposed name, id or unique original name of a catalog tool
// the session may see. via is ToolCall (tools mode) or ToolSearchCode (code
// mode). A denied or missing tool gets ErrUnknownTool with the "did you
// mean" of unknownDirect (exposed names for what this mode calls directly:
// every tool in directory mode, else the direct-only ones; ids for the
// rest): the same answer for both (SPEC §6, no hint that a denied tool
// exists).
func notExposed(env Env, name, via string, directory bool) error {
	noteDenied(env, name, ViaDirect)
	// First, whatever the catalog holds: an upstream tool whose original
	// name is tool_call (an upstream that is itself a proxy in tools mode)
	// would otherwise take the call of the proxy's own tool.
	if err := otherModeTool(name, via); err != nil {
		return err
	}
	snap := env.Snapshot()
	e := snap.ByExposed(name)
	if e == nil || !env.Allowed(e) || e.DirectOnly {
		e, _ = snap.Resolve(name, func(e *catalog.Entry) bool { return !e.DirectOnly && env.Allowed(e) })
	}
	if e == nil || e.DirectOnly || !env.Allowed(e) {
		return unknownDirect(env, name, func(e *catalog.Entry) string {
			if directory || e.DirectOnly {
				return e.Exposed
			}
			return e.ID // called with tool_call or the bridge
		})
	}
	how := fmt.Sprintf("call it with tool_call: {\"id\": %q, \"args\": {…}} (tool_describe shows its arguments)", e.ID)
	if via == ToolSearchCode {
		how = fmt.Sprintf("call it from tool_search_code: return await openclaw.tools.call(%q, {…}) (openclaw.tools.describe shows its arguments)", e.ID)
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q: it is in the catalog, not listed directly; %s", clipRef(name), how)}
}

// otherModeTool is the answer to a tools/call of one of the proxy's own
// tools that the mode in force does not list (via: ToolCall for the tools
// and directory modes, ToolSearchCode for code mode, "" for direct mode),
// as a client that listed the tools before a reload changed
// [tool_search] mode sends: the mode's tools, and to list them again,
// instead of a "did you mean" of catalog tools with like names. nil for
// any other name. The names are reserved (no catalog tool has one).
func otherModeTool(name, via string) error {
	switch name {
	case ToolSearch, ToolDescribe, ToolCall, ToolSearchCode:
	default:
		return nil
	}
	now := "search is off: every tool is listed under its own name"
	switch via {
	case ToolCall:
		now = "its tools are " + ToolSearch + ", " + ToolDescribe + " and " + ToolCall
	case ToolSearchCode:
		now = "its tool is " + ToolSearchCode + " (code mode)"
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q: this server does not list it now (%s); list the tools again (tools/list)", name, now)}
}

// EntryTool converts a catalog entry to the MCP tool shown under its
// exposed name, with the upstream's schemas, annotations and _meta as received.
func EntryTool(e *catalog.Entry) *mcp.Tool {
	t := &mcp.Tool{Name: e.Exposed, Title: e.Title, Description: e.Description}
	if len(e.InputSchema) > 0 {
		t.InputSchema = e.InputSchema
	} else {
		t.InputSchema = json.RawMessage(`{"type":"object"}`)
	}
	if len(e.OutputSchema) > 0 {
		t.OutputSchema = e.OutputSchema
	}
	if len(e.Annotations) > 0 {
		var a mcp.ToolAnnotations
		if json.Unmarshal(e.Annotations, &a) == nil {
			t.Annotations = &a
		}
	}
	if len(e.Meta) > 0 {
		var m mcp.Meta
		if json.Unmarshal(e.Meta, &m) == nil {
			t.Meta = m
		}
	}
	if len(e.Icons) > 0 {
		_ = json.Unmarshal(e.Icons, &t.Icons)
	}
	return t
}

// ToolExtras returns, for each tool of a surface's tools/list answer
// (Surface.Tools), the members its upstream sent that mcp.Tool does not
// carry (catalog.Entry.Extra: "execution", later or extension members),
// one JSON object each, nil for a tool without any. The whole result is
// nil when no tool has any. A tool is matched to its entry by exposed name
// (the catalog reserves the proxy's own tool names, Reserved) and its
// description, and only an entry the session may see counts.
func ToolExtras(env Env, tools []*mcp.Tool) []json.RawMessage {
	var out []json.RawMessage
	snap := env.Snapshot()
	for i, t := range tools {
		e := snap.ByExposed(t.Name)
		if e == nil || len(e.Extra) == 0 || e.Exposed != t.Name || e.Description != t.Description || !env.Allowed(e) {
			continue
		}
		if out == nil {
			out = make([]json.RawMessage, len(tools))
		}
		out[i] = e.Extra
	}
	return out
}

// allowedEntries returns the entries the session may see, sorted by id.
func allowedEntries(env Env, keep func(*catalog.Entry) bool) []*catalog.Entry {
	var out []*catalog.Entry
	for _, e := range env.Snapshot().Entries {
		if env.Allowed(e) && (keep == nil || keep(e)) {
			out = append(out, e)
		}
	}
	return out
}

// resolveCallable finds the entry an exact exposed name names, for a direct
// tools/call: only exact (case-insensitive) exposed names, never ids or
// original names, and only entries the session may see.
func resolveCallable(env Env, name string) *catalog.Entry {
	e := env.Snapshot().ByExposed(name)
	if e == nil || !env.Allowed(e) {
		return nil
	}
	return e
}

// maxSummaryNames bounds the bytes of the upstream list of the catalog
// summary ("github (6), memory (8)"), so the search tool's description
// stays within the first-contact budget (2 KB) whatever the catalog: the
// upstreams with the most tools are named while they fit (sorted by name
// in the text), and the rest counted ("and 12 more").
const maxSummaryNames = 260

// summary describes what is behind a search surface: how many tools, which
// upstreams (models skip a search tool whose description is generic).
func summary(env Env) string {
	es := allowedEntries(env, func(e *catalog.Entry) bool { return !e.DirectOnly })
	count := map[string]int{}
	for _, e := range es {
		count[e.Upstream]++
	}
	ups := make([]string, 0, len(count))
	for u := range count {
		ups = append(ups, u)
	}
	sort.Strings(ups)
	bySize := slices.Clone(ups)
	sort.SliceStable(bySize, func(i, j int) bool { return count[bySize[i]] > count[bySize[j]] })
	var named []string
	used := 0
	for _, u := range bySize {
		n := len(u) + len(fmt.Sprint(count[u])) + 5 // "name (N), "
		if used+n > maxSummaryNames {
			break
		}
		named, used = append(named, u), used+n
	}
	sort.Strings(named)
	parts := make([]string, 0, len(named)+1)
	for _, u := range named {
		parts = append(parts, fmt.Sprintf("%s (%d)", u, count[u]))
	}
	if len(ups) > len(named) {
		parts = append(parts, fmt.Sprintf("and %d more", len(ups)-len(named)))
	}
	if len(es) == 0 {
		if st := startingSummary(starting(env)); st != "" {
			return st[1:] + unavailableSummary(env)
		}
		return "The catalog is empty right now." + unavailableSummary(env)
	}
	tools, servers := "tools", "MCP servers"
	if len(es) == 1 {
		tools = "tool"
	}
	if len(ups) == 1 {
		servers = "MCP server"
	}
	return fmt.Sprintf("The catalog holds %d %s from %d %s: %s.", len(es), tools, len(ups), servers, strings.Join(parts, ", ")) + startingSummary(starting(env)) + unavailableSummary(env)
}

// countTools is "N MCP tools" (or "MCP tools" when the catalog is empty
// right now): the short mention of the catalog in the instructions; the
// full summary (which upstreams) is in the search tool's description, once.
func countTools(env Env) string {
	n := len(allowedEntries(env, func(e *catalog.Entry) bool { return !e.DirectOnly }))
	switch {
	case n == 0 && len(starting(env)) > 0:
		return "MCP tools"
	case n == 0:
		return "MCP tools (empty right now)"
	case n == 1:
		return "1 MCP tool"
	}
	return fmt.Sprintf("%d MCP tools", n)
}

// textResult is a successful result holding one text block.
func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// errorResult is an isError result holding one text block: errors a model
// should see and correct (bad arguments, unknown ids) rather than protocol errors.
func errorResult(format string, a ...any) *mcp.CallToolResult {
	r := textResult(fmt.Sprintf(format, a...))
	r.IsError = true
	return r
}
