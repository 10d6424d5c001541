package identity

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/testauth"
)

const aud = "https://mcp.example.com/mcp"

func newVerifier(t *testing.T, as *testauth.Server, scopes ...string) *JWT {
	t.Helper()
	j, err := NewJWT(JWTConfig{Issuer: as.Issuer, Audiences: []string{aud}, Scopes: scopes, ResourceMetadataURL: "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func TestJWTAcceptsAndRejects(t *testing.T) {
	as := testauth.New()
	defer as.Close()
	as.Groups["alice"] = []string{"admins", "dev"}
	j := newVerifier(t, as)
	ctx := context.Background()

	id, err := j.Verify(ctx, as.Mint("alice", []string{aud}, "tools.read tools.write", 0))
	if err != nil {
		t.Fatal(err)
	}
	if id.Subject != "alice" || strings.Join(id.Groups, ",") != "admins,dev" || strings.Join(id.Scopes, ",") != "tools.read,tools.write" || id.Key() != "user:alice" || id.Method != "oauth" {
		t.Fatalf("identity %+v", id)
	}
	now := time.Now().Unix()
	cases := []struct {
		name, tok, want string
	}{
		{"wrong audience", as.Mint("alice", []string{"https://other.example.com"}, "", 0), "audience https://other.example.com is not this server"},
		{"expired", as.Mint("alice", []string{aud}, "", -10*time.Minute), "token expired"},
		{"no exp", as.MintWith(map[string]any{"iss": as.Issuer, "sub": "a", "aud": aud}), "token has no exp"},
		{"wrong issuer", as.MintWith(map[string]any{"iss": "https://evil.example.com", "sub": "a", "aud": aud, "exp": now + 60}), "issuer \"https://evil.example.com\" is not the configured one"},
		{"no sub", as.MintWith(map[string]any{"iss": as.Issuer, "aud": aud, "exp": now + 60}), `token has no "sub" claim`},
		{"garbage", "abc.def.ghi", "not a signed JWT"},
		{"alg none", "eyJhbGciOiJub25lIn0.eyJzdWIiOiJhIn0.", "not a signed JWT"},
	}
	for _, c := range cases {
		if _, err := j.Verify(ctx, c.tok); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
	// A token signed by another server's key (same kid) does not verify.
	other := testauth.New()
	defer other.Close()
	forged := other.MintWith(map[string]any{"iss": as.Issuer, "sub": "mallory", "aud": aud, "exp": now + 60})
	if _, err := j.Verify(ctx, forged); err == nil || !strings.Contains(err.Error(), "signature does not verify") {
		t.Fatalf("forged: %v", err)
	}
}

func TestJWTHTTPChallenges(t *testing.T) {
	as := testauth.New()
	defer as.Close()
	j := newVerifier(t, as, "tools.call")
	req := httptest.NewRequest("POST", "/mcp", nil)
	_, err := j.Authenticate(req)
	var f *Failure
	if !errors.As(err, &f) || f.Status != 401 || f.Challenge != `Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="tools.call"` {
		t.Fatalf("no token: %#v", err)
	}
	req.Header.Set("Authorization", "Bearer "+as.Mint("bob", []string{aud}, "tools.read", 0))
	_, err = j.Authenticate(req)
	if !errors.As(err, &f) || f.Status != http.StatusForbidden || !strings.Contains(f.Challenge, `error="insufficient_scope"`) {
		t.Fatalf("scope: %#v", err)
	}
	req.Header.Set("Authorization", "bearer "+as.Mint("bob", []string{aud + "/"}, "tools.call", 0))
	if id, err := j.Authenticate(req); err != nil || id.Subject != "bob" {
		t.Fatalf("ok: %v", err)
	}
	req.Header.Set("Authorization", "Bearer nope")
	_, err = j.Authenticate(req)
	if !errors.As(err, &f) || f.Status != 401 || !strings.Contains(f.Challenge, `error="invalid_token"`) || strings.Contains(f.Msg, "nope") {
		t.Fatalf("bad token: %#v", err)
	}
}

func TestStaticAndEither(t *testing.T) {
	as := testauth.New()
	defer as.Close()
	e := Either{Static: Static{Token: "svc-token-123"}, OAuth: newVerifier(t, as)}
	req := httptest.NewRequest("POST", "/mcp", nil)
	req.Header.Set("Authorization", "Bearer svc-token-123")
	if id, err := e.Authenticate(req); err != nil || id.Method != "token" || id.Key() != "" {
		t.Fatalf("static: %v %+v", err, id)
	}
	req.Header.Set("Authorization", "Bearer "+as.Mint("carol", []string{aud}, "", 0))
	if id, err := e.Authenticate(req); err != nil || id.Subject != "carol" {
		t.Fatalf("oauth: %v", err)
	}
	req.Header.Set("Authorization", "Bearer svc-token-12")
	var f *Failure
	if _, err := e.Authenticate(req); !errors.As(err, &f) || !strings.Contains(f.Challenge, "resource_metadata") {
		t.Fatalf("neither: %v", err)
	}
}

func TestMetadataURLs(t *testing.T) {
	got := strings.Join(MetadataURLs("https://auth.example.com/tenant1"), " ")
	want := "https://auth.example.com/.well-known/oauth-authorization-server/tenant1 https://auth.example.com/.well-known/openid-configuration/tenant1 https://auth.example.com/tenant1/.well-known/openid-configuration"
	if got != want {
		t.Fatalf("got %s", got)
	}
}

// TestAudienceTrailingSlash: one trailing slash does not tell two
// audiences apart (both name this route); anything else does.
func TestAudienceTrailingSlash(t *testing.T) {
	for aud, want := range map[string]bool{
		"https://proxy.example.com/mcp":   true,
		"https://proxy.example.com/mcp/":  true,
		"https://proxy.example.com/mcp/x": false,
		"https://proxy.example.com/mc":    false,
		"http://proxy.example.com/mcp":    false,
		"https://proxy.example.com/mcp//": false,
	} {
		id := &Identity{Audience: []string{aud}}
		if got := id.HasAudience("https://proxy.example.com/mcp"); got != want {
			t.Errorf("token audience %q for https://proxy.example.com/mcp: %v, want %v", aud, got, want)
		}
	}
}
