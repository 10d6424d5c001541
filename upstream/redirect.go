package upstream

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// Redirects of HTTP upstreams.
//
// Trust: the operator's url is trusted; where an upstream server redirects
// to is not. An upstream (or an open redirect on its host) could send the
// proxy to a cloud metadata service or another internal address and have
// the answer read back as tool text. So:
//
//   - a connection to any host:port other than the configured one (that is,
//     one a redirect asked for) is checked after DNS resolution, on the
//     address actually dialled: link-local addresses (169.254.0.0/16 with
//     the metadata services of AWS, GCP, Azure, OCI…, fe80::/10), the other
//     cloud metadata addresses (fd00:ec2::254, 100.100.100.200,
//     168.63.129.16), unspecified addresses (0.0.0.0/8, ::), — when the
//     configured url is not itself on loopback — loopback addresses, and —
//     when the configured url is not itself on a private address —
//     private addresses (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, the
//     shared 100.64.0.0/10, fc00::/7) are refused, unless the upstream sets
//     allow_internal_redirects = true. "The configured url is on a private
//     address" is judged on the address its own connections reach (a name
//     is resolved by the dial), so an upstream inside a private network may
//     redirect within it, and a public one cannot send the proxy into the
//     network it runs in;
//   - at most maxRedirects redirects are followed;
//   - the configured headers (an Authorization header, an API key) are sent
//     only to the configured scheme://host:port, never to a redirect target
//     elsewhere (headerRoundTripper).

// maxRedirects is the most redirects one request follows (as net/http's
// default).
const maxRedirects = 10

// metadataAddrs are cloud metadata addresses outside the link-local ranges.
var metadataAddrs = map[string]bool{
	"fd00:ec2::254":   true, // AWS IMDS over IPv6
	"100.100.100.200": true, // Alibaba Cloud
	"168.63.129.16":   true, // Azure WireServer
}

// sharedAddrs is the shared address space of carrier-grade NAT (RFC
// 6598), private in practice but not in net.IP.IsPrivate.
var sharedAddrs = &net.IPNet{IP: net.IPv4(100, 64, 0, 0), Mask: net.CIDRMask(10, 32)}

// isPrivate reports an RFC 1918 / RFC 4193 address or one of the shared
// address space.
func isPrivate(ip net.IP) bool { return ip.IsPrivate() || sharedAddrs.Contains(ip) }

// redirectDenied says why a redirect target ip may not be dialled, or ""
// when it may. loopbackOK is true when the configured url is on loopback,
// privateOK when it is on a private address.
func redirectDenied(ip net.IP, loopbackOK, privateOK bool) string {
	switch {
	case ip == nil:
		return "not an IP address"
	case metadataAddrs[ip.String()]:
		return "a cloud metadata address"
	case ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast():
		return "a link-local address (cloud metadata services live at 169.254.169.254)"
	case ip.IsUnspecified() || ip.To4() != nil && ip.To4()[0] == 0:
		return "an unspecified address"
	case ip.IsLoopback() && !loopbackOK:
		return "a loopback address (the configured url is not on loopback)"
	case isPrivate(ip) && !privateOK:
		return "a private address (the configured url is not on a private network)"
	}
	return ""
}

// errRedirectRefused marks a dial refused by the redirect check.
var errRedirectRefused = errors.New("redirect target refused")

// guardRedirects installs the redirect rules on base (the upstream's own
// http.Transport) and returns the CheckRedirect for its http.Client. target
// is the configured url; allowInternal is the upstream's
// allow_internal_redirects.
func guardRedirects(base *http.Transport, target *url.URL, allowInternal bool) func(*http.Request, []*http.Request) error {
	if allowInternal {
		return limitRedirects
	}
	home := hostPort(target)
	loopbackOK := isLoopbackName(target.Hostname())
	// homePrivate: a connection to the configured url reached a private
	// (or loopback) address; an IP literal says so before any dial.
	var homePrivate atomic.Bool
	if ip := net.ParseIP(target.Hostname()); ip != nil && (isPrivate(ip) || ip.IsLoopback()) {
		homePrivate.Store(true)
	}
	d := &net.Dialer{Timeout: defaultDialer.Timeout, KeepAlive: defaultDialer.KeepAlive}
	guarded := &net.Dialer{Timeout: defaultDialer.Timeout, KeepAlive: defaultDialer.KeepAlive,
		Control: func(network, address string, _ syscall.RawConn) error {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				return err
			}
			if why := redirectDenied(net.ParseIP(host), loopbackOK, homePrivate.Load()); why != "" {
				return refuseRedirect(address, why)
			}
			return nil
		}}
	base.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if strings.EqualFold(addr, home) {
			c, err := d.DialContext(ctx, network, addr) // the operator's own url
			if err == nil {
				if ta, ok := c.RemoteAddr().(*net.TCPAddr); ok && (isPrivate(ta.IP) || ta.IP.IsLoopback()) {
					homePrivate.Store(true)
				}
			}
			return c, err
		}
		// An IP literal is judged before the dial too: on Windows (and aix,
		// openbsd) Go's net dials an unspecified address as loopback, so
		// Control would see 127.0.0.1 for a redirect to 0.0.0.0.
		if host, _, err := net.SplitHostPort(addr); err == nil {
			if ip := net.ParseIP(host); ip != nil {
				if why := redirectDenied(ip, loopbackOK, homePrivate.Load()); why != "" {
					return nil, refuseRedirect(addr, why)
				}
			}
		}
		return guarded.DialContext(ctx, network, addr)
	}
	return limitRedirects
}

// refuseRedirect is the error for a redirect target address refused
// because it is why (redirectDenied).
func refuseRedirect(address, why string) error {
	return fmt.Errorf("%w: %s is %s (set allow_internal_redirects = true on the upstream to allow it)", errRedirectRefused, address, why)
}

// defaultDialer mirrors net/http's DefaultTransport dialer settings.
var defaultDialer = net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}

func limitRedirects(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	return nil
}

// hostPort is u's host:port with the scheme's default port filled in, as
// http.Transport dials it.
func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return net.JoinHostPort(u.Hostname(), port)
}

func isLoopbackName(h string) bool {
	if strings.EqualFold(h, "localhost") || strings.HasSuffix(strings.ToLower(h), ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// sameOrigin reports whether u has the configured url's scheme and
// host:port (the only place the configured headers go).
func sameOrigin(u, target *url.URL) bool {
	return u != nil && target != nil && strings.EqualFold(u.Scheme, target.Scheme) && strings.EqualFold(hostPort(u), hostPort(target))
}
