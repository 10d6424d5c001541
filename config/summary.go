package config

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/pathq"
)

// EnabledUpstreams returns the enabled upstreams (Upstream.IsEnabled) sorted
// by name. The pointers are the Config's own.
func (c *Config) EnabledUpstreams() []*Upstream {
	var out []*Upstream
	for _, u := range c.Upstreams {
		if u != nil && u.IsEnabled() {
			out = append(out, u)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Summary renders the config for `mcp-toolsearch check`: one block per
// section, one line per upstream (kind, command or url, trust, prefix,
// session, timeouts) followed by its env and headers. Values that came from
// ${VAR}, the bearer token, endpoint tokens and values that are secrets by
// their key (env TOKEN, header Authorization, args after --token) are shown
// as "***", and the
// whole text is passed through Redact, so it is safe to print.
func (c *Config) Summary() string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	secret := func(key, v string) string {
		if c.fromEnv[key] || c.secretKeys[key] {
			return "***"
		}
		return strconv.Quote(v)
	}
	set := func(v string) string {
		if v == "" {
			return "(none)"
		}
		return "***"
	}

	if c.Path != "" {
		w("config: %s", c.Path)
	}
	s := c.Server
	w("server: transport=%s listen=%s name_separator=%q shutdown_grace=%s max_message_bytes=%d client_prefix_room=%d startup_wait=%s bearer_token=%s",
		s.Transport, s.Listen, s.NameSeparator, s.ShutdownGrace.Duration, s.MaxMessageBytes, s.ClientPrefixRoom, s.StartupWait.Duration, set(s.BearerToken))
	if s.Transport == "http" {
		maxConns := "auto"
		if s.MaxConnections > 0 {
			maxConns = strconv.Itoa(s.MaxConnections)
		}
		w("  front: read_header_timeout=%s read_timeout=%s idle_timeout=%s max_header_bytes=%d max_connections=%s max_connections_per_address=%d",
			s.ReadHeaderTimeout.Duration, s.ReadTimeout.Duration, s.IdleTimeout.Duration, s.MaxHeaderBytes, maxConns, s.MaxConnectionsPerAddress)
	}
	if len(s.AllowedOrigins) > 0 || len(s.AllowedHosts) > 0 {
		w("  allowed_origins=%v allowed_hosts=%v", s.AllowedOrigins, s.AllowedHosts)
	}
	if s.Shared() {
		w("  state_store=%s state_store_key=%s", s.StateStoreURL, set(s.StateStoreKey))
	}
	if len(s.TrustedProxies) > 0 {
		w("  trusted_proxies=%v client_ip_header=%s", s.TrustedProxies, s.ClientIPHeader)
	}
	ts := c.ToolSearch
	if ts.Enabled {
		w("tool_search: mode=%s code_timeout_ms=%d search_default_limit=%d max_search_limit=%d directory_max_chars=%d pinned=%v",
			ts.Mode, ts.CodeTimeoutMS, ts.SearchDefaultLimit, ts.MaxSearchLimit, ts.DirectoryMaxChars, ts.Pinned)
	} else {
		w("tool_search: off (direct mode: every allowed tool is exposed)")
	}

	names := sortedKeys(c.Upstreams)
	w("upstreams: %d configured, %d enabled", len(names), len(c.EnabledUpstreams()))
	for _, name := range names {
		u := c.Upstreams[name]
		if u == nil {
			continue
		}
		var line strings.Builder
		fmt.Fprintf(&line, "  %s:", name)
		if !u.IsEnabled() {
			line.WriteString(" DISABLED")
		}
		if u.IsHTTP() {
			fmt.Fprintf(&line, " %s url=%s", u.Transport, secret(keyString([]string{"upstreams", name, "url"}), u.URL))
		} else {
			fmt.Fprintf(&line, " stdio command=%q", u.Command)
			if len(u.Args) > 0 {
				args := make([]string, len(u.Args))
				for i, a := range u.Args {
					args[i] = secret(keyString([]string{"upstreams", name, "args"})+fmt.Sprintf("[%d]", i), a)
				}
				fmt.Fprintf(&line, " args=[%s]", strings.Join(args, " "))
			}
			if u.Cwd != "" {
				fmt.Fprintf(&line, " cwd=%s", pathq.Quote(u.Cwd))
			}
		}
		fmt.Fprintf(&line, " trusted=%t prefix=%q session=%s startup_timeout=%s call_timeout=%s",
			u.Trusted, u.PrefixOrName(), u.Session, u.StartupTimeout.Duration, u.CallTimeout.Duration)
		if u.Protocol != "" && u.Protocol != DefaultProtocol {
			fmt.Fprintf(&line, " protocol=%s", u.Protocol)
		}
		if len(u.DirectOnly) > 0 {
			fmt.Fprintf(&line, " direct_only=%v", u.DirectOnly)
		}
		if u.AlwaysLoad != nil {
			fmt.Fprintf(&line, " always_load=%t", *u.AlwaysLoad)
		}
		w("%s", line.String())
		for _, k := range sortedKeys(u.Env) {
			w("    env %s=%s", k, secret(keyString([]string{"upstreams", name, "env", k}), u.Env[k]))
		}
		for _, k := range sortedKeys(u.Headers) {
			w("    header %s: %s", k, secret(keyString([]string{"upstreams", name, "headers", k}), u.Headers[k]))
		}
	}

	rules := func(label string, r ToolRules) {
		if r.Profile == "" && r.Allow == nil && len(r.Deny) == 0 && len(r.AlsoAllow) == 0 {
			return
		}
		allow := "(not set)"
		if r.Allow != nil {
			allow = fmt.Sprint(r.Allow)
		}
		w("%s: profile=%q allow=%s deny=%v also_allow=%v", label, r.Profile, allow, r.Deny, r.AlsoAllow)
	}
	t := c.Tools
	rules("tools", t.ToolRules)
	if len(t.RequireApproval) > 0 {
		w("tools: require_approval=%v approval_command=%q approval_timeout=%s", t.RequireApproval, t.ApprovalCommand, t.ApprovalTimeout.Duration)
	}
	for _, k := range sortedKeys(t.ByClient) {
		rules(fmt.Sprintf("tools.by_client[%q]", k), *t.ByClient[k])
	}
	for _, k := range sortedKeys(c.Profiles) {
		w("profile %s: allow=%v deny=%v", k, c.Profiles[k].Allow, c.Profiles[k].Deny)
	}
	for _, k := range sortedKeys(c.Groups) {
		w("group %s: %v", k, c.Groups[k])
	}
	for _, k := range sortedKeys(c.Endpoints) {
		e := c.Endpoints[k]
		w("endpoint %s: path=%s token=%s", k, e.Path, set(e.Token))
		rules(fmt.Sprintf("  endpoint %s tools", k), e.Tools)
	}
	tel := c.Telemetry
	w("telemetry: session_log=%q log_arguments=%t metrics_listen=%q", tel.SessionLog, tel.LogArguments, tel.MetricsListen)
	return c.Redact(b.String()) // warnings: Config.Warnings, logged by the command that loads it
}
