package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Defaults and limits. The tool_search limits are SPEC §4; the rest are
// this project's choices (docs/config.md).
const (
	DefaultTransport          = "stdio"
	DefaultListen             = "127.0.0.1:8080"
	DefaultNameSeparator      = "__"
	DefaultShutdownGrace      = 3 * time.Second
	DefaultMaxMessageBytes    = 32 << 20
	DefaultStartupWait        = 5 * time.Second
	MaxStartupWait            = 10 * time.Minute
	MinMaxMessageBytes        = 64 << 10
	MaxMaxMessageBytes        = 1 << 30
	MaxClientPrefixRoom       = 48
	DefaultMode               = "code"
	DefaultCodeTimeoutMS      = 10000
	DefaultCodeMaxRuns        = 4
	MaxCodeMaxRuns            = 64
	DefaultCodeMaxCallBytes   = 256 << 10
	MinCodeMaxCallBytes       = 16 << 10
	MaxCodeMaxCallBytes       = 32 << 20
	DefaultCodeMaxRunBytes    = 2 << 20
	MaxCodeMaxRunBytes        = 256 << 20
	MinCodeTimeoutMS          = 1000
	MaxCodeTimeoutMS          = 60000
	DefaultMaxSearchLimit     = 20
	MaxMaxSearchLimit         = 50
	DefaultSearchDefaultLimit = 8
	DefaultDirectoryMaxChars  = 6000
	MinDirectoryMaxChars      = 500
	MaxDirectoryMaxChars      = 50000
	DefaultStartupTimeout     = 30 * time.Second
	DefaultCallTimeout        = 55 * time.Second // below the TypeScript SDK's 60 s request timeout (docs/config.md)
	DefaultPingInterval       = 30 * time.Second
	DefaultSession            = "shared"
	DefaultProtocol           = "auto"
	DefaultApprovalTimeout    = 60 * time.Second
	DefaultSessionIdleTimeout = 30 * time.Minute
	DefaultDrainTimeout       = 10 * time.Second
	DefaultMaxSessions        = 1000
	DefaultInitializeTimeout  = 15 * time.Second
	MaxMaxSessions            = 1000000
	DefaultMaxPerClientUps    = 100
	MaxMaxPerClientUps        = 100000
	DefaultKeepaliveInterval  = 25 * time.Second
	MaxPrefixLen              = 32
)

// Reserved HTTP paths of the proxy; endpoints may not use them.
// Protocols are the values of an upstream's protocol key: "auto", then the
// MCP versions the proxy's upstream client speaks, newest first.
var Protocols = []string{DefaultProtocol, ProtocolModern, "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// ProtocolModern is the first MCP version without the initialize handshake
// (no session; questions to the client come back as input_required results).
const ProtocolModern = "2026-07-28"

var reservedPaths = []string{"/mcp", "/sse", "/metrics", "/healthz"}

var (
	reUpstreamName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	rePrefix       = regexp.MustCompile(`^[a-zA-Z0-9_-]*$`)
	reSeparator    = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,4}$`)
	reHeaderName   = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
)

// fillNames sets Upstream.Name and Endpoint.Name from their table keys and
// replaces nil map entries with empty values.
func (p *parser) fillNames() {
	c := p.cfg
	for name, u := range c.Upstreams {
		if u == nil {
			u = &Upstream{}
			c.Upstreams[name] = u
		}
		u.Name = name
	}
	for name, e := range c.Endpoints {
		if e == nil {
			e = &Endpoint{}
			c.Endpoints[name] = e
		}
		e.Name = name
	}
	for name, r := range c.Tools.ByClient {
		if r == nil {
			c.Tools.ByClient[name] = &ToolRules{}
		}
	}
	for name, pr := range c.Profiles {
		if pr == nil {
			c.Profiles[name] = &Profile{}
		}
	}
}

func (p *parser) defaultString(v *string, def string, path ...string) {
	if !p.defined(path...) {
		*v = def
	}
}

func (p *parser) defaultDuration(v *Duration, def time.Duration, path ...string) {
	if !p.defined(path...) {
		v.Duration = def
		return
	}
	if v.Duration <= 0 {
		p.errf(path, "", "must be greater than 0, got %s", v.Duration)
	}
}

// clampInt fills the default when the key is absent and clamps the value to
// lo..hi, with a warning when the value was given in the file.
func (p *parser) clampInt(v *int, def, lo, hi int, path ...string) {
	given := p.defined(path...)
	if !given {
		*v = def
	}
	c := min(max(*v, lo), hi)
	if c != *v && given {
		p.warnf(path, "%d is outside %d..%d; using %d", *v, lo, hi, c)
	}
	*v = c
}

// defaults fills every default of docs/config.md and clamps the
// tool_search limits (SPEC §4: clamp, not error).
func (p *parser) defaults() {
	c := p.cfg
	p.defaultString(&c.Server.Transport, DefaultTransport, "server", "transport")
	p.defaultString(&c.Server.Listen, DefaultListen, "server", "listen")
	p.defaultString(&c.Server.NameSeparator, DefaultNameSeparator, "server", "name_separator")
	p.defaultDuration(&c.Server.ShutdownGrace, DefaultShutdownGrace, "server", "shutdown_grace")
	if !p.defined("server", "session_idle_timeout") {
		c.Server.SessionIdleTimeout.Duration = DefaultSessionIdleTimeout
	} else if c.Server.SessionIdleTimeout.Duration < 0 {
		p.errf([]string{"server", "session_idle_timeout"}, "", "must be 0 (never) or greater, got %s", c.Server.SessionIdleTimeout.Duration)
	}
	if !p.defined("server", "drain_timeout") {
		c.Server.DrainTimeout.Duration = DefaultDrainTimeout
	} else if c.Server.DrainTimeout.Duration < 0 {
		p.errf([]string{"server", "drain_timeout"}, "", "must be 0 (no drain) or greater, got %s", c.Server.DrainTimeout.Duration)
	}
	p.clampInt(&c.Server.MaxSessions, DefaultMaxSessions, 1, MaxMaxSessions, "server", "max_sessions")
	p.clampInt(&c.Server.MaxSessionsPerSubject, min(c.Server.MaxSessions, max(10, c.Server.MaxSessions/10)), 1, c.Server.MaxSessions, "server", "max_sessions_per_subject")
	p.defaultDuration(&c.Server.InitializeTimeout, DefaultInitializeTimeout, "server", "initialize_timeout")
	p.clampInt(&c.Server.MaxPerClientUpstreams, DefaultMaxPerClientUps, 0, MaxMaxPerClientUps, "server", "max_per_client_upstreams")
	p.defaultDuration(&c.Server.KeepaliveInterval, DefaultKeepaliveInterval, "server", "keepalive_interval")
	p.clampInt(&c.Server.MaxMessageBytes, DefaultMaxMessageBytes, MinMaxMessageBytes, MaxMaxMessageBytes, "server", "max_message_bytes")
	switch {
	case !p.defined("server", "startup_wait"):
		c.Server.StartupWait.Duration = DefaultStartupWait
	case c.Server.StartupWait.Duration < 0:
		p.errf([]string{"server", "startup_wait"}, "", "must be 0 (do not wait) or greater, got %s", c.Server.StartupWait.Duration)
	case c.Server.StartupWait.Duration > MaxStartupWait:
		p.warnf([]string{"server", "startup_wait"}, "%s is above %s; using %s", c.Server.StartupWait.Duration, MaxStartupWait, MaxStartupWait)
		c.Server.StartupWait.Duration = MaxStartupWait
	}
	p.clampInt(&c.Server.ClientPrefixRoom, 0, 0, MaxClientPrefixRoom, "server", "client_prefix_room")
	p.frontDefaults()
	p.clientAddressDefaults()

	ts := &c.ToolSearch
	// An explicit mode implies enabled (`mode = "tools"`
	// alone used to run direct mode without a word); with enabled = false
	// the mode has no effect, and a warning says so.
	if p.defined("tool_search", "mode") {
		switch {
		case !p.defined("tool_search", "enabled"):
			ts.Enabled = true
		case !ts.Enabled:
			p.warnf([]string{"tool_search", "mode"}, "has no effect with tool_search.enabled = false (direct mode: every tool listed as it is)")
		}
	}
	p.defaultString(&ts.Mode, DefaultMode, "tool_search", "mode")
	p.clampInt(&ts.CodeTimeoutMS, DefaultCodeTimeoutMS, MinCodeTimeoutMS, MaxCodeTimeoutMS, "tool_search", "code_timeout_ms")
	p.clampInt(&ts.MaxSearchLimit, DefaultMaxSearchLimit, 1, MaxMaxSearchLimit, "tool_search", "max_search_limit")
	p.clampInt(&ts.SearchDefaultLimit, DefaultSearchDefaultLimit, 1, ts.MaxSearchLimit, "tool_search", "search_default_limit")
	p.clampInt(&ts.DirectoryMaxChars, DefaultDirectoryMaxChars, MinDirectoryMaxChars, MaxDirectoryMaxChars, "tool_search", "directory_max_chars")
	p.clampInt(&ts.CodeMaxRuns, DefaultCodeMaxRuns, 1, MaxCodeMaxRuns, "tool_search", "code_max_runs")
	p.clampInt(&ts.CodeMaxRunsPerSession, max(1, ts.CodeMaxRuns/2), 1, ts.CodeMaxRuns, "tool_search", "code_max_runs_per_session")
	p.clampInt(&ts.CodeMaxCallBytes, DefaultCodeMaxCallBytes, MinCodeMaxCallBytes, MaxCodeMaxCallBytes, "tool_search", "code_max_call_bytes")
	p.clampInt(&ts.CodeMaxRunBytes, max(DefaultCodeMaxRunBytes, ts.CodeMaxCallBytes), ts.CodeMaxCallBytes, MaxCodeMaxRunBytes, "tool_search", "code_max_run_bytes")

	for _, name := range sortedKeys(c.Upstreams) {
		u := c.Upstreams[name]
		p.defaultDuration(&u.StartupTimeout, DefaultStartupTimeout, "upstreams", name, "startup_timeout")
		p.defaultDuration(&u.CallTimeout, DefaultCallTimeout, "upstreams", name, "call_timeout")
		p.defaultDuration(&u.PingInterval, DefaultPingInterval, "upstreams", name, "ping_interval")
		p.defaultString(&u.Session, DefaultSession, "upstreams", name, "session")
		p.defaultString(&u.Protocol, DefaultProtocol, "upstreams", name, "protocol")
		switch {
		case u.URL != "":
			u.TransportAuto = !p.defined("upstreams", name, "transport")
			p.defaultString(&u.Transport, "streamable-http", "upstreams", name, "transport")
		case u.Command != "":
			p.defaultString(&u.Transport, "stdio", "upstreams", name, "transport")
		}
	}
	p.defaultDuration(&c.Tools.ApprovalTimeout, DefaultApprovalTimeout, "tools", "approval_timeout")
	p.identityDefaults()
}

// resolveFile resolves a relative file path against dir. A path that names
// its own root stays as written: an absolute one, and on Windows also one
// rooted on the current drive ("/srv", `\srv`) or drive-relative ("C:srv"),
// which filepath.IsAbs does not count as absolute but which a join under dir
// would point elsewhere than Windows does.
func resolveFile(dir, f string) string {
	if dir == "" || f == "" || filepath.IsAbs(f) || filepath.VolumeName(f) != "" || os.IsPathSeparator(f[0]) {
		return f
	}
	return filepath.Join(dir, f)
}

// resolveCommand resolves a relative command path that contains a slash
// ("./bin/x", "bin/x") against dir; plain names ("node") are left for the
// PATH lookup at start time.
func resolveCommand(dir, cmd string) string {
	if !strings.ContainsRune(cmd, '/') && !strings.ContainsRune(cmd, filepath.Separator) {
		return cmd
	}
	return resolveFile(dir, cmd)
}

// resolvePaths makes relative paths relative to the config file's folder.
func (p *parser) resolvePaths(dir string) {
	c := p.cfg
	for _, u := range c.Upstreams {
		u.Cwd = resolveFile(dir, u.Cwd)
		if u.Command != "" {
			u.Command = resolveCommand(dir, u.Command)
		}
	}
	if len(c.Tools.ApprovalCommand) > 0 {
		c.Tools.ApprovalCommand[0] = resolveCommand(dir, c.Tools.ApprovalCommand[0])
	}
	c.Telemetry.SessionLog = resolveFile(dir, c.Telemetry.SessionLog)
	p.resolveIdentityPaths(dir)
	c.Server.StateStoreCA = resolveFile(dir, c.Server.StateStoreCA)
}

func oneOf(p *parser, v string, allowed []string, path ...string) {
	if !slices.Contains(allowed, v) {
		p.errf(path, "", "invalid value %q: must be one of %s", v, quoteList(allowed))
	}
}

func quoteList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = strconv.Quote(x)
	}
	return strings.Join(q, ", ")
}

// checkListen checks a host:port address ("127.0.0.1:8080", ":8080", "[::1]:0").
func (p *parser) checkListen(addr string, path ...string) {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		p.errf(path, "", "%q is not host:port (e.g. \"127.0.0.1:8080\")", addr)
		return
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		p.errf(path, "", "%q: port must be a number 0..65535", addr)
	}
}

// validate applies every rule of docs/config.md and records all failures.
func (p *parser) validate() {
	c := p.cfg
	oneOf(p, c.Server.Transport, []string{"stdio", "http"}, "server", "transport")
	p.checkListen(c.Server.Listen, "server", "listen")
	if !reSeparator.MatchString(c.Server.NameSeparator) {
		p.errf([]string{"server", "name_separator"}, "", "%q must be 1 to 4 characters of [a-zA-Z0-9_-]", c.Server.NameSeparator)
	}
	// Kept apart: serve --transport http can make them untrue (AllWarnings).
	if c.Server.BearerToken != "" {
		p.stdioWarnings = append(p.stdioWarnings, p.problem([]string{"server", "bearer_token"}, "", "has no effect with server.transport = \"stdio\""))
	}
	if len(c.Endpoints) > 0 {
		p.stdioWarnings = append(p.stdioWarnings, p.problem([]string{"endpoints"}, "", "endpoints are served only with server.transport = \"http\""))
	}
	switch m := c.ToolSearch.Mode; m {
	case "code", "tools", "directory":
	case "off", "false", "direct":
		p.errf([]string{"tool_search", "mode"}, "", "invalid value %q: must be one of \"code\", \"tools\", \"directory\" (for direct mode set tool_search.enabled = false)", m)
	default:
		oneOf(p, m, []string{"code", "tools", "directory"}, "tool_search", "mode")
	}
	if c.Telemetry.MetricsListen != "" {
		p.checkListen(c.Telemetry.MetricsListen, "telemetry", "metrics_listen")
	}

	p.validateUpstreams()
	p.validatePolicy()
	p.validateEndpoints()
	p.validateStateless()
	p.validateIdentity()
	p.validateStateStore()
}

func (p *parser) validateUpstreams() {
	c := p.cfg
	enabled := 0
	prefixUsers := map[string][]string{}
	var emptyPrefix []string
	lowerNames := map[string]string{}
	for _, name := range sortedKeys(c.Upstreams) {
		u := c.Upstreams[name]
		base := []string{"upstreams", name}
		at := func(k string) []string { return appendKey(base, k) }
		if !reUpstreamName.MatchString(name) {
			p.errf(base, "", "upstream name must match ^[a-zA-Z0-9_-]{1,64}$ (it appears in tool ids mcp:NAME:tool)")
		}
		// Policy rules, group:NAME, exposed names and the token store
		// compare upstream names without case: two that differ only in
		// case would be one upstream to some of them and two to others.
		if prev, dup := lowerNames[strings.ToLower(name)]; dup {
			p.errf(base, "", "upstreams %q and %q differ only in case; upstream names are compared without case (policy rules, group:NAME, exposed names): rename one", prev, name)
		} else {
			lowerNames[strings.ToLower(name)] = name
		}
		switch {
		case u.Command != "" && u.URL != "":
			p.errf(base, "", "set either command (a stdio server) or url (an HTTP server), not both")
		case u.Command == "" && u.URL == "":
			p.errf(base, "", "needs command (a stdio server) or url (an HTTP server)")
		case u.URL != "":
			oneOf(p, u.Transport, []string{"streamable-http", "sse"}, at("transport")...)
			if len(u.Env) > 0 {
				p.errf(at("env"), "", "only for command upstreams (this one has url)")
			}
			if u.InheritEnv {
				p.errf(at("inherit_env"), "", "only for command upstreams (this one has url)")
			}
			if u.Cwd != "" {
				p.errf(at("cwd"), "", "only for command upstreams (this one has url)")
			}
			if len(u.Args) > 0 {
				p.errf(at("args"), "", "only for command upstreams (this one has url)")
			}
			p.checkURL(u.URL, at("url"))
			if u.SSEPathPrefix != "" && (!strings.HasPrefix(u.SSEPathPrefix, "/") || strings.ContainsAny(u.SSEPathPrefix, "?#")) {
				p.errf(at("sse_path_prefix"), "", "%q: want a path that starts with /, such as \"/tools\" (no query)", u.SSEPathPrefix)
			}
			if u.SSEPathPrefix != "" && u.Transport != "sse" && !u.TransportAuto {
				p.errf(at("sse_path_prefix"), "", "only for the legacy SSE transport (this upstream has transport = %q)", u.Transport)
			}
		default: // command
			if u.Transport != "stdio" {
				p.errf(at("transport"), "", "%q needs url; a command upstream always speaks stdio", u.Transport)
			}
			if len(u.Headers) > 0 {
				p.errf(at("headers"), "", "only for url upstreams (this one has command)")
			}
			if u.SSEPathPrefix != "" {
				p.errf(at("sse_path_prefix"), "", "only for url upstreams (this one has command)")
			}
			if u.AllowInternalRedirects {
				p.errf(at("allow_internal_redirects"), "", "only for url upstreams (this one has command)")
			}
		}
		for _, k := range sortedKeys(u.Headers) {
			if !reHeaderName.MatchString(k) {
				p.errf(at("headers"), "", "%q is not a valid HTTP header name", k)
			}
			if strings.ContainsAny(u.Headers[k], "\r\n\x00") {
				p.errf(appendKey(at("headers"), k), "", "value must not contain CR, LF or NUL")
			}
		}
		for _, k := range sortedKeys(u.Env) {
			if k == "" || strings.ContainsAny(k, "=\x00") {
				p.errf(at("env"), "", "%q is not a valid environment variable name", k)
			}
		}
		for i, k := range u.Public {
			_, known := u.Env[k]
			for h := range u.Headers {
				known = known || strings.EqualFold(h, k)
			}
			if known {
				continue
			}
			names := append(sortedKeys(u.Env), sortedKeys(u.Headers)...)
			msg := fmt.Sprintf("%q names no env variable or header of this upstream (public lists those whose values are not secret)", k)
			if s := suggest(k, names); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			p.errf(at("public"), fmt.Sprintf("[%d]", i), "%s", msg)
		}
		oneOf(p, u.Session, []string{"shared", "per-client"}, at("session")...)
		oneOf(p, u.Protocol, Protocols, at("protocol")...)
		if u.Protocol == ProtocolModern && u.Transport == "sse" {
			p.errf(at("protocol"), "", "%q needs transport \"streamable-http\" or a command: the SSE transport is of 2024-11-05 and carries up to 2025-11-25", u.Protocol)
		}
		if u.Prefix != nil {
			if !rePrefix.MatchString(*u.Prefix) || len(*u.Prefix) > MaxPrefixLen {
				p.errf(at("prefix"), "", "%q must be at most %d characters of [a-zA-Z0-9_-]", *u.Prefix, MaxPrefixLen)
			}
		}
		for i, t := range u.DirectOnly {
			if t == "" {
				p.errf(at("direct_only"), fmt.Sprintf("[%d]", i), "empty tool name")
			}
		}
		if !u.IsEnabled() {
			continue
		}
		enabled++
		pre := u.PrefixOrName()
		if pre == "" {
			emptyPrefix = append(emptyPrefix, name)
			continue
		}
		prefixUsers[strings.ToLower(pre)] = append(prefixUsers[strings.ToLower(pre)], name)
	}
	for _, pre := range sortedKeys(prefixUsers) {
		users := prefixUsers[pre]
		if len(users) < 2 {
			continue
		}
		// Report at every user but the first one in the file.
		line := func(n string) int { return p.lines.line([]string{"upstreams", n}) }
		slices.SortStableFunc(users, func(a, b string) int { return line(a) - line(b) })
		for _, n := range users[1:] {
			p.errf([]string{"upstreams", n, "prefix"}, "", "upstreams %q and %q both use the prefix %q (exposed names are compared without case); exposed tool names would collide", users[0], n, c.Upstreams[n].PrefixOrName())
		}
	}
	// Prefixes that nest ("alpha" and "alpha__x" with the separator "__"):
	// alpha's tool "x__echo" and alpha__x's "echo" want the same name.
	sep := strings.ToLower(c.Server.NameSeparator)
	if sep == "" {
		sep = "__"
	}
	pres := sortedKeys(prefixUsers)
	for _, a := range pres {
		for _, b := range pres {
			if a != b && strings.HasPrefix(b, a+sep) && len(prefixUsers[a]) == 1 && len(prefixUsers[b]) == 1 {
				ua, ub := prefixUsers[a][0], prefixUsers[b][0]
				p.warnf([]string{"upstreams", ub, "prefix"}, "the prefix of upstream %q starts with upstream %q's prefix and the separator %q: a tool of one can want the exposed name of a tool of the other (both are then renamed with a hash, and the log says which)", ub, ua, sep)
			}
		}
	}
	if len(emptyPrefix) > 1 {
		p.warnf([]string{"upstreams", emptyPrefix[1], "prefix"},
			"upstreams %s all use the empty prefix; tools with the same name get disambiguated names", quoteList(emptyPrefix))
	}
	if enabled == 0 {
		p.errf([]string{"upstreams"}, "", "at least one enabled upstream is required")
	}
}

// checkURL checks an upstream url; the message never repeats the url,
// which may carry an expanded secret.
func (p *parser) checkURL(raw string, at []string) {
	u, err := url.Parse(raw)
	if err != nil {
		// url.Parse quotes the offending part (%q-escaped, so Redact would
		// miss an escaped secret): when ${VAR} values went in, say only
		// that it is invalid.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		if p.fromEnvKey(at) {
			p.errf(at, "", "not a valid URL (after ${VAR} expansion; the value is not shown)")
		} else {
			p.errf(at, "", "not a valid URL: %v", err)
		}
		return
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		p.errf(at, "", "scheme must be http or https")
		return
	}
	if u.Host == "" {
		p.errf(at, "", "URL has no host")
	}
}

func (p *parser) validateEndpoints() {
	c := p.cfg
	owner := map[string]string{}
	for _, name := range sortedKeys(c.Endpoints) {
		e := c.Endpoints[name]
		at := []string{"endpoints", name, "path"}
		switch {
		case e.Path == "":
			p.errf(at, "", "required (e.g. \"/team-a/mcp\")")
		case !strings.HasPrefix(e.Path, "/"):
			p.errf(at, "", "%q must start with \"/\"", e.Path)
		case strings.ContainsAny(e.Path, " \t\r\n?#"):
			p.errf(at, "", "%q must not contain blanks, \"?\" or \"#\"", e.Path)
		case slices.Contains(reservedPaths, strings.TrimSuffix(e.Path, "/")) || e.Path == "/":
			p.errf(at, "", "%q is reserved by the proxy (reserved: \"/\", %s)", e.Path, quoteList(reservedPaths))
		default:
			if other, dup := owner[e.Path]; dup {
				p.errf(at, "", "%q is also the path of endpoints.%s", e.Path, other)
			} else {
				owner[e.Path] = name
			}
		}
	}
}

// fromEnvKey reports whether the key at path had a secret ${VAR} value
// substituted (see expand).
func (p *parser) fromEnvKey(path []string) bool {
	return p.cfg.fromEnv[keyString(path)]
}
