package config

// validateStateless checks what `[server] stateless = true` cannot serve.
// A stateless replica keeps nothing between two HTTP requests of a client
// (any replica behind a load balancer may answer the next one), so every
// feature that needs a client's state across requests is refused here,
// with the key that asks for it, instead of silently working differently
// (docs/scale-out.md "What stateless mode supports and refuses").
func (p *parser) validateStateless() {
	c := p.cfg
	if !c.Server.Stateless {
		return
	}
	if c.Server.Transport != "http" {
		p.errf([]string{"server", "stateless"}, "", "needs server.transport = \"http\" (a stdio client is one process talking to one proxy)")
	}
	for _, name := range sortedKeys(c.Upstreams) {
		u := c.Upstreams[name]
		if u.Session == "per-client" && (u.Enabled == nil || *u.Enabled) {
			p.errf([]string{"upstreams", name, "session"}, "", "\"per-client\" keeps an upstream session per client session, which server.stateless = true does not have; use \"shared\"")
		}
	}
	for _, k := range sortedKeys(c.Tools.ByClient) {
		p.errf([]string{"tools", "by_client", k}, "", "by_client rules need the clientInfo.name a client sends in initialize, which a stateless replica does not keep between requests; give such clients an [endpoints.NAME] with its own token instead")
	}
	if len(c.Tools.RequireApproval) > 0 && len(c.Tools.ApprovalCommand) == 0 {
		p.warnf([]string{"tools", "require_approval"}, "with server.stateless = true a client on protocol 2025-11-25 or older cannot be asked (elicitation needs a session) and no tools.approval_command is set: its matching calls are blocked (2026-07-28 clients are asked with input_required)")
	}
}
