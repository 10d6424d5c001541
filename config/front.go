package config

import "time"

// FrontLimits are the [server] keys that keep the HTTP front from being
// exhausted. They are embedded in Server, so they are
// written directly in [server]. Trust: they guard against clients without
// a token (docs/security.md).
type FrontLimits struct {
	// ReadHeaderTimeout bounds reading a request's headers; default 10s.
	ReadHeaderTimeout Duration `toml:"read_header_timeout"`
	// ReadTimeout bounds reading a request's body, counted from the end of
	// its headers, for requests that passed the Host/Origin/token checks
	// (others are answered and closed without reading it); default 30s.
	ReadTimeout Duration `toml:"read_timeout"`
	// IdleTimeout closes a keep-alive connection idle this long; default 120s.
	IdleTimeout Duration `toml:"idle_timeout"`
	// MaxHeaderBytes bounds a request's header size in bytes; default
	// 65536, clamped to 4096..1048576.
	MaxHeaderBytes int `toml:"max_header_bytes"`
	// MaxConnections caps the connections open at once; default 0 = half
	// the process's open-file limit, at most 10000 (the proxy decides at
	// start); another value is clamped to 16..1000000.
	MaxConnections int `toml:"max_connections"`
	// MaxConnectionsPerAddress caps the connections of one remote address
	// (an IPv4 address, an IPv6 /64); default 256, clamped to 1..1000000.
	// Behind a reverse proxy every client has its address: raise it.
	MaxConnectionsPerAddress int `toml:"max_connections_per_address"`
}

// Defaults and clamps of FrontLimits.
const (
	DefaultReadHeaderTimeout        = 10 * time.Second
	DefaultReadTimeout              = 30 * time.Second
	DefaultIdleTimeout              = 120 * time.Second
	DefaultMaxHeaderBytes           = 64 << 10
	MinMaxHeaderBytes               = 4 << 10
	MaxMaxHeaderBytes               = 1 << 20
	MinMaxConnections               = 16
	MaxMaxConnections               = 1_000_000
	DefaultMaxConnectionsPerAddress = 256
)

// frontDefaults fills and clamps FrontLimits.
func (p *parser) frontDefaults() {
	f := &p.cfg.Server.FrontLimits
	p.defaultDuration(&f.ReadHeaderTimeout, DefaultReadHeaderTimeout, "server", "read_header_timeout")
	p.defaultDuration(&f.ReadTimeout, DefaultReadTimeout, "server", "read_timeout")
	p.defaultDuration(&f.IdleTimeout, DefaultIdleTimeout, "server", "idle_timeout")
	p.clampInt(&f.MaxHeaderBytes, DefaultMaxHeaderBytes, MinMaxHeaderBytes, MaxMaxHeaderBytes, "server", "max_header_bytes")
	if p.defined("server", "max_connections") && f.MaxConnections != 0 { // 0: auto
		p.clampInt(&f.MaxConnections, 0, MinMaxConnections, MaxMaxConnections, "server", "max_connections")
	}
	p.clampInt(&f.MaxConnectionsPerAddress, DefaultMaxConnectionsPerAddress, 1, MaxMaxConnections, "server", "max_connections_per_address")
}
