package config

import (
	"encoding/base64"
	"net/url"
	"strconv"
	"strings"
)

// StateStore are the [server] keys of the shared state store (embedded in
// Server, so written directly in [server]; docs/scale-out.md). Without
// state_store each process keeps its state itself: tokens in
// auth.token_store, the rest in memory. With it, replicas share per-user
// upstream tokens, OAuth connect states, rate-limit counters and the
// one-time marks of resumed approvals.
//
// Trust: the store is the operator's; its password comes from the
// environment (${VAR} in the URL) and is redacted like every secret.
type StateStore struct {
	// StateStoreURL is "redis://[:PASSWORD@]HOST:PORT/DB" or
	// "rediss://…" (TLS): a Redis (>= 6.2) or Valkey primary.
	StateStoreURL string `toml:"state_store"`
	// StateStoreKey seals what a client's request carries back to any
	// replica (the requestState of a call waiting for approval):
	// base64 of 32 random bytes, the same on every replica, from ${VAR}.
	StateStoreKey string `toml:"state_store_key"`
	// StateStoreCA is a PEM file of the CAs a rediss:// server's
	// certificate must chain to (default: the system's).
	StateStoreCA string `toml:"state_store_ca"`
}

// Shared reports whether a shared state store is configured.
func (s *StateStore) Shared() bool { return s.StateStoreURL != "" }

// StateStoreKeyBytes decodes server.state_store_key (validated by Parse).
func (s *StateStore) StateStoreKeyBytes() []byte {
	k, err := base64.StdEncoding.DecodeString(s.StateStoreKey)
	if err != nil {
		k, _ = base64.RawURLEncoding.DecodeString(s.StateStoreKey)
	}
	return k
}

func (p *parser) expandStateStore(getenv func(string) (string, bool)) {
	s := &p.cfg.Server.StateStore
	p.expand(&s.StateStoreURL, getenv, []string{"server", "state_store"}, "")
	p.expand(&s.StateStoreKey, getenv, []string{"server", "state_store_key"}, "")
	p.expand(&s.StateStoreCA, publicLookup(getenv), []string{"server", "state_store_ca"}, "")
}

// stateStoreSecrets are the key and the URL's password.
func (c *Config) stateStoreSecrets() []string {
	s := c.Server.StateStore
	return append([]string{s.StateStoreKey}, urlSecrets(s.StateStoreURL)...)
}

func (p *parser) validateStateStore() {
	s := &p.cfg.Server.StateStore
	if !s.Shared() {
		if s.StateStoreKey != "" || s.StateStoreCA != "" {
			p.warnf([]string{"server", "state_store"}, "state_store_key and state_store_ca have no effect without server.state_store")
		}
		return
	}
	at := []string{"server", "state_store"}
	if p.cfg.Auth.TokenStore != "" {
		p.warnf([]string{"auth", "token_store"}, "not used with server.state_store: per-user tokens are kept in the state store (still encrypted with auth.token_store_key)")
	}
	u, err := url.Parse(s.StateStoreURL)
	switch {
	case err != nil:
		p.errf(at, "", "not a URL: want \"redis://HOST:PORT/DB\" or \"rediss://HOST:PORT/DB\" (TLS), the password from ${VAR}")
		return
	case u.Scheme != "redis" && u.Scheme != "rediss" && u.Scheme != "valkey" && u.Scheme != "valkeys":
		p.errf(at, "", "scheme %q: want \"redis://HOST:PORT/DB\" or \"rediss://HOST:PORT/DB\" (TLS)", u.Scheme)
		return
	case u.Host == "":
		p.errf(at, "", "no host: want \"redis://HOST:PORT/DB\"")
		return
	}
	if db := strings.TrimPrefix(u.Path, "/"); db != "" {
		if n, err := strconv.Atoi(db); err != nil || n < 0 || strings.Contains(db, "/") {
			p.errf(at, "", "database %q is not a number (the path is /DB, e.g. /0)", db)
		}
	}
	if u.User != nil {
		if pw, ok := u.User.Password(); ok && pw != "" && !p.fromEnvKey(at) {
			p.warnf(at, "the password is written in the file; give it with ${VAR} (\"redis://:${REDIS_PASSWORD}@HOST:PORT/0\")")
		}
	}
	if s.StateStoreCA != "" && u.Scheme != "rediss" && u.Scheme != "valkeys" {
		p.errf([]string{"server", "state_store_ca"}, "", "needs a rediss:// state_store (TLS)")
	}
	if k := s.StateStoreKeyBytes(); len(k) != 32 {
		p.errf([]string{"server", "state_store_key"}, "", "required with server.state_store: 32 random bytes in base64, the same on every replica (e.g. `openssl rand -base64 32`), given with ${VAR}")
	}
}
