package config

import (
	"strings"
	"testing"
)

// TestTrustedProxies: addresses and prefixes parse (an address as its own
// /32 or /128); a bad entry or header is an error naming the key.
func TestTrustedProxies(t *testing.T) {
	const up = "[upstreams.a]\ncommand = \"a\"\n"
	c := mustParse(t, "[server]\ntrusted_proxies = [\"10.0.0.0/8\", \"127.0.0.1\", \"fd00::/8\", \"::ffff:192.0.2.1\"]\nclient_ip_header = \"forwarded\"\n"+up, nil)
	var got []string
	for _, p := range c.Server.TrustedPrefixes() {
		got = append(got, p.String())
	}
	if strings.Join(got, " ") != "10.0.0.0/8 127.0.0.1/32 fd00::/8 192.0.2.1/32" || c.Server.ClientIPHeader != HeaderForwarded {
		t.Errorf("prefixes %v, header %q", got, c.Server.ClientIPHeader)
	}
	if sum := c.Summary(); !strings.Contains(sum, "trusted_proxies=[10.0.0.0/8 127.0.0.1 fd00::/8 ::ffff:192.0.2.1] client_ip_header=Forwarded") {
		t.Errorf("check summary lacks the trusted proxies:\n%s", sum)
	}
	if c := mustParse(t, up, nil); c.Server.ClientIPHeader != HeaderXForwardedFor || len(c.Server.TrustedPrefixes()) != 0 {
		t.Errorf("defaults: %+v", c.Server.ClientAddress)
	}
	for src, want := range map[string]string{
		"[server]\ntrusted_proxies = [\"lb.internal\"]\n": `server.trusted_proxies: entry 1 "lb.internal" is not an IP address or a CIDR prefix`,
		"[server]\nclient_ip_header = \"X-Real-IP\"\n":    `server.client_ip_header: "X-Real-IP": want "X-Forwarded-For" or "Forwarded"`,
	} {
		if err := mustFail(t, src+up, nil); !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", src, err, want)
		}
	}
}
