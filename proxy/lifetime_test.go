package proxy

import (
	"bufio"
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

// rawClient speaks Streamable HTTP by hand, so a test can leave without
// DELETE (as a crashed or careless client does) or send one mid-call.
type rawClient struct {
	t   *testing.T
	url string
	sid string
	id  int
	// version is the protocol version initialize asks for and the
	// Mcp-Protocol-Version header names ("": 2025-06-18).
	version string
}

func (c *rawClient) protocolVersion() string {
	if c.version == "" {
		return "2025-06-18"
	}
	return c.version
}

// post sends one JSON-RPC message and returns the HTTP response (the body
// unread).
func (c *rawClient) post(ctx context.Context, method string, params any, notify bool) *http.Response {
	c.t.Helper()
	msg := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		msg["params"] = params
	}
	if !notify {
		c.id++
		msg["id"] = c.id
	}
	b, _ := json.Marshal(msg)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.sid != "" {
		req.Header.Set("Mcp-Session-Id", c.sid)
		req.Header.Set("Mcp-Protocol-Version", c.protocolVersion())
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
	return resp
}

// call sends a request and returns its JSON-RPC response (from a JSON or
// an event-stream body).
func (c *rawClient) call(method string, params any) map[string]any {
	c.t.Helper()
	resp := c.post(context.Background(), method, params, false)
	defer resp.Body.Close()
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		c.sid = id
	}
	return readResponse(c.t, resp)
}

func readResponse(t *testing.T, resp *http.Response) map[string]any {
	t.Helper()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var m map[string]any
		b, _ := io.ReadAll(resp.Body)
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("HTTP %d: %s", resp.StatusCode, b)
		}
		return m
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var m map[string]any
			if json.Unmarshal([]byte(data), &m) == nil && m["id"] != nil {
				return m
			}
		}
	}
	t.Fatalf("no response in the event stream")
	return nil
}

func (c *rawClient) initialize(name string) map[string]any {
	c.t.Helper()
	res := c.call("initialize", map[string]any{"protocolVersion": c.protocolVersion(), "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": name, "version": "1"}})
	if res["error"] == nil {
		resp := c.post(context.Background(), "notifications/initialized", nil, true)
		resp.Body.Close()
	}
	return res
}

// httpProxy starts a proxy from config text (%[1]s = the test upstream's
// URL) and serves its HTTP front; it returns the proxy and its /mcp URL.
func httpProxy(t *testing.T, text string) (*Proxy, string, *testUpstream) {
	t.Helper()
	p, up := testProxy(t, text)
	return p, frontURL(t, p), up
}

// waitFor polls cond (bounded: a failure means it never became true, not
// that it was slow).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (p *Proxy) perClientOpen() int {
	p.pt.mu.Lock()
	defer p.pt.mu.Unlock()
	return p.pt.perClientN
}

// TestIdleSessionsReleased: clients that initialize, call a per-client
// upstream and vanish without DELETE are closed after
// session_idle_timeout, with their per-client upstream sessions and
// telemetry; the counts return to zero.
func TestIdleSessionsReleased(t *testing.T) {
	p, url, _ := httpProxy(t, `
[server]
transport = "http"
session_idle_timeout = "1s"
[tool_search]
enabled = false
[upstreams.up]
url = %[1]s
session = "per-client"
`)
	for i := 0; i < 5; i++ {
		c := &rawClient{t: t, url: url}
		c.initialize(fmt.Sprintf("churn-%d", i))
		res := c.call("tools/call", map[string]any{"name": "up__echo", "arguments": map[string]any{"i": i}})
		if res["error"] != nil {
			t.Fatalf("call: %v", res["error"])
		}
	}
	if n := p.sessionCount(); n == 0 {
		t.Fatalf("no session open right after the clients left") // (some may have timed out already)
	}
	waitFor(t, "sessions and per-client upstream sessions back to 0", func() bool {
		p.pt.mu.Lock()
		clients := len(p.pt.clients)
		p.pt.mu.Unlock()
		return p.sessionCount() == 0 && p.perClientOpen() == 0 && clients == 0
	})
	if m := metricsText(t, p); !strings.Contains(m, "mcp_toolsearch_sessions_active 0") || !strings.Contains(m, "mcp_toolsearch_per_client_upstream_sessions 0") {
		t.Fatalf("metrics after the churn:\n%s", grepLines(m, "session"))
	}
}

func metricsText(t *testing.T, p *Proxy) string {
	t.Helper()
	w := httptest.NewRecorder()
	p.MetricsHandler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	return w.Body.String()
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestMaxSessions: past server.max_sessions, initialize gets a JSON-RPC
// error naming the limit (every transport), and a new Streamable HTTP
// session HTTP 503 with Retry-After; a session that ends frees its slot.
func TestMaxSessions(t *testing.T) {
	p, url, _ := httpProxy(t, `
[server]
transport = "http"
max_sessions = 2
[upstreams.up]
url = %[1]s
`)
	a, b := &rawClient{t: t, url: url}, &rawClient{t: t, url: url}
	for _, c := range []*rawClient{a, b} {
		if res := c.initialize("c"); res["error"] != nil {
			t.Fatalf("initialize: %v", res["error"])
		}
	}
	c := &rawClient{t: t, url: url}
	resp := c.post(context.Background(), "initialize", map[string]any{"protocolVersion": c.protocolVersion(), "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "third", "version": "1"}}, false)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" ||
		!strings.Contains(string(body), `"id":1`) || !strings.Contains(string(body), `"code":-32000`) || !strings.Contains(string(body), "server.max_sessions (2) reached") {
		t.Fatalf("third session: HTTP %d Retry-After=%q %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	// In-memory (stdio-like) transports hit the same limit at initialize
	// (protocol 2025-11-25: a 2026-07-28 client sends no initialize).
	ct, st := mcp.NewInMemoryTransports()
	if _, err := p.Server("", "stdio").Connect(context.Background(), st, nil); err != nil {
		t.Fatal(err)
	}
	_, err := mcp.NewClient(&mcp.Implementation{Name: "mem", Version: "1"}, nil).Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: legacyVersion})
	if err == nil || !strings.Contains(err.Error(), "server.max_sessions (2) reached") {
		t.Fatalf("in-memory initialize past the limit: err = %v", err)
	}
	// A 2026-07-28 stdio client (server/discover, no initialize) is
	// refused at its first request (the go-sdk client then falls back to
	// initialize, refused too: two refusals).
	ct, st = mcp.NewInMemoryTransports()
	if _, err := p.Server("", "stdio").Connect(context.Background(), st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "mem2026", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err == nil {
		_, err = cs.ListTools(context.Background(), nil)
		cs.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "server.max_sessions (2) reached") {
		t.Fatalf("2026-07-28 stdio client past the limit: err = %v", err)
	}
	if m := metricsText(t, p); !strings.Contains(m, `mcp_toolsearch_sessions_refused_total{limit="max_sessions"} 4`) {
		t.Fatalf("refusals not counted:\n%s", grepLines(m, "refused"))
	}
	// A DELETE frees a slot.
	req, _ := http.NewRequest(http.MethodDelete, url, nil)
	req.Header.Set("Mcp-Session-Id", a.sid)
	if resp, err := http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	waitFor(t, "a slot freed by DELETE", func() bool { return p.sessionCount() < 2 })
	if res := c.initialize("third"); res["error"] != nil {
		t.Fatalf("initialize after a DELETE: %v", res["error"])
	}
	// A 2026-07-28 stdio client holds a slot like any session: with b
	// gone it gets one, and a new HTTP session is refused while it lasts.
	req, _ = http.NewRequest(http.MethodDelete, url, nil)
	req.Header.Set("Mcp-Session-Id", b.sid)
	if resp, err := http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	waitFor(t, "a slot freed by DELETE", func() bool { return p.sessionCount() < 2 })
	ct, st = mcp.NewInMemoryTransports()
	if _, err := p.Server("", "stdio").Connect(context.Background(), st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err = mcp.NewClient(&mcp.Implementation{Name: "mem2026", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatalf("2026-07-28 stdio client with a free slot: %v", err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != modernVersion {
		t.Fatalf("stdio client negotiated %q, want %q", v, modernVersion)
	}
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatalf("2026-07-28 stdio client: tools/list: %v", err)
	}
	if n := p.sessionCount(); n != 2 {
		t.Errorf("sessionCount = %d with one HTTP and one 2026-07-28 stdio client, want 2", n)
	}
	d := &rawClient{t: t, url: url}
	if res := d.initialize("fourth"); res["error"] == nil {
		t.Errorf("HTTP initialize while the 2026-07-28 stdio client holds the last slot: %v", res)
	}
}

// TestMaxPerClientUpstreams: past server.max_per_client_upstreams a
// client's calls to the per-client upstream fail naming the limit; a
// shared upstream still works for it; a slot freed by a client that left
// serves the next client.
func TestMaxPerClientUpstreams(t *testing.T) {
	shared := featureUpstream(t, "shared")
	p, url, _ := httpProxy(t, `
[server]
transport = "http"
max_per_client_upstreams = 1
[tool_search]
enabled = false
[upstreams.up]
url = %[1]s
session = "per-client"
[upstreams.shared]
url = `+tomlQuote(shared)+`
`)
	a, b := &rawClient{t: t, url: url}, &rawClient{t: t, url: url}
	a.initialize("a")
	if res := a.call("tools/call", map[string]any{"name": "up__echo", "arguments": map[string]any{}}); res["error"] != nil {
		t.Fatalf("a: %v", res["error"])
	}
	b.initialize("b")
	res := b.call("tools/call", map[string]any{"name": "up__echo", "arguments": map[string]any{}})
	if msg := fmt.Sprint(res["error"]); !strings.Contains(msg, `"up"`) || !strings.Contains(msg, "server.max_per_client_upstreams (1) reached") {
		t.Fatalf("b past the limit: %v", res)
	}
	if res := b.call("tools/call", map[string]any{"name": "shared__ping", "arguments": map[string]any{}}); res["error"] != nil {
		t.Fatalf("b on a shared upstream: %v", res["error"])
	}
	req, _ := http.NewRequest(http.MethodDelete, url, nil)
	req.Header.Set("Mcp-Session-Id", a.sid)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	waitFor(t, "a's per-client session closed", func() bool { return p.perClientOpen() == 0 })
	c := &rawClient{t: t, url: url}
	c.initialize("c")
	if res := c.call("tools/call", map[string]any{"name": "up__echo", "arguments": map[string]any{}}); res["error"] != nil {
		t.Fatalf("c after a left: %v", res["error"])
	}
}

// TestDeleteCancelsCallInFlight: a DELETE while a call runs cancels the
// call (the upstream sees the cancellation) instead of waiting for it.
func TestDeleteCancelsCallInFlight(t *testing.T) {
	var started, cancelled atomic.Bool
	s := mcp.NewServer(&mcp.Implementation{Name: "slow", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "wait", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		started.Store(true)
		select {
		case <-ctx.Done():
			cancelled.Store(true)
			return nil, ctx.Err()
		case <-time.After(time.Minute):
			return &mcp.CallToolResult{}, nil
		}
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(hs.Close) // after the proxy's Close (cleanups run last-in first-out)
	p := startProxyText(t, "[server]\ntransport = \"http\"\n[tool_search]\nenabled = false\n[upstreams.slow]\nurl = "+tomlQuote(hs.URL)+"\n")
	front := httptest.NewServer(p.Handler(nil))
	defer front.Close()
	c := &rawClient{t: t, url: front.URL + "/mcp"}
	c.initialize("x")
	go func() {
		resp := c.post(context.Background(), "tools/call", map[string]any{"name": "slow__wait", "arguments": map[string]any{}}, false)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}()
	waitFor(t, "the call reached the upstream", started.Load)
	req, _ := http.NewRequest(http.MethodDelete, c.url, nil)
	req.Header.Set("Mcp-Session-Id", c.sid)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	waitFor(t, "the upstream saw the call cancelled", cancelled.Load)
	waitFor(t, "the session gone", func() bool { return p.sessionCount() == 0 })
}

// TestKeepaliveComments: an open Streamable HTTP GET stream gets ": keepalive"
// comments while silent.
func TestKeepaliveComments(t *testing.T) {
	_, url, _ := httpProxy(t, `
[server]
transport = "http"
keepalive_interval = "50ms"
[upstreams.up]
url = %[1]s
`)
	c := &rawClient{t: t, url: url}
	c.initialize("k")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", c.sid)
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	n := 0
	for n < 3 && sc.Scan() {
		if sc.Text() == ": keepalive" {
			n++
		}
	}
	if n < 3 {
		t.Fatalf("saw %d keepalives, want 3 (err %v)", n, sc.Err())
	}
}
