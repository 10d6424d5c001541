package config

import (
	"net/netip"
	"strings"
)

// ClientAddress are the [server] keys that say which reverse proxies' word
// on a request's client address the HTTP front believes. They are embedded
// in Server, so they are written directly in [server].
//
// The client address is used where no verified identity exists: the owner
// of a sessionless code run of an anonymous caller (proxy/sandboxowner.go).
// Behind a load balancer every connection comes from the balancer, so every
// anonymous caller shared one owner. Trust: the header is
// believed only from a connection whose peer is in TrustedProxies (the
// operator's list); anyone else can write any header, and a client without
// a token must not choose the address it is counted under.
type ClientAddress struct {
	// TrustedProxies are IP addresses or CIDR prefixes ("10.0.0.0/8",
	// "127.0.0.1", "fd00::/8") of the reverse proxies in front of the
	// proxy. Default none: the connection's peer is the client.
	TrustedProxies []string `toml:"trusted_proxies"`
	// ClientIPHeader is the header those proxies set: "X-Forwarded-For"
	// (default; HAProxy `option forwardfor`, nginx
	// `$proxy_add_x_forwarded_for`, most cloud balancers) or "Forwarded"
	// (RFC 7239 `for=`). Only this one is read: a client could send the
	// other, which the balancer passes on untouched.
	ClientIPHeader string `toml:"client_ip_header"`
}

// Values of ClientIPHeader.
const (
	HeaderXForwardedFor = "X-Forwarded-For"
	HeaderForwarded     = "Forwarded"
)

// TrustedPrefixes returns TrustedProxies parsed (a single address as a
// /32 or /128 prefix). Entries that do not parse are left out (Parse
// refuses them).
func (c ClientAddress) TrustedPrefixes() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range c.TrustedProxies {
		if p, ok := parseTrusted(s); ok {
			out = append(out, p)
		}
	}
	return out
}

func parseTrusted(s string) (netip.Prefix, bool) {
	s = strings.TrimSpace(s)
	if p, err := netip.ParsePrefix(s); err == nil {
		return p.Masked(), true
	}
	if a, err := netip.ParseAddr(s); err == nil {
		a = a.Unmap()
		return netip.PrefixFrom(a, a.BitLen()), true
	}
	return netip.Prefix{}, false
}

// clientAddressDefaults checks trusted_proxies and fills client_ip_header.
func (p *parser) clientAddressDefaults() {
	c := &p.cfg.Server.ClientAddress
	for i, s := range c.TrustedProxies {
		if _, ok := parseTrusted(s); !ok {
			p.errf([]string{"server", "trusted_proxies"}, "", "entry %d %q is not an IP address or a CIDR prefix (\"10.0.0.0/8\", \"127.0.0.1\")", i+1, s)
		}
	}
	switch strings.ToLower(strings.TrimSpace(c.ClientIPHeader)) {
	case "", "x-forwarded-for":
		c.ClientIPHeader = HeaderXForwardedFor
	case "forwarded":
		c.ClientIPHeader = HeaderForwarded
	default:
		p.errf([]string{"server", "client_ip_header"}, "", "%q: want \"X-Forwarded-For\" or \"Forwarded\"", c.ClientIPHeader)
	}
	if c.ClientIPHeader != HeaderXForwardedFor && len(c.TrustedProxies) == 0 {
		p.warnf([]string{"server", "client_ip_header"}, "has no effect without server.trusted_proxies")
	}
}
