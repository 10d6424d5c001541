package config

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/mcp-toolsearch/mcp-toolsearch/policy"
)

// Defaults of the identity keys (docs/config.md).
const (
	DefaultClockSkew      = 60 * time.Second
	DefaultConnectWait    = 2 * time.Minute
	MaxConnectWait        = 10 * time.Minute
	DefaultTraceRatio     = 1.0
	CredentialStatic      = "static"
	CredentialPassthrough = "passthrough"
	CredentialExchange    = "exchange"
	CredentialOAuth       = "oauth"
)

// Auth is the [auth] table: OAuth 2.1 resource-server mode of the HTTP
// front (MCP spec 2025-11-25 basic/authorization) and the per-user
// upstream credentials it enables. Off while Issuer is "".
type Auth struct {
	// PublicURL is the proxy's base URL as clients and browsers reach it
	// ("https://mcp.example.com"): the resource identifiers, the
	// protected-resource metadata URL and the OAuth callback derive from it.
	PublicURL string `toml:"public_url"`
	// Issuer is the authorization server whose access tokens are accepted.
	Issuer string `toml:"issuer"`
	// JWKSURL overrides the key-set URL found in the issuer's metadata.
	JWKSURL string `toml:"jwks_url"`
	// Audiences accepted in a token's "aud" besides the resource URL of
	// the endpoint called (PublicURL + path).
	Audiences []string `toml:"audiences"`
	// Scopes every token must have; also advertised as scopes_supported.
	Scopes      []string `toml:"scopes"`
	UserClaim   string   `toml:"user_claim"`   // default "sub"
	GroupsClaim string   `toml:"groups_claim"` // default "groups"
	Algorithms  []string `toml:"algorithms"`   // default: every asymmetric JWS algorithm
	ClockSkew   Duration `toml:"clock_skew"`   // default 60s
	// TokenStore is the file holding per-user upstream tokens (credential
	// source "oauth"), encrypted with TokenStoreKey (AES-256-GCM).
	TokenStore    string `toml:"token_store"`
	TokenStoreKey string `toml:"token_store_key"` // base64 of 32 random bytes; secret
	// ConnectWait is how long a call waits for a user to finish connecting
	// an upstream through URL-mode elicitation (default 2m, max 10m).
	ConnectWait Duration `toml:"connect_wait"`
}

// Enabled reports whether OAuth resource-server mode is on.
func (a *Auth) Enabled() bool { return a.Issuer != "" }

// Credential is [upstreams.NAME.credential]: how calls reach an HTTP
// upstream. Source "static" (default) sends the configured headers;
// "passthrough" sends the caller's own access token (only when its
// audience includes Audience); "exchange" trades it for one issued for
// Audience (RFC 8693); "oauth" uses the user's own token for the upstream,
// obtained once in the browser (authorization code + PKCE), stored
// encrypted and refreshed.
type Credential struct {
	Source       string   `toml:"source"`
	Audience     string   `toml:"audience"`      // the upstream's resource identifier (RFC 8707)
	TokenURL     string   `toml:"token_url"`     // exchange, oauth
	AuthorizeURL string   `toml:"authorize_url"` // oauth
	ClientID     string   `toml:"client_id"`     // exchange, oauth
	ClientSecret string   `toml:"client_secret"` // exchange, oauth; secret
	Scopes       []string `toml:"scopes"`
}

// SourceOrStatic is the credential source, "static" when unset.
func (c *Credential) SourceOrStatic() string {
	if c == nil || c.Source == "" {
		return CredentialStatic
	}
	return c.Source
}

// PerUser reports whether calls need a per-user upstream session.
func (u *Upstream) PerUser() bool { return u.Credential.SourceOrStatic() != CredentialStatic }

// Bucket is one token bucket: Rate calls per second, Burst at once.
type Bucket struct {
	Rate  float64 `toml:"rate"`  // > 0
	Burst int     `toml:"burst"` // default: max(1, ceil(rate))
}

// RateLimits is the [rate_limits] table.
type RateLimits struct {
	PerSubject  *Bucket            `toml:"per_subject"`
	PerUpstream map[string]*Bucket `toml:"per_upstream"` // key: upstream name or "*"
	PerTool     map[string]*Bucket `toml:"per_tool"`     // key: a policy entry (name, id, glob, group:)
}

// Audit is the [audit] table.
type Audit struct {
	File      string `toml:"file"`      // JSON Lines, hash-chained; "" disables
	Arguments bool   `toml:"arguments"` // default false: no argument values
}

func (p *parser) expandIdentity(getenv func(string) (string, bool)) {
	c := p.cfg
	p.expand(&c.Auth.TokenStoreKey, getenv, []string{"auth", "token_store_key"}, "")
	p.expand(&c.Auth.PublicURL, getenv, []string{"auth", "public_url"}, "")
	p.expand(&c.Auth.Issuer, getenv, []string{"auth", "issuer"}, "")
	for _, name := range sortedKeys(c.Upstreams) {
		if cr := c.Upstreams[name].Credential; cr != nil {
			p.expand(&cr.ClientSecret, getenv, []string{"upstreams", name, "credential", "client_secret"}, "")
			p.expand(&cr.ClientID, getenv, []string{"upstreams", name, "credential", "client_id"}, "")
		}
	}
	for _, k := range sortedKeys(c.Telemetry.TracesHeaders) {
		v := c.Telemetry.TracesHeaders[k]
		p.expand(&v, getenv, []string{"telemetry", "traces_headers", k}, "")
		c.Telemetry.TracesHeaders[k] = v
	}
}

// identitySecrets are the secret values of the identity keys.
func (c *Config) identitySecrets() []string {
	out := []string{c.Auth.TokenStoreKey}
	for _, u := range c.Upstreams {
		if u != nil && u.Credential != nil {
			out = append(out, u.Credential.ClientSecret)
		}
	}
	for _, v := range c.Telemetry.TracesHeaders {
		out = append(out, credentialParts(v)...)
	}
	return out
}

func (p *parser) identityDefaults() {
	c := p.cfg
	p.defaultDuration(&c.Auth.ClockSkew, DefaultClockSkew, "auth", "clock_skew")
	p.defaultDuration(&c.Auth.ConnectWait, DefaultConnectWait, "auth", "connect_wait")
	if c.Auth.ConnectWait.Duration > MaxConnectWait {
		p.warnf([]string{"auth", "connect_wait"}, "%s clamped to %s", c.Auth.ConnectWait.Duration, MaxConnectWait)
		c.Auth.ConnectWait.Duration = MaxConnectWait
	}
	if !p.defined("telemetry", "traces_sample_ratio") {
		c.Telemetry.TracesSampleRatio = DefaultTraceRatio
	} else if r := c.Telemetry.TracesSampleRatio; r < 0 || r > 1 {
		p.warnf([]string{"telemetry", "traces_sample_ratio"}, "%g clamped to 0..1", r)
		c.Telemetry.TracesSampleRatio = min(max(r, 0), 1)
	}
	fill := func(b *Bucket) {
		if b != nil && b.Burst == 0 {
			b.Burst = max(1, int(b.Rate+0.999999))
		}
	}
	fill(c.RateLimits.PerSubject)
	for _, b := range c.RateLimits.PerUpstream {
		fill(b)
	}
	for _, b := range c.RateLimits.PerTool {
		fill(b)
	}
}

func (p *parser) resolveIdentityPaths(dir string) {
	c := p.cfg
	c.Auth.TokenStore = resolveFile(dir, c.Auth.TokenStore)
	c.Audit.File = resolveFile(dir, c.Audit.File)
}

// TokenStoreKeyBytes decodes auth.token_store_key (validated by Parse).
func (a *Auth) TokenStoreKeyBytes() []byte {
	k, err := base64.StdEncoding.DecodeString(a.TokenStoreKey)
	if err != nil {
		k, _ = base64.RawURLEncoding.DecodeString(a.TokenStoreKey)
	}
	return k
}

func (p *parser) validateIdentity() {
	c := p.cfg
	a := &c.Auth
	httpsOrLoopback := func(raw string, path ...string) {
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
			p.errf(path, "", "%q is not an absolute http(s) URL", raw)
			return
		}
		if u.Scheme == "http" && !isLoopbackName(u.Hostname()) {
			p.errf(path, "", "%q: OAuth URLs must use https (http only for loopback addresses; MCP spec basic/authorization, \"Communication Security\")", raw)
		}
	}
	needPublic := a.Enabled()
	needStore := false
	for _, name := range sortedKeys(c.Upstreams) {
		u := c.Upstreams[name]
		cr := u.Credential
		if cr == nil {
			continue
		}
		at := func(k string) []string { return []string{"upstreams", name, "credential", k} }
		src := cr.SourceOrStatic()
		oneOf(p, src, []string{CredentialStatic, CredentialPassthrough, CredentialExchange, CredentialOAuth}, at("source")...)
		if src == CredentialStatic {
			continue
		}
		if u.URL == "" {
			p.errf(at("source"), "", "%q needs an HTTP upstream (url): a stdio child gets its credentials once, in env", src)
		}
		if u.Session == "per-client" {
			p.errf(at("source"), "", "%q opens one upstream session per user; it cannot be combined with session = \"per-client\"", src)
		}
		if !a.Enabled() {
			p.errf(at("source"), "", "%q needs verified users: set [auth] issuer (OAuth resource-server mode)", src)
		}
		if cr.Audience == "" {
			p.errf(at("audience"), "", "required for source %q: the upstream's resource identifier (the audience its tokens are issued for)", src)
		}
		if src == CredentialExchange || src == CredentialOAuth {
			if cr.TokenURL == "" {
				p.errf(at("token_url"), "", "required for source %q", src)
			} else {
				httpsOrLoopback(cr.TokenURL, at("token_url")...)
			}
			if cr.ClientID == "" {
				p.errf(at("client_id"), "", "required for source %q", src)
			}
		}
		if src == CredentialOAuth {
			needStore, needPublic = true, true
			if cr.AuthorizeURL == "" {
				p.errf(at("authorize_url"), "", "required for source \"oauth\"")
			} else {
				httpsOrLoopback(cr.AuthorizeURL, at("authorize_url")...)
			}
		}
	}
	if a.Enabled() {
		httpsOrLoopback(a.Issuer, "auth", "issuer")
		if a.JWKSURL != "" {
			httpsOrLoopback(a.JWKSURL, "auth", "jwks_url")
		}
		if c.Server.Transport != "http" {
			p.errf([]string{"auth", "issuer"}, "", "OAuth resource-server mode needs server.transport = \"http\"")
		}
		for i, alg := range a.Algorithms {
			if strings.HasPrefix(strings.ToUpper(alg), "HS") || strings.EqualFold(alg, "none") {
				p.errf([]string{"auth", "algorithms"}, fmt.Sprintf("[%d]", i), "%q is not accepted: only asymmetric algorithms (the keys come from a public JWKS)", alg)
			}
		}
	}
	if needPublic {
		if a.PublicURL == "" {
			p.errf([]string{"auth", "public_url"}, "", "required: the proxy's base URL as clients and browsers reach it (e.g. \"https://mcp.example.com\")")
		} else {
			httpsOrLoopback(a.PublicURL, "auth", "public_url")
		}
	}
	if needStore {
		if a.TokenStore == "" && !c.Server.Shared() {
			p.errf([]string{"auth", "token_store"}, "", "required when an upstream has credential source \"oauth\" and there is no server.state_store: the file for per-user tokens (encrypted)")
		}
		if k := a.TokenStoreKeyBytes(); len(k) != 32 {
			p.errf([]string{"auth", "token_store_key"}, "", "must be 32 random bytes in base64 (e.g. `openssl rand -base64 32`), given with ${VAR}")
		}
	}
	check := func(b *Bucket, path ...string) {
		if b == nil {
			return
		}
		if b.Rate <= 0 {
			p.errf(append(path, "rate"), "", "must be > 0 (calls per second)")
		}
		if b.Burst < 1 {
			p.errf(append(path, "burst"), "", "must be at least 1")
		}
	}
	check(c.RateLimits.PerSubject, "rate_limits", "per_subject")
	for _, k := range sortedKeys(c.RateLimits.PerUpstream) {
		if _, ok := c.Upstreams[k]; !ok && k != "*" {
			p.errf([]string{"rate_limits", "per_upstream", k}, "", "%q is no upstream (use an upstream name or \"*\")", k)
		}
		check(c.RateLimits.PerUpstream[k], "rate_limits", "per_upstream", k)
	}
	for _, k := range sortedKeys(c.RateLimits.PerTool) {
		if msg := policy.CheckEntry(k); msg != "" {
			p.errf([]string{"rate_limits", "per_tool", k}, "", "%s", msg)
		}
		check(c.RateLimits.PerTool[k], "rate_limits", "per_tool", k)
	}
	if e := c.Telemetry.TracesEndpoint; e != "" {
		if u, err := url.Parse(e); err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			p.errf([]string{"telemetry", "traces_endpoint"}, "", "%q is not an http(s) URL (the OTLP/HTTP traces URL, e.g. \"http://127.0.0.1:4318/v1/traces\")", e)
		}
	}
}

func isLoopbackName(h string) bool {
	return h == "localhost" || h == "127.0.0.1" || h == "::1" || strings.HasPrefix(h, "127.")
}
