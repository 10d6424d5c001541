// Package identity answers "who is calling" on the HTTP front: one
// Authenticator interface with two implementations, a static bearer token
// (Static: [server] bearer_token, [endpoints.NAME] token) and OAuth 2.1
// resource-server mode (JWT: [auth], verifying JWT access tokens against
// the configured issuer's JWKS, MCP spec 2025-11-25 basic/authorization),
// and the protected-resource metadata document (RFC 9728) clients use to
// find the authorization server.
//
// Trust (docs/security.md): clients without a valid token are not trusted
// and get 401 before any MCP message is read. A verified token's subject,
// groups and scopes are trusted as far as the issuer is (the operator's
// config names it), so policy rules may name them (tools.by_client
// "user:…" / "group:…" / "scope:…" keys). The raw token is kept only in
// memory, for the upstreams whose credential source passes it on or
// exchanges it, and never logged.
package identity

import (
	"crypto/subtle"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Identity is a verified caller.
type Identity struct {
	// Method is how it was verified: "token" (a static bearer token) or
	// "oauth" (a JWT access token).
	Method string
	// Subject is the verified user id (the token's user claim, default
	// "sub"); "" for a static token.
	Subject string
	Issuer  string
	// Groups are the values of the groups claim (default "groups").
	Groups []string
	// Scopes are the token's scopes ("scope", space-separated, or "scp").
	Scopes   []string
	Audience []string
	Expiry   time.Time
	// Token is the raw access token (for upstreams with credential source
	// "passthrough" or "exchange"). Never log it.
	Token string `json:"-"`
}

// Key is the subject as written in audit lines, rate-limit messages and
// session ids of per-user upstream sessions: "user:<subject>" for a
// verified user, "" otherwise.
func (id *Identity) Key() string {
	if id == nil || id.Subject == "" {
		return ""
	}
	return "user:" + id.Subject
}

// HasAudience reports whether the token was issued for aud (RFC 8707
// resource indicator; exact match after trimming one trailing slash).
func (id *Identity) HasAudience(aud string) bool {
	if id == nil || aud == "" {
		return false
	}
	want := strings.TrimSuffix(aud, "/")
	for _, a := range id.Audience {
		if strings.TrimSuffix(a, "/") == want {
			return true
		}
	}
	return false
}

// Failure is a refused request: the HTTP status (401 or 403), the
// WWW-Authenticate challenge and a message for the body.
type Failure struct {
	Status    int
	Challenge string
	Msg       string
}

func (f *Failure) Error() string { return f.Msg }

// Write sends the failure as the HTTP answer.
func (f *Failure) Write(w http.ResponseWriter) {
	if f.Challenge != "" {
		w.Header().Set("WWW-Authenticate", f.Challenge)
	}
	http.Error(w, f.Msg, f.Status)
}

// Authenticator checks the credentials of one HTTP request. It returns the
// caller's identity, or a *Failure to answer with.
type Authenticator interface {
	Authenticate(r *http.Request) (*Identity, error)
}

// BearerToken returns the token of an "Authorization: Bearer TOKEN"
// header (the scheme is case-insensitive, RFC 6750 §2.1), and whether
// there was one.
func BearerToken(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

// Static accepts one fixed bearer token, compared in constant time.
type Static struct {
	Token string
}

// Authenticate implements Authenticator.
func (s Static) Authenticate(r *http.Request) (*Identity, error) {
	got, ok := BearerToken(r)
	if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(s.Token)) != 1 {
		return nil, &Failure{Status: http.StatusUnauthorized, Challenge: `Bearer realm="mcp-toolsearch"`, Msg: "unauthorized: missing or wrong bearer token"}
	}
	return &Identity{Method: "token"}, nil
}

// Either tries a static token first and then OAuth: service clients with
// the deployment's token and users with access tokens share one endpoint.
// A request that fails both gets the OAuth challenge (it tells a client
// where to get a token).
type Either struct {
	Static Authenticator // a Static, or one reading the running config's token
	OAuth  Authenticator
}

// Authenticate implements Authenticator.
func (e Either) Authenticate(r *http.Request) (*Identity, error) {
	if id, err := e.Static.Authenticate(r); err == nil {
		return id, nil
	}
	return e.OAuth.Authenticate(r)
}

// challenge builds a Bearer challenge (RFC 6750 §3) with quoted params.
func challenge(params ...string) string {
	var b strings.Builder
	b.WriteString("Bearer")
	for i := 0; i+1 < len(params); i += 2 {
		if params[i+1] == "" {
			continue
		}
		if b.Len() > len("Bearer") {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, " %s=%q", params[i], params[i+1])
	}
	return b.String()
}
