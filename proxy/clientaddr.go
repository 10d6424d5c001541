package proxy

import (
	"context"
	"net"
	"net/http"

	"github.com/mcp-toolsearch/mcp-toolsearch/clientip"
	"github.com/mcp-toolsearch/mcp-toolsearch/connlimit"
)

// clientAddrs wraps the front's handler: a request whose connection comes
// from one of [server] trusted_proxies carries the client address their
// client_ip_header names (package clientip), read by callerAddr. Without
// trusted proxies h is returned as is. The list is read at start ([server]
// changes need a restart).
//
// Trust: believed only from the operator's proxies; a client without a
// token choosing its own address would escape its address's code-run
// allowance (sandboxowner.go).
func (p *Proxy) clientAddrs(h http.Handler) http.Handler {
	c := p.conf().Server.ClientAddress
	r := clientip.New(c.TrustedPrefixes(), c.ClientIPHeader)
	if r == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if a, ok := r.Addr(req.RemoteAddr, req.Header); ok {
			req = req.WithContext(clientip.WithAddr(req.Context(), a))
		}
		h.ServeHTTP(w, req)
	})
}

// callerAddr is the per-address key (connlimit.AddrKey: an IPv4 address,
// an IPv6 /64) of the client of ctx's request: the forwarded address a
// trusted proxy named (clientAddrs), else the connection's peer.
func callerAddr(ctx context.Context) (string, bool) {
	if a, ok := clientip.AddrFrom(ctx); ok {
		return connlimit.AddrKey(net.IP(a.AsSlice())), true
	}
	return connlimit.AddressOf(ctx)
}
