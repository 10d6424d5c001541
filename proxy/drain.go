package proxy

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Graceful drain of the HTTP front: at shutdown (SIGTERM, a
// rolling restart behind a load balancer) the front stops accepting
// connections at once, then waits up to server.drain_timeout for the
// client requests it is answering — a tools/call waiting on an upstream, a
// tool_search_code run — before it closes the client sessions and cancels
// what is left. Before, every call in flight was cut the moment the
// signal arrived and its client read an empty response.

// drainCount counts the client requests the proxy is answering, on every
// front and transport: every request (not notification) that enters a
// server's receiving chain, which both HTTP fast paths and the stdio fast
// path run too (server.go). subscriptions/listen is left out: it stays
// open for as long as its client listens, so waiting for it would only
// ever end at the drain's deadline.
type drainCount struct {
	n atomic.Int64

	once  sync.Once
	start context.Context // ends when the HTTP front's drain starts (begin)
	begun context.CancelFunc
}

// started is the context that ends when the drain starts.
func (d *drainCount) started() context.Context {
	d.once.Do(func() { d.start, d.begun = context.WithCancel(context.Background()) })
	return d.start
}

// begin marks the start of the HTTP front's drain (ServeHTTP, at the
// signal): questions to clients waiting for their answer fail then
// (askScope).
func (d *drainCount) begin() {
	d.started()
	d.begun()
}

// errDraining is why a question to a client failed at the drain's start.
var errDraining = errors.New("the proxy is shutting down (server.drain_timeout): the client's answer to this request, a new HTTP request, can no longer reach it")

// askScope is ctx for a question the proxy asks a client and waits for
// (askClient: elicitation, sampling, roots/list on the client's session):
// it ends with errDraining when the HTTP front's drain starts, since the
// client's answer comes as a new POST, which cannot arrive then (the
// listener and the idle connections are closed at the signal,
// docs/scale-out.md): the call that asked goes on at once (an approval is
// refused, a relayed question fails) and gets its answer within
// server.drain_timeout instead of being cut at its end.
// stop releases the scope.
func (p *Proxy) askScope(ctx context.Context) (_ context.Context, stop func()) {
	if p == nil {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	after := context.AfterFunc(p.drains.started(), func() { cancel(errDraining) })
	return ctx, func() { after(); cancel(nil) }
}

// middleware is the outermost receiving middleware of every server.
func (d *drainCount) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "subscriptions/listen" || strings.HasPrefix(method, "notifications/") {
			return next(ctx, method, req)
		}
		d.n.Add(1)
		defer d.n.Add(-1)
		return next(ctx, method, req)
	}
}

// InFlight returns how many client requests the proxy is answering now.
func (p *Proxy) InFlight() int64 { return p.drains.n.Load() }

// drainPoll is how often wait looks at the count: a drain happens once, at
// the end of the process; a channel per request to wake it would cost
// every request what a poll costs once.
const drainPoll = 20 * time.Millisecond

// wait returns once no request is in flight, or when d has passed, with
// the number still in flight then (0: all answered).
func (d *drainCount) wait(timeout time.Duration) int64 {
	deadline := time.Now().Add(timeout)
	for {
		n := d.n.Load()
		if n <= 0 || !time.Now().Before(deadline) {
			return max(n, 0)
		}
		time.Sleep(min(drainPoll, time.Until(deadline)))
	}
}

// drainHTTP is the first step of the HTTP front's shutdown, after the
// listener stopped accepting: it waits up to server.drain_timeout for the
// requests in flight and logs what it did.
func (p *Proxy) drainHTTP() {
	timeout := p.conf().Server.DrainTimeout.Duration
	n := p.drains.n.Load()
	if n <= 0 {
		return
	}
	if timeout <= 0 {
		p.log.Warn("shutting down: cutting the client requests in flight (server.drain_timeout is 0)", "in_flight", n)
		return
	}
	p.log.Info("shutting down: no new connections; waiting for the client requests in flight (server.drain_timeout)", "in_flight", n, "drain_timeout", timeout.String())
	start := time.Now()
	if left := p.drains.wait(timeout); left > 0 {
		p.log.Warn("shutting down: server.drain_timeout passed; cutting the client requests still in flight", "in_flight", left, "drain_timeout", timeout.String())
		return
	}
	p.log.Info("shutting down: every client request in flight was answered", "waited_ms", time.Since(start).Milliseconds())
}
