package proxy

import (
	"context"
	"net"
	"net/http"
	"time"

	"github.com/mcp-toolsearch/mcp-toolsearch/connlimit"
	"github.com/mcp-toolsearch/mcp-toolsearch/internal/front"
	"github.com/mcp-toolsearch/mcp-toolsearch/internal/memtrim"
	"github.com/mcp-toolsearch/mcp-toolsearch/telemetry"
)

// A front that cannot be exhausted. Trust: clients
// without a token are not trusted (docs/security.md). What they can do to
// the HTTP front is bounded here:
//
//   - headers must arrive within server.read_header_timeout and fit in
//     server.max_header_bytes; an idle keep-alive connection is closed
//     after server.idle_timeout;
//   - a request that fails the Host/Origin or token check is answered and
//     its connection closed at once, its body never read (before, net/http
//     read the rest of a rejected body before closing, so a wrong token
//     with a trickled body held a connection forever);
//   - a request that passed has server.read_timeout to send its body;
//   - the listener caps connections in total (server.max_connections) and
//     per remote address (server.max_connections_per_address); at a cap the
//     oldest connection that never passed a token check is closed to make
//     room (package connlimit), so unauthenticated connections can crowd
//     out only each other.

// maxAutoConnections bounds the automatic server.max_connections.
const maxAutoConnections = 10000

// maxConnections is server.max_connections, or half the process's
// open-file limit (at most maxAutoConnections) when it is 0: the other
// half stays for upstreams, sandbox workers and the session log.
func (p *Proxy) maxConnections() int {
	if n := p.conf().Server.MaxConnections; n > 0 {
		return n
	}
	limit := openFileLimit()
	if limit <= 0 {
		return maxAutoConnections
	}
	return min(maxAutoConnections, max(16, limit/2))
}

// limitListener wraps the front's listener with the connection caps and
// reports its counters on /metrics.
func (p *Proxy) limitListener(ln net.Listener) *connlimit.Listener {
	// After a flood of connections the memory it took goes back to the
	// OS (internal/memtrim; docs/performance.md "Sessions under flood").
	l := connlimit.New(ln, connlimit.Limits{Max: p.maxConnections(), PerAddr: p.conf().Server.MaxConnectionsPerAddress, OnDrained: memtrim.Soon})
	p.metrics.SetFrontStats(func() telemetry.FrontStats {
		s := l.Stats()
		return telemetry.FrontStats{Open: s.Open, RefusedTotal: s.RefusedTotal, RefusedPerAddr: s.RefusedPerAddr, Evicted: s.Evicted}
	})
	return l
}

// httpServer is the front's http.Server: h with the configured timeouts
// and header cap; request contexts derive from base and carry their
// connection (for admit).
func (p *Proxy) httpServer(h http.Handler, base context.Context) *http.Server {
	f := p.conf().Server.FrontLimits
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: orDefault(f.ReadHeaderTimeout.Duration, 10*time.Second),
		IdleTimeout:       orDefault(f.IdleTimeout.Duration, 120*time.Second),
		MaxHeaderBytes:    f.MaxHeaderBytes,
		BaseContext:       func(net.Listener) context.Context { return base },
		ConnContext:       connlimit.WithConn,
	}
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// admit is called for a request that passed the checks (front.Admit).
func (p *Proxy) admit(w http.ResponseWriter, r *http.Request, tokenChecked bool) {
	front.Admit(w, r, tokenChecked, orDefault(p.conf().Server.ReadTimeout.Duration, 30*time.Second))
}
