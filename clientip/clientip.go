// Package clientip finds the client address of an HTTP request that came
// through reverse proxies the operator trusts: from X-Forwarded-For or the
// RFC 7239 Forwarded header, believed only when the connection's peer is
// one of those proxies ([server] trusted_proxies, client_ip_header).
//
// Trust (docs/security.md): the operator's list is trusted; clients are
// not, including clients without a token: anyone can send any header, so a
// header is read only from a trusted peer, and of its addresses only those
// added by trusted hops count. The address is walked from the right (the
// hop nearest the proxy) and the first address not in the trusted list is
// the client: what a client wrote itself sits further left and is never
// reached while an untrusted hop stands between. A value that does not
// parse ("unknown", an obfuscated Forwarded node) stops the walk at the
// last good hop: the result falls back to a proxy's address (callers
// share it, as before), never to a value the client chose.
package clientip

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Resolver finds client addresses. A nil *Resolver trusts no one.
type Resolver struct {
	trusted   []netip.Prefix
	forwarded bool // read "Forwarded" (RFC 7239) instead of X-Forwarded-For
}

// New returns a Resolver believing header ("X-Forwarded-For" or
// "Forwarded") from peers in trusted; nil when trusted is empty.
func New(trusted []netip.Prefix, header string) *Resolver {
	if len(trusted) == 0 {
		return nil
	}
	return &Resolver{trusted: trusted, forwarded: strings.EqualFold(header, "Forwarded")}
}

func (r *Resolver) isTrusted(a netip.Addr) bool {
	for _, p := range r.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// Addr returns the client address of a request whose connection peer is
// remoteAddr (http.Request.RemoteAddr, "ip:port") and whose headers are h;
// ok is false when the peer is not a trusted proxy or the header names no
// other usable address (the caller keeps the peer's address).
func (r *Resolver) Addr(remoteAddr string, h http.Header) (netip.Addr, bool) {
	if r == nil {
		return netip.Addr{}, false
	}
	peer, ok := parseHost(remoteAddr)
	if !ok || !r.isTrusted(peer) {
		return netip.Addr{}, false
	}
	var hops []string
	if r.forwarded {
		hops = forwardedFor(h.Values("Forwarded"))
	} else {
		for _, v := range h.Values("X-Forwarded-For") {
			for _, a := range strings.Split(v, ",") {
				hops = append(hops, strings.TrimSpace(a))
			}
		}
	}
	cur := peer
	for i := len(hops) - 1; i >= 0; i-- {
		a, ok := parseHost(hops[i])
		if !ok {
			break // not an address: stop at the last good hop
		}
		cur = a
		if !r.isTrusted(a) {
			break
		}
	}
	if cur == peer {
		return netip.Addr{}, false
	}
	return cur, true
}

// forwardedFor returns the for= values of RFC 7239 Forwarded header
// values, in order.
func forwardedFor(values []string) []string {
	var out []string
	for _, v := range values {
		for _, elem := range strings.Split(v, ",") {
			for _, pair := range strings.Split(elem, ";") {
				k, val, ok := strings.Cut(strings.TrimSpace(pair), "=")
				if ok && strings.EqualFold(strings.TrimSpace(k), "for") {
					out = append(out, strings.Trim(strings.TrimSpace(val), `"`))
				}
			}
		}
	}
	return out
}

// parseHost parses "1.2.3.4", "1.2.3.4:5", "::1", "[::1]", "[::1]:5".
func parseHost(s string) (netip.Addr, bool) {
	s = strings.TrimSpace(s)
	if a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")); err == nil {
		return a.Unmap().WithZone(""), true
	}
	if h, _, err := net.SplitHostPort(s); err == nil {
		if a, err := netip.ParseAddr(h); err == nil {
			return a.Unmap().WithZone(""), true
		}
	}
	return netip.Addr{}, false
}

type ctxKey struct{}

// WithAddr returns ctx carrying a request's client address (Addr's result).
func WithAddr(ctx context.Context, a netip.Addr) context.Context {
	return context.WithValue(ctx, ctxKey{}, a)
}

// AddrFrom returns the client address WithAddr put in ctx, if any.
func AddrFrom(ctx context.Context) (netip.Addr, bool) {
	a, ok := ctx.Value(ctxKey{}).(netip.Addr)
	return a, ok
}
