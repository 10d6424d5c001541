package proxy

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
)

// TestHTTPGuards: /mcp and /metrics need the bearer token when one is set;
// /healthz does not; every route refuses a foreign Host or Origin (DNS
// rebinding, MCP spec "Transports", security warning).
func TestHTTPGuards(t *testing.T) {
	cfg, err := config.Parse([]byte(`
[server]
transport = "http"
bearer_token = "tok-123456"
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
	h := p.Handler(nil)
	cases := []struct {
		path, host, origin, token string
		want                      int
	}{
		{"/metrics", "127.0.0.1:8080", "", "", http.StatusUnauthorized},
		{"/metrics", "127.0.0.1:8080", "", "tok-123456", http.StatusOK},
		{"/metrics", "evil.example", "", "tok-123456", http.StatusForbidden},
		{"/healthz", "127.0.0.1:8080", "", "", http.StatusServiceUnavailable}, // no upstream ready, but no token needed
		{"/healthz?live", "127.0.0.1:8080", "", "", http.StatusOK},            // liveness: the process serves HTTP
		{"/healthz", "evil.example", "", "", http.StatusForbidden},
		{"/mcp", "localhost:8080", "http://evil.example", "tok-123456", http.StatusForbidden},
		{"/mcp", "localhost:8080", "", "wrong", http.StatusUnauthorized},
		{"/sse", "[::1]:8080", "", "", http.StatusUnauthorized},
	}
	for _, c := range cases {
		r := httptest.NewRequest(http.MethodGet, "http://"+c.host+c.path, nil)
		r.Host = c.host
		if c.origin != "" {
			r.Header.Set("Origin", c.origin)
		}
		if c.token != "" {
			r.Header.Set("Authorization", "Bearer "+c.token)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != c.want {
			t.Errorf("GET %s Host=%s Origin=%q token=%q: status %d, want %d (%s)", c.path, c.host, c.origin, c.token, w.Code, c.want, w.Body.String())
		}
	}
}
