package upstream

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
)

func TestRedirectDenied(t *testing.T) {
	for _, c := range []struct {
		ip         string
		loopbackOK bool
		denied     bool
		privateOK  bool
	}{
		{"10.0.0.1", false, true, false},
		{"172.16.5.4", false, true, false},
		{"192.168.1.1", false, true, false},
		{"100.64.0.1", false, true, false},
		{"fd12::1", false, true, false},
		{"10.0.0.1", false, false, true},
		{"192.168.1.1", true, false, true},
		{"169.254.169.254", true, true, true},
		{"172.32.0.1", false, false, false},
		{"169.254.169.254", true, true, false},
		{"::ffff:169.254.169.254", true, true, false},
		{"169.254.0.1", true, true, false},
		{"fe80::1", true, true, false},
		{"fd00:ec2::254", true, true, false},
		{"100.100.100.200", true, true, false},
		{"168.63.129.16", true, true, false},
		{"0.0.0.0", true, true, false},
		{"0.1.2.3", true, true, false},
		{"::", true, true, false},
		{"127.0.0.1", false, true, false},
		{"::1", false, true, false},
		{"127.0.0.1", true, false, false},
		{"93.184.216.34", false, false, false},
		{"2001:db8::1", false, false, false},
	} {
		why := redirectDenied(net.ParseIP(c.ip), c.loopbackOK, c.privateOK)
		if (why != "") != c.denied {
			t.Errorf("redirectDenied(%s, loopbackOK=%v, privateOK=%v) = %q, want denied=%v", c.ip, c.loopbackOK, c.privateOK, why, c.denied)
		}
	}
}

// redirector answers every request with 307 to target+path and records the
// Authorization header it saw.
func redirector(t *testing.T, target string) (*httptest.Server, func() []string) {
	var mu sync.Mutex
	var auth []string
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		http.Redirect(w, r, target+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(s.Close)
	return s, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), auth...) }
}

// mcpTarget is a real go-sdk MCP server over Streamable HTTP on 127.0.0.1
// that records the Authorization headers it saw.
func mcpTarget(t *testing.T) (port string, seen func() []string) {
	var mu sync.Mutex
	var auth []string
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return newTestServer("plain", false) }, &mcp.StreamableHTTPOptions{DisableLocalhostProtection: true})
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	_, port, _ = net.SplitHostPort(s.Listener.Addr().String())
	return port, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), auth...) }
}

func connectVia(t *testing.T, u *config.Upstream) (*mcp.ClientSession, error) {
	t.Helper()
	tr, base, err := httpTransport(u, slog.Default(), MaxMessageBytes)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(base.CloseIdleConnections)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "redirect-test", Version: "1"}, nil).Connect(ctx, tr, nil)
	if err == nil {
		t.Cleanup(func() { _ = cs.Close() })
	}
	return cs, err
}

// TestRedirectsToInternalAddressesRefused: an HTTP upstream that redirects
// to a cloud metadata address or to 0.0.0.0 (which reaches the local
// host) is refused by default, with an error naming the address, why, and
// the opt-out; no connection is attempted.
func TestRedirectsToInternalAddressesRefused(t *testing.T) {
	port, _ := mcpTarget(t)
	for _, c := range []struct{ target, want string }{
		{"http://169.254.169.254", "169.254.169.254:80 is a link-local address"},
		{"http://[fd00:ec2::254]", "is a cloud metadata address"},
		{"http://0.0.0.0:" + port, "is an unspecified address"},
	} {
		r, _ := redirector(t, c.target)
		_, err := connectVia(t, &config.Upstream{Name: "r", URL: r.URL + "/mcp"})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "allow_internal_redirects") {
			t.Errorf("redirect to %s: err = %v, want it refused with %q", c.target, err, c.want)
		}
	}
}

// TestRedirectOptOut: with allow_internal_redirects = true the same
// redirect to 0.0.0.0 reaches the server behind it.
func TestRedirectOptOut(t *testing.T) {
	port, _ := mcpTarget(t)
	r, _ := redirector(t, "http://0.0.0.0:"+port)
	cs, err := connectVia(t, &config.Upstream{Name: "r", URL: r.URL + "/mcp", AllowInternalRedirects: true})
	if err != nil {
		t.Fatalf("with allow_internal_redirects: %v", err)
	}
	if res, err := cs.ListTools(context.Background(), nil); err != nil || len(res.Tools) == 0 {
		t.Fatalf("tools/list through the redirect: %v", err)
	}
}

// TestRedirectKeepsHeadersHome: the configured Authorization header goes to
// the configured origin only, not to the redirect target (a different
// port of the same loopback host, which is allowed).
func TestRedirectKeepsHeadersHome(t *testing.T) {
	port, targetSaw := mcpTarget(t)
	r, redirectorSaw := redirector(t, "http://127.0.0.1:"+port)
	cs, err := connectVia(t, &config.Upstream{Name: "r", URL: r.URL + "/mcp", Headers: map[string]string{"Authorization": "Bearer home-only"}})
	if err != nil {
		t.Fatalf("redirect to another loopback port: %v", err)
	}
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if got := redirectorSaw(); len(got) == 0 || got[0] != "Bearer home-only" {
		t.Errorf("the configured origin saw Authorization %q, want the configured header", got)
	}
	for _, a := range targetSaw() {
		if a != "" {
			t.Errorf("the redirect target saw Authorization %q", a)
		}
	}
}

// TestRedirectToPrivateAddress: a redirect of an upstream whose url is
// public may not reach a private address (the network the proxy runs in);
// one whose url is itself private may (its own network), and
// allow_internal_redirects lifts the check.
func TestRedirectToPrivateAddress(t *testing.T) {
	dial := func(target string, allow bool) error {
		u, _ := url.Parse(target)
		base := http.DefaultTransport.(*http.Transport).Clone()
		guardRedirects(base, u, allow)
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		c, err := base.DialContext(ctx, "tcp", "10.255.255.1:80")
		if c != nil {
			c.Close()
		}
		return err
	}
	if err := dial("https://mcp.example.com/mcp", false); !errors.Is(err, errRedirectRefused) || !strings.Contains(err.Error(), "a private address") || !strings.Contains(err.Error(), "allow_internal_redirects") {
		t.Errorf("public url: err = %v, want the redirect refused naming a private address and the setting", err)
	}
	for _, c := range []struct {
		target string
		allow  bool
	}{{"http://10.1.2.3/mcp", false}, {"http://127.0.0.1:9/mcp", false}, {"https://mcp.example.com/mcp", true}} {
		if err := dial(c.target, c.allow); errors.Is(err, errRedirectRefused) {
			t.Errorf("%s (allow_internal_redirects=%v): refused: %v", c.target, c.allow, err)
		}
	}
}
