package upstream

//lint:file-ignore SA1019 sampling, roots and logging are deprecated from protocol 2026-07-28 on; clients and servers of earlier protocols still use them

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/jsonscan"
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

// modernParamsOf reads the params of a request for its 2026-07-28
// headers (setModernHeaders); ok is false when
// they give no headers (no 2026-07-28 or later version in _meta).
func modernParamsOf(params []byte) (modernParams, bool) {
	p, ok := scanModernParams(params)
	if !ok {
		p, ok = decodeModernParams(params)
	}
	return p, ok && p.version >= "2026-07-28"
}

// setModernHeaders sets the 2026-07-28 headers of a method request with
// params p (setModernHeaders), but the Mcp-Param-* ones.
func setModernHeaders(h http.Header, method string, p modernParams) {
	h.Set("Mcp-Protocol-Version", p.version)
	h.Set("Mcp-Method", method)
	if n := modernName(method, p); n != "" {
		h.Set("Mcp-Name", n)
	}
}

// modernName is the Mcp-Name of a method request with params p: params.name
// for tools/call and prompts/get, params.uri for resources/read, else "".
func modernName(method string, p modernParams) string {
	switch method {
	case "tools/call", "prompts/get":
		return p.name
	case "resources/read":
		return p.uri
	}
	return ""
}

// setModernHeaders adds to h, the header of the POST of r (a request whose
// params may name a protocol version in _meta: hasModernMeta), the HTTP
// headers protocol 2026-07-28 requires on every request when that _meta
// names 2026-07-28 or later (the go-sdk client puts it there on a
// 2026-07-28 leg; MCP 2026-07-28 basic/transports, SEP-2243):
// MCP-Protocol-Version (the _meta's version), Mcp-Method, and Mcp-Name for
// the methods that name something (tools/call and prompts/get:
// params.name; resources/read: params.uri). A server refuses a request
// without them, or with values that differ from the body, with -32020.
// Requests of older protocols keep the MCP-Protocol-Version of the
// initialize result.
//
// A tools/call also gets the Mcp-Param-* headers of the arguments the
// tool's inputSchema marks x-mcp-header (SEP-2243: a client MUST send
// them), when the manager put the tool's bindings in ctx (paramBindingsKey,
// from the upstream's last listing).
func (c *httpConn) setModernHeaders(ctx context.Context, h http.Header, r *jsonrpc.Request) {
	p, ok := modernParamsOf(r.Params)
	if !ok {
		return
	}
	setModernHeaders(h, r.Method, p)
	if bs, isCall := ctx.Value(paramBindingsKey{}).([]paramheader.Binding); isCall && r.Method == "tools/call" && len(bs) > 0 {
		paramheader.Set(h, bs, r.Params)
	}
}

// modernParams is what setModernHeaders reads from a request's params: the
// _meta's protocol version, name and uri ("" when absent).
type modernParams struct{ version, name, uri string }

// decodeModernParams reads params with encoding/json, as the server side
// decodes them (case-insensitive member names, escapes, the last of
// repeated members). ok is false when params is not such an object or the
// version is not a string.
func decodeModernParams(params []byte) (modernParams, bool) {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
		Name string                     `json:"name"`
		URI  string                     `json:"uri"`
	}
	if json.Unmarshal(params, &p) != nil {
		return modernParams{}, false
	}
	var version string
	if json.Unmarshal(p.Meta[mcp.MetaKeyProtocolVersion], &version) != nil {
		return modernParams{}, false
	}
	return modernParams{version: version, name: p.Name, uri: p.URI}, true
}

// scanModernParams is decodeModernParams without decoding params
// (the decode was ~1.3 KB of garbage per 2026-07-28 call): one
// jsonscan pass over params and one over its _meta. ok is false (the
// caller then decodes) for anything but the plain shape: a member name
// that is not exactly "_meta", "name", "uri" or the version key but equal
// to one of them folding case or with escapes (encoding/json would read
// it as that member), one of them repeated, a value that is not a string
// without escapes (the _meta: not an object), or malformed params.
func scanModernParams(params []byte) (p modernParams, ok bool) {
	var meta, name, uri []byte
	ok = true
	_, err := jsonscan.Object(params, func(k, v []byte) bool {
		switch {
		case string(k) == "_meta" && meta == nil:
			meta = v
		case string(k) == "name" && name == nil:
			name = v
		case string(k) == "uri" && uri == nil:
			uri = v
		default:
			ok = !foldsTo(k, "_meta", "name", "uri")
		}
		return ok
	})
	if err != nil || !ok || meta == nil {
		return modernParams{}, false
	}
	var version []byte
	_, err = jsonscan.Object(meta, func(k, v []byte) bool {
		if string(k) == mcp.MetaKeyProtocolVersion && version == nil {
			version = v
			return true
		}
		ok = !foldsTo(k, mcp.MetaKeyProtocolVersion)
		return ok
	})
	if err != nil || !ok {
		return modernParams{}, false
	}
	if p.version, ok = plainString(version); !ok {
		return modernParams{}, false
	}
	if name != nil {
		if p.name, ok = plainString(name); !ok {
			return modernParams{}, false
		}
	}
	if uri != nil {
		if p.uri, ok = plainString(uri); !ok {
			return modernParams{}, false
		}
	}
	return p, true
}

// foldsTo reports whether the raw member name k (between the quotes) has
// an escape or equals one of names folding case: a name encoding/json may
// read as one of names (it matches member names case-insensitively).
func foldsTo(k []byte, names ...string) bool {
	if bytes.IndexByte(k, '\\') >= 0 {
		return true
	}
	for _, n := range names {
		if bytes.EqualFold(k, []byte(n)) {
			return true
		}
	}
	return false
}

// plainString is the JSON string v without its quotes; ok is false when v
// is not a string, has escapes or is not valid UTF-8 (encoding/json would
// replace the bad bytes).
func plainString(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' || bytes.IndexByte(v, '\\') >= 0 || !utf8.Valid(v) {
		return "", false
	}
	return string(v[1 : len(v)-1]), true
}

// hasModernMeta reports whether msg is a request whose params may carry
// the 2026-07-28 protocol version in _meta, the only messages that get
// headers from setModernHeaders.
func hasModernMeta(msg jsonrpc.Message) bool {
	r, ok := msg.(*jsonrpc.Request)
	return ok && len(r.Params) > 0 && bytes.Contains(r.Params, []byte(mcp.MetaKeyProtocolVersion))
}
