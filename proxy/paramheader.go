package proxy

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

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
// is exposed as (the upstream's inputSchema). Requests of other methods
// and versions, and tools without x-mcp-header, pass untouched (the go-sdk
// still checks Mcp-Method, Mcp-Name and MCP-Protocol-Version).
func (p *Proxy) paramHeaderCheck(next http.Handler) http.Handler {
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
			Name string `json:"name"`
		}
		_ = json.Unmarshal(msg.Params, &call)
		e := p.Catalog().ByExposed(call.Name)
		if e == nil {
			next.ServeHTTP(w, r)
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
