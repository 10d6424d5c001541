package proxy

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/fakeupstream"
)

// sharesProxy is an HTTP front with two endpoints of their own tokens (two
// subjects) and small session limits.
func sharesProxy(t *testing.T, limits string) string {
	t.Helper()
	up := httptest.NewServer(&fakeupstream.HTTP{Scenario: fakeupstream.Named("plain")})
	t.Cleanup(up.Close)
	p := startProxyText(t, fmt.Sprintf(`
[server]
transport = "http"
%s
[tool_search]
enabled = false
[upstreams.up]
url = %s
[endpoints.a]
path = "/a/mcp"
token = "token-a"
[endpoints.b]
path = "/b/mcp"
token = "token-b"
`, limits, tomlQuote(up.URL)))
	return strings.TrimSuffix(frontURL(t, p), "/mcp")
}

// initialize POSTs an initialize to url with token and returns the status,
// the session id and the body.
func initialize(t *testing.T, url, token string) (int, string, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"shares","version":"1"}}}`
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), string(b)
}

func deleteSession(t *testing.T, url, token, id string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodDelete, url, nil)
	req.Header.Set("Mcp-Session-Id", id)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

// TestSessionSharesPerSubject: one subject (an endpoint token) gets at most
// its share of max_sessions, then 503 naming max_sessions_per_subject;
// another subject's initialize still succeeds; a session that ends gives
// its share back.
func TestSessionSharesPerSubject(t *testing.T) {
	base := sharesProxy(t, "max_sessions = 10\nmax_sessions_per_subject = 3")
	var ids []string
	for i := 0; i < 3; i++ {
		code, id, body := initialize(t, base+"/a/mcp", "token-a")
		if code != http.StatusOK || id == "" {
			t.Fatalf("initialize %d of subject a: %d %s", i, code, body)
		}
		ids = append(ids, id)
	}
	code, _, body := initialize(t, base+"/a/mcp", "token-a")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "server.max_sessions_per_subject (3)") || !strings.Contains(body, `"id":1`) {
		t.Fatalf("the 4th initialize of subject a: %d %s", code, body)
	}
	if code, id, body := initialize(t, base+"/b/mcp", "token-b"); code != http.StatusOK || id == "" {
		t.Fatalf("subject b was refused: %d %s", code, body)
	}
	deleteSession(t, base+"/a/mcp", "token-a", ids[0])
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, _, body = initialize(t, base+"/a/mcp", "token-a")
		if code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("subject a after ending a session: %d %s", code, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestSessionSharesGlobalCap: the shares live under the global cap: with
// room for 4 sessions, a and b holding 2 each, a third subject is refused
// naming max_sessions.
func TestSessionSharesGlobalCap(t *testing.T) {
	base := sharesProxy(t, "max_sessions = 4\nmax_sessions_per_subject = 2")
	for _, s := range []string{"a", "a", "b", "b"} {
		if code, _, body := initialize(t, base+"/"+s+"/mcp", "token-"+s); code != http.StatusOK {
			t.Fatalf("subject %s: %d %s", s, code, body)
		}
	}
	// The main endpoint, no token: subject "addr:127.0.0.1".
	code, _, body := initialize(t, base+"/mcp", "")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "server.max_sessions (4)") {
		t.Fatalf("a third subject at the global cap: %d %s", code, body)
	}
}

// openSSE opens a legacy SSE stream and returns its first event line
// ("event: endpoint") reader, or the refusal's status.
func openSSE(t *testing.T, url, token string) (*http.Response, *bufio.Reader) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp, bufio.NewReader(resp.Body)
}

// TestSSEStreamsCountedAndClosed: a legacy SSE stream counts against its
// subject's share from its GET, before any initialize; past the share the
// GET gets 503; a stream whose session does not initialize within
// initialize_timeout is closed, and its share comes back.
func TestSSEStreamsCountedAndClosed(t *testing.T) {
	base := sharesProxy(t, "max_sessions = 10\nmax_sessions_per_subject = 2\ninitialize_timeout = \"1s\"")
	var streams []*bufio.Reader
	for i := 0; i < 2; i++ {
		resp, br := openSSE(t, base+"/a/mcp/sse", "token-a")
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("stream %d: %s", i, resp.Status)
		}
		streams = append(streams, br)
	}
	if resp, _ := openSSE(t, base+"/a/mcp/sse", "token-a"); resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a 3rd stream of subject a: %s (want 503)", resp.Status)
	}
	// A stream whose session initializes stays past the timeout, and
	// holds one of b's shares.
	c := mcp.NewClient(&mcp.Implementation{Name: "sse-b", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.SSEClientTransport{Endpoint: base + "/b/mcp/sse", HTTPClient: &http.Client{Transport: bearerClient{"token-b"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	if code, _, body := initialize(t, base+"/b/mcp", "token-b"); code != http.StatusOK {
		t.Fatalf("subject b: %d %s", code, body)
	}
	if code, _, body := initialize(t, base+"/b/mcp", "token-b"); code != http.StatusServiceUnavailable {
		t.Fatalf("subject b past its share (an SSE session and a Streamable HTTP one): %d %s", code, body)
	}
	// Never initialized: closed after initialize_timeout.
	start := time.Now()
	for i, br := range streams {
		done := make(chan error, 1)
		go func() {
			_, err := io.Copy(io.Discard, br)
			done <- err
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("stream %d is still open %v after initialize_timeout", i, time.Since(start))
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		if resp, _ := openSSE(t, base+"/a/mcp/sse", "token-a"); resp.StatusCode == http.StatusOK {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("subject a's share did not come back after its streams were closed")
}

// An initialized SSE session outlives initialize_timeout.
func TestSSEInitializedStaysOpen(t *testing.T) {
	base := sharesProxy(t, "initialize_timeout = \"1s\"")
	c := mcp.NewClient(&mcp.Implementation{Name: "sse-b", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.SSEClientTransport{Endpoint: base + "/b/mcp/sse", HTTPClient: &http.Client{Transport: bearerClient{"token-b"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	time.Sleep(1500 * time.Millisecond)
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatalf("an initialized SSE session after initialize_timeout: %v", err)
	}
}
