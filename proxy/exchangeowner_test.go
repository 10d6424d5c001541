package proxy

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/testauth"
)

// TestExchangeBoundToSubject: Bob, with a valid token of his own and
// Alice's requestState, retries her call that waits for her answer to an
// upstream's elicitation: he gets exactly the error of an unknown state,
// the attempt is in the audit log under his name, and Alice's own retry
// still gets her result.
func TestExchangeBoundToSubject(t *testing.T) {
	as := testauth.New()
	t.Cleanup(as.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	dir := t.TempDir()
	p := startProxyIn(t, dir, fmt.Sprintf(`
[server]
transport = "http"
stateless = true
[auth]
public_url = %q
issuer = %q
[audit]
file = "audit.jsonl"
[upstreams.a]
url = %s
`, base, as.Issuer, tomlQuote(askingUpstream(t))), nil, Options{})
	srv := &http.Server{Handler: p.Handler(nil)}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := func(user string) *mcp.ClientSession {
		c := mcp.NewClient(&mcp.Implementation{Name: "same-name", Version: "1"}, &mcp.ClientOptions{
			MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
			Capabilities:   &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}},
		})
		tok := as.Mint(user, []string{base + "/mcp"}, "", 0)
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: bearerClient{tok}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	alice, bob := client("alice"), client("bob")
	r1, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: "a__ask", Arguments: map[string]any{}})
	if err != nil || !r1.NeedsInput() || !strings.HasPrefix(r1.RequestState, "mts1.") {
		t.Fatalf("alice's first round: %v %+v", err, r1)
	}
	var key string
	for k := range r1.InputRequests {
		key = k
	}
	answer := func(word string) mcp.InputResponseMap {
		return mcp.InputResponseMap{key: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"word": word}}}
	}
	_, errBob := bob.CallTool(ctx, &mcp.CallToolParams{Name: "a__ask", Arguments: map[string]any{}, RequestState: r1.RequestState, InputResponses: answer("from-bob")})
	_, errUnknown := bob.CallTool(ctx, &mcp.CallToolParams{Name: "a__ask", Arguments: map[string]any{}, RequestState: "mts1.AAAAAAAAAAAAAAAAAAAAAA.1", InputResponses: answer("x")})
	if errBob == nil || errUnknown == nil || errBob.Error() != errUnknown.Error() {
		t.Fatalf("bob with alice's state: %v\nbob with an unknown state: %v\nwant the same error", errBob, errUnknown)
	}
	r2, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: "a__ask", Arguments: map[string]any{}, RequestState: r1.RequestState, InputResponses: answer("from-alice")})
	if err != nil || resultText(r2) != "accept: you said from-alice" {
		t.Fatalf("alice's retry: %v %q", err, resultText(r2))
	}
	log, err := os.ReadFile(filepath.Join(dir, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var foreign []string
	for _, l := range strings.Split(string(log), "\n") {
		if strings.Contains(l, `"kind":"foreign_state"`) {
			foreign = append(foreign, l)
		}
	}
	if len(foreign) != 1 || !strings.Contains(foreign[0], `"subject":"user:bob"`) || !strings.Contains(foreign[0], "started by user:alice") {
		t.Fatalf("audit lines of foreign states: %q\n%s", foreign, log)
	}
}
