package telemetry

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// securitySeries are the series of tool-text defences (hidden
// characters, pins), registered on first use.
type securitySeries struct {
	once    sync.Once
	hidden  *prometheus.GaugeVec
	changes *prometheus.CounterVec
	results *prometheus.CounterVec
}

func (m *Metrics) security() *securitySeries {
	s := &m.sec
	s.once.Do(func() {
		s.hidden = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "mcp_toolsearch_hidden_characters_tools",
			Help: "Tools of an upstream's last listing whose text held hidden characters (stripped or quarantined)."}, []string{"upstream"})
		s.changes = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mcp_toolsearch_tool_changes_total",
			Help: "Tool definitions that differed from their pinned definition, by upstream and what was done (warned, blocked, approval)."}, []string{"upstream", "action"})
		s.results = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mcp_toolsearch_hidden_characters_results_total",
			Help: "Hidden characters found in tool results, by upstream (removed, or the result withheld, per security.hidden_characters)."}, []string{"upstream"})
		m.reg.MustRegister(s.hidden, s.changes, s.results)
	})
	return s
}

// SetHiddenTools sets mcp_toolsearch_hidden_characters_tools{upstream}.
func (m *Metrics) SetHiddenTools(upstream string, n int) {
	if m == nil {
		return
	}
	m.security().hidden.WithLabelValues(upstreamLabel(upstream)).Set(float64(n))
}

// ToolChanged counts one changed tool definition in
// mcp_toolsearch_tool_changes_total{upstream,action}; action is "warned",
// "blocked" or "approval".
func (m *Metrics) ToolChanged(upstream, action string) {
	if m == nil {
		return
	}
	m.security().changes.WithLabelValues(upstreamLabel(upstream), closedLabel(action, map[string]bool{"warned": true, "blocked": true, "approval": true})).Inc()
}

// HiddenInResult counts n hidden characters found in a result of an
// upstream's tool in mcp_toolsearch_hidden_characters_results_total.
func (m *Metrics) HiddenInResult(upstream string, n int) {
	if m == nil {
		return
	}
	m.security().results.WithLabelValues(upstreamLabel(upstream)).Add(float64(n))
}
