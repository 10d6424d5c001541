package telemetry

import (
	"encoding/json"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Call outcomes (CallRecord.Outcome and the "outcome" label of
// mcp_toolsearch_tool_calls_total). SPEC §6: a call blocked by policy or
// approval reports that it was blocked; a call of a tool that became
// unavailable fails.
const (
	OutcomeOK              = "ok"               // the upstream answered without isError
	OutcomeToolError       = "tool_error"       // the upstream answered with isError: true
	OutcomeError           = "error"            // protocol, transport or validation error
	OutcomeBlockedPolicy   = "blocked_policy"   // refused by the effective policy (SPEC §6)
	OutcomeBlockedApproval = "blocked_approval" // refused or not answered by the approval step
	OutcomeUnavailable     = "unavailable"      // unknown id, or the upstream is down
	OutcomeTimeout         = "timeout"          // the upstream call timed out
	// OutcomeInvalidArguments: the arguments did not match the tool's
	// inputSchema; the upstream was not called.
	OutcomeInvalidArguments = "invalid_arguments"
	// OutcomeDenied: an attempt to describe or call a tool the session's
	// policy denies (by id, exposed or original name); the client got the
	// same answer as for an unknown tool (SPEC §6), the record keeps the
	// rule.
	OutcomeDenied      = "denied"
	OutcomeRateLimited = "rate_limited"     // refused by [rate_limits]
	OutcomeConnect     = "connect_required" // the user has not connected the upstream
	// OutcomeInputRequired: the call's approval question went to the
	// client in a resumable requestState; the retry (on any replica) runs
	// the call, recorded with its own outcome.
	OutcomeInputRequired = "input_required"
)

// Code-run outcomes: the "outcome" label of mcp_toolsearch_code_runs_total.
const (
	CodeRunOK      = "ok"
	CodeRunError   = "error"
	CodeRunTimeout = "timeout"
)

// Modes (SessionInfo.Mode and the "mode" label of the search and describe
// counters), SPEC §3.
const (
	ModeDirect    = "direct"
	ModeCode      = "code"
	ModeTools     = "tools"
	ModeDirectory = "directory"
)

// labelOther replaces label values outside the known sets, and labelUnknown
// replaces an empty upstream name, so that no caller-supplied text can grow
// the number of series.
const (
	labelOther   = "other"
	labelUnknown = "unknown"
)

var knownOutcomes = map[string]bool{
	OutcomeOK: true, OutcomeToolError: true, OutcomeError: true, OutcomeBlockedPolicy: true,
	OutcomeBlockedApproval: true, OutcomeUnavailable: true, OutcomeTimeout: true, OutcomeInvalidArguments: true, OutcomeDenied: true,
	OutcomeRateLimited: true, OutcomeConnect: true, OutcomeInputRequired: true,
}

var knownModes = map[string]bool{ModeDirect: true, ModeCode: true, ModeTools: true, ModeDirectory: true}

var knownCodeOutcomes = map[string]bool{CodeRunOK: true, CodeRunError: true, CodeRunTimeout: true}

// CallDurationBuckets are the upper bounds, in seconds, of
// mcp_toolsearch_tool_call_duration_seconds: 0.5 ms to 30 s.
var CallDurationBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// Metrics is the deployment's Prometheus instrumentation (SPEC §7), kept on its
// own registry (never the global default one), so several proxies in one
// process or test do not collide.
//
// Series and labels:
//
//	mcp_toolsearch_tool_calls_total{upstream,outcome}        counter
//	mcp_toolsearch_tool_call_duration_seconds{upstream}      histogram, CallDurationBuckets
//	mcp_toolsearch_catalog_tools{upstream,trust}             gauge, trust is "trusted"|"untrusted"
//	mcp_toolsearch_upstream_up{upstream}                     gauge, 1 or 0
//	mcp_toolsearch_ingest_tools{upstream,action}             gauge, tools of the last listing "quarantined"|"normalised"
//	mcp_toolsearch_searches_total{mode}                      counter
//	mcp_toolsearch_describes_total{mode}                     counter
//	mcp_toolsearch_code_runs_total{outcome}                  counter, "ok"|"error"|"timeout"
//	mcp_toolsearch_sessions_active                           gauge
//	mcp_toolsearch_per_client_upstream_sessions              gauge (limits.go)
//	mcp_toolsearch_sessions_refused_total{limit}             counter, "max_sessions"|"max_per_client_upstreams" (limits.go)
//
// plus the standard go_* and process_* collectors, and series other
// packages register on Registry (the proxy's
// mcp_toolsearch_upstream_reload_not_applied{upstream}, …).
//
// Cardinality and privacy: labels carry only upstream names (from the
// config), modes and outcomes (closed sets; anything else is counted as
// "other", an empty upstream as "unknown"). Tool ids are deliberately NOT
// labels: a catalog can hold thousands of tools, and per-tool series would
// make the metric set unbounded; per-tool detail is in the session log.
// Argument values, queries, client names and secrets never appear in metrics.
//
// All methods are safe for concurrent use and are no-ops on a nil *Metrics.
type Metrics struct {
	reg          *prometheus.Registry
	calls        *prometheus.CounterVec
	callDuration *prometheus.HistogramVec
	// callSeries caches the two series ObserveCall feeds per (upstream
	// label, outcome label) pair (two label lookups per call,
	// hashing and validating the values each time); DeleteUpstream drops
	// an upstream's entries with its series. seriesMu orders the cache's
	// misses (series created and stored) with DeleteUpstream's two steps:
	// a miss between them cached series about to be unregistered, and a
	// re-added upstream's calls then never reached /metrics. A hit takes
	// no lock.
	callSeries sync.Map // callKey -> *callPair
	seriesMu   sync.Mutex
	catalog    *prometheus.GaugeVec
	upstreamUp *prometheus.GaugeVec
	ingest     *prometheus.GaugeVec
	searches   *prometheus.CounterVec
	describes  *prometheus.CounterVec
	codeRuns   *prometheus.CounterVec
	sessions   prometheus.Gauge
	limits     limitMetrics                        // limits.go
	redact     atomic.Pointer[func(string) string] // SetRedactor (redact.go)
	front      frontSeries                         // SetFrontStats (front.go)
	sec        securitySeries                      // security.go
}

// NewMetrics returns a Metrics with all series registered on a fresh registry.
func NewMetrics() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcp_toolsearch_tool_calls_total",
			Help: "Tool calls executed through the proxy, by upstream and outcome.",
		}, []string{"upstream", "outcome"}),
		callDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mcp_toolsearch_tool_call_duration_seconds",
			Help:    "Duration of tool calls through the proxy, by upstream, in seconds.",
			Buckets: CallDurationBuckets,
		}, []string{"upstream"}),
		catalog: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "mcp_toolsearch_catalog_tools",
			Help: "Tools in the catalog, by upstream and trust.",
		}, []string{"upstream", "trust"}),
		upstreamUp: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "mcp_toolsearch_upstream_up",
			Help: "1 when the upstream MCP server is connected and initialized, else 0.",
		}, []string{"upstream"}),
		ingest: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "mcp_toolsearch_ingest_tools",
			Help: "Tools of the upstream's last listing the ingest pipeline quarantined (kept off every surface) or normalised, by action.",
		}, []string{"upstream", "action"}),
		searches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcp_toolsearch_searches_total",
			Help: "Catalog searches, by mode.",
		}, []string{"mode"}),
		describes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcp_toolsearch_describes_total",
			Help: "Catalog describes, by mode.",
		}, []string{"mode"}),
		codeRuns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcp_toolsearch_code_runs_total",
			Help: "tool_search_code sandbox runs, by outcome.",
		}, []string{"outcome"}),
		sessions: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mcp_toolsearch_sessions_active",
			Help: "Client sessions currently open.",
		}),
	}
	m.limits = newLimitMetrics()
	m.reg.MustRegister(m.calls, m.callDuration, m.catalog, m.upstreamUp, m.ingest, m.searches,
		m.describes, m.codeRuns, m.sessions, m.limits.perClient, m.limits.refused,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Registry returns the registry the series live on (for tests or for adding
// collectors of other packages).
func (m *Metrics) Registry() *prometheus.Registry {
	if m == nil {
		return nil
	}
	return m.reg
}

// Handler serves the registry in the Prometheus text or OpenMetrics format
// (content negotiation by promhttp); mount it at /metrics. A nil *Metrics
// serves 404.
func (m *Metrics) Handler() http.Handler {
	if m == nil {
		return http.NotFoundHandler()
	}
	return promhttp.HandlerFor(m.gatherer(), promhttp.HandlerOpts{Registry: m.reg})
}

// ObserveCall counts one tool call of upstream with outcome (one of the
// Outcome* constants) and records its duration in seconds.
func (m *Metrics) ObserveCall(upstream, outcome string, seconds float64) {
	if m == nil {
		return
	}
	if seconds < 0 {
		seconds = 0
	}
	key := callKey{upstream: upstreamLabel(upstream), outcome: closedLabel(outcome, knownOutcomes)} // bounded, as the labels
	v, ok := m.callSeries.Load(key)
	if !ok {
		m.seriesMu.Lock()
		if v, ok = m.callSeries.Load(key); !ok {
			v = &callPair{
				calls:    m.calls.WithLabelValues(key.upstream, key.outcome),
				duration: m.callDuration.WithLabelValues(key.upstream),
			}
			m.callSeries.Store(key, v)
		}
		m.seriesMu.Unlock()
	}
	p := v.(*callPair)
	p.calls.Inc()
	p.duration.Observe(seconds)
}

// callKey (the label values) and callPair: ObserveCall's cached series
// (Metrics.callSeries).
type callKey struct{ upstream, outcome string }

type callPair struct {
	calls    prometheus.Counter
	duration prometheus.Observer
}

// SetCatalogSize sets the number of catalog tools of upstream with the given
// trust. The proxy calls it from the deployment-wide catalog (after policy
// for the deployment, before per-client overrides); per-session catalogs are
// in the session log instead.
func (m *Metrics) SetCatalogSize(upstream string, trusted bool, n int) {
	if m == nil {
		return
	}
	m.catalog.WithLabelValues(upstreamLabel(upstream), trustLabel(trusted)).Set(float64(n))
}

// DeleteUpstream removes every series of an upstream that left the config.
func (m *Metrics) DeleteUpstream(upstream string) {
	if m == nil {
		return
	}
	up := upstreamLabel(upstream)
	m.seriesMu.Lock()
	m.dropCallCache(up)
	m.dropCallSeries(up)
	m.seriesMu.Unlock()
	m.catalog.DeletePartialMatch(prometheus.Labels{"upstream": up})
	m.upstreamUp.DeletePartialMatch(prometheus.Labels{"upstream": up})
	m.ingest.DeletePartialMatch(prometheus.Labels{"upstream": up})
}

// dropCallCache and dropCallSeries are DeleteUpstream's two steps for the
// call series of upstream label up (the cache, then the registry's
// series); the caller holds seriesMu.
func (m *Metrics) dropCallCache(up string) {
	m.callSeries.Range(func(k, _ any) bool {
		if k.(callKey).upstream == up {
			m.callSeries.Delete(k)
		}
		return true
	})
}

func (m *Metrics) dropCallSeries(up string) {
	m.calls.DeletePartialMatch(prometheus.Labels{"upstream": up})
	m.callDuration.DeletePartialMatch(prometheus.Labels{"upstream": up})
}

// SetIngest sets mcp_toolsearch_ingest_tools{upstream} to the number of
// tools of the last listing that were quarantined and normalised.
func (m *Metrics) SetIngest(upstream string, quarantined, normalised int) {
	if m == nil {
		return
	}
	up := upstreamLabel(upstream)
	m.ingest.WithLabelValues(up, "quarantined").Set(float64(quarantined))
	m.ingest.WithLabelValues(up, "normalised").Set(float64(normalised))
}

// SetUpstreamUp sets mcp_toolsearch_upstream_up{upstream} to 1 or 0.
func (m *Metrics) SetUpstreamUp(upstream string, up bool) {
	if m == nil {
		return
	}
	v := 0.0
	if up {
		v = 1
	}
	m.upstreamUp.WithLabelValues(upstreamLabel(upstream)).Set(v)
}

// IncSearch counts one search in mode (one of the Mode* constants).
func (m *Metrics) IncSearch(mode string) {
	if m == nil {
		return
	}
	m.searches.WithLabelValues(closedLabel(mode, knownModes)).Inc()
}

// IncDescribe counts one describe in mode (one of the Mode* constants).
func (m *Metrics) IncDescribe(mode string) {
	if m == nil {
		return
	}
	m.describes.WithLabelValues(closedLabel(mode, knownModes)).Inc()
}

// IncCodeRun counts one sandbox run with outcome "ok", "error" or "timeout".
func (m *Metrics) IncCodeRun(outcome string) {
	if m == nil {
		return
	}
	m.codeRuns.WithLabelValues(closedLabel(outcome, knownCodeOutcomes)).Inc()
}

// SessionStarted increments mcp_toolsearch_sessions_active.
func (m *Metrics) SessionStarted() {
	if m == nil {
		return
	}
	m.sessions.Inc()
}

// SessionEnded decrements mcp_toolsearch_sessions_active.
func (m *Metrics) SessionEnded() {
	if m == nil {
		return
	}
	m.sessions.Dec()
}

func closedLabel(v string, known map[string]bool) string {
	if known[v] {
		return v
	}
	return labelOther
}

func upstreamLabel(upstream string) string {
	if upstream == "" {
		return labelUnknown
	}
	return truncate(upstream, maxLabelLen)
}

func trustLabel(trusted bool) string {
	if trusted {
		return "trusted"
	}
	return "untrusted"
}

// maxLabelLen bounds an upstream label value in bytes (upstream names come
// from the config, so this only guards against mistakes).
const maxLabelLen = 128

// HealthHandler serves /healthz. ready reports whether the deployment can
// serve (for example: the catalog is built and at least the required
// upstreams are up) and an optional JSON-encodable detail. The response is
// JSON: 200 {"status":"ok","detail":...} when ready, else
// 503 {"status":"unavailable","detail":...}; "detail" is omitted when nil.
// A nil ready always answers 200. Only GET and HEAD are accepted (else 405).
// detail must not hold secrets: the endpoint is unauthenticated by design.
func HealthHandler(ready func() (ok bool, detail any)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		ok, detail := true, any(nil)
		if ready != nil {
			ok, detail = ready()
		}
		body := struct {
			Status string `json:"status"`
			Detail any    `json:"detail,omitempty"`
		}{Status: "ok", Detail: detail}
		code := http.StatusOK
		if !ok {
			body.Status, code = "unavailable", http.StatusServiceUnavailable
		}
		b, err := json.Marshal(body)
		if err != nil {
			// detail could not be encoded: report the status alone.
			b, _ = json.Marshal(struct {
				Status string `json:"status"`
				Error  string `json:"error"`
			}{body.Status, "detail not encodable: " + err.Error()})
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(code)
		if r.Method != http.MethodHead {
			_, _ = w.Write(append(b, '\n'))
		}
	})
}
