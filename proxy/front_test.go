package proxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
)

// serveFront starts the HTTP front of a proxy with no upstream running
// (the checks under test come before any MCP handling) and returns its
// address.
func serveFront(t *testing.T, extra string) string {
	t.Helper()
	cfg, err := config.Parse([]byte(`
[server]
transport = "http"
bearer_token = "tok-front-123"
`+extra+`
[upstreams.x]
command = "true"
`), "", func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.ServeHTTP(ctx, ln, nil) }()
	t.Cleanup(func() { cancel(); <-done; _ = p.Close(context.Background()) })
	return ln.Addr().String()
}

// readUntilClosed reads the server's answer until it closes the
// connection; failSafe bounds the wait (it is not a speed assertion).
func readUntilClosed(t *testing.T, c net.Conn, failSafe time.Duration) string {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(failSafe))
	b, err := io.ReadAll(c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the server still holds the connection after %v; read so far: %q", failSafe, b)
	}
	return string(b)
}

// TestRejectedBodyNeverRead: a POST with a wrong token (or a foreign Host)
// and a body that trickles is answered 401/403 and its connection closed,
// without waiting for the body (before, net/http read the rest of the
// body first, so such connections were held without end).
func TestRejectedBodyNeverRead(t *testing.T) {
	addr := serveFront(t, "")
	for _, c := range []struct{ host, auth, want string }{
		{"127.0.0.1", "Bearer wrong", "401 Unauthorized"},
		{"127.0.0.1", "", "401 Unauthorized"},
		{"evil.example", "Bearer tok-front-123", "403 Forbidden"},
	} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: %s\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"jsonrpc\":", c.host, c.auth)
		got := readUntilClosed(t, conn, 20*time.Second)
		conn.Close()
		if !strings.HasPrefix(got, "HTTP/1.1 "+c.want) || !strings.Contains(got, "Connection: close") {
			t.Errorf("Host %s, Authorization %q: got %.200q, want %s and Connection: close", c.host, c.auth, got, c.want)
		}
	}
}

// TestBodyMustArriveInTime: with the right token, a body that does not
// arrive within server.read_timeout ends the request and the connection.
func TestBodyMustArriveInTime(t *testing.T) {
	addr := serveFront(t, `read_timeout = "300ms"`)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer tok-front-123\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100000\r\n\r\n{\"jsonrpc\":")
	readUntilClosed(t, conn, 20*time.Second)
}

// TestHeadersMustArriveInTime: a client that trickles its headers is cut
// off after server.read_header_timeout; one whose headers are too big gets
// 431.
func TestHeadersMustArriveInTime(t *testing.T) {
	addr := serveFront(t, `read_header_timeout = "300ms"`+"\nmax_header_bytes = 4096")
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
	readUntilClosed(t, conn, 20*time.Second)

	big, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer big.Close()
	fmt.Fprintf(big, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: %s\r\n\r\n", strings.Repeat("a", 20000))
	line, _ := bufio.NewReader(big).ReadString('\n')
	if !strings.Contains(line, "431") {
		t.Errorf("a 20 KB header with max_header_bytes 4096: got %q, want 431", line)
	}
}

// TestAuthenticatedClientGetsInAtTheCap: with max_connections full of
// connections that never showed a token, a client with the token still
// gets its answer (the oldest unvetted connection makes room), and
// /metrics counts the evictions.
func TestAuthenticatedClientGetsInAtTheCap(t *testing.T) {
	addr := serveFront(t, "max_connections = 16\nmax_connections_per_address = 1000")
	var idle []net.Conn
	for i := 0; i < 40; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "GET /mcp HTTP/1.1\r\n") // and never the rest
		idle = append(idle, c)
	}
	defer func() {
		for _, c := range idle {
			c.Close()
		}
	}()
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer tok-front-123")
	resp, err := (&http.Client{Timeout: 20 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("an authenticated request at the cap failed: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %s", resp.Status)
	}
	for _, want := range []string{"mcp_toolsearch_http_connections ", "mcp_toolsearch_http_connections_evicted_total ", `mcp_toolsearch_http_connections_refused_total{cap="total"} 0`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if strings.Contains(string(body), "mcp_toolsearch_http_connections_evicted_total 0\n") {
		t.Error("no eviction counted although 41 connections met a cap of 16")
	}
}
