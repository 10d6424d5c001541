package modes

import (
	"context"
	"encoding/json"
	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Direct is the mode with tool search off (SPEC §3 "false"): every allowed
// tool under its exposed name; calls pass through unchanged.
type Direct struct{}

// Mode returns "direct".
func (Direct) Mode() string { return "direct" }

// Tools lists every allowed entry, sorted by id.
func (Direct) Tools(env Env) []*mcp.Tool {
	es := allowedEntries(env, nil)
	out := make([]*mcp.Tool, 0, len(es))
	for _, e := range es {
		out = append(out, EntryTool(e))
	}
	return out
}

// Instructions is empty in direct mode.
func (Direct) Instructions(Env) string { return "" }

// Call routes an exposed name to its upstream through env.Call.
func (Direct) Call(ctx context.Context, env Env, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	e := resolveCallable(env, name)
	if e == nil {
		noteDenied(env, name, ViaDirect)
		return nil, unknownDirect(env, name, func(e *catalog.Entry) string { return e.Exposed })
	}
	return env.Call(ctx, e, args, ViaDirect)
}
