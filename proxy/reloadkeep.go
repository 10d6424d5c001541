package proxy

// A reload's change that does not start is not applied (trial r7 F13).
// A config reload that changes a working upstream starts the new instance
// while the old one serves (reload.go switchWhenStarted). When the new
// instance's first attempt fails (a typo in its command or args, a wrong
// URL) while the old one is ready, switching would take a working
// upstream's tools away from every client for one typo. So the old
// instance serves on, with its config before the reload; the failure is
// logged as an ERROR naming the upstream and the reason; /healthz lists
// the upstream under "reload_not_applied" and /metrics has
// mcp_toolsearch_upstream_reload_not_applied{upstream} 1; the next reload
// tries the change again (the running config is still the old one, so it
// differs from the file) and a reload whose config for the upstream is
// the running one again, or that removes it, clears the mark.

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcp-toolsearch/mcp-toolsearch/upstream"
)

// keepOldInstance is called once ps, the new instance of the restarted
// upstream name, settled its first attempt. When it is not ready and the
// old instance is, it drops ps (closed in the background), keeps the old
// instance current, logs why and reports true. Otherwise (the new one is
// ready, the old one is not ready either, or a later reload dropped ps)
// it changes nothing and reports false: the caller switches as before.
func (p *Proxy) keepOldInstance(name string, ps *pendingStart) bool {
	st, _ := ps.m.Status(name)
	if st.State == upstream.StateReady {
		return false
	}
	reason := st.Err
	if reason == "" {
		reason = "state " + string(st.State)
	}
	reason = p.conf().Redact(reason)
	if !p.ups.keepOld(name, ps, reason) {
		return false
	}
	ps.kept = true
	p.log.Error("reload: the new instance of a changed upstream failed to start; its old instance keeps serving with the config before the reload, and the next reload tries the change again",
		"upstream", name, "reason", reason)
	closeUnserved(ps.m) // reload.go
	return true
}

// keepOld drops ps, the pending start of name, and marks the reload's
// change of name as not applied, when ps is still pending and the current
// (old) manager of name is ready.
func (u *upstreamSet) keepOld(name string, ps *pendingStart, reason string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.pending[name] != ps {
		return false
	}
	if m := u.m[name]; m == nil || !readyManager(m, name) {
		return false
	}
	delete(u.pending, name)
	if u.notApplied == nil {
		u.notApplied = map[string]string{}
	}
	u.notApplied[name] = "the reload's change was not applied: its new instance failed to start (" + reason + "); the old instance serves with the config before the reload"
	return true
}

// forgetNotAppliedLocked (u.mu held, at a reload's swap) clears the mark
// of every upstream the reload does not start again: its config is the
// running one again, it was removed, or it was replaced at once. Those
// being started again (later) keep it until their new instance switches
// or fails again.
func (u *upstreamSet) forgetNotAppliedLocked(later map[string]*pendingStart) {
	for name := range u.notApplied {
		if _, ok := later[name]; !ok {
			delete(u.notApplied, name)
		}
	}
}

// NotApplied returns, by upstream name, why a reload's change of it is not
// applied (its old instance serves); nil when there is none.
func (u *upstreamSet) NotApplied() map[string]string {
	u.mu.RLock()
	defer u.mu.RUnlock()
	if len(u.notApplied) == 0 {
		return nil
	}
	out := make(map[string]string, len(u.notApplied))
	for k, v := range u.notApplied {
		out[k] = v
	}
	return out
}

// notAppliedDesc is mcp_toolsearch_upstream_reload_not_applied{upstream}.
var notAppliedDesc = prometheus.NewDesc("mcp_toolsearch_upstream_reload_not_applied",
	"1 while a config reload's change of the upstream is not applied because its new instance failed to start; the old instance serves with the config before the reload (the next reload tries again).",
	[]string{"upstream"}, nil)

// notAppliedCollector reads the marks at each scrape.
type notAppliedCollector struct{ u *upstreamSet }

func (c notAppliedCollector) Describe(ch chan<- *prometheus.Desc) { ch <- notAppliedDesc }

func (c notAppliedCollector) Collect(ch chan<- prometheus.Metric) {
	for name := range c.u.NotApplied() {
		ch <- prometheus.MustNewConstMetric(notAppliedDesc, prometheus.GaugeValue, 1, name)
	}
}
