package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
)

// TestStdioLegVersion: a stdio upstream that speaks 2026-07-28 (a go-sdk
// v1.8.0 server with its default versions) is reached by initialize at
// 2025-11-25 by default (protocol = "auto": the era in which its tools may
// ask the client themselves, version.go), at 2026-07-28 with protocol =
// "2026-07-28" (server/discover, no initialize), and at an older version
// when one is named. Calls work on each.
func TestStdioLegVersion(t *testing.T) {
	for _, tc := range []struct{ protocol, want string }{
		{"", "2025-11-25"},
		{"auto", "2025-11-25"},
		{"2026-07-28", "2026-07-28"},
		{"2025-06-18", "2025-06-18"},
	} {
		u := stdioUpstream("a", "plain")
		u.Protocol = tc.protocol
		m, _ := startManager(t, []*config.Upstream{u}, Options{})
		waitFor(t, "upstream ready", func() bool { st, _ := m.Status("a"); return st.State == StateReady })
		cs := m.Session("a")
		if cs == nil {
			t.Fatal("no session")
		}
		if v := cs.InitializeResult().ProtocolVersion; v != tc.want {
			t.Errorf("protocol %q: stdio leg negotiated %q, want %q", tc.protocol, v, tc.want)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		res, err := m.CallTool(ctx, "a", &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if got := textOf(t, res); got != "hi" {
			t.Errorf("echo = %q", got)
		}
		m.Close(context.Background())
	}
}

// TestHTTPLegVersion: by default (protocol = "auto") a Streamable HTTP
// upstream with sessions is reached at 2025-11-25, and one served by a
// stateless go-sdk handler, which can send no request to a client, is
// connected again offering 2026-07-28 and reached at it (the proxy's
// client transport sends the per-request headers the server checks). A
// version named in protocol is kept even for a stateless server. All list
// and call.
func TestHTTPLegVersion(t *testing.T) {
	for _, tc := range []struct {
		stateless bool
		protocol  string
		want      string
	}{{true, "", "2026-07-28"}, {false, "", "2025-11-25"}, {true, "2025-11-25", "2025-11-25"}, {false, "2026-07-28", "2025-11-25"}} {
		s := newTestServer("plain", false)
		hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: tc.stateless}))
		t.Cleanup(hs.Close)
		u := httpUpstream("h", hs.URL, "")
		u.Protocol = tc.protocol
		m, _ := startManager(t, []*config.Upstream{u}, Options{})
		waitFor(t, "upstream ready", func() bool { st, _ := m.Status("h"); return st.State == StateReady })
		if v := m.Session("h").InitializeResult().ProtocolVersion; v != tc.want {
			t.Errorf("stateless=%v protocol=%q: negotiated %q, want %q", tc.stateless, tc.protocol, v, tc.want)
		}
		if n := len(m.Tools("h")); n == 0 {
			t.Errorf("stateless=%v: no tools listed", tc.stateless)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		res, err := m.CallTool(ctx, "h", &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
		cancel()
		if err != nil {
			t.Fatalf("stateless=%v: %v", tc.stateless, err)
		}
		if got := textOf(t, res); got != "hi" {
			t.Errorf("stateless=%v: echo = %q", tc.stateless, got)
		}
	}
}

// TestModernLegForModernCallers: on a stdio upstream at protocol "auto"
// that speaks 2026-07-28 (the go-sdk test server), a call made for a
// 2026-07-28 client (CallOptions.Modern) goes over a 2026-07-28 session of
// its own, opened at the first such call and ended with the shared one;
// other calls stay on the shared 2025-11-25 session. An upstream that
// speaks only older versions (a raw fake) has no such session: the call
// takes the shared one.
func TestModernLegForModernCallers(t *testing.T) {
	m, rec := startManager(t, []*config.Upstream{stdioUpstream("a", "plain"), stdioUpstream("old", "fake:plain")}, Options{})
	waitFor(t, "upstreams ready", func() bool {
		a, _ := m.Status("a")
		o, _ := m.Status("old")
		return a.State == StateReady && o.State == StateReady
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	main := m.conns["a"].cur
	if main.modern != nil {
		t.Fatal("a 2026-07-28 session before any 2026-07-28 call")
	}
	if _, err := m.CallToolWith(ctx, "a", &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}, CallOptions{}); err != nil {
		t.Fatal(err)
	}
	if main.modern != nil {
		t.Fatal("a call of an older client opened the 2026-07-28 session")
	}
	res, err := m.CallToolWith(ctx, "a", &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "y"}}, CallOptions{Modern: true})
	if err != nil || textOf(t, res) != "y" {
		t.Fatalf("modern call: %v %v", res, err)
	}
	main.modMu.Lock()
	ml := main.modern
	main.modMu.Unlock()
	if ml == nil || ml.session.InitializeResult().ProtocolVersion != "2026-07-28" || ml.child == nil || ml.child.pid == main.child.pid {
		t.Fatalf("no 2026-07-28 session of its own beside the shared one: %+v", ml)
	}
	if v := main.session.InitializeResult().ProtocolVersion; v != "2025-11-25" {
		t.Fatalf("shared session at %s", v)
	}
	if _, err := m.CallToolWith(ctx, "old", &mcp.CallToolParams{Name: "echo"}, CallOptions{Modern: true}); err != nil {
		t.Fatal(err)
	}
	old := m.conns["old"].cur
	if old.modern != nil || !old.noModern {
		t.Fatalf("an upstream without 2026-07-28 kept a second session: modern=%v noModern=%v", old.modern, old.noModern)
	}
	// The extra session it took to learn that is explained, once, at info.
	if _, err := m.CallToolWith(ctx, "old", &mcp.CallToolParams{Name: "echo"}, CallOptions{Modern: true}); err != nil {
		t.Fatal(err)
	}
	if lg := rec.log.String(); strings.Count(lg, "level=INFO msg=\"a 2026-07-28 client's call opened a second session") != 1 || !strings.Contains(lg, "answered=2025-") {
		t.Errorf("the tried 2026-07-28 session is not logged once at info with the version answered:\n%s", lg)
	}
	m.Close(context.Background())
	select {
	case <-ml.child.exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the 2026-07-28 session's child outlived the manager")
	}
}

// modernOnlyHTTP is a stateless Streamable HTTP server that speaks only
// 2026-07-28, as the official conformance suite's client scenarios do:
// with refuseFirst its first request, whatever it is, gets HTTP 400
// -32022 listing 2026-07-28 (scenario request-metadata), else initialize
// is unknown (-32601, scenario sep-2322-client-request-state); with
// emptyInit initialize gets a result without protocolVersion (what the
// request-metadata server answers after its first refusal). Any other
// request but server/discover needs the MCP-Protocol-Version header and
// _meta protocolVersion of 2026-07-28. It records the POSTs it refused for
// a missing header or _meta, and counts initialize requests and GETs.
type modernOnlyHTTP struct {
	refuseFirst, emptyInit bool

	mu          sync.Mutex
	requests    int
	initializes int
	gets        int
	bad         []string // "method: what was missing"
}

func (h *modernOnlyHTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if r.Method != http.MethodPost {
		h.gets++
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name string `json:"name"`
			Meta struct {
				Version string `json:"io.modelcontextprotocol/protocolVersion"`
			} `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &m) != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	if len(m.ID) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	answer := func(status int, msg string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,%s}`, m.ID, msg)
	}
	h.requests++
	if m.Method == "initialize" {
		h.initializes++
	}
	hv := r.Header.Get("Mcp-Protocol-Version")
	switch {
	case h.refuseFirst && h.requests == 1:
		answer(http.StatusBadRequest, `"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"`+hv+`"}}`)
	case m.Method == "initialize" && h.emptyInit:
		answer(http.StatusOK, `"result":{}`)
	case m.Method == "initialize":
		answer(http.StatusOK, `"error":{"code":-32601,"message":"Method not found: initialize"}`)
	case hv != "2026-07-28" || m.Params.Meta.Version != "2026-07-28":
		h.bad = append(h.bad, fmt.Sprintf("%s: header %q, _meta protocolVersion %q", m.Method, hv, m.Params.Meta.Version))
		answer(http.StatusBadRequest, `"error":{"code":-32020,"message":"Missing MCP-Protocol-Version header or _meta"}`)
	case m.Method == "server/discover":
		answer(http.StatusOK, `"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}`)
	case m.Method == "tools/list":
		answer(http.StatusOK, `"result":{"resultType":"complete","tools":[{"name":"echo","inputSchema":{"type":"object"}}]}`)
	case m.Method == "tools/call":
		answer(http.StatusOK, `"result":{"resultType":"complete","content":[{"type":"text","text":"called `+m.Params.Name+` at `+m.Params.Meta.Version+`"}]}`)
	default:
		answer(http.StatusOK, `"error":{"code":-32601,"message":"Method not found"}`)
	}
}

// TestModernOnlyUpstreamAtAuto: at protocol "auto" an upstream that
// speaks only 2026-07-28 — it refuses initialize with -32022 or -32601, or
// answers it with no version — is reached at 2026-07-28, as a 2026-07-28
// client connected directly reaches it: the attempt the server refused is
// made again offering 2026-07-28 (server/discover), every request after
// the refused one carries the MCP-Protocol-Version header and _meta, the
// legacy SSE transport is not tried, and the next connection offers
// 2026-07-28 at once (no initialize).
func TestModernOnlyUpstreamAtAuto(t *testing.T) {
	type tc struct {
		name string
		up   func(t *testing.T) (*config.Upstream, func() (initializes int, bad []string, gets int))
	}
	httpCase := func(refuseFirst, emptyInit bool) func(t *testing.T) (*config.Upstream, func() (int, []string, int)) {
		return func(t *testing.T) (*config.Upstream, func() (int, []string, int)) {
			h := &modernOnlyHTTP{refuseFirst: refuseFirst, emptyInit: emptyInit}
			hs := httptest.NewServer(h)
			t.Cleanup(hs.Close)
			u := httpUpstream("m", hs.URL, "")
			u.TransportAuto = true
			u.Transport = "streamable-http" // what config gives a url without transport
			return u, func() (int, []string, int) {
				h.mu.Lock()
				defer h.mu.Unlock()
				return h.initializes, append([]string(nil), h.bad...), h.gets
			}
		}
	}
	for _, c := range []tc{
		{"stdio initialize unknown", func(t *testing.T) (*config.Upstream, func() (int, []string, int)) {
			path := filepath.Join(t.TempDir(), "frames")
			u := stdioUpstream("m", "fake:modernonly")
			u.Env[testServerRecordEnv] = path
			return u, func() (int, []string, int) {
				b, _ := os.ReadFile(path)
				n := 0
				var bad []string
				for _, l := range strings.Split(string(b), "\n") {
					var f struct {
						ID     json.RawMessage `json:"id"`
						Method string          `json:"method"`
						Params struct {
							Meta map[string]any `json:"_meta"`
						} `json:"params"`
					}
					if json.Unmarshal([]byte(l), &f) != nil || len(f.ID) == 0 || f.Method == "" {
						continue
					}
					if f.Method == "initialize" {
						n++
					} else if f.Params.Meta["io.modelcontextprotocol/protocolVersion"] != "2026-07-28" {
						bad = append(bad, f.Method+": no _meta protocolVersion")
					}
				}
				return n, bad, 0
			}
		}},
		{"http first request refused -32022", httpCase(true, true)},
		{"http initialize unknown", httpCase(false, false)},
		{"http initialize without version", httpCase(false, true)},
	} {
		t.Run(c.name, func(t *testing.T) {
			u, seen := c.up(t)
			m, _ := startManager(t, []*config.Upstream{u}, Options{})
			for deadline, st := time.Now().Add(30*time.Second), (Status{}); st.State != StateReady; st, _ = m.Status("m") {
				if time.Now().After(deadline) {
					t.Fatalf("not ready: %s", st.Err)
				}
				time.Sleep(20 * time.Millisecond)
			}
			if v := m.Session("m").InitializeResult().ProtocolVersion; v != "2026-07-28" {
				t.Fatalf("negotiated %q, want 2026-07-28", v)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			res, err := m.CallToolWith(ctx, "m", &mcp.CallToolParams{Name: "echo"}, CallOptions{Modern: true})
			if err != nil {
				t.Fatal(err)
			}
			if got := textOf(t, res); got != "called echo at 2026-07-28" {
				t.Fatalf("call: %q", got)
			}
			// A second connection (a reconnect, a per-client session)
			// offers 2026-07-28 at once.
			c := m.conns["m"]
			if !c.modernFound.Load() {
				t.Fatal("the refusal of the initialize era was not remembered")
			}
			l, err := c.connect(ctx, nil, nil)
			if err != nil {
				t.Fatalf("second connection: %v", err)
			}
			l.teardown(time.Second, c.log, "test")
			if v := l.session.InitializeResult().ProtocolVersion; v != "2026-07-28" {
				t.Fatalf("second connection at %q", v)
			}
			inits, bad, gets := seen()
			if inits != 1 {
				t.Errorf("%d initialize requests over two connections, want 1 (the first, refused)", inits)
			}
			if len(bad) > 0 {
				t.Errorf("requests after the refused initialize without the 2026-07-28 header or _meta: %v", bad)
			}
			if gets != 0 {
				t.Errorf("%d GET requests: the legacy SSE transport was tried on a server that refused the version by JSON-RPC", gets)
			}
		})
	}
}

// TestEraRefused: which failed attempts at the initialize era are made
// again offering 2026-07-28 (the server answered and refused), and which
// are not (it did not answer, or refused the credentials).
func TestEraRefused(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("initialize: calling %q: %w", "initialize", err) }
	for _, c := range []struct {
		err  error
		want bool
	}{
		{wrap(&jsonrpc.Error{Code: mcp.CodeUnsupportedProtocolVersion, Message: "HTTP 400 Bad Request: Unsupported protocol version"}), true},
		{wrap(&jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found: initialize"}), true},
		{&causeError{msg: "tools/list: x", err: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "upstream answered HTTP 400 Bad Request: Bad Request: Unsupported protocol version (supported versions: 2026-07-28)"}}, true},
		{errors.New(`initialize: unsupported protocol version: ""`), true},
		{wrap(&jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "upstream answered HTTP 401 Unauthorized: no token"}), false},
		{wrap(&jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "upstream answered HTTP 403 Forbidden: "}), false},
		{wrap(context.DeadlineExceeded), false},
		{errors.New("initialize: connection closed: EOF"), false},
		// A POST that never reached the server (httpconn.go wraps the dial
		// error in errRejected, a JSON-RPC error): nothing refused the era.
		{wrap(fmt.Errorf("%w: POST %s: %w", errRejected, "initialize", errors.New("dial tcp 127.0.0.1:1: connect: connection refused"))), false},
		{&causeError{msg: "the process exited with status 1", cause: "the process exited with status 1 during initialize"}, false},
	} {
		if got := eraRefused(c.err); got != c.want {
			t.Errorf("eraRefused(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// TestEraNotRetriedWhenUnreachable: an HTTP upstream that cannot be
// reached (nothing listens) refused nothing: it is not tried again at
// 2026-07-28, and its error names the refused connection once.
func TestEraNotRetriedWhenUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + "/mcp"
	ln.Close()
	u := httpUpstream("gone", url, "streamable-http")
	m, _ := startManager(t, []*config.Upstream{u}, Options{})
	waitFor(t, "upstream failed", func() bool { st, _ := m.Status("gone"); return st.State == StateFailed })
	st, _ := m.Status("gone")
	if strings.Contains(st.Err, "offered 2026-07-28") {
		t.Errorf("an unreachable upstream was offered 2026-07-28 as if it had refused the version: %s", st.Err)
	}
	// (Windows words it "connectex: Connection refused.")
	if n := strings.Count(strings.ToLower(st.Err), "connection refused"); n != 1 {
		t.Errorf("error names the refused connection %d times, want 1: %s", n, st.Err)
	}
}

// TestEraRefusedBothFail: a server that refuses both the initialize era
// and 2026-07-28 fails with both refusals named, and nothing is
// remembered.
func TestEraRefusedBothFail(t *testing.T) {
	var n atomic.Int32
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.NewDecoder(r.Body).Decode(&m)
		n.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"boom %d"}}`, m.ID, n.Load())
	}))
	t.Cleanup(hs.Close)
	u := httpUpstream("b", hs.URL, "streamable-http")
	m, _ := startManager(t, []*config.Upstream{u}, Options{})
	waitFor(t, "upstream failed", func() bool { st, _ := m.Status("b"); return st.State == StateFailed })
	st, _ := m.Status("b")
	if !strings.Contains(st.Err, "boom") || !strings.Contains(st.Err, "offered 2026-07-28 next (server/discover), it failed too") {
		t.Errorf("error does not name both attempts: %s", st.Err)
	}
	if m.conns["b"].modernFound.Load() {
		t.Error("a server that refused both was remembered as 2026-07-28")
	}
}
