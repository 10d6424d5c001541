package proxy

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/fakeupstream"
	"github.com/mcp-toolsearch/mcp-toolsearch/internal/testredis"
)

// TestSessionSharesAcrossReplicas: two proxies on one state store hold one
// share per subject between them: subject a's 3 sessions split over both,
// its 4th is refused on either; ending one on the first lets one in on
// the second; while the store is down a new session is refused with the
// reason (its share cannot be counted), and admitted again once it is
// back.
func TestSessionSharesAcrossReplicas(t *testing.T) {
	srv := testredis.Start(t, testredis.Options{})
	up := httptest.NewServer(&fakeupstream.HTTP{Scenario: fakeupstream.Named("plain")})
	t.Cleanup(up.Close)
	cfg := fmt.Sprintf(`
[server]
transport = "http"
max_sessions = 10
max_sessions_per_subject = 3
state_store = %s
state_store_key = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
[tool_search]
enabled = false
[upstreams.up]
url = %s
[endpoints.a]
path = "/a/mcp"
token = "token-a"
`, tomlQuote(srv.URL()), tomlQuote(up.URL))
	pa := startProxyText(t, cfg)
	a := strings.TrimSuffix(frontURL(t, pa), "/mcp") + "/a/mcp"
	b := strings.TrimSuffix(frontURL(t, startProxyText(t, cfg)), "/mcp") + "/a/mcp"
	var onA []string
	for i, url := range []string{a, b, a} {
		code, id, body := initialize(t, url, "token-a")
		if code != http.StatusOK || id == "" {
			t.Fatalf("session %d of subject a: %d %s", i+1, code, body)
		}
		if url == a {
			onA = append(onA, id)
		}
	}
	for _, url := range []string{a, b} {
		if code, _, body := initialize(t, url, "token-a"); code != http.StatusServiceUnavailable || !strings.Contains(body, "server.max_sessions_per_subject (3)") {
			t.Fatalf("the 4th session of subject a: %d %s", code, body)
		}
	}
	deleteSession(t, a, "token-a", onA[0])
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, _, body := initialize(t, b, "token-a")
		if code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a session ended on the first replica, the second still refuses: %d %s", code, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	deleteSession(t, a, "token-a", onA[1])
	srv.Stop()
	if code, _, body := initialize(t, a, "token-a"); code != http.StatusServiceUnavailable || !strings.Contains(body, "sessions cannot be counted now") || !strings.Contains(body, "state store unavailable") {
		t.Fatalf("store down: %d %s", code, body)
	}
	w := httptest.NewRecorder()
	pa.MetricsHandler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if !strings.Contains(w.Body.String(), `mcp_toolsearch_state_store_errors_total{op="slot script"} 1`) {
		t.Fatalf("the failed operation is not counted:\n%s", grepLines(w.Body.String(), "state_store"))
	}
	srv.Start() // empty: the slots held so far are gone, as after a store restart without persistence
	if code, id, body := initialize(t, a, "token-a"); code != http.StatusOK || id == "" {
		t.Fatalf("store back: %d %s", code, body)
	}
}
