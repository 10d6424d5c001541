package proxy

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcp-toolsearch/catalog"
)

// forward sends one tools/call to the entry's upstream under its exact
// original name and returns the upstream's result unchanged. call_timeout
// applies through ctx (upstream.Manager.CallTool).
func (p *Proxy) forward(ctx context.Context, s *session, e *catalog.Entry, args json.RawMessage) (*mcp.CallToolResult, error) {
	return p.ups.CallTool(ctx, e.Upstream, &mcp.CallToolParams{Name: e.Name, Arguments: args})
}
