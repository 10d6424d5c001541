package proxy

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
	"github.com/mcp-toolsearch/mcp-toolsearch/internal/front"
	"github.com/mcp-toolsearch/mcp-toolsearch/internal/paramheader"
)

// paramHeaderCheck validates the Mcp-Param-* headers of a 2026-07-28
// tools/call against its arguments before next serves it (MCP 2026-07-28
// Streamable HTTP, SEP-2243; internal/paramheader): a header missing for
// an argument the tool's inputSchema marks x-mcp-header, sent for an
// absent one, badly Base64-encoded or different from the body gets
// HTTP 400 with JSON-RPC error -32020, and the call reaches no upstream.
// The go-sdk checks these only for tools of its own registry; the proxy
// answers tools/call itself, so the tool is the catalog entry the name
// is exposed as (the upstream's inputSchema), resolved as the requester
// sees the catalog: its policy view (endpoint, the clientInfo.name of the
// request's _meta, the verified identity) over its session's catalog.
// A name the requester may not see is not checked: the call goes on and
// is answered as an unknown tool, exactly like a name that does not exist
// (SPEC §6: no hint that a denied tool, or its arguments, exist).
// Requests of other methods and versions, and tools without x-mcp-header,
// pass untouched (the go-sdk still checks Mcp-Method, Mcp-Name and
// MCP-Protocol-Version). endpoint is the mount's endpoint ("" for /mcp).
func (p *Proxy) paramHeaderCheck(endpoint string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !modernRequest(r) || r.Header.Get("Mcp-Method") != "tools/call" {
			next.ServeHTTP(w, r)
			return
		}
		limit := int64(p.conf().Server.MaxMessageBytes)
		if limit <= 0 {
			limit = 32 << 20
		}
		// The body read here is put back in front of the rest for next.
		body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
		if err != nil || int64(len(body)) > limit {
			next.ServeHTTP(w, r)
			return
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(body, &msg) != nil || msg.Method != "tools/call" {
			next.ServeHTTP(w, r) // the go-sdk answers the malformed or mismatched request
			return
		}
		var call struct {
			Name string                     `json:"name"`
			Meta map[string]json.RawMessage `json:"_meta"`
		}
		_ = json.Unmarshal(msg.Params, &call)
		e := p.visibleTool(endpoint, r, call.Name, call.Meta[mcp.MetaKeyClientInfo])
		if e == nil {
			next.ServeHTTP(w, r) // unknown or denied: answered alike by the tools/call handler
			return
		}
		if err := paramheader.Check(r.Header, paramheader.Bindings(e.InputSchema), msg.Params); err != nil {
			resp := map[string]any{"jsonrpc": "2.0", "id": msg.ID, "error": &jsonrpc.Error{Code: paramheader.CodeHeaderMismatch, Message: err.Error()}}
			if len(msg.ID) == 0 {
				resp["id"] = nil
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(resp)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// visibleTool is the catalog entry exposed as name for the 2026-07-28
// request r on endpoint whose _meta clientInfo is clientInfo (raw), or nil
// when there is none or the requester's policy denies it. It resolves the
// name as the tools/call handler will (resolveCallable in modes): the
// catalog of the request's session (ephemeralSession: endpoint and
// clientInfo.name) and the policy view of its subject, with the identity
// the front verified (front_auth.go, carried as the go-sdk's TokenInfo).
func (p *Proxy) visibleTool(endpoint string, r *http.Request, name string, clientInfo json.RawMessage) *catalog.Entry {
	return p.visibleToolOf(endpoint, r, name, front.ClientNameOf(clientInfo))
}

// visibleToolOf is visibleTool for a client named client.
func (p *Proxy) visibleToolOf(endpoint string, r *http.Request, name, client string) *catalog.Entry {
	s := &session{p: p, endpoint: endpoint, client: client}
	e := s.Snapshot().ByExposed(name)
	if e == nil || !p.subjectView(s.client, endpoint, identityOfToken(auth.TokenInfoFromContext(r.Context()))).Allowed(toolOf(e)) {
		return nil
	}
	return e
}
