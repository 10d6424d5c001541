package telemetry

import (
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Secrets. The operator's config holds secrets; the
// session log and /metrics are read by people and tools that must not see
// them. The proxy hands its config's redaction (config.Config.Redact:
// every secret, in every escaping) to both.

// SetRedactor makes the session log pass every record, as written (JSON),
// through redact before it reaches the file; argument values of secret
// keys (redact.IsSecretKey) are masked whatever the redactor. Call it
// before the first session starts.
func (r *Recorder) SetRedactor(redact func(string) string) {
	if r != nil {
		r.redact = redact
	}
}

// SetRedactor makes Handler pass every label value through redact. Label
// values are upstream names from the config and closed sets, so this only
// guards against a secret written where a name belongs.
func (m *Metrics) SetRedactor(redact func(string) string) {
	if m != nil && redact != nil {
		m.redact.Store(&redact)
	}
}

// gatherer is the registry, with label values redacted when SetRedactor
// was called.
func (m *Metrics) gatherer() prometheus.Gatherer {
	return prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		mfs, err := m.reg.Gather()
		rp := m.redact.Load()
		if rp == nil {
			return mfs, err
		}
		red := *rp
		for _, mf := range mfs {
			for _, metric := range mf.GetMetric() {
				for _, l := range metric.GetLabel() {
					if l.Value != nil {
						v := red(*l.Value)
						l.Value = &v
					}
				}
			}
		}
		return mfs, err
	})
}
