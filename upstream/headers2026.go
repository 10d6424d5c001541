package upstream

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// modernHeaders sets the HTTP headers that protocol 2026-07-28 requires on
// every request (MCP 2026-07-28 basic/transports, SEP-2243) when msg is a
// request whose _meta names that version (the go-sdk client puts it there
// on a 2026-07-28 leg): MCP-Protocol-Version (the _meta's version),
// Mcp-Method, and Mcp-Name for the methods that name something (tools/call
// and prompts/get: params.name; resources/read: params.uri). A server
// refuses a request without them, or with values that differ from the
// body, with -32020. Requests of older protocols are left alone (their
// MCP-Protocol-Version comes from the initialize result, setHeaders).
//
// Not sent: Mcp-Param-* (arguments that a tool's inputSchema marks
// x-mcp-header); such a tool on a 2026-07-28 HTTP upstream is refused by
// it.
func modernHeaders(h http.Header, msg jsonrpc.Message) {
	r, ok := msg.(*jsonrpc.Request)
	if !ok || len(r.Params) == 0 || !bytes.Contains(r.Params, []byte(mcp.MetaKeyProtocolVersion)) {
		return
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
		Name string                     `json:"name"`
		URI  string                     `json:"uri"`
	}
	if json.Unmarshal(r.Params, &p) != nil {
		return
	}
	var version string
	if json.Unmarshal(p.Meta[mcp.MetaKeyProtocolVersion], &version) != nil || version < "2026-07-28" {
		return
	}
	h.Set("Mcp-Protocol-Version", version)
	h.Set("Mcp-Method", r.Method)
	switch r.Method {
	case "tools/call", "prompts/get":
		if p.Name != "" {
			h.Set("Mcp-Name", p.Name)
		}
	case "resources/read":
		if p.URI != "" {
			h.Set("Mcp-Name", p.URI)
		}
	}
}
