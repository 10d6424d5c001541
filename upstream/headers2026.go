package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/paramheader"
)

// modernLeg reports whether cs speaks protocol 2026-07-28 or later.
func modernLeg(cs *mcp.ClientSession) bool {
	ir := cs.InitializeResult()
	return ir != nil && ir.ProtocolVersion >= "2026-07-28"
}

// relayedCapabilities is the _meta clientCapabilities of a 2026-07-28
// request made for a client with capabilities c: what a proxy can relay
// (sampling, elicitation, roots), nothing else.
func relayedCapabilities(c *mcp.ClientCapabilities) map[string]any {
	out := map[string]any{}
	if c.Sampling != nil {
		out["sampling"] = c.Sampling
	}
	if c.Elicitation != nil {
		out["elicitation"] = c.Elicitation
	}
	if c.RootsV2 != nil {
		out["roots"] = c.RootsV2
	}
	return out
}

// relayedCaps is relayedCapabilities(c) as JSON, kept per c (a client's
// capabilities do not change; the proxy passes the session's own
// pointer). At most relayedCapsMax are kept; then the cache starts anew.
func (m *Manager) relayedCaps(c *mcp.ClientCapabilities) json.RawMessage {
	m.capsMu.Lock()
	b, ok := m.capsJSON[c]
	m.capsMu.Unlock()
	if ok {
		return b
	}
	b, err := marshalNoEscape(relayedCapabilities(c))
	if err != nil {
		b = json.RawMessage(`{}`)
	}
	m.capsMu.Lock()
	if m.capsJSON == nil || len(m.capsJSON) >= relayedCapsMax {
		m.capsJSON = map[*mcp.ClientCapabilities]json.RawMessage{}
	}
	m.capsJSON[c] = b
	m.capsMu.Unlock()
	return b
}

const relayedCapsMax = 256

// paramBindingsKey is the context key of a tools/call's x-mcp-header
// bindings ([]paramheader.Binding), set by Manager.CallToolWith.
type paramBindingsKey struct{}

// paramIndex maps the names of the tools whose inputSchema marks
// arguments x-mcp-header to their bindings; nil when none does (the
// common case).
func paramIndex(tools []*mcp.Tool) map[string][]paramheader.Binding {
	var idx map[string][]paramheader.Binding
	for _, t := range tools {
		raw, ok := t.InputSchema.(json.RawMessage)
		if !ok {
			b, err := json.Marshal(t.InputSchema)
			if err != nil {
				continue
			}
			raw = b
		}
		if bs := paramheader.Bindings(raw); bs != nil {
			if idx == nil {
				idx = map[string][]paramheader.Binding{}
			}
			idx[t.Name] = bs
		}
	}
	return idx
}

// paramBindings returns the x-mcp-header bindings of tool name from the
// last listing, nil when it has none.
func (c *conn) paramBindings(name string) []paramheader.Binding {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.params[name]
}

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
// A tools/call also gets the Mcp-Param-* headers of the arguments the
// tool's inputSchema marks x-mcp-header (SEP-2243: a client MUST send
// them), when the manager put the tool's bindings in ctx (paramBindingsKey,
// from the upstream's last listing).
func modernHeaders(ctx context.Context, h http.Header, msg jsonrpc.Message) {
	if !hasModernMeta(msg) {
		return
	}
	r := msg.(*jsonrpc.Request)
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
		if bs, ok := ctx.Value(paramBindingsKey{}).([]paramheader.Binding); ok && r.Method == "tools/call" {
			paramheader.Set(h, bs, r.Params)
		}
	case "resources/read":
		if p.URI != "" {
			h.Set("Mcp-Name", p.URI)
		}
	}
}

// hasModernMeta reports whether msg is a request whose params may carry
// the 2026-07-28 protocol version in _meta, the only messages that
// modernHeaders gives headers of their own.
func hasModernMeta(msg jsonrpc.Message) bool {
	r, ok := msg.(*jsonrpc.Request)
	return ok && len(r.Params) > 0 && bytes.Contains(r.Params, []byte(mcp.MetaKeyProtocolVersion))
}
