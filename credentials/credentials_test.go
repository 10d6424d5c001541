package credentials

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/mcp-toolsearch/mcp-toolsearch/identity"
	"github.com/mcp-toolsearch/mcp-toolsearch/internal/testauth"
)

var key32 = []byte("0123456789abcdef0123456789abcdef")

func TestStoreEncryptsAndBindsSlots(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.json")
	s, err := OpenStore(path, key32)
	if err != nil {
		t.Fatal(err)
	}
	tok := &oauth2.Token{AccessToken: "secret-access-token", RefreshToken: "secret-refresh", Expiry: time.Now().Add(time.Hour)}
	if err := s.Put(context.Background(), "gh", "alice", tok); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if strings.Contains(string(b), "secret-") || strings.Contains(string(b), "alice") {
		t.Fatalf("plaintext in the store: %s", b)
	}
	if st, _ := os.Stat(path); runtime.GOOS != "windows" && st.Mode().Perm() != 0o600 { // Windows has no Unix modes
		t.Fatalf("mode %v", st.Mode())
	}
	s2, err := OpenStore(path, key32)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s2.Get(context.Background(), "gh", "alice")
	if err != nil || got.AccessToken != "secret-access-token" {
		t.Fatalf("get %v %v", got, err)
	}
	if got, _ := s2.Get(context.Background(), "gh", "bob"); got != nil {
		t.Fatal("bob has alice's token")
	}
	// A value moved into bob's slot does not decrypt.
	na, _ := slot("gh", "alice")
	nb, _ := slot("gh", "bob")
	s2.slots[nb] = s2.slots[na]
	if _, err := s2.Get(context.Background(), "gh", "bob"); err == nil || !strings.Contains(err.Error(), "does not decrypt") {
		t.Fatalf("moved slot: %v", err)
	}
	other := []byte("ffffffffffffffffffffffffffffffff")
	s3, _ := OpenStore(path, other)
	if _, err := s3.Get(context.Background(), "gh", "alice"); err == nil {
		t.Fatal("another key decrypts")
	}
}

func TestPassthroughOnlyForItsAudience(t *testing.T) {
	m, _ := New(Options{Upstreams: []Upstream{{Name: "gh", Source: Passthrough, Audience: "https://gh.example.com/mcp"}}})
	id := &identity.Identity{Subject: "alice", Token: "tok-a", Audience: []string{"https://mcp.example.com/mcp", "https://gh.example.com/mcp"}}
	if h, err := m.Authorization(context.Background(), "gh", id); err != nil || h != "Bearer tok-a" {
		t.Fatalf("%q %v", h, err)
	}
	id.Audience = id.Audience[:1]
	if _, err := m.Authorization(context.Background(), "gh", id); err == nil || !strings.Contains(err.Error(), "not issued for https://gh.example.com/mcp") {
		t.Fatalf("other audience: %v", err)
	}
	if _, err := m.Authorization(context.Background(), "gh", nil); !errors.Is(err, ErrNoIdentity) {
		t.Fatalf("no identity: %v", err)
	}
}

func TestExchange(t *testing.T) {
	as := testauth.New(testauth.Client{ID: "proxy", Secret: "proxy-secret"})
	defer as.Close()
	m, _ := New(Options{Upstreams: []Upstream{{Name: "gh", Source: Exchange, Audience: "https://gh.example.com/mcp", TokenURL: as.URL + "/token", ClientID: "proxy", ClientSecret: "proxy-secret"}}})
	front := as.Mint("alice", []string{"https://mcp.example.com/mcp"}, "", 0)
	id := &identity.Identity{Subject: "alice", Token: front}
	h, err := m.Authorization(context.Background(), "gh", id)
	if err != nil {
		t.Fatal(err)
	}
	sub, aud, err := as.Verify(strings.TrimPrefix(h, "Bearer "))
	if err != nil || sub != "alice" || aud[0] != "https://gh.example.com/mcp" {
		t.Fatalf("exchanged token: %s %v %v", sub, aud, err)
	}
	// Cached: no second exchange.
	if _, err := m.Authorization(context.Background(), "gh", id); err != nil {
		t.Fatal(err)
	}
	if n := len(as.TokenRequests()); n != 1 {
		t.Fatalf("%d token requests", n)
	}
	id.Token = "not-a-token"
	if _, err := m.Authorization(context.Background(), "gh", id); err == nil || !strings.Contains(err.Error(), "token exchange") || !strings.Contains(err.Error(), "invalid_grant") {
		t.Fatalf("bad subject token: %v", err)
	}
}

func TestOAuthConnectFlowAndRefresh(t *testing.T) {
	as := testauth.New()
	defer as.Close()
	store, _ := OpenStore(filepath.Join(t.TempDir(), "t.json"), key32)
	var m *Manager
	mux := http.NewServeMux()
	cb := httptest.NewServer(mux)
	defer cb.Close()
	as.AddClient(testauth.Client{ID: "proxy", Secret: "s3", RedirectURIs: []string{cb.URL + CallbackPath}})
	connected := make(chan string, 1)
	m, err := New(Options{Store: store, CallbackURL: cb.URL + CallbackPath, OnConnected: func(u, s, e string) { connected <- u + " " + s },
		Upstreams: []Upstream{{Name: "gh", Source: OAuth, Audience: "https://gh.example.com/mcp", TokenURL: as.URL + "/token", AuthorizeURL: as.URL + "/authorize", ClientID: "proxy", ClientSecret: "s3", Scopes: []string{"repo"}}}})
	if err != nil {
		t.Fatal(err)
	}
	mux.Handle(CallbackPath, m.Callback())
	ctx := context.Background()
	alice := &identity.Identity{Subject: "alice"}
	_, err = m.Authorization(ctx, "gh", alice)
	var cr *ConnectRequired
	if !errors.As(err, &cr) || !strings.HasPrefix(cr.URL, as.URL+"/authorize?") || !strings.Contains(cr.URL, "code_challenge_method=S256") || !strings.Contains(cr.URL, "resource=https%3A%2F%2Fgh.example.com%2Fmcp") {
		t.Fatalf("want connect, got %v", err)
	}
	// The same link while it is fresh.
	_, err2 := m.Authorization(ctx, "gh", alice)
	if err2.(*ConnectRequired).URL != cr.URL {
		t.Fatal("a new link each call")
	}
	waited := make(chan bool, 1)
	go func() { waited <- m.Wait(ctx, "gh", "alice", 10*time.Second) }()
	// The "browser": alice signs in at the AS, which redirects to the callback.
	resp, err := http.Get(cr.URL + "&login=alice")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("browser: %v %v", resp, err)
	}
	resp.Body.Close()
	if got := <-connected; got != "gh alice" {
		t.Fatal(got)
	}
	if !<-waited {
		t.Fatal("Wait did not see the connection")
	}
	h, err := m.Authorization(ctx, "gh", alice)
	if err != nil {
		t.Fatal(err)
	}
	if sub, aud, err := as.Verify(strings.TrimPrefix(h, "Bearer ")); err != nil || sub != "alice" || aud[0] != "https://gh.example.com/mcp" {
		t.Fatalf("token %v %v %v", sub, aud, err)
	}
	// The link works once.
	resp, _ = http.Get(cr.URL + "&login=alice")
	if resp.StatusCode == 200 {
		t.Fatal("link used twice")
	}
	resp.Body.Close()
	// Expired access token: refreshed with the refresh token, saved.
	tok, _ := store.Get(context.Background(), "gh", "alice")
	tok.Expiry = time.Now().Add(-time.Minute)
	store.Put(context.Background(), "gh", "alice", tok)
	h2, err := m.Authorization(ctx, "gh", alice)
	if err != nil || h2 == h {
		t.Fatalf("refresh: %v", err)
	}
	if got := as.TokenRequests(); strings.Join(got, ",") != "authorization_code proxy,refresh_token proxy" {
		t.Fatalf("token requests %v", got)
	}
	// A refresh refused by the AS (revoked): connect again.
	tok, _ = store.Get(context.Background(), "gh", "alice")
	tok.Expiry = time.Now().Add(-time.Minute)
	tok.RefreshToken = "revoked"
	store.Put(context.Background(), "gh", "alice", tok)
	if _, err := m.Authorization(ctx, "gh", alice); !errors.As(err, &cr) {
		t.Fatalf("revoked: %v", err)
	}
	// Bob never connected.
	if _, err := m.Authorization(ctx, "gh", &identity.Identity{Subject: "bob"}); !errors.As(err, &cr) {
		t.Fatalf("bob: %v", err)
	}
}
