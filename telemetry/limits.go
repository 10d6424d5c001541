package telemetry

import "github.com/prometheus/client_golang/prometheus"

// Limit names, the values of the "limit" label of
// mcp_toolsearch_sessions_refused_total (config keys of [server]).
const (
	LimitMaxSessions           = "max_sessions"
	LimitMaxSessionsPerSubject = "max_sessions_per_subject"
	LimitMaxPerClientUpstreams = "max_per_client_upstreams"
)

var knownLimits = map[string]bool{LimitMaxSessions: true, LimitMaxSessionsPerSubject: true, LimitMaxPerClientUpstreams: true}

// limitMetrics are the series of the session limits.
type limitMetrics struct {
	perClient prometheus.Gauge
	refused   *prometheus.CounterVec
}

func newLimitMetrics() limitMetrics {
	return limitMetrics{
		perClient: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mcp_toolsearch_per_client_upstream_sessions",
			Help: "Per-client upstream sessions (session = \"per-client\") currently open, over all client sessions.",
		}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcp_toolsearch_sessions_refused_total",
			Help: "Client sessions and per-client upstream sessions refused, by the [server] limit that refused them.",
		}, []string{"limit"}),
	}
}

// PerClientOpened increments mcp_toolsearch_per_client_upstream_sessions.
func (m *Metrics) PerClientOpened() {
	if m == nil {
		return
	}
	m.limits.perClient.Inc()
}

// PerClientClosed decrements mcp_toolsearch_per_client_upstream_sessions.
func (m *Metrics) PerClientClosed() {
	if m == nil {
		return
	}
	m.limits.perClient.Dec()
}

// Refused counts one refusal by limit (LimitMaxSessions or
// LimitMaxPerClientUpstreams; anything else counts as "other").
func (m *Metrics) Refused(limit string) {
	if m == nil {
		return
	}
	m.limits.refused.WithLabelValues(closedLabel(limit, knownLimits)).Inc()
}
