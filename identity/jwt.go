package identity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// DefaultAlgorithms are the JWS algorithms accepted when none are
// configured: asymmetric only ("none" and the HS* family are never
// accepted: a JWKS holds public keys, and an HMAC "key" taken from it
// would let anyone sign).
var DefaultAlgorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// JWTConfig is [auth]: the authorization server whose access tokens the
// front accepts.
type JWTConfig struct {
	// Issuer is the authorization server's issuer identifier; the token's
	// "iss" must equal it.
	Issuer string
	// JWKSURL is where its signing keys are; "" discovers it from the
	// issuer's metadata (RFC 8414 /.well-known/oauth-authorization-server,
	// then OpenID /.well-known/openid-configuration).
	JWKSURL string
	// Audiences: the token's "aud" must contain one of them (RFC 8707: the
	// resource identifier the client asked the token for). ForResource
	// adds the resource of a route; with none at all every token is refused.
	Audiences []string
	// Scopes every token must have (403 insufficient_scope otherwise).
	Scopes []string
	// UserClaim names the subject claim (default "sub"); GroupsClaim the
	// groups claim (default "groups"; a string array or a space-separated
	// string).
	UserClaim, GroupsClaim string
	// Algorithms accepted (default DefaultAlgorithms).
	Algorithms []string
	// ClockSkew tolerated on exp/nbf/iat (default 60s).
	ClockSkew time.Duration
	// ResourceMetadataURL is put in the WWW-Authenticate challenge of a
	// 401 (MCP spec: clients find the authorization server through it).
	ResourceMetadataURL string
	// HTTPClient fetches metadata and keys (default: 10 s timeout).
	HTTPClient *http.Client
}

// JWT verifies JWT access tokens (RFC 9068 profile: iss, aud, exp, sub).
// Keys are fetched on first use and again when a token names a key id not
// in the set (at most once per minKeyRefresh), so the issuer can rotate
// keys.
type JWT struct {
	cfg  JWTConfig
	algs []jose.SignatureAlgorithm
	now  func() time.Time
	kc   *keyCache // shared by ForResource copies
}

type keyCache struct {
	mu        sync.Mutex
	keys      *jose.JSONWebKeySet
	jwksURL   string
	fetchedAt time.Time
	fetching  chan struct{} // closed when the fetch in flight ends
	lastErr   error
}

const minKeyRefresh = 30 * time.Second

// NewJWT checks cfg and returns a verifier. It does no I/O.
func NewJWT(cfg JWTConfig) (*JWT, error) {
	if cfg.Issuer == "" {
		return nil, errors.New("issuer is required")
	}
	if cfg.UserClaim == "" {
		cfg.UserClaim = "sub"
	}
	if cfg.GroupsClaim == "" {
		cfg.GroupsClaim = "groups"
	}
	if cfg.ClockSkew == 0 {
		cfg.ClockSkew = 60 * time.Second
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	names := cfg.Algorithms
	if len(names) == 0 {
		names = DefaultAlgorithms
	}
	var algs []jose.SignatureAlgorithm
	for _, n := range names {
		if !slices.Contains(DefaultAlgorithms, n) {
			return nil, fmt.Errorf("algorithm %q is not accepted (one of %s)", n, strings.Join(DefaultAlgorithms, ", "))
		}
		algs = append(algs, jose.SignatureAlgorithm(n))
	}
	return &JWT{cfg: cfg, algs: algs, now: time.Now, kc: &keyCache{jwksURL: cfg.JWKSURL}}, nil
}

// ClockSkew is the tolerance the verifier applies to exp, nbf and iat:
// a token is accepted until its exp plus this. Whatever else checks a
// verified token's expiry (the go-sdk's RequireBearerToken) must apply the
// same, or a token inside the skew passes here and fails there.
func (j *JWT) ClockSkew() time.Duration { return j.cfg.ClockSkew }

// ForResource returns a verifier for one protected resource (an MCP route)
// sharing j's keys: it also accepts tokens whose audience is resource, and
// its challenges point at metadataURL.
func (j *JWT) ForResource(resource, metadataURL string) *JWT {
	c := *j
	c.cfg.Audiences = append(append([]string(nil), j.cfg.Audiences...), resource)
	c.cfg.ResourceMetadataURL = metadataURL
	return &c
}

// claims are the members read from a token.
type claims struct {
	jwt.Claims
	Scope string          `json:"scope"`
	Scp   json.RawMessage `json:"scp"`
}

// Authenticate implements Authenticator.
func (j *JWT) Authenticate(r *http.Request) (*Identity, error) {
	raw, ok := BearerToken(r)
	if !ok {
		// RFC 6750 §3.1: no error code when the request had no credentials.
		return nil, &Failure{Status: http.StatusUnauthorized, Challenge: j.challenge("", ""), Msg: "unauthorized: a bearer access token is required (see the resource_metadata URL in WWW-Authenticate)"}
	}
	id, err := j.Verify(r.Context(), raw)
	if err != nil {
		var f *Failure
		if errors.As(err, &f) {
			return nil, f
		}
		return nil, &Failure{Status: http.StatusUnauthorized, Challenge: j.challenge("invalid_token", err.Error()), Msg: "unauthorized: invalid access token: " + err.Error()}
	}
	return id, nil
}

// Challenge is the WWW-Authenticate value of a refusal with OAuth error
// code and description (RFC 6750 section 3).
func (j *JWT) Challenge(code, desc string) string { return j.challenge(code, desc) }

func (j *JWT) challenge(code, desc string) string {
	scope := strings.Join(j.cfg.Scopes, " ")
	return challenge("resource_metadata", j.cfg.ResourceMetadataURL, "scope", scope, "error", code, "error_description", desc)
}

// Verify checks one access token: signature (an accepted algorithm, a key
// of the issuer's JWKS named by the token's kid), iss, aud, exp (required),
// nbf and iat with ClockSkew, the subject claim and the required scopes.
// Errors say what was wrong, never echoing the token.
func (j *JWT) Verify(ctx context.Context, raw string) (*Identity, error) {
	tok, err := jwt.ParseSigned(raw, j.algs)
	if err != nil {
		return nil, fmt.Errorf("not a signed JWT with an accepted algorithm (%s)", clip(err.Error()))
	}
	if len(tok.Headers) != 1 {
		return nil, errors.New("want exactly one signature")
	}
	kid := tok.Headers[0].KeyID
	keys, err := j.keySet(ctx, kid)
	if err != nil {
		return nil, err
	}
	var c claims
	var extra map[string]any
	if err := tok.Claims(keys, &c, &extra); err != nil {
		if errors.Is(err, jose.ErrJWKSKidNotFound) {
			return nil, fmt.Errorf("signing key %q is not in the issuer's key set", kid)
		}
		return nil, errors.New("signature does not verify")
	}
	if c.Expiry == nil {
		return nil, errors.New("token has no exp")
	}
	exp := jwt.Expected{Issuer: j.cfg.Issuer, Time: j.now()}
	if err := c.Claims.ValidateWithLeeway(exp, j.cfg.ClockSkew); err != nil {
		switch {
		case errors.Is(err, jwt.ErrExpired):
			return nil, errors.New("token expired")
		case errors.Is(err, jwt.ErrInvalidIssuer):
			return nil, fmt.Errorf("issuer %q is not the configured one", clip(c.Issuer))
		}
		return nil, errors.New(clip(err.Error()))
	}
	audOK := false
	for _, a := range j.cfg.Audiences {
		id := Identity{Audience: c.Audience}
		if id.HasAudience(a) {
			audOK = true
			break
		}
	}
	if !audOK {
		return nil, fmt.Errorf("audience %s is not this server (want %s)", clip(strings.Join(c.Audience, ",")), strings.Join(j.cfg.Audiences, " or "))
	}
	sub, _ := extra[j.cfg.UserClaim].(string)
	if sub == "" {
		return nil, fmt.Errorf("token has no %q claim (a string)", j.cfg.UserClaim)
	}
	id := &Identity{Method: "oauth", Subject: sub, Issuer: c.Issuer, Audience: c.Audience, Expiry: c.Expiry.Time(), Token: raw}
	id.Groups = stringsClaim(extra[j.cfg.GroupsClaim])
	id.Scopes = strings.Fields(c.Scope)
	if len(id.Scopes) == 0 && len(c.Scp) > 0 {
		var scp any
		_ = json.Unmarshal(c.Scp, &scp)
		id.Scopes = stringsClaim(scp)
	}
	var missing []string
	for _, s := range j.cfg.Scopes {
		if !slices.Contains(id.Scopes, s) {
			missing = append(missing, s)
		}
	}
	if len(missing) > 0 {
		return nil, &Failure{Status: http.StatusForbidden, Challenge: j.challenge("insufficient_scope", "missing scope "+strings.Join(missing, " ")),
			Msg: "forbidden: the access token lacks scope " + strings.Join(missing, " ")}
	}
	return id, nil
}

// stringsClaim reads a claim holding a string array or a space-separated
// string.
func stringsClaim(v any) []string {
	switch x := v.(type) {
	case string:
		return strings.Fields(x)
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok && s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}

// keySet returns the issuer's keys, fetching them when none are known or
// kid is not among them (at most once per minKeyRefresh).
func (j *JWT) keySet(ctx context.Context, kid string) (*jose.JSONWebKeySet, error) {
	for {
		j.kc.mu.Lock()
		keys := j.kc.keys
		have := keys != nil && (kid == "" || len(keys.Key(kid)) > 0)
		recent := !j.kc.fetchedAt.IsZero() && j.now().Sub(j.kc.fetchedAt) < minKeyRefresh
		if have || (recent && keys != nil) {
			j.kc.mu.Unlock()
			return keys, nil
		}
		if recent && j.kc.lastErr != nil {
			err := j.kc.lastErr
			j.kc.mu.Unlock()
			return nil, err
		}
		if ch := j.kc.fetching; ch != nil {
			j.kc.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		ch := make(chan struct{})
		j.kc.fetching = ch
		j.kc.mu.Unlock()

		ks, url, err := j.fetch(ctx)
		j.kc.mu.Lock()
		j.kc.fetching = nil
		j.kc.fetchedAt = j.now()
		j.kc.lastErr = err
		if err == nil {
			j.kc.keys, j.kc.jwksURL = ks, url
		}
		j.kc.mu.Unlock()
		close(ch)
		if err != nil {
			return nil, err
		}
		return ks, nil
	}
}

// fetch reads the JWKS (discovering its URL first when needed).
func (j *JWT) fetch(ctx context.Context) (*jose.JSONWebKeySet, string, error) {
	j.kc.mu.Lock()
	url := j.kc.jwksURL
	j.kc.mu.Unlock()
	if url == "" {
		var err error
		if url, err = j.discover(ctx); err != nil {
			return nil, "", err
		}
	}
	var ks jose.JSONWebKeySet
	if err := getJSON(ctx, j.cfg.HTTPClient, url, &ks); err != nil {
		return nil, "", fmt.Errorf("the issuer's keys (%s) cannot be read: %v", url, err)
	}
	for _, k := range ks.Keys {
		if !k.IsPublic() {
			return nil, "", fmt.Errorf("the key set at %s holds a non-public key (%q): refused", url, k.KeyID)
		}
	}
	return &ks, url, nil
}

// discover finds jwks_uri in the issuer's metadata (RFC 8414 §3, with the
// well-known suffix inserted before the issuer's path; then OpenID
// Connect Discovery 1.0 §4).
func (j *JWT) discover(ctx context.Context) (string, error) {
	iss := strings.TrimSuffix(j.cfg.Issuer, "/")
	var tried []string
	for _, u := range MetadataURLs(iss) {
		var m struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
		}
		if err := getJSON(ctx, j.cfg.HTTPClient, u, &m); err != nil {
			tried = append(tried, fmt.Sprintf("%s: %v", u, err))
			continue
		}
		if strings.TrimSuffix(m.Issuer, "/") != iss {
			return "", fmt.Errorf("metadata at %s names issuer %q, not %q", u, m.Issuer, j.cfg.Issuer)
		}
		if m.JWKSURI == "" {
			return "", fmt.Errorf("metadata at %s has no jwks_uri; set auth.jwks_url", u)
		}
		return m.JWKSURI, nil
	}
	return "", fmt.Errorf("the issuer's metadata cannot be read (%s); set auth.jwks_url", strings.Join(tried, "; "))
}

// MetadataURLs are the authorization-server metadata locations of issuer,
// in the order the MCP spec (basic/authorization, "Authorization Server
// Metadata Discovery") tries them.
func MetadataURLs(issuer string) []string {
	scheme, rest, _ := strings.Cut(issuer, "://")
	host, path, _ := strings.Cut(rest, "/")
	base := scheme + "://" + host
	if path == "" {
		return []string{base + "/.well-known/oauth-authorization-server", base + "/.well-known/openid-configuration"}
	}
	return []string{
		base + "/.well-known/oauth-authorization-server/" + path,
		base + "/.well-known/openid-configuration/" + path,
		base + "/" + path + "/.well-known/openid-configuration",
	}
}

// getJSON GETs url and decodes a JSON body of at most 1 MiB.
func getJSON(ctx context.Context, c *http.Client, url string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(v)
}
