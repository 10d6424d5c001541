package modes

import (
	"context"
	"encoding/json"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Direct is the mode with tool search off (SPEC §3 "false"): every allowed
// tool under its exposed name; calls pass through unchanged.
type Direct struct {
	// AlwaysLoad holds the upstreams' always_load settings (upstream name
	// -> value): true lists the upstream's tools with AlwaysLoadKey, false
	// without it. An upstream not in it has its tools' _meta as it sent
	// them: whether a client defers them is the client's choice.
	AlwaysLoad map[string]bool
}

// Mode returns "direct".
func (Direct) Mode() string { return "direct" }

// Tools lists every allowed entry, sorted by id. Each tool carries the
// index's search hint for it in _meta["anthropic/searchHint"] (unless its
// upstream sent one): clients that search deferred tools themselves
// (Claude Code's ToolSearch) score its words, so a request finds the tool
// by words that count for more in the catalog than its description's
// "the" and "for", and by other forms, the other verbs of its operation
// and its words in other languages. A tool listed under its upstream's own
// name (prefix = "") is passed through as the upstream sent it, with no
// hint: such an upstream is served transparently. An upstream with
// always_load set has _meta["anthropic/alwaysLoad"] set or removed on its
// tools (AlwaysLoad); otherwise it stays as the upstream sent it.
func (d Direct) Tools(env Env) []*mcp.Tool {
	es := allowedEntries(env, nil)
	snap := env.Snapshot()
	ix := snap.Index
	if si, ok := env.(SearchIndexer); ok {
		// The view's own index: a hint's words are chosen by statistics
		// over what this client may see, so a tool denied to it cannot
		// change another tool's hint.
		ix = si.SearchIndex(snap)
	}
	out := make([]*mcp.Tool, 0, len(es))
	for _, e := range es {
		t := EntryTool(e)
		if ix != nil && e.Exposed != e.Name {
			addSearchHint(t, ix.SearchHint(e.ID))
		}
		if on, set := d.AlwaysLoad[e.Upstream]; set {
			setAlwaysLoad(t, on)
		}
		out = append(out, t)
	}
	return out
}

// searchHintKey is the _meta key of a tool's search hint.
const searchHintKey = "anthropic/searchHint"

// addSearchHint sets t's search hint to hint when t has none.
func addSearchHint(t *mcp.Tool, hint string) {
	if hint == "" {
		return
	}
	if _, ok := t.Meta[searchHintKey]; ok {
		return // the upstream's own
	}
	m := make(mcp.Meta, len(t.Meta)+1)
	for k, v := range t.Meta {
		m[k] = v
	}
	m[searchHintKey] = hint
	t.Meta = m
}

// Instructions is empty in direct mode.
func (Direct) Instructions(Env) string { return "" }

// Call routes an exposed name to its upstream through env.Call.
func (Direct) Call(ctx context.Context, env Env, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	e := resolveCallable(env, name)
	if e == nil {
		noteDenied(env, name, ViaDirect)
		if err := otherModeTool(name, ""); err != nil {
			return nil, err
		}
		return nil, unknownDirect(env, name, func(e *catalog.Entry) string { return e.Exposed })
	}
	return env.Call(ctx, e, args, ViaDirect)
}
