package proxy

import (
	"context"
	"errors"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcp-toolsearch/mcp-toolsearch/identity"
	"github.com/mcp-toolsearch/mcp-toolsearch/internal/front"
	"github.com/mcp-toolsearch/mcp-toolsearch/internal/linewrite"
	"github.com/mcp-toolsearch/mcp-toolsearch/telemetry"
	"github.com/mcp-toolsearch/mcp-toolsearch/upstream"
)

// ServeStdio serves one client over stdin/stdout until it disconnects or
// ctx ends. stdout carries only the protocol (logs go to stderr). One
// message may be up to server.max_message_bytes (default 32 MiB), as on
// the upstream legs.
//
// Lines whose request id the go-sdk could not give back exactly are
// answered with an error by the proxy itself (internal/front).
func (p *Proxy) ServeStdio(ctx context.Context) error {
	maxLine := p.maxMessageBytes()
	out := linewrite.New(os.Stdout) // internal/linewrite: answers finished together go out in one write
	in := front.Stdin()             // stdin_linux.go, stdin_other.go
	if in != os.Stdin {
		defer in.Close()
	}
	ft := front.NewStdio(in, out, maxLine)
	err := p.runStdio(ctx, ft)
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// maxMessageBytes is server.max_message_bytes (upstream.MaxMessageBytes
// when unset, e.g. a config built in code).
func (p *Proxy) maxMessageBytes() int {
	if n := p.conf().Server.MaxMessageBytes; n > 0 {
		return n
	}
	return upstream.MaxMessageBytes
}

// Handler is the HTTP front: Streamable HTTP at /mcp, SSE at /sse, each
// [endpoints.NAME] at its path (Streamable HTTP) and path+"/sse" (SSE), and
// /healthz and /metrics. extra, if non-nil, is mounted for the paths it claims
// (telemetry adds /metrics). Every MCP route checks Host and Origin against
// DNS rebinding (MCP spec, Transports, "Security Warning") and the bearer
// token when one is configured.
func (p *Proxy) Handler(extra map[string]http.Handler) http.Handler {
	mux := http.NewServeMux()
	var paths []string
	mount := func(path, endpoint string) {
		a := p.authenticatorFor(path, endpoint) // front_auth.go: static token or OAuth
		paths = append(paths, path)
		// Idle sessions end (session_idle_timeout), sessions are
		// capped (max_sessions) and event streams get keepalives
		// (lifetime.go, keepalive.go); stateless.go: sessions or not
		// (server.stateless), and 2026-07-28 routing.
		ka := p.conf().Server.KeepaliveInterval.Duration
		// Request ids the go-sdk cannot give back exactly are
		// refused (internal/front).
		maxBody := p.maxMessageBytes()
		// Tasks/* answered, a tools/call's "task" kept (tasks.go).
		mux.Handle(path, p.guard(a, front.Keepalive(ka, front.IDGuardWith(p.streamableHandler(endpoint), maxBody, front.LiftTaskFrame))))
		ssePath := "/sse"
		if path != "/mcp" {
			ssePath = strings.TrimSuffix(path, "/") + "/sse"
		}
		sse := front.Keepalive(ka, front.IDGuard(p.sseShareGate(endpoint, p.sseHandler(endpoint, path)), maxBody)) // shares.go
		if _, static := a.(liveToken); a != nil && !static {
			sse = p.sseRefused(path) // front_auth.go
		}
		mux.Handle(ssePath, p.guard(a, sse))
	}
	mount("/mcp", "")
	for name, ep := range p.conf().Endpoints {
		mount(ep.Path, name)
	}
	p.mountIdentityRoutes(mux, paths) // front_auth.go: protected-resource metadata, OAuth callback
	for path, h := range extra {
		mux.Handle(path, h)
	}
	// /metrics names upstreams and counts calls: same Host/Origin check and
	// bearer token as /mcp. /healthz gets the Host/Origin check only, so
	// that probes need no token.
	if _, ok := extra["/metrics"]; !ok {
		mux.Handle("/metrics", p.guard(p.authenticatorFor("/mcp", ""), p.metrics.Handler()))
	}
	if _, ok := extra["/healthz"]; !ok {
		mux.Handle("/healthz", p.guard(nil, p.HealthHandler()))
	}
	return mux
}

// guard rejects requests whose Host or Origin is not allowed (403) or
// that a (nil: none) refuses (401/403 with a WWW-Authenticate challenge),
// before any byte of the body is read, and closes their connection
// (front.go).
func (p *Proxy) guard(a identity.Authenticator, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !p.hostAllowed(r.Host) {
			front.Reject(w, http.StatusForbidden, "forbidden: Host header not allowed (DNS rebinding protection); add it to server.allowed_hosts")
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !p.originAllowed(o) {
			front.Reject(w, http.StatusForbidden, "forbidden: Origin not allowed; add it to server.allowed_origins")
			return
		}
		r, ok := p.authenticate(a, w, r) // front_auth.go
		if !ok {
			return
		}
		p.admit(w, r, a != nil) // front.go: vet the connection, bound the body
		h.ServeHTTP(w, r)
	})
}

func isLoopbackHost(h string) bool {
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	h = strings.Trim(h, "[]")
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

func (p *Proxy) hostAllowed(host string) bool {
	if isLoopbackHost(host) {
		return true
	}
	hostOnly := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		hostOnly = h
	}
	for _, a := range p.conf().Server.AllowedHosts {
		if a == "*" || strings.EqualFold(a, host) || strings.EqualFold(a, hostOnly) {
			return true
		}
	}
	// Listening on a non-loopback address without allowed_hosts: accept the
	// listen address itself.
	if lh, _, err := net.SplitHostPort(p.conf().Server.Listen); err == nil && lh != "" && strings.EqualFold(lh, hostOnly) {
		return true
	}
	return false
}

func (p *Proxy) originAllowed(origin string) bool {
	if slices.ContainsFunc(p.conf().Server.AllowedOrigins, func(a string) bool { return a == "*" || strings.EqualFold(a, origin) }) {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && isLoopbackHost(u.Host)
}

// HealthHandler is /healthz: 200 with each upstream's state when at least
// one upstream is ready (or none is configured), else 503 (a readiness
// probe). /healthz?live is 200 whenever the process serves HTTP (a
// liveness probe: an upstream that is down is no reason to restart the
// proxy). /healthz?started is /healthz that is also 503 until every
// upstream of the start has settled its first attempt (ready or failed):
// the readiness probe of a replica behind a load balancer, so that a
// restarted replica gets no request its peers could answer while some of
// its upstreams are still starting (in a rolling restart,
// clients sent to the new replica got "unknown tool … still starting").
// Upstreams a reload adds do not count: a config change rolled out to
// every replica at once would take them all out together.
//
// /healthz needs no token (probes have none), so what it tells a caller
// without one is bounded: when the MCP routes need a credential
// (server.bearer_token, [auth]), a request without a valid one gets the
// status, the mode and how many upstreams are ready, not their names;
// with the credential of /mcp it gets each upstream's state. Trust: clients
// without a token learn that the proxy is up, not what it fronts.
func (p *Proxy) HealthHandler() http.Handler {
	live := telemetry.HealthHandler(nil)
	serve := func(w http.ResponseWriter, r *http.Request, started bool) {
		named := true
		if a := p.authenticatorFor("/mcp", ""); a != nil {
			_, err := a.Authenticate(r)
			named = err == nil
		}
		telemetry.HealthHandler(func() (bool, any) {
			ok, out := p.readiness(named)
			if started && !p.startSettled.Load() {
				ok = false
				out["started"] = false
			}
			return ok, out
		}).ServeHTTP(w, r)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch q := r.URL.Query(); {
		case q.Has("live"):
			live.ServeHTTP(w, r)
		case q.Has("started"):
			serve(w, r, true)
		default:
			serve(w, r, false)
		}
	})
}

// readiness is /healthz's answer: ready when at least one upstream is (or
// none is configured), with each upstream's state (named) or how many of
// them are ready.
func (p *Proxy) readiness(named bool) (bool, map[string]any) {
	sts := p.ups.Statuses()
	detail := map[string]string{}
	ready, n := len(sts) == 0, 0
	for _, st := range sts {
		detail[st.Name] = string(st.State)
		if st.State == "ready" {
			ready = true
			n++
		}
	}
	out := map[string]any{"upstreams": detail, "mode": p.surf().Mode()}
	if !named {
		return ready, map[string]any{"upstreams_ready": n, "upstreams": len(sts), "mode": p.surf().Mode()}
	}
	if na := p.ups.NotApplied(); na != nil {
		// reloadkeep.go: names only (the reason, which may name paths,
		// is in the log; /healthz has no token).
		out["reload_not_applied"] = slices.Sorted(maps.Keys(na))
	}
	return ready, out
}

// MetricsHandler is /metrics (Prometheus text format).
func (p *Proxy) MetricsHandler() http.Handler { return p.metrics.Handler() }

// ServeHTTP serves Handler on ln (bound by the caller before the upstreams
// start, so that a bad or busy server.listen fails at once) until ctx ends.
// Then it stops accepting connections, waits up to server.drain_timeout
// for the client requests in flight (drain.go), closes every client
// session, cancels every request left (an open SSE stream would otherwise
// hold the shutdown), and shuts the server down within 2 s more.
func (p *Proxy) ServeHTTP(ctx context.Context, ln net.Listener, extra map[string]http.Handler) error {
	// Request contexts derive from base, cancelled at shutdown: long-lived
	// SSE and Streamable HTTP GET streams then end instead of holding it.
	base, cancelBase := context.WithCancel(context.Background())
	defer cancelBase()
	srv := p.httpServer(p.clientAddrs(p.Handler(extra)), base) // front.go: timeouts, header cap; clientaddr.go: trusted_proxies
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(p.limitListener(ln)) }() // front.go: connection caps
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		// Stop accepting at once (a load balancer's next connection goes
		// to another replica), let the requests in flight finish within
		// server.drain_timeout (drain.go), then end the sessions and cancel
		// what is left: open GET and SSE streams would otherwise hold the
		// shutdown.
		sctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		shut := make(chan error, 1)
		go func() { shut <- srv.Shutdown(sctx) }()
		p.drains.begin() // drain.go: questions to clients fail (askScope)
		p.drainHTTP()
		p.closeSessions()
		cancelBase()
		select {
		case <-shut:
		case <-time.After(2 * time.Second):
			cancel()
			_ = srv.Close()
		}
		return nil
	}
}

// runStdio serves one stdio client on ft, as mcp.Server.Run does, with
// the front's tools/call fast path handed the server's receiving chain.
func (p *Proxy) runStdio(ctx context.Context, ft *front.Stdio) error {
	var conn atomic.Pointer[front.Conn]
	ss, err := p.Server("", "stdio").Connect(context.WithValue(ctx, front.ConnSlot{}, &conn), ft, nil)
	if err != nil {
		return err
	}
	if c := conn.Load(); c != nil {
		c.EnableFast(ss, p.receivingHandler("", "stdio"))
	}
	closed := make(chan error, 1)
	go func() { closed <- ss.Wait() }()
	// An answer queued behind a write in flight (internal/linewrite) is
	// on stdout before the session counts as served.
	defer func() { _ = ft.Flush() }()
	select {
	case <-ctx.Done():
		if c := conn.Load(); c != nil {
			c.EndFast() // before jsonrpc2 closes the connection under its state lock
		}
		_ = ss.Close()
		<-closed
		return ctx.Err()
	case err := <-closed:
		return err
	}
}
