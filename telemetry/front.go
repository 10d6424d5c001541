package telemetry

import (
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// FrontStats are the HTTP front's connection counters (connlimit.Stats in
// the proxy's terms).
type FrontStats struct {
	Open           int
	RefusedTotal   uint64
	RefusedPerAddr uint64
	Evicted        uint64
}

// frontSeries is registered once per Metrics; it reads the stats function
// of the listener serving now (SetFrontStats).
type frontSeries struct {
	once  sync.Once
	stats atomic.Pointer[func() FrontStats]
}

// SetFrontStats makes /metrics report the HTTP front's connections,
// read from stats at each scrape:
//
//	mcp_toolsearch_http_connections                          gauge, open now
//	mcp_toolsearch_http_connections_refused_total{cap}       counter, cap "total"|"address"
//	mcp_toolsearch_http_connections_evicted_total            counter
//
// Refused connections were closed at accept because the cap was full of
// connections that had passed the token check; evicted ones had not passed
// it and were closed to make room. A later call replaces stats.
func (m *Metrics) SetFrontStats(stats func() FrontStats) {
	if m == nil || stats == nil {
		return
	}
	fs := &m.front
	fs.stats.Store(&stats)
	fs.once.Do(func() {
		get := func() FrontStats {
			if f := fs.stats.Load(); f != nil {
				return (*f)()
			}
			return FrontStats{}
		}
		m.reg.MustRegister(
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "mcp_toolsearch_http_connections",
				Help: "Connections open on the HTTP front."}, func() float64 { return float64(get().Open) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "mcp_toolsearch_http_connections_refused_total",
				Help: "Connections closed at accept because a cap was full of connections that had passed the token check.", ConstLabels: prometheus.Labels{"cap": "total"}},
				func() float64 { return float64(get().RefusedTotal) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "mcp_toolsearch_http_connections_refused_total",
				Help: "Connections closed at accept because a cap was full of connections that had passed the token check.", ConstLabels: prometheus.Labels{"cap": "address"}},
				func() float64 { return float64(get().RefusedPerAddr) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "mcp_toolsearch_http_connections_evicted_total",
				Help: "Connections that had not passed the token check, closed to make room for a new one."},
				func() float64 { return float64(get().Evicted) }),
		)
	})
}
