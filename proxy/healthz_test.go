package proxy

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/fakeupstream"
)

// TestHealthzNamesOnlyWithToken: with a bearer token on /mcp, /healthz
// without it says the proxy is up and how many upstreams are ready, not
// their names; with the token it names them. Without any token configured
// it names them (anyone may call /mcp then).
func TestHealthzNamesOnlyWithToken(t *testing.T) {
	up := httptest.NewServer(&fakeupstream.HTTP{Scenario: fakeupstream.Named("plain")})
	t.Cleanup(up.Close)
	get := func(base, token string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, base+"/healthz", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, bearer := range []string{"", "health-secret-token"} {
		conf := fmt.Sprintf("[server]\ntransport = \"http\"\n%s[tool_search]\nenabled = false\n[upstreams.githubprivate]\nurl = %s\n", map[bool]string{true: "bearer_token = \"" + bearer + "\"\n"}[bearer != ""], tomlQuote(up.URL))
		base := strings.TrimSuffix(frontURL(t, startProxyText(t, conf)), "/mcp")
		code, anon := get(base, "")
		if code != http.StatusOK || !strings.Contains(anon, `"status":"ok"`) {
			t.Fatalf("bearer %q: /healthz without a token: %d %s", bearer, code, anon)
		}
		if bearer == "" {
			if !strings.Contains(anon, `"githubprivate":"ready"`) {
				t.Errorf("no token configured: /healthz lost the names: %s", anon)
			}
			continue
		}
		if strings.Contains(anon, "githubprivate") || !strings.Contains(anon, `"upstreams_ready":1`) {
			t.Errorf("/healthz without the token: %s (want counts, no names)", anon)
		}
		if _, withTok := get(base, bearer); !strings.Contains(withTok, `"githubprivate":"ready"`) {
			t.Errorf("/healthz with the token: %s (want the names)", withTok)
		}
		if _, wrong := get(base, "wrong"); strings.Contains(wrong, "githubprivate") {
			t.Errorf("/healthz with a wrong token: %s", wrong)
		}
	}
}
