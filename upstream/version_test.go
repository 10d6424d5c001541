package upstream

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

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
	m, _ := startManager(t, []*config.Upstream{stdioUpstream("a", "plain"), stdioUpstream("old", "fake:plain")}, Options{})
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
	m.Close(context.Background())
	select {
	case <-ml.child.exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the 2026-07-28 session's child outlived the manager")
	}
}
