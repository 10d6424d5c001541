package proxy

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/mcp-toolsearch/mcp-toolsearch/credentials"
	"github.com/mcp-toolsearch/mcp-toolsearch/identity"
	"github.com/mcp-toolsearch/mcp-toolsearch/internal/front"
)

// The HTTP front's client identity. Every MCP route is guarded
// by one identity.Authenticator:
//
//   - an endpoint with its own token: liveToken (identity.Static with the
//     running config's token);
//   - otherwise, with [auth] issuer set: identity.JWT (OAuth 2.1
//     resource-server mode), or identity.Either when server.bearer_token
//     is set too (service clients keep their static token);
//   - otherwise server.bearer_token (liveToken) or, without one, no
//     check at all.
//
// A verified identity travels to the MCP handlers as the go-sdk's
// auth.TokenInfo (RequestExtra.TokenInfo), whose UserID also binds a
// Streamable HTTP session to its user (the go-sdk refuses a session id
// presented by another user).

// identityExtraKey is the TokenInfo.Extra key holding *identity.Identity.
const identityExtraKey = "io.github.mcp-toolsearch/identity"

// authenticatorFor returns the authenticator of an MCP route at path for
// endpoint ("" main). A static token is read from the running config at
// each request (liveToken), so that a reload rotates it; whether a route
// has one, and of which kind, is fixed at start (a reload that sets or
// removes a token needs a restart: reload.go).
//
// An endpoint has its own token when endpoints.NAME.token is set, whatever
// its value (docs/config.md [auth]: "every MCP route without its own
// endpoint token then wants a JWT"; docs/identity.md: "an endpoint with
// its own token keeps its static token"). Deciding it by
// comparing the value with server.bearer_token gave an endpoint whose
// token equalled the main one, with [auth] on, the main token's check, so
// a reload rotating only the endpoint's token kept the old value accepted
// there and refused the new one.
func (p *Proxy) authenticatorFor(path, endpoint string) identity.Authenticator {
	ownToken := false
	if ep, ok := p.conf().Endpoints[endpoint]; ok && endpoint != "" {
		ownToken = ep.Token != ""
	}
	if ownToken || !p.conf().Auth.Enabled() {
		if p.endpointToken(endpoint) == "" {
			return nil
		}
		return liveToken{p: p, endpoint: endpoint}
	}
	j := p.idn.jwt.ForResource(p.resourceURL(path), p.metadataURL(path))
	if p.conf().Server.BearerToken != "" {
		// The endpoint has no token of its own: endpointToken gives the
		// main one.
		return identity.Either{Static: liveToken{p: p, endpoint: endpoint}, OAuth: j}
	}
	return j
}

// liveToken is the static bearer token of endpoint ("" main:
// server.bearer_token; an endpoint without its own token has the main
// one), read from the running config at each request (endpointToken). A
// reload that changes server.bearer_token or endpoints.NAME.token rotates
// it at once: the old token is refused from the next request on, in open
// sessions too (revoking a leaked token needed a restart, which
// ended every client session and restarted every upstream).
type liveToken struct {
	p        *Proxy
	endpoint string
}

// Authenticate implements identity.Authenticator.
func (l liveToken) Authenticate(r *http.Request) (*identity.Identity, error) {
	tok := l.p.endpointToken(l.endpoint)
	if tok == "" { // never: a reload may change a token, not remove it (reload.go)
		return nil, &identity.Failure{Status: http.StatusUnauthorized, Challenge: `Bearer realm="mcp-toolsearch"`, Msg: "unauthorized: this route has no token configured"}
	}
	return identity.Static{Token: tok}.Authenticate(r)
}

// resourceURL is the resource identifier (RFC 8707, RFC 9728) of the MCP
// route at path: auth.public_url + path.
func (p *Proxy) resourceURL(path string) string {
	return strings.TrimSuffix(p.conf().Auth.PublicURL, "/") + path
}

// metadataURL is where the protected-resource metadata of the route at
// path is served (RFC 9728 §3.1: the well-known suffix inserted before the
// path).
func (p *Proxy) metadataURL(path string) string {
	return strings.TrimSuffix(p.conf().Auth.PublicURL, "/") + "/.well-known/oauth-protected-resource" + path
}

// authenticate runs a on r. On success it returns r carrying the identity
// as the go-sdk's TokenInfo; on failure it has answered w.
func (p *Proxy) authenticate(a identity.Authenticator, w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	if a == nil {
		return r, true
	}
	id, err := a.Authenticate(r)
	if err != nil {
		var f *identity.Failure
		if !errors.As(err, &f) {
			f = &identity.Failure{Status: http.StatusUnauthorized, Msg: "unauthorized: " + err.Error()}
		}
		if f.Challenge != "" {
			w.Header().Set("WWW-Authenticate", f.Challenge)
		}
		front.Reject(w, f.Status, f.Msg) // the body is not read, the connection closed
		return r, false
	}
	// The go-sdk puts TokenInfo into RequestExtra only through its own
	// middleware; feed it the identity verified above. Its expiry check
	// applies the identity layer's clock skew (one rule: a token expired
	// less than auth.clock_skew ago passes both). Should it still refuse
	// (the token's last moment passed between the two checks), the answer
	// is the 401 of an expired token.
	var out *http.Request
	next := http.HandlerFunc(func(_ http.ResponseWriter, r2 *http.Request) { out = r2 })
	auth.RequireBearerToken(func(context.Context, string, *http.Request) (*auth.TokenInfo, error) {
		return tokenInfo(id), nil
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true, ClockSkew: p.clockSkew()})(next).ServeHTTP(noWriter{}, withBearer(r))
	if out == nil {
		if c := p.expiredChallenge(a); c != "" {
			w.Header().Set("WWW-Authenticate", c)
		}
		front.Reject(w, http.StatusUnauthorized, "unauthorized: the access token expired")
		return r, false
	}
	return out, true
}

// clockSkew is the identity layer's tolerance on token times
// (auth.clock_skew; identity.JWT.ClockSkew), 0 without [auth].
func (p *Proxy) clockSkew() time.Duration {
	if p.idn == nil || p.idn.jwt == nil {
		return 0
	}
	return p.idn.jwt.ClockSkew()
}

// expiredChallenge is the WWW-Authenticate value for an expired token on
// a route whose authenticator is a (or has) a JWT verifier, "" otherwise.
func (p *Proxy) expiredChallenge(a identity.Authenticator) string {
	var j *identity.JWT
	switch v := a.(type) {
	case *identity.JWT:
		j = v
	case identity.Either:
		j, _ = v.OAuth.(*identity.JWT)
	}
	if j == nil {
		return ""
	}
	return j.Challenge("invalid_token", "the access token expired")
}

// withBearer gives the go-sdk's middleware a bearer header to parse when
// the request had none of that form (never: authenticators need one).
func withBearer(r *http.Request) *http.Request {
	if _, ok := identity.BearerToken(r); ok {
		return r
	}
	r2 := r.Clone(r.Context())
	r2.Header.Set("Authorization", "Bearer -")
	return r2
}

// noWriter swallows the go-sdk middleware's answer (it never writes on
// success).
type noWriter struct{}

func (noWriter) Header() http.Header         { return http.Header{} }
func (noWriter) Write(b []byte) (int, error) { return len(b), nil }
func (noWriter) WriteHeader(int)             {}

func tokenInfo(id *identity.Identity) *auth.TokenInfo {
	ti := &auth.TokenInfo{Scopes: id.Scopes, Expiration: id.Expiry, Extra: map[string]any{identityExtraKey: id}}
	if id.Subject != "" {
		ti.UserID = id.Issuer + "|" + id.Subject
	}
	if ti.Expiration.IsZero() {
		ti.Expiration = time.Now().Add(24 * time.Hour) // a static token does not expire
	}
	return ti
}

// identityOf returns the verified identity of an MCP request (nil when
// none: stdio, no token configured, the legacy SSE transport).
func identityOf(req mcp.Request) *identity.Identity {
	if req == nil {
		return nil
	}
	ex := req.GetExtra()
	if ex == nil {
		return nil
	}
	return identityOfToken(ex.TokenInfo)
}

// identityOfToken returns the verified identity ti carries (nil when ti
// is nil or carries none).
func identityOfToken(ti *auth.TokenInfo) *identity.Identity {
	if ti == nil {
		return nil
	}
	id, _ := ti.Extra[identityExtraKey].(*identity.Identity)
	return id
}

// mountIdentityRoutes adds the protected-resource metadata documents
// (RFC 9728; MCP spec 2025-11-25 basic/authorization, "Protected Resource
// Metadata Discovery Requirements") for the MCP routes in paths, and the
// OAuth callback of per-user upstream connections.
func (p *Proxy) mountIdentityRoutes(mux *http.ServeMux, paths []string) {
	if p.conf().Auth.Enabled() {
		for i, path := range paths {
			h := auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
				Resource:               p.resourceURL(path),
				AuthorizationServers:   []string{p.conf().Auth.Issuer},
				ScopesSupported:        p.conf().Auth.Scopes,
				BearerMethodsSupported: []string{"header"},
				ResourceName:           "mcp-toolsearch",
			})
			mux.Handle("/.well-known/oauth-protected-resource"+path, p.guard(nil, h))
			if i == 0 { // the main route's document also at the root form
				mux.Handle("/.well-known/oauth-protected-resource", p.guard(nil, h))
			}
		}
	}
	if p.idn.creds != nil && p.conf().Auth.PublicURL != "" {
		mux.Handle(credentials.CallbackPath, p.guard(nil, p.idn.creds.Callback()))
	}
}

// sseRefused answers the legacy SSE routes in OAuth mode: that transport
// cannot carry the caller's identity into the session.
func (p *Proxy) sseRefused(path string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "the legacy HTTP+SSE transport is not served in OAuth mode ([auth] issuer): it cannot carry a verified user into the session; use Streamable HTTP at "+path, http.StatusNotFound)
	})
}
