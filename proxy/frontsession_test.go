package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sessClient is a 2025-11-25 Streamable HTTP client session made by hand
// (initialize, notifications/initialized), for byte comparisons.
type sessClient struct {
	t   *testing.T
	url string
	sid string
}

// openSession opens a session as client name and waits until the proxy
// has handled its notifications/initialized (the fast path's condition).
func openSession(t *testing.T, p *Proxy, url, name string, hdr map[string]string) *sessClient {
	t.Helper()
	return openSessionCaps(t, p, url, name, `{}`, hdr)
}

// openSessionCaps is openSession for a client with capabilities caps (a
// JSON object).
func openSessionCaps(t *testing.T, p *Proxy, url, name, caps string, hdr map[string]string) *sessClient {
	t.Helper()
	c := &sessClient{t: t, url: url}
	a, resp := c.postResp(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":`+caps+`,"clientInfo":{"name":"`+name+`","version":"1"}}}`, hdr)
	if a.status != http.StatusOK || resp.Header.Get("Mcp-Session-Id") == "" {
		t.Fatalf("initialize: %s", a)
	}
	c.sid = resp.Header.Get("Mcp-Session-Id")
	if a := c.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr); a.status != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %s", a)
	}
	waitFor(t, "notifications/initialized handled", func() bool {
		return p.hsess.Ready(c.sid)
	})
	return c
}

func (c *sessClient) post(body string, hdr map[string]string) httpAnswer {
	a, _ := c.postResp(body, hdr)
	return a
}

func (c *sessClient) postResp(body string, hdr map[string]string) (httpAnswer, *http.Response) {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodPost, c.url, bytes.NewReader([]byte(body)))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.sid != "" {
		req.Header.Set("Mcp-Session-Id", c.sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	return answerOf(c.t, resp, "Content-Type", "Cache-Control", "Connection", "Content-Length", "Transfer-Encoding", "Allow"), resp
}

// TestFrontSessionFastNotReady: the fast path leaves a session's calls to
// the go-sdk before its notifications/initialized was handled and after
// the client set a log level (its log notifications could go on the call's
// stream); the answers are the go-sdk's.
func TestFrontSessionFastNotReady(t *testing.T) {
	up := startTestUpstream(t)
	p := startProxyText(t, fmt.Sprintf("[server]\ntransport = \"http\"\n[tool_search]\nenabled = false\n[upstreams.up]\nurl = %s\n", tomlQuote(up.URL)))
	c := &sessClient{t: t, url: frontURL(t, p)}
	_, resp := c.postResp(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"n","version":"1"}}}`, nil)
	c.sid = resp.Header.Get("Mcp-Session-Id")
	before := p.hsess.Calls.Load()
	if a := c.post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"up__echo"}}`, nil); !strings.Contains(a.body, "echo") {
		t.Fatalf("call before notifications/initialized: %s", a)
	}
	if n := p.hsess.Calls.Load() - before; n != 0 {
		t.Errorf("the fast path served %d calls before notifications/initialized", n)
	}
	c = openSession(t, p, frontURL(t, p), "n2", nil)
	if a := c.post(`{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"debug"}}`, nil); a.status != http.StatusOK {
		t.Fatalf("setLevel: %s", a)
	}
	before = p.hsess.Calls.Load()
	if a := c.post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"up__echo"}}`, nil); !strings.Contains(a.body, "echo") {
		t.Fatalf("call after setLevel: %s", a)
	}
	if n := p.hsess.Calls.Load() - before; n != 0 {
		t.Errorf("the fast path served %d calls after logging/setLevel", n)
	}
}

// TestFrontSessionFastCancel: a 2025-11-25 session's tools/call on the
// fast path is cancelled by notifications/cancelled naming it (answered
// 202; the upstream tool's context ends; the call's stream ends without an
// answer, as front.CancelGate makes the go-sdk's), but not by the client closing
// the POST (before 2026-07-28 a disconnection is not a cancellation); the
// session serves later calls on the fast path.
func TestFrontSessionFastCancel(t *testing.T) {
	url, started, cancelled := slowUpstream(t)
	p := startProxyText(t, fmt.Sprintf("[server]\ntransport = \"http\"\n[tool_search]\nenabled = false\n[upstreams.slowup]\nurl = %s\n", tomlQuote(url)))
	c := openSession(t, p, frontURL(t, p), "canceller", nil)
	before := p.hsess.Calls.Load()
	done := make(chan httpAnswer, 1)
	go func() {
		done <- c.post(`{"jsonrpc":"2.0","id":"slow-1","method":"tools/call","params":{"name":"slowup__slow","arguments":{}}}`, nil)
	}()
	waitSignal(t, started, "the upstream tool did not start")
	if a := c.post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow-1","reason":"test"}}`, nil); a.status != http.StatusAccepted {
		t.Fatalf("notifications/cancelled: %s", a)
	}
	waitSignal(t, cancelled, "notifications/cancelled did not reach the upstream tool")
	if a := <-done; a.status != http.StatusOK || strings.Contains(a.body, "slow-1") {
		t.Errorf("the cancelled call was answered (MCP cancellation: SHOULD not): %s", a)
	}

	// Closing the POST.
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		resp, err := c.open(ctx, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slowup__slow","arguments":{}}}`, nil) // frontsession_review_test.go
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		errc <- err
	}()
	waitSignal(t, started, "the second call did not start")
	cancel()
	<-errc
	// Before 2026-07-28 closing the POST does not cancel the call (MCP
	// 2025-11-25 basic/transports): it runs on until notifications/cancelled
	// names it.
	select {
	case <-cancelled:
		t.Fatal("closing the POST cancelled the call (before 2026-07-28 a disconnection is not a cancellation)")
	case <-time.After(time.Second):
	}
	if a := c.post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"test"}}`, nil); a.status != http.StatusAccepted {
		t.Fatalf("notifications/cancelled: %s", a)
	}
	waitSignal(t, cancelled, "notifications/cancelled after the POST closed did not reach the upstream tool")
	if a := c.post(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slowup__quick","arguments":{}}}`, nil); !strings.Contains(a.body, `"quick"`) {
		t.Fatalf("quick: %s", a)
	}
	if n := p.hsess.Calls.Load() - before; n != 3 {
		t.Errorf("the fast path served %d calls, want 3", n)
	}
}

// TestFrontSessionIdleHeldByFastCall: session_idle_timeout does not end a
// session while a fast-path call of it is in flight (the timer is the
// proxy's now, held by every POST of the session, as the go-sdk's was), and
// ends it once idle: its next request gets 404.
func TestFrontSessionIdleHeldByFastCall(t *testing.T) {
	upURL, started, release, _ := heldUpstream(t)
	p := startProxyText(t, fmt.Sprintf("[server]\ntransport = \"http\"\nsession_idle_timeout = \"300ms\"\n[tool_search]\nenabled = false\n[upstreams.h]\nurl = %s\n", tomlQuote(upURL)))
	c := openSession(t, p, frontURL(t, p), "held", nil)
	before := p.hsess.Calls.Load()
	done := make(chan httpAnswer, 1)
	go func() {
		done <- c.post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"h__held","arguments":{}}}`, nil)
	}()
	waitSignal(t, started, "the upstream tool did not start")
	time.Sleep(time.Second) // > session_idle_timeout, with the call in flight
	close(release)
	if a := <-done; !strings.Contains(a.body, "released") {
		t.Fatalf("the held call: %s", a)
	}
	if n := p.hsess.Calls.Load() - before; n != 1 {
		t.Fatalf("the fast path served %d calls, want 1", n)
	}
	waitFor(t, "the idle session closed", func() bool { return !p.hsess.Known(c.sid) && p.sessionCount() == 0 })
	if a := c.post(`{"jsonrpc":"2.0","id":2,"method":"ping"}`, nil); a.status != http.StatusNotFound {
		t.Fatalf("a request of the expired session: %s", a)
	}
}

// TestFrontSessionFastElicit: a go-sdk client of the stateful Streamable
// HTTP front at 2025-11-25 whose tools/call takes the fast path is asked
// for approval (elicitation/create) on the call's POST stream, as the
// go-sdk asks it (the client opens no GET stream, where the question
// would go without sessFastSending); its answer, POSTed back, reaches the approval: accepted
// runs the tool, declined blocks it. The relayed answer is the client's
// (an error answer is an error).
func TestFrontSessionFastElicit(t *testing.T) {
	p, up := testProxy(t, "[server]\ntransport = \"http\"\n"+approvalConfig)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, c := range []struct {
		name   string
		answer *mcp.ElicitResult
		runs   bool
	}{
		{"accept", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, true},
		{"decline", &mcp.ElicitResult{Action: "decline"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			asked := 0
			cl := mcp.NewClient(&mcp.Implementation{Name: "http-" + c.name, Version: "1"}, &mcp.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked++
					if !strings.Contains(req.Params.Message, "mcp:up:delete_thing") {
						t.Errorf("elicitation message: %s", req.Params.Message)
					}
					return c.answer, nil
				}})
			// No standalone GET stream: the question can only come on
			// the call's POST stream.
			cs, err := cl.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: frontURL(t, p), DisableStandaloneSSE: true}, &mcp.ClientSessionOptions{ProtocolVersion: legacyVersion})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			waitFor(t, "the session ready for the fast path", func() bool {
				return p.hsess.Ready(cs.ID())
			})
			before, ran := p.hsess.Calls.Load(), up.count("delete_thing")
			r := callTool(t, cs, "up__delete_thing", map[string]any{"name": "x"})
			if n := p.hsess.Calls.Load() - before; n != 1 {
				t.Fatalf("the fast path served %d calls, want 1", n)
			}
			if asked != 1 {
				t.Fatalf("elicitation requests = %d, want 1", asked)
			}
			if c.runs {
				if r.IsError || up.count("delete_thing") != ran+1 {
					t.Fatalf("accepted call: %s", resultText(r))
				}
				return
			}
			assertBlocked(t, r, up, "", "the person declined")
			if up.count("delete_thing") != ran {
				t.Fatal("the declined call reached the upstream")
			}
		})
	}
}

// TestFrontSessionOwner: a session opened with one user's token is served
// (fast path included) only for that user: another user's token with the
// same Mcp-Session-Id gets the go-sdk's 403 "session user mismatch", for a
// tools/call the fast path would take and for notifications/cancelled, and
// nothing of it runs.
func TestFrontSessionOwner(t *testing.T) {
	env := startIdentityEnv(t, "")
	p := env.P
	alice := map[string]string{"Authorization": "Bearer " + env.AS.Mint("alice", []string{env.MCP}, "", 0)}
	bob := map[string]string{"Authorization": "Bearer " + env.AS.Mint("bob", []string{env.MCP}, "", 0)}
	c := openSession(t, p, env.MCP, "owner-a", alice)
	before := p.hsess.Calls.Load()
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"gh__whoami","arguments":{}}}`
	if a := c.post(call, alice); a.status != http.StatusOK || !strings.Contains(a.body, "connect it first") {
		t.Fatalf("alice's call: %s", a)
	}
	if n := p.hsess.Calls.Load() - before; n != 1 {
		t.Fatalf("the fast path served %d of alice's calls, want 1", n)
	}
	for _, body := range []string{call, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`} {
		if a := c.post(body, bob); a.status != http.StatusForbidden || !strings.Contains(a.body, "session user mismatch") {
			t.Fatalf("bob on alice's session: %s", a)
		}
	}
	if n := p.hsess.Calls.Load() - before; n != 1 {
		t.Fatalf("the fast path served bob on alice's session")
	}
}

// TestFrontSessionTiedToEndpoint: a session of [endpoints.x] is not served
// on /mcp (fast path included), whatever session id it is shown: the
// go-sdk handler of /mcp answers 404 as before; on its own mount it is
// served.
func TestFrontSessionTiedToEndpoint(t *testing.T) {
	p, _ := testProxy(t, "[server]\ntransport = \"http\"\n[tool_search]\nenabled = false\n[upstreams.up]\nurl = %[1]s\n[endpoints.x]\npath = \"/x/mcp\"\n")
	srv := httptest.NewServer(p.Handler(nil))
	t.Cleanup(srv.Close)
	cx := openSession(t, p, srv.URL+"/x/mcp", "mount-x", nil)
	before := p.hsess.Calls.Load()
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"up__echo","arguments":{}}}`
	other := &sessClient{t: t, url: srv.URL + "/mcp", sid: cx.sid}
	if a := other.post(call, nil); a.status != http.StatusNotFound {
		t.Errorf("a session of /x/mcp on /mcp: %s", a)
	}
	if a := cx.post(call, nil); a.status != http.StatusOK || !strings.Contains(a.body, "echo") {
		t.Errorf("on its own mount: %s", a)
	}
	if n := p.hsess.Calls.Load() - before; n != 1 {
		t.Errorf("the fast path served %d calls, want 1 (the own mount's)", n)
	}
}

// heldUpstream starts an upstream whose tool "held" signals started when
// a call begins and answers "released" once release is closed; calls
// counts the calls that began.
func heldUpstream(t *testing.T) (url string, started, release chan struct{}, calls *atomic.Int64) {
	t.Helper()
	started, release, calls = make(chan struct{}, 1), make(chan struct{}), new(atomic.Int64)
	s := mcp.NewServer(&mcp.Implementation{Name: "held", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "held", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		calls.Add(1)
		select {
		case started <- struct{}{}:
		default:
		}
		<-release
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "released"}}}, nil
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(hs.Close)
	return hs.URL, started, release, calls
}
