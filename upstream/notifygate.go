package upstream

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/logwindow"
)

// The notification gate of one upstream session.
//
// Trust: an upstream server is not trusted, and it decides how many
// notifications it writes. The go-sdk's JSON-RPC connection reads every
// message as it comes and queues the notifications for its handler in an
// unbounded slice (go-sdk v1.8.0 internal/jsonrpc2/conn.go,
// acceptRequest); when an upstream writes them faster than the proxy's
// handlers return, that queue — the proxy's memory — grows without bound
// (measured: 909 MB RSS after 60 s of notifications/message and
// notifications/tools/list_changed in a tight loop). The gate sits between
// the transport and the go-sdk (gateConn.Read) and drops notifications
// before the go-sdk queues them:
//
//   - notifications/{tools,resources,prompts}/list_changed: one of each
//     kind waits in the queue at a time. A second one while the first is
//     still queued says nothing new (the re-list the first one causes
//     happens after it), so it is dropped. The mark clears when the
//     proxy's handler takes the first one (gateConn.handled), or after
//     listChangedHold when the go-sdk never hands it over (malformed
//     params).
//   - notifications/message: at most msgRate per second (burst msgBurst)
//     per upstream session; MCP spec 2025-11-25 server/utilities/logging
//     ("Security": servers SHOULD rate limit log messages) — the proxy
//     enforces it for its clients. Dropped messages are counted and one
//     warning per dropWindow says how many ("suppressed N
//     notifications/message").
//   - every other notification (progress, resources/updated, cancelled,
//     …): at most otherRate per second (burst otherBurst) per session,
//     counted and logged the same way.
//
// With the proxy's handlers returning at once (they hand slow work to
// bounded queues: proxy/notifyrelay.go), what the go-sdk holds of an
// upstream's notifications is bounded by these rates times the handlers'
// latency. Requests and answers pass untouched.
const (
	msgRate         = 50
	msgBurst        = 200
	otherRate       = 500
	otherBurst      = 1000
	listChangedHold = 5 * time.Second
	dropWindow      = 10 * time.Second
)

// notifyGate is the admission state of one upstream session (see above).
type notifyGate struct {
	up  string
	log *slog.Logger

	msgs  *rate.Limiter
	other *rate.Limiter

	mu      sync.Mutex
	pending map[string]time.Time // list_changed methods queued in the go-sdk, since when
	dropped map[string]int       // notifications dropped by rate since the last summary
	window  *logwindow.Window
}

func newNotifyGate(up string, log *slog.Logger) *notifyGate {
	g := &notifyGate{
		up:      up,
		log:     log,
		msgs:    rate.NewLimiter(msgRate, msgBurst),
		other:   rate.NewLimiter(otherRate, otherBurst),
		pending: map[string]time.Time{},
		dropped: map[string]int{},
	}
	g.window = logwindow.New(dropWindow, func(int, time.Duration) { g.summary() })
	return g
}

// isListChanged reports whether method is one of the list_changed
// notifications the gate coalesces.
func isListChanged(method string) bool {
	switch method {
	case "notifications/tools/list_changed", "notifications/resources/list_changed", "notifications/prompts/list_changed":
		return true
	}
	return false
}

// admit reports whether notification method goes on to the go-sdk.
func (g *notifyGate) admit(method string, now time.Time) bool {
	if isListChanged(method) {
		g.mu.Lock()
		defer g.mu.Unlock()
		if since, ok := g.pending[method]; ok && now.Sub(since) < listChangedHold {
			return false // coalesced into the one still queued
		}
		g.pending[method] = now
		return true
	}
	lim := g.other
	if method == "notifications/message" {
		lim = g.msgs
	}
	if lim.AllowN(now, 1) {
		return true
	}
	g.mu.Lock()
	g.dropped[method]++
	g.mu.Unlock()
	if g.window.Allow() {
		g.log.Warn("upstream sends notifications faster than the proxy relays them; dropping the excess (a summary follows)",
			"method", method, "limit_per_s", limitOf(method))
	}
	return false
}

func limitOf(method string) int {
	if method == "notifications/message" {
		return msgRate
	}
	return otherRate
}

// summary logs and resets the counts of dropped notifications.
func (g *notifyGate) summary() {
	g.mu.Lock()
	counts := g.dropped
	g.dropped = map[string]int{}
	g.mu.Unlock()
	for method, n := range counts {
		g.log.Warn("suppressed notifications from upstream (rate limit)", "method", method, "suppressed", n, "in_last", dropWindow)
	}
}

// handled clears the mark of a list_changed notification the proxy's
// handler has taken: the next one is queued again. Nil-safe.
func (g *notifyGate) handled(method string) {
	if g == nil {
		return
	}
	g.mu.Lock()
	delete(g.pending, method)
	g.mu.Unlock()
}

// gateConn is an upstream mcp.Connection whose incoming notifications pass
// the gate before the go-sdk reads them.
type gateConn struct {
	mcp.Connection
	gate *notifyGate
}

// Read implements mcp.Connection: the next message that is not a
// notification the gate drops.
func (c *gateConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		m, err := c.Connection.Read(ctx)
		if err != nil {
			return m, err
		}
		r, ok := m.(*jsonrpc.Request)
		if !ok || r.IsCall() || c.gate.admit(r.Method, time.Now()) {
			return m, nil
		}
	}
}
