package testauth

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Upstream is an MCP server over Streamable HTTP (go-sdk) that demands a
// bearer token on every request, like a real protected MCP server: either
// ServiceToken (the proxy's own credential, for listing) or an access
// token of AS whose audience includes the upstream's URL. It records who
// each tools/call came from and the traceparent header it carried.
type Upstream struct {
	*httptest.Server
	AS           *Server
	ServiceToken string

	mu    sync.Mutex
	calls []Call
}

// Call is one recorded tools/call.
type Call struct {
	Tool        string
	Who         string // "service", or the token's subject
	Traceparent string // the HTTP header, "" when none
	MetaParent  string // params._meta.traceparent
}

// NewUpstream starts the server. Its tools: "whoami" (answers with the
// caller the token names) and "echo" (answers with its "text" argument; other arguments are accepted).
func NewUpstream(as *Server, serviceToken string) *Upstream {
	u := &Upstream{AS: as, ServiceToken: serviceToken}
	srv := mcp.NewServer(&mcp.Implementation{Name: "recording-upstream", Version: "1"}, nil)
	record := func(req *mcp.CallToolRequest) string {
		who := u.who(req.Extra.Header.Get("Authorization"))
		c := Call{Tool: req.Params.Name, Who: who, Traceparent: req.Extra.Header.Get("Traceparent")}
		if v, ok := req.Params.Meta["traceparent"].(string); ok {
			c.MetaParent = v
		}
		u.mu.Lock()
		u.calls = append(u.calls, c)
		u.mu.Unlock()
		return who
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "whoami", Description: "Tells which user the request's credential belongs to."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			who := record(req)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "you are " + who}}}, nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Echoes text."},
		func(ctx context.Context, req *mcp.CallToolRequest, in map[string]any) (*mcp.CallToolResult, any, error) {
			record(req)
			text, _ := in["text"].(string)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u.who(r.Header.Get("Authorization")) == "" {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	return u
}

// who names the caller of an Authorization value ("" when refused).
func (u *Upstream) who(h string) string {
	tok, ok := strings.CutPrefix(h, "Bearer ")
	if !ok {
		return ""
	}
	if u.ServiceToken != "" && tok == u.ServiceToken {
		return "service"
	}
	sub, aud, err := u.AS.Verify(tok)
	if err != nil {
		return ""
	}
	for _, a := range aud {
		if strings.TrimSuffix(a, "/") == strings.TrimSuffix(u.URL, "/") {
			return sub
		}
	}
	return ""
}

// Calls returns the recorded tools/calls.
func (u *Upstream) Calls() []Call {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]Call(nil), u.calls...)
}

// String lists the calls, for test failures.
func (u *Upstream) String() string {
	var b strings.Builder
	for _, c := range u.Calls() {
		fmt.Fprintf(&b, "%s by %s; ", c.Tool, c.Who)
	}
	return b.String()
}
