package proxy

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Result types of protocol 2026-07-28 (SEP-2322): every tools/call result
// says "complete" or "input_required".
const (
	resultComplete      = "complete"
	resultInputRequired = "input_required"
)

// withResultType returns a copy of r whose resultType is rt. go-sdk v1.8.0
// keeps resultType unexported and sets it only in its own tools/call
// handler (mcp/server.go, handleMultiRoundTripResult), which the proxy's
// middleware replaces; CallToolResult.UnmarshalJSON is the one public way
// to set it, so the copy starts from a decoded stub and takes r's exported
// fields.
func withResultType(r *mcp.CallToolResult, rt string) *mcp.CallToolResult {
	var out mcp.CallToolResult
	stub, _ := json.Marshal(map[string]any{"content": []any{}, "resultType": rt})
	_ = json.Unmarshal(stub, &out)
	out.Meta, out.Content, out.StructuredContent, out.IsError = r.Meta, r.Content, r.StructuredContent, r.IsError
	out.InputRequests, out.RequestState = r.InputRequests, r.RequestState
	return &out
}

// modernRequestOf reports whether req was sent at protocol 2026-07-28 or
// later (its _meta names the version; the go-sdk fills the session's
// InitializeParams from it).
func modernRequestOf(req mcp.Request) bool {
	ss, ok := req.GetSession().(*mcp.ServerSession)
	if !ok {
		return false
	}
	ip := ss.InitializeParams()
	return ip != nil && ip.ProtocolVersion >= modernVersion
}
