package proxy

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestFrontSessionDeleteOwner: a DELETE of a session by a user who does
// not own it is refused by the go-sdk (403) and leaves the session as it
// was: its calls still run (the owner is checked before the session gate
// could end the session's requests in flight or cancel its later calls).
func TestFrontSessionDeleteOwner(t *testing.T) {
	env := startIdentityEnv(t, "")
	p := env.P
	alice := map[string]string{"Authorization": "Bearer " + env.AS.Mint("alice", []string{env.MCP}, "", 0)}
	bob := map[string]string{"Authorization": "Bearer " + env.AS.Mint("bob", []string{env.MCP}, "", 0)}
	c := openSession(t, p, env.MCP, "owner-d", alice)
	for _, hdr := range []map[string]string{bob, nil} {
		req, err := http.NewRequest(http.MethodDelete, env.MCP, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Mcp-Session-Id", c.sid)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		t.Logf("DELETE by %v: %d", hdr != nil, resp.StatusCode)
		if resp.StatusCode == http.StatusNoContent || resp.StatusCode == http.StatusOK {
			t.Fatalf("DELETE of alice's session by %v: %d", hdr, resp.StatusCode)
		}
	}
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ex__whoami","arguments":{}}}`
	if a := c.post(call, alice); a.status != http.StatusOK || !strings.Contains(a.body, "alice") {
		t.Fatalf("alice's call after bob's DELETE: %s", a)
	}
	slow := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ex__whoami","arguments":{},"_meta":{"progressToken":"p"}}}`
	if a := c.post(slow, alice); a.status != http.StatusOK || !strings.Contains(a.body, "alice") {
		t.Fatalf("alice's go-sdk path call after bob's DELETE: %s", a)
	}
}

// askerUpstream is an HTTP upstream with one tool, "ask": it signals
// started, waits for release (nil: no wait), asks the client a question
// (elicitation/create) and sends the question's error to asked.
func askerUpstream(t *testing.T, release chan struct{}) (url string, started chan struct{}, asked chan error) {
	started, asked = make(chan struct{}, 1), make(chan error, 1)
	us := mcp.NewServer(&mcp.Implementation{Name: "asker", Version: "1"}, nil)
	us.AddTool(&mcp.Tool{Name: "ask", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		started <- struct{}{}
		if release != nil {
			<-release
		}
		_, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "go on?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`)})
		asked <- err
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return us }, nil))
	t.Cleanup(hs.Close)
	t.Cleanup(hs.CloseClientConnections) // first: a relayed question left waiting holds one
	return hs.URL, started, asked
}

// open POSTs body on the session with ctx and returns the response with
// its stream unread.
func (c *sessClient) open(ctx context.Context, body string, hdr map[string]string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", c.sid)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	return http.DefaultClient.Do(req)
}

// TestFrontSessionAskAfterPOSTClosed: a request the proxy relays to the
// client (an upstream's elicitation) during a fast-path call whose POST
// the client has closed fails at once, as on the go-sdk's path (its
// stream is no longer connected: "rejected by transport"), instead of
// being written to the closed stream and waiting for an answer the client
// never saw until call_timeout.
func TestFrontSessionAskAfterPOSTClosed(t *testing.T) {
	release := make(chan struct{})
	upURL, started, asked := askerUpstream(t, release)
	p := startProxyText(t, fmt.Sprintf("[server]\ntransport = \"http\"\n[tool_search]\nenabled = false\n[upstreams.a]\nurl = %s\n", tomlQuote(upURL)))
	// The front, noting when the call's POST has gone (its context ends
	// when the server sees the client close the connection).
	postGone := make(chan struct{}, 1)
	h := p.Handler(nil)
	fs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Test-Call") != "" {
			go func() { <-r.Context().Done(); postGone <- struct{}{} }()
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(fs.Close)
	c := openSessionCaps(t, p, fs.URL+"/mcp", "askable", `{"elicitation":{}}`, nil)
	before := p.hsess.Calls.Load()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		resp, err := c.open(ctx, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a__ask","arguments":{}}}`, map[string]string{"X-Test-Call": "1"})
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		errc <- err
	}()
	waitSignal(t, started, "the upstream tool did not start")
	cancel()
	<-errc
	waitSignal(t, postGone, "the front did not see the POST close")
	close(release)
	select {
	case err := <-asked:
		if err == nil {
			t.Fatal("the elicitation after the POST closed was answered")
		}
	case <-time.After(20 * time.Second):
		t.Error("the elicitation written to the closed POST stream waits for an answer the client never saw")
		del, _ := http.NewRequest(http.MethodDelete, c.url, nil) // ends the call, so that the servers close
		del.Header.Set("Mcp-Session-Id", c.sid)
		if resp, err := http.DefaultClient.Do(del); err == nil {
			resp.Body.Close()
		}
		<-asked
		return
	}
	if n := p.hsess.Calls.Load() - before; n != 1 {
		t.Fatalf("the fast path served %d calls, want 1", n)
	}
}

// TestRelayedRequestEndsWithTheCall: an upstream's elicitation relayed to
// the client on its call's stream ends when that call ends (here: the
// client cancels the call without answering the question), on the fast
// path and the go-sdk's. The upstream's own cancellation of its request
// cannot arrive: it would go on the stream of the tools/call the proxy
// has just cancelled. Before, the relayed request waited for ever, holding
// a relay slot (maxRelayedPerClient), a goroutine and the upstream
// connection's shutdown.
func TestRelayedRequestEndsWithTheCall(t *testing.T) {
	for _, c := range []struct{ name, meta string }{{"fast", ""}, {"go-sdk", `,"_meta":{"progressToken":"p"}`}} {
		t.Run(c.name, func(t *testing.T) {
			upURL, started, asked := askerUpstream(t, nil)
			p := startProxyText(t, fmt.Sprintf("[server]\ntransport = \"http\"\n[tool_search]\nenabled = false\n[upstreams.a]\nurl = %s\n", tomlQuote(upURL)))
			cl := openSessionCaps(t, p, frontURL(t, p), "askable", `{"elicitation":{}}`, nil)
			call, err := cl.open(context.Background(), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a__ask","arguments":{}`+c.meta+`}}`, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer call.Body.Close()
			waitSignal(t, started, "the upstream tool did not start")
			sc := bufio.NewScanner(call.Body)
			for sc.Scan() && !strings.Contains(sc.Text(), `"elicitation/create"`) {
			}
			if a := cl.post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"test"}}`, nil); a.status != http.StatusAccepted {
				t.Fatalf("notifications/cancelled: %s", a)
			}
			if err := <-asked; err == nil {
				t.Fatal("the upstream's question was answered")
			}
			waitFor(t, "the relayed question ended with the call", func() bool {
				p.pt.mu.Lock()
				defer p.pt.mu.Unlock()
				return len(p.pt.relaying) == 0
			})
		})
	}
}
