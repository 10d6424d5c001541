package proxy

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/audit"
	"github.com/mcp-toolsearch/mcp-toolsearch/internal/testauth"
)

// identityEnv is a proxy in OAuth resource-server mode in front of
// recording upstreams, with a test authorization server.
type identityEnv struct {
	AS       *testauth.Server
	Ups      map[string]*testauth.Upstream // "gh" (oauth), "ex" (exchange), "pt" (passthrough)
	P        *Proxy
	Base     string // the proxy's public URL
	MCP      string // Base + "/mcp"
	AuditLog string
}

// startIdentityEnv starts everything; extra is appended to the config.
func startIdentityEnv(t *testing.T, extra string) *identityEnv {
	t.Helper()
	env := &identityEnv{Ups: map[string]*testauth.Upstream{}}
	env.AS = testauth.New()
	t.Cleanup(env.AS.Close)
	for _, n := range []string{"gh", "ex", "pt"} {
		u := testauth.NewUpstream(env.AS, "service-token-"+n)
		t.Cleanup(u.Close)
		env.Ups[n] = u
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	env.Base = "http://" + ln.Addr().String()
	env.MCP = env.Base + "/mcp"
	env.AS.AddClient(testauth.Client{ID: "proxy", Secret: "proxy-secret", RedirectURIs: []string{env.Base + "/oauth/callback"}})
	dir := t.TempDir()
	env.AuditLog = filepath.Join(dir, "audit.jsonl")
	text := fmt.Sprintf(`
[server]
transport = "http"
[auth]
public_url = %[1]q
issuer = %[2]q
token_store = "tokens.json"
token_store_key = "${KEY}"
connect_wait = "20s"
[audit]
file = "audit.jsonl"
arguments = true
[upstreams.gh]
url = %[3]q
headers = { Authorization = "Bearer service-token-gh" }
[upstreams.gh.credential]
source = "oauth"
audience = %[3]q
authorize_url = "%[2]s/authorize"
token_url = "%[2]s/token"
client_id = "proxy"
client_secret = "proxy-secret"
[upstreams.ex]
url = %[4]q
headers = { Authorization = "Bearer service-token-ex" }
[upstreams.ex.credential]
source = "exchange"
audience = %[4]q
token_url = "%[2]s/token"
client_id = "proxy"
client_secret = "proxy-secret"
[upstreams.pt]
url = %[5]q
headers = { Authorization = "Bearer service-token-pt" }
[upstreams.pt.credential]
source = "passthrough"
audience = %[5]q
`, env.Base, env.AS.Issuer, env.Ups["gh"].URL, env.Ups["ex"].URL, env.Ups["pt"].URL) + extra
	getenv := func(k string) (string, bool) {
		if k == "KEY" {
			return "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=", true
		}
		return "", false
	}
	p := startProxyIn(t, dir, text, getenv, Options{})
	// Served on the listener opened first: the config names its URL.
	srv := &http.Server{Handler: p.Handler(nil)}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	env.P = p
	return env
}

// bearerClient adds a fixed Authorization header.
type bearerClient struct {
	tok string
}

func (b bearerClient) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.tok)
	return http.DefaultTransport.RoundTrip(r)
}

// userClient connects a go-sdk client over Streamable HTTP with token.
func (env *identityEnv) userClient(t *testing.T, name, token string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, opts)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: env.MCP, HTTPClient: &http.Client{Transport: bearerClient{token}}}, nil)
	if err != nil {
		t.Fatalf("connect %s: %v", name, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// browse plays the user's browser on a connect link: sign in as user at
// the authorization server, follow the redirect to the proxy's callback.
func browse(t *testing.T, link, user string) string {
	t.Helper()
	resp, err := http.Get(link + "&login=" + user)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("callback: %d %s", resp.StatusCode, b)
	}
	return string(b)
}

// TestTwoUsersOwnCredentials: two users
// with different tokens call the same upstream and each reaches it with
// their own credential (the upstream records which), and a user without a
// credential gets the connect prompt.
func TestTwoUsersOwnCredentials(t *testing.T) {
	env := startIdentityEnv(t, "")
	tokA := env.AS.Mint("alice", []string{env.MCP}, "", 0)
	tokB := env.AS.Mint("bob", []string{env.MCP}, "", 0)
	alice := env.userClient(t, "cli-a", tokA, nil)
	bob := env.userClient(t, "cli-b", tokB, nil)

	// Neither has connected gh yet: the connect prompt, with the link.
	for _, c := range []struct {
		cs   *mcp.ClientSession
		user string
	}{{alice, "alice"}, {bob, "bob"}} {
		r := callTool(t, c.cs, "gh__whoami", map[string]any{})
		text := resultText(r)
		link, _ := r.Meta[MetaKeyConnectURL].(string)
		if !r.IsError || !strings.Contains(text, `upstream "gh" needs your own account: connect it first by opening `+env.AS.URL+"/authorize?") || link == "" {
			t.Fatalf("%s: want the connect prompt, got %s", c.user, text)
		}
		t.Logf("connect prompt for %s: %s", c.user, text)
		// The user opens the link and signs in as themselves.
		if page := browse(t, link, c.user); !strings.Contains(page, "Connected gh") {
			t.Fatalf("callback page: %s", page)
		}
	}
	for i := 0; i < 2; i++ {
		if got := resultText(callTool(t, alice, "gh__whoami", map[string]any{})); got != "you are alice" {
			t.Fatalf("alice: %s", got)
		}
		if got := resultText(callTool(t, bob, "gh__whoami", map[string]any{})); got != "you are bob" {
			t.Fatalf("bob: %s", got)
		}
	}
	// Token exchange and passthrough reach their upstreams as the caller.
	if got := resultText(callTool(t, alice, "ex__whoami", map[string]any{})); got != "you are alice" {
		t.Fatalf("exchange: %s", got)
	}
	if got := resultText(callTool(t, bob, "ex__whoami", map[string]any{})); got != "you are bob" {
		t.Fatalf("exchange: %s", got)
	}
	// Passthrough: only a token whose audience includes the upstream.
	aliceBoth := env.userClient(t, "cli-a2", env.AS.Mint("alice", []string{env.MCP, env.Ups["pt"].URL}, "", 0), nil)
	if got := resultText(callTool(t, aliceBoth, "pt__whoami", map[string]any{})); got != "you are alice" {
		t.Fatalf("passthrough: %s", got)
	}
	_, err := bob.CallTool(context.Background(), &mcp.CallToolParams{Name: "pt__whoami", Arguments: map[string]any{}})
	if err == nil || !strings.Contains(err.Error(), "was not issued for "+env.Ups["pt"].URL) {
		t.Fatalf("passthrough with a token for the proxy only: %v", err)
	}

	var gh []string
	for _, c := range env.Ups["gh"].Calls() {
		gh = append(gh, c.Who)
	}
	if strings.Join(gh, ",") != "alice,bob,alice,bob" {
		t.Fatalf("gh recorded %v", gh)
	}
	t.Logf("gh recorded callers: %v; ex: %s; pt: %s", gh, env.Ups["ex"], env.Ups["pt"])

	// The audit log names each user and verifies.
	f, _ := os.Open(env.AuditLog)
	res, err := audit.Verify(f)
	f.Close()
	if err != nil || res.Lines < 8 {
		t.Fatalf("audit: %v %+v", err, res)
	}
	b, _ := os.ReadFile(env.AuditLog)
	for _, want := range []string{`"kind":"connect","subject":"user:alice","upstream":"gh"`, `"subject":"user:bob"`, `"outcome":"connect_required"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("audit lacks %s", want)
		}
	}
	if strings.Contains(string(b), tokA) || strings.Contains(string(b), "proxy-secret") {
		t.Fatal("a token or secret in the audit log")
	}
}

// TestConnectByURLElicitation: a client that supports URL-mode
// elicitation is sent the link; once the user signed in, the same call
// goes on and reaches the upstream as that user.
func TestConnectByURLElicitation(t *testing.T) {
	env := startIdentityEnv(t, "")
	var asked string
	opts := &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked = req.Params.Mode + " " + req.Params.Message
			go func() { // the user opens the link
				if resp, err := http.Get(req.Params.URL + "&login=carol"); err == nil {
					resp.Body.Close()
				}
			}()
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	}
	carol := env.userClient(t, "cli-c", env.AS.Mint("carol", []string{env.MCP}, "", 0), opts)
	if got := resultText(callTool(t, carol, "gh__whoami", map[string]any{})); got != "you are carol" {
		t.Fatalf("carol: %s (asked %q)", got, asked)
	}
	if !strings.HasPrefix(asked, "url The tool mcp:gh:whoami needs your own gh account") {
		t.Fatalf("elicitation: %q", asked)
	}
}

// TestFrontOAuth: 401 with resource_metadata, the metadata document, and
// a session id that another user cannot take over.
func TestFrontOAuth(t *testing.T) {
	env := startIdentityEnv(t, "")
	resp, err := http.Post(env.MCP, "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	wa := resp.Header.Get("WWW-Authenticate")
	if resp.StatusCode != 401 || wa != `Bearer resource_metadata="`+env.Base+`/.well-known/oauth-protected-resource/mcp"` {
		t.Fatalf("401: %d %q", resp.StatusCode, wa)
	}
	resp, err = http.Get(env.Base + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), `"resource":"`+env.MCP+`"`) || !strings.Contains(string(b), `"authorization_servers":["`+env.AS.Issuer+`"]`) {
		t.Fatalf("metadata: %s", b)
	}
	// A token for another resource is refused.
	c := mcp.NewClient(&mcp.Implementation{Name: "x", Version: "1"}, nil)
	_, err = c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: env.MCP, HTTPClient: &http.Client{Transport: bearerClient{env.AS.Mint("alice", []string{"https://elsewhere.example.com"}, "", 0)}}}, nil)
	if err == nil {
		t.Fatal("token for another audience accepted")
	}
	// The legacy SSE route is refused in OAuth mode.
	req, _ := http.NewRequest("GET", env.Base+"/sse", nil)
	req.Header.Set("Authorization", "Bearer "+env.AS.Mint("alice", []string{env.MCP}, "", 0))
	resp, _ = http.DefaultClient.Do(req)
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Fatalf("sse: %d", resp.StatusCode)
	}
}

// TestStatelessIdentityNotKept: the verified identity of
// an authenticated 2026-07-28 HTTP request (a ServerSession of its own,
// on the go-sdk's stateless path and on the fast path) is used for the
// call and not kept once the request returns (before: one entry per
// request, forever).
func TestStatelessIdentityNotKept(t *testing.T) {
	env := startIdentityEnv(t, "")
	alice := env.userClient(t, "cli-a", env.AS.Mint("alice", []string{env.MCP}, "", 0), nil)
	if v := alice.InitializeResult().ProtocolVersion; v != modernVersion {
		t.Fatalf("negotiated %s, want %s (stateless requests)", v, modernVersion)
	}
	count := func() int {
		n := 0
		env.P.idn.idents.Range(func(any, any) bool { n++; return true })
		return n
	}
	before := count()
	for i := 0; i < 50; i++ {
		if got := resultText(callTool(t, alice, "ex__whoami", map[string]any{})); got != "you are alice" {
			t.Fatalf("call %d: %s", i, got)
		}
	}
	if after := count(); after > before {
		t.Errorf("identity records: %d before 50 calls, %d after; want none kept", before, after)
	}
}

// TestPooledSessionOwnIdentity: two users whose clients
// send the same _meta triple (same client name, version and capabilities)
// take turns on the HTTP fast path, whose sessions the triple's pool keeps
// and hands to the next request: each call still runs as the user of its
// own token (token exchange: the upstream answers with the user's name).
func TestPooledSessionOwnIdentity(t *testing.T) {
	env := startIdentityEnv(t, "")
	alice := env.userClient(t, "same-client", env.AS.Mint("alice", []string{env.MCP}, "", 0), nil)
	bob := env.userClient(t, "same-client", env.AS.Mint("bob", []string{env.MCP}, "", 0), nil)
	// The first call of each teaches the triple (the go-sdk's way).
	for _, u := range []struct {
		cs   *mcp.ClientSession
		want string
	}{{alice, "you are alice"}, {bob, "you are bob"}} {
		if got := resultText(callTool(t, u.cs, "ex__whoami", map[string]any{})); got != u.want {
			t.Fatalf("first call: %s, want %s", got, u.want)
		}
	}
	// Bob's first call ran on the fast path; its session went back to the
	// pool before its answer was written (runFastHTTP), so it is there now
	// that the client has the answer.
	if n := env.P.stateless.Idle(); n != 1 {
		t.Fatalf("after the first calls: %d idle fast-path sessions, want 1", n)
	}
	before := env.P.stateless.Calls.Load()
	for i := 0; i < 10; i++ {
		cs, want := alice, "you are alice"
		if i%2 == 1 {
			cs, want = bob, "you are bob"
		}
		if got := resultText(callTool(t, cs, "ex__whoami", map[string]any{})); got != want {
			t.Fatalf("call %d: %s, want %s", i, got, want)
		}
		// The session went back to the pool before the answer was written
		// (otherwise a next call that came before the put, which then ran
		// after the write, connected a second session).
		if n := env.P.stateless.Idle(); n != 1 {
			t.Fatalf("after call %d: %d idle fast-path sessions, want 1 (one session taken in turn)", i, n)
		}
	}
	if n := env.P.stateless.Calls.Load() - before; n != 10 {
		t.Errorf("the fast path served %d of the 10 calls", n)
	}
}

// TestTokenInsideClockSkew: an access token that expired less than
// auth.clock_skew (default 60 s) ago is accepted by the identity layer and
// by the go-sdk's check alike (one rule): the client initializes and
// lists tools; one that expired longer ago gets 401 with an invalid_token
// challenge. Before, the first got HTTP 500 "internal error: identity not
// attached" (the go-sdk compared exp without the skew).
func TestTokenInsideClockSkew(t *testing.T) {
	env := startIdentityEnv(t, "")
	recent := env.AS.Mint("alice", []string{env.MCP}, "", -20*time.Second)
	cs := env.userClient(t, "cli", recent, nil)
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatalf("a token expired 20 s ago (inside the skew): %v", err)
	}
	old := env.AS.Mint("alice", []string{env.MCP}, "", -5*time.Minute)
	req, _ := http.NewRequest(http.MethodPost, env.MCP, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+old)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `error="invalid_token"`) {
		t.Fatalf("a token expired 5 min ago: HTTP %d %q %s", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), b)
	}
}
