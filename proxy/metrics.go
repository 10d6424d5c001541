package proxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// MetricsServer is the listener of [telemetry] metrics_listen: /metrics
// (Prometheus text format, the same registry as the HTTP front's /metrics)
// and /healthz (see HealthHandler), and nothing else. It exists for stdio
// deployments, where the client owns stdin/stdout and there is no HTTP
// front to mount /metrics on. Like /metrics on the HTTP
// front it has no bearer token: it carries no argument values or secrets.
type MetricsServer struct {
	srv  *http.Server
	addr string
	done chan error // Serve's result
}

// StartMetrics listens on addr ("host:port"; port 0 picks a free port) and
// serves /metrics and /healthz in the background until Close. Any other
// path is 404. It returns once the port is bound, so a client may scrape
// right away.
//
// Errors: the address cannot be bound, e.g.
// `telemetry.metrics_listen "127.0.0.1:9090": listen tcp 127.0.0.1:9090: bind: address already in use`.
func (p *Proxy) StartMetrics(addr string) (*MetricsServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("telemetry.metrics_listen %q: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", p.guard(p.authenticatorFor("/mcp", ""), p.metrics.Handler())) // as on the HTTP front
	mux.Handle("/healthz", p.guard(nil, p.HealthHandler()))
	m := &MetricsServer{
		srv:  &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second},
		addr: ln.Addr().String(),
		done: make(chan error, 1),
	}
	go func() { m.done <- m.srv.Serve(ln) }()
	return m, nil
}

// Addr is the bound address ("127.0.0.1:PORT"), with the real port when
// the configured one was 0.
func (m *MetricsServer) Addr() string { return m.addr }

// Close stops the listener, letting requests in flight finish for up to
// 5 s. It returns Serve's error if the server had failed on its own.
func (m *MetricsServer) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = m.srv.Shutdown(ctx)
	if err := <-m.done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("metrics listener %s: %w", m.addr, err)
	}
	return nil
}
