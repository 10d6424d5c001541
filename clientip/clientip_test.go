package clientip

import (
	"net/http"
	"net/netip"
	"testing"
)

// TestAddr: the header is believed only from a trusted peer; the walk from
// the right stops at the first untrusted hop, so what a client wrote itself
// (further left) is never taken; garbage falls back to a proxy's address.
func TestAddr(t *testing.T) {
	lb := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("fd00::/8")}
	xff := New(lb, "X-Forwarded-For")
	fwd := New(lb, "forwarded")
	for _, c := range []struct {
		name   string
		r      *Resolver
		peer   string
		header string
		values []string
		want   string // "" = not resolved (keep the peer)
	}{
		{"untrusted peer's header ignored", xff, "198.51.100.9:4000", "X-Forwarded-For", []string{"203.0.113.7"}, ""},
		{"trusted peer", xff, "10.1.2.3:4000", "X-Forwarded-For", []string{"203.0.113.7"}, "203.0.113.7"},
		{"client-written hop on the left ignored", xff, "10.1.2.3:4000", "X-Forwarded-For", []string{"1.1.1.1, 203.0.113.7"}, "203.0.113.7"},
		{"two trusted hops", xff, "127.0.0.1:4000", "X-Forwarded-For", []string{"203.0.113.7, 10.9.9.9"}, "203.0.113.7"},
		{"several header lines", xff, "127.0.0.1:4000", "X-Forwarded-For", []string{"1.1.1.1", "203.0.113.7"}, "203.0.113.7"},
		{"no header", xff, "10.1.2.3:4000", "", nil, ""},
		{"garbage right of the client", xff, "10.1.2.3:4000", "X-Forwarded-For", []string{"203.0.113.7, bogus"}, ""},
		{"all trusted: the leftmost", xff, "10.1.2.3:4000", "X-Forwarded-For", []string{"10.0.0.5, 10.0.0.6"}, "10.0.0.5"},
		{"IPv6 peer and client", xff, "[fd00::1]:4000", "X-Forwarded-For", []string{"2001:db8::5"}, "2001:db8::5"},
		{"Forwarded not read in X-Forwarded-For mode", xff, "10.1.2.3:4000", "Forwarded", []string{"for=203.0.113.7"}, ""},
		{"X-Forwarded-For not read in Forwarded mode", fwd, "10.1.2.3:4000", "X-Forwarded-For", []string{"203.0.113.7"}, ""},
		{"Forwarded", fwd, "10.1.2.3:4000", "Forwarded", []string{`for=1.1.1.1, for="[2001:db8:cafe::17]:4711";proto=https`}, "2001:db8:cafe::17"},
		{"Forwarded unknown", fwd, "10.1.2.3:4000", "Forwarded", []string{"for=unknown"}, ""},
		{"nil resolver", New(nil, ""), "10.1.2.3:4000", "X-Forwarded-For", []string{"203.0.113.7"}, ""},
	} {
		h := http.Header{}
		for _, v := range c.values {
			h.Add(c.header, v)
		}
		a, ok := c.r.Addr(c.peer, h)
		got := ""
		if ok {
			got = a.String()
		}
		if got != c.want {
			t.Errorf("%s: Addr = %q, want %q", c.name, got, c.want)
		}
	}
}
