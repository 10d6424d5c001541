package config

import (
	"slices"
	"strings"
	"testing"
)

func TestStateStoreKeys(t *testing.T) {
	key := "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
	vars := map[string]string{"PW": "redis-pw-123", "K": key}
	cfg := mustParse(t, `[server]
transport = "http"
state_store = "rediss://:${PW}@redis.internal:6380/2"
state_store_key = "${K}"
state_store_ca = "ca.pem"
`+minimal, vars)
	if !cfg.Server.Shared() || len(cfg.Server.StateStoreKeyBytes()) != 32 || !strings.HasSuffix(cfg.Server.StateStoreCA, "ca.pem") {
		t.Fatalf("state store keys: %+v", cfg.Server.StateStore)
	}
	if !slices.Contains(cfg.Secrets(), "redis-pw-123") || !slices.Contains(cfg.Secrets(), key) {
		t.Fatal("the store's password and key are not secrets")
	}
	if sum := cfg.Summary(); strings.Contains(sum, "redis-pw-123") || !strings.Contains(sum, "state_store=rediss://:***@redis.internal:6380/2") {
		t.Fatalf("summary:\n%s", sum)
	}
	if len(cfg.Warnings) != 0 {
		t.Fatalf("warnings: %q", cfg.Warnings)
	}

	for _, c := range []struct{ server, want string }{
		{`state_store = "http://h:1"`, `server.state_store: scheme "http"`},
		{`state_store = "redis://h:1/x"`, `database "x" is not a number`},
		{`state_store = "redis://h:1/0"`, `server.state_store_key: required with server.state_store`},
		{`state_store = "redis://h:1/0"` + "\nstate_store_key = \"${K}\"\nstate_store_ca = \"ca.pem\"", `server.state_store_ca: needs a rediss://`},
	} {
		_, err := Parse([]byte("[server]\n"+c.server+"\n"+minimal), "config.toml", env(vars))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want %q", c.server, err, c.want)
		}
	}
	// A password written in the file is a warning (and a secret).
	cfg = mustParse(t, "[server]\nstate_store = \"redis://:literal-pw@h:1/0\"\nstate_store_key = \"${K}\"\n"+minimal, vars)
	if len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0], "give it with ${VAR}") || !slices.Contains(cfg.Secrets(), "literal-pw") {
		t.Fatalf("literal password: warnings %q", cfg.Warnings)
	}
}

// With a state store, credential source "oauth" keeps its tokens there:
// auth.token_store is not required (its key still is).
func TestStateStoreHoldsTokens(t *testing.T) {
	src := `[server]
transport = "http"
state_store = "redis://127.0.0.1:6379/0"
state_store_key = "${K}"
[auth]
issuer = "https://as.example.com"
public_url = "https://mcp.example.com"
token_store_key = "${K}"
[upstreams.gh]
url = "https://gh.example.com/mcp"
[upstreams.gh.credential]
source = "oauth"
audience = "https://gh.example.com/mcp"
token_url = "https://as.example.com/token"
authorize_url = "https://as.example.com/authorize"
client_id = "proxy"
`
	mustParse(t, src, map[string]string{"K": "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="})
}
