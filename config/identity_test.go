package config

import (
	"strings"
	"testing"
)

// TestIdentityKeysRejected: each wrong identity key is named with its line.
func TestIdentityKeysRejected(t *testing.T) {
	cases := []struct{ name, text, want string }{
		{"per-user on stdio", `
[upstreams.fs]
command = "fs"
[upstreams.fs.credential]
source = "passthrough"
audience = "x"`, `<config>:5: upstreams.fs.credential.source: "passthrough" needs an HTTP upstream (url)`},
		{"per-user without auth", `
[upstreams.gh]
url = "https://gh.example.com/mcp"
[upstreams.gh.credential]
source = "exchange"
audience = "https://gh.example.com/mcp"
token_url = "https://login.example.com/token"
client_id = "p"`, `needs verified users: set [auth] issuer`},
		{"oauth needs a store", `
[server]
transport = "http"
[auth]
issuer = "https://login.example.com"
public_url = "https://mcp.example.com"
[upstreams.gh]
url = "https://gh.example.com/mcp"
[upstreams.gh.credential]
source = "oauth"
audience = "https://gh.example.com/mcp"
token_url = "https://login.example.com/token"
authorize_url = "http://login.example.com/authorize"
client_id = "p"`, `authorize_url: "http://login.example.com/authorize": OAuth URLs must use https`},
		{"HS256", `
[server]
transport = "http"
[auth]
issuer = "https://login.example.com"
public_url = "https://mcp.example.com"
algorithms = ["HS256"]`, `auth.algorithms[0]: "HS256" is not accepted`},
		{"auth on stdio", `
[auth]
issuer = "https://login.example.com"
public_url = "https://mcp.example.com"`, `OAuth resource-server mode needs server.transport = "http"`},
		{"no public_url", `
[server]
transport = "http"
[auth]
issuer = "https://login.example.com"`, `auth.public_url: required`},
		{"unknown upstream limit", `
[rate_limits.per_upstream.nope]
rate = 1.0`, `rate_limits.per_upstream.nope: "nope" is no upstream`},
		{"zero rate", `
[rate_limits.per_subject]
rate = 0`, `rate_limits.per_subject.rate: must be > 0`},
		{"bad per_tool entry", `
[rate_limits.per_tool."group:"]
rate = 1`, `empty group name`},
		{"traces endpoint", `
[telemetry]
traces_endpoint = "localhost:4318"`, `is not an http(s) URL`},
	}
	for _, c := range cases {
		text := c.text
		if !strings.Contains(text, "[upstreams.") {
			text = minimal + text
		}
		_, err := Parse([]byte(text), "", env(nil))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v\nwant %q", c.name, err, c.want)
		}
	}
}

func TestIdentityDefaultsAndSecrets(t *testing.T) {
	cfg, err := Parse([]byte(minimal+`
[telemetry]
traces_endpoint = "http://127.0.0.1:4318/v1/traces"
traces_headers = { "X-Api-Key" = "${OTLP}" }
[rate_limits.per_subject]
rate = 2.5
`), "", env(map[string]string{"OTLP": "otlp-secret-1"}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Telemetry.TracesSampleRatio != 1 || cfg.RateLimits.PerSubject.Burst != 3 || cfg.Auth.ConnectWait.Duration.String() != "2m0s" {
		t.Fatalf("defaults: %+v %+v", cfg.Telemetry, cfg.RateLimits.PerSubject)
	}
	if got := cfg.Redact("key otlp-secret-1"); got != "key ***" {
		t.Fatalf("redact: %s", got)
	}
}
