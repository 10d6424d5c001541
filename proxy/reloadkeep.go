package proxy

// A reload's change that does not start is not applied.
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
	"github.com/mcp-toolsearch/mcp-toolsearch/upstream"
)

// keepOldInstance is called once ps, the new instance of the restarted
// upstream name, settled its first attempt. When it is not ready and the
// old instance is, it drops ps (closed in the background), keeps the old
// instance current, logs why and reports true. Otherwise (the new one is
// ready, the old one is not ready either, or a later reload dropped ps)
// it changes nothing and reports false: the caller switches as before.
func (p *Proxy) keepOldInstance(name string, ps *upstream.PendingStart) bool {
	st, _ := ps.M.Status(name)
	if st.State == upstream.StateReady {
		return false
	}
	reason := st.Err
	if reason == "" {
		reason = "state " + string(st.State)
	}
	reason = p.conf().Redact(reason)
	if !p.ups.KeepOld(name, ps, reason) {
		return false
	}
	ps.Kept = true
	p.log.Error("reload: the new instance of a changed upstream failed to start; its old instance keeps serving with the config before the reload, and the next reload tries the change again",
		"upstream", name, "reason", reason)
	closeUnserved(ps.M) // reload.go
	return true
}
