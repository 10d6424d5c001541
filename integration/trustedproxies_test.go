//go:build unix

package integration

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestTrustedProxyForwardedOwner: behind a real HAProxy (`option
// forwardfor`) listed in [server] trusted_proxies, anonymous callers from
// two addresses (127.0.0.2, 127.0.0.3 — Linux routes all of 127/8 to lo)
// get a code-run allowance each; a caller that writes its own
// X-Forwarded-For (a different invented address per client) still counts
// under its real address. 4 looping runs from 127.0.0.2 (each with another
// forged header) and 2 from 127.0.0.3, 3 per owner, 6 slots: 1 busy.
// Without trusted_proxies every caller is HAProxy's 127.0.0.1: 3 busy; if
// the forged headers were believed: 0 busy.
func TestTrustedProxyForwardedOwner(t *testing.T) {
	waitsMostly(t)
	haproxy, err := exec.LookPath("haproxy")
	if err != nil {
		missingDep(t, "haproxy not found in PATH (scripts/install-test-deps.sh installs Debian's haproxy with apt-get)")
	}
	url, _ := startCodeProxyWith(t, "code_timeout_ms = 4000\ncode_max_runs = 6\ncode_max_runs_per_session = 3", "\n[server]\ntrusted_proxies = [\"127.0.0.1\"]\n")
	backend := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/mcp")
	front := freePort(t)
	hcfg := filepath.Join(t.TempDir(), "haproxy.cfg")
	if err := os.WriteFile(hcfg, []byte(fmt.Sprintf(`global
    maxconn 256
defaults
    mode http
    timeout connect 2s
    timeout client 60s
    timeout server 60s
    option forwardfor
frontend f
    bind 127.0.0.1:%d
    default_backend b
backend b
    server r1 %s
`, front, backend)), 0o644); err != nil {
		t.Fatal(err)
	}
	lbURL := fmt.Sprintf("http://127.0.0.1:%d/mcp", front)
	startHTTPServer(t, []string{haproxy, "-db", "-f", hcfg}, nil, lbURL)

	client := func(from, forged string) *gosdk.ClientSession {
		t.Helper()
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
		base := &http.Transport{DialContext: d.DialContext}
		t.Cleanup(base.CloseIdleConnections)
		hdr := map[string]string{}
		if forged != "" {
			hdr["X-Forwarded-For"] = forged
		}
		ctx, cancel := context.WithTimeout(context.Background(), goClientTimeout)
		defer cancel()
		c := gosdk.NewClient(&gosdk.Implementation{Name: "same-client", Version: "1"}, nil)
		cs, err := c.Connect(ctx, &gosdk.StreamableClientTransport{Endpoint: lbURL, HTTPClient: &http.Client{Transport: forgeRT{base, hdr}}}, nil)
		if err != nil {
			t.Fatalf("connect from %s: %v", from, err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	var sessions []*gosdk.ClientSession
	for i := 0; i < 4; i++ {
		sessions = append(sessions, client("127.0.0.2", fmt.Sprintf("198.51.100.%d", i+1)))
	}
	sessions = append(sessions, client("127.0.0.3", ""), client("127.0.0.3", ""))
	var mu sync.Mutex
	busyFrom := map[int]bool{}
	var wg sync.WaitGroup
	for i, cs := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if loopRun(t, cs) == "busy" { // fairness_test.go
				mu.Lock()
				busyFrom[i] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	t.Logf("busy: %v (clients 0-3 from 127.0.0.2 with forged X-Forwarded-For, 4-5 from 127.0.0.3)", busyFrom)
	if len(busyFrom) != 1 || busyFrom[4] || busyFrom[5] {
		t.Errorf("%d runs answered sandbox busy (%v), want 1, from 127.0.0.2: 3 runs per address behind the trusted balancer, forged headers not believed", len(busyFrom), busyFrom)
	}
}

// forgeRT sends h on every request over base.
type forgeRT struct {
	base http.RoundTripper
	h    map[string]string
}

func (f forgeRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range f.h {
		r.Header.Set(k, v)
	}
	return f.base.RoundTrip(r)
}
