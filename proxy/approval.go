package proxy

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcp-toolsearch/catalog"
)

// approve asks for approval of a call matched by tools.require_approval.
// It returns (nil, nil) when the call may run; otherwise the result or error
// to give the caller, and the upstream never sees the call.
func (p *Proxy) approve(ctx context.Context, s *session, e *catalog.Entry, args json.RawMessage, rule string) (*mcp.CallToolResult, error) {
	r := &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "call to " + e.ID + " blocked: it requires approval (" + rule + ") and approvals are not available yet"}}}
	r.Meta = mcp.Meta{MetaKeyBlocked: "approval"}
	return r, nil
}
