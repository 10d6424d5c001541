// Package testauth is a minimal OAuth 2.1 authorization server for tests,
// following the specs the proxy relies on:
//
//   - RFC 8414 metadata at /.well-known/oauth-authorization-server;
//   - a JWKS (RFC 7517) at /jwks with one ES256 key;
//   - /authorize: the authorization code grant with PKCE S256 only
//     (OAuth 2.1 §4.1), exact redirect_uri match, the RFC 8707 resource
//     parameter becoming the token's audience; the signed-in user is the
//     "login" query parameter or the X-Test-User header (a test stands in
//     for the browser);
//   - /token: authorization_code (one-time codes, verifier checked),
//     refresh_token (rotated), client_credentials, and RFC 8693 token
//     exchange (the subject token must be an access token of this server);
//     client authentication by client_secret_basic or client_secret_post;
//   - access tokens are RFC 9068 JWTs: iss, sub, aud, exp, iat, jti, scope,
//     client_id, groups.
//
// Mint issues an access token directly (a test's "user signed in to the
// IdP"). The proxy never imports this package.
package testauth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Client is a registered OAuth client.
type Client struct {
	ID, Secret   string
	RedirectURIs []string
}

// Server is a running test authorization server.
type Server struct {
	*httptest.Server
	Issuer string
	key    *ecdsa.PrivateKey
	kid    string
	signer jose.Signer
	// AccessTTL is the lifetime of access tokens (default 1h).
	AccessTTL time.Duration

	mu       sync.Mutex
	clients  map[string]Client
	codes    map[string]*grant
	refresh  map[string]*grant
	Requests []string // "grant_type client_id" per /token request, for assertions
	Groups   map[string][]string
}

type grant struct {
	client, user, challenge, redirect, resource, scope string
	expires                                            time.Time
}

// New starts a server on a loopback port; Close stops it.
func New(clients ...Client) *Server {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	s := &Server{key: key, kid: "test-key-1", AccessTTL: time.Hour, clients: map[string]Client{}, codes: map[string]*grant{}, refresh: map[string]*grant{}, Groups: map[string][]string{}}
	for _, c := range clients {
		s.clients[c.ID] = c
	}
	s.signer, err = jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: key, KeyID: s.kid}}, (&jose.SignerOptions{}).WithType("at+jwt"))
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-authorization-server", s.metadata)
	mux.HandleFunc("/jwks", s.jwks)
	mux.HandleFunc("/authorize", s.authorize)
	mux.HandleFunc("/token", s.token)
	s.Server = httptest.NewServer(mux)
	s.Issuer = s.URL
	return s
}

// AddClient registers a client (e.g. once the proxy's callback URL is known).
func (s *Server) AddClient(c Client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clients[c.ID] = c
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func oauthError(w http.ResponseWriter, status int, code, desc string) {
	writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
}

func (s *Server) metadata(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, 200, map[string]any{
		"issuer":                                s.Issuer,
		"authorization_endpoint":                s.URL + "/authorize",
		"token_endpoint":                        s.URL + "/token",
		"jwks_uri":                              s.URL + "/jwks",
		"response_types_supported":              []string{"code"},
		"grant_types_supported":                 []string{"authorization_code", "refresh_token", "client_credentials", "urn:ietf:params:oauth:grant-type:token-exchange"},
		"code_challenge_methods_supported":      []string{"S256"},
		"token_endpoint_auth_methods_supported": []string{"client_secret_basic", "client_secret_post"},
	})
}

func (s *Server) jwks(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, 200, jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &s.key.PublicKey, KeyID: s.kid, Algorithm: "ES256", Use: "sig"}}})
}

func random() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Mint issues an access token for user with the given audiences, scopes
// and lifetime (ttl 0: AccessTTL); groups come from s.Groups[user].
func (s *Server) Mint(user string, aud []string, scope string, ttl time.Duration) string {
	return s.mint(user, "test-idp", aud, scope, ttl)
}

func (s *Server) mint(user, client string, aud []string, scope string, ttl time.Duration) string {
	if ttl == 0 {
		ttl = s.AccessTTL
	}
	now := time.Now()
	s.mu.Lock()
	groups := s.Groups[user]
	s.mu.Unlock()
	claims := map[string]any{
		"iss": s.Issuer, "sub": user, "aud": aud, "iat": now.Unix(), "exp": now.Add(ttl).Unix(),
		"jti": random(), "client_id": client,
	}
	if scope != "" {
		claims["scope"] = scope
	}
	if len(groups) > 0 {
		claims["groups"] = groups
	}
	tok, err := jwt.Signed(s.signer).Claims(claims).Serialize()
	if err != nil {
		panic(err)
	}
	return tok
}

// MintWith signs arbitrary claims with the server's key (tests of
// rejected tokens).
func (s *Server) MintWith(claims map[string]any) string {
	tok, err := jwt.Signed(s.signer).Claims(claims).Serialize()
	if err != nil {
		panic(err)
	}
	return tok
}

// Verify checks an access token of this server and returns its subject
// and audiences.
func (s *Server) Verify(raw string) (sub string, aud []string, err error) {
	t, err := jwt.ParseSigned(raw, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		return "", nil, err
	}
	var c jwt.Claims
	if err := t.Claims(&s.key.PublicKey, &c); err != nil {
		return "", nil, err
	}
	if err := c.Validate(jwt.Expected{Issuer: s.Issuer, Time: time.Now()}); err != nil {
		return "", nil, err
	}
	return c.Subject, c.Audience, nil
}

func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	c, ok := s.clients[q.Get("client_id")]
	s.mu.Unlock()
	redirect := q.Get("redirect_uri")
	if !ok || !contains(c.RedirectURIs, redirect) {
		http.Error(w, "unknown client or redirect_uri not registered", http.StatusBadRequest)
		return
	}
	back := func(params url.Values) {
		u, _ := url.Parse(redirect)
		params.Set("state", q.Get("state"))
		u.RawQuery = params.Encode()
		http.Redirect(w, r, u.String(), http.StatusFound)
	}
	if q.Get("response_type") != "code" {
		back(url.Values{"error": {"unsupported_response_type"}})
		return
	}
	if q.Get("code_challenge") == "" || q.Get("code_challenge_method") != "S256" {
		back(url.Values{"error": {"invalid_request"}, "error_description": {"PKCE with S256 is required"}})
		return
	}
	user := q.Get("login")
	if user == "" {
		user = r.Header.Get("X-Test-User")
	}
	if user == "" {
		back(url.Values{"error": {"access_denied"}, "error_description": {"no user signed in"}})
		return
	}
	code := random()
	s.mu.Lock()
	s.codes[code] = &grant{client: c.ID, user: user, challenge: q.Get("code_challenge"), redirect: redirect, resource: q.Get("resource"), scope: q.Get("scope"), expires: time.Now().Add(time.Minute)}
	s.mu.Unlock()
	back(url.Values{"code": {code}})
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func (s *Server) clientAuth(r *http.Request) (Client, bool) {
	id, secret, ok := r.BasicAuth()
	if ok {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	s.mu.Lock()
	c, found := s.clients[id]
	s.mu.Unlock()
	return c, found && c.Secret == secret
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		oauthError(w, 405, "invalid_request", "POST only")
		return
	}
	if err := r.ParseForm(); err != nil {
		oauthError(w, 400, "invalid_request", err.Error())
		return
	}
	c, ok := s.clientAuth(r)
	gt := r.PostForm.Get("grant_type")
	s.mu.Lock()
	s.Requests = append(s.Requests, gt+" "+c.ID)
	s.mu.Unlock()
	if !ok {
		oauthError(w, 401, "invalid_client", "client authentication failed")
		return
	}
	issue := func(g *grant, withRefresh bool) {
		var aud []string
		if g.resource != "" {
			aud = []string{g.resource}
		}
		resp := map[string]any{"access_token": s.mint(g.user, c.ID, aud, g.scope, 0), "token_type": "Bearer", "expires_in": int(s.AccessTTL.Seconds()),
			"issued_token_type": "urn:ietf:params:oauth:token-type:access_token"}
		if g.scope != "" {
			resp["scope"] = g.scope
		}
		if withRefresh {
			rt := random()
			s.mu.Lock()
			s.refresh[rt] = &grant{client: c.ID, user: g.user, resource: g.resource, scope: g.scope, expires: time.Now().Add(24 * time.Hour)}
			s.mu.Unlock()
			resp["refresh_token"] = rt
		}
		writeJSON(w, 200, resp)
	}
	switch gt {
	case "authorization_code":
		code := r.PostForm.Get("code")
		s.mu.Lock()
		g, ok := s.codes[code]
		delete(s.codes, code) // one use
		s.mu.Unlock()
		if !ok || time.Now().After(g.expires) || g.client != c.ID {
			oauthError(w, 400, "invalid_grant", "unknown, used or expired code")
			return
		}
		if r.PostForm.Get("redirect_uri") != g.redirect {
			oauthError(w, 400, "invalid_grant", "redirect_uri differs")
			return
		}
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
			oauthError(w, 400, "invalid_grant", "PKCE verifier does not match")
			return
		}
		if res := r.PostForm.Get("resource"); res != "" && res != g.resource {
			oauthError(w, 400, "invalid_target", "resource differs from the authorization request")
			return
		}
		issue(g, true)
	case "refresh_token":
		rt := r.PostForm.Get("refresh_token")
		s.mu.Lock()
		g, ok := s.refresh[rt]
		delete(s.refresh, rt) // rotation (OAuth 2.1 §4.3.1)
		s.mu.Unlock()
		if !ok || g.client != c.ID || time.Now().After(g.expires) {
			oauthError(w, 400, "invalid_grant", "unknown or used refresh token")
			return
		}
		issue(g, true)
	case "client_credentials":
		issue(&grant{user: c.ID, resource: r.PostForm.Get("resource"), scope: r.PostForm.Get("scope")}, false)
	case "urn:ietf:params:oauth:grant-type:token-exchange":
		if r.PostForm.Get("subject_token_type") != "urn:ietf:params:oauth:token-type:access_token" {
			oauthError(w, 400, "invalid_request", "subject_token_type must be an access token")
			return
		}
		sub, _, err := s.Verify(r.PostForm.Get("subject_token"))
		if err != nil {
			oauthError(w, 400, "invalid_grant", "subject_token: "+err.Error())
			return
		}
		res := r.PostForm.Get("resource")
		if res == "" {
			res = r.PostForm.Get("audience")
		}
		if res == "" {
			oauthError(w, 400, "invalid_target", "audience or resource required")
			return
		}
		issue(&grant{user: sub, resource: res, scope: r.PostForm.Get("scope")}, false)
	default:
		oauthError(w, 400, "unsupported_grant_type", fmt.Sprintf("grant_type %q", gt))
	}
}

// TokenRequests returns the /token requests so far ("grant_type client").
func (s *Server) TokenRequests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.Requests...)
}

// Bearer is a helper for "Authorization: Bearer" values in tests.
func Bearer(tok string) string { return "Bearer " + strings.TrimSpace(tok) }
