package proxy

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
	"github.com/mcp-toolsearch/mcp-toolsearch/connlimit"
)

// TestTrustedProxiesForwardedOwner: over a real HTTP server with the
// front's connection context, a request from a peer in [server]
// trusted_proxies is counted under the address its X-Forwarded-For names
// (so anonymous callers behind a balancer get an allowance each), and a
// request from any other peer under the peer's own address whatever
// header it sends (a client without a token cannot choose its address).
func TestTrustedProxiesForwardedOwner(t *testing.T) {
	owner := func(trusted []string, xff string) string {
		t.Helper()
		cfg := &config.Config{}
		cfg.Server.TrustedProxies = trusted
		cfg.Server.ClientIPHeader = config.HeaderXForwardedFor
		p := &Proxy{sessions: map[*mcp.ServerSession]*session{}}
		p.cfgP.Store(cfg)
		h := p.clientAddrs(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s := &session{p: p, ss: &mcp.ServerSession{}} // a stateless request's session
			io.WriteString(w, s.SandboxOwner(r.Context()))
		}))
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{Handler: h, ConnContext: connlimit.WithConn}
		go srv.Serve(connlimit.New(ln, connlimit.Limits{}))
		defer srv.Close()
		req, _ := http.NewRequestWithContext(context.Background(), "GET", "http://"+ln.Addr().String()+"/mcp", nil)
		if xff != "" {
			req.Header.Set("X-Forwarded-For", xff)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	lb := []string{"127.0.0.1"}
	if got := owner(lb, "203.0.113.7"); got != "addr:203.0.113.7" {
		t.Errorf("behind a trusted balancer: owner %q, want addr:203.0.113.7", got)
	}
	if a, b := owner(lb, "203.0.113.7"), owner(lb, "203.0.113.8"); a == b {
		t.Errorf("two clients behind a trusted balancer share the owner %q", a)
	}
	if got := owner(lb, "1.1.1.1, 203.0.113.7"); got != "addr:203.0.113.7" {
		t.Errorf("a client-written hop was believed: owner %q", got)
	}
	if got := owner(lb, "2001:db8:1:2:3:4:5:6"); got != "addr:2001:db8:1:2::/64" {
		t.Errorf("IPv6 client: owner %q", got)
	}
	for _, trusted := range [][]string{nil, {"10.0.0.0/8"}} {
		if got := owner(trusted, "203.0.113.7"); got != "addr:127.0.0.1" {
			t.Errorf("trusted_proxies %v: a peer not in the list chose its address: owner %q, want addr:127.0.0.1", trusted, got)
		}
	}
}
