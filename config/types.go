// Package config loads and validates the one TOML file of a deployment.
package config

import (
	"fmt"
	"strings"
	"time"

	"github.com/mcp-toolsearch/mcp-toolsearch/redact"
)

// Config is one deployment. Load fills defaults, expands ${VAR} and validates.
type Config struct {
	// Path is the file the config was read from ("" when parsed from bytes).
	Path       string               `toml:"-"`
	Server     Server               `toml:"server"`
	ToolSearch ToolSearch           `toml:"tool_search"`
	Upstreams  map[string]*Upstream `toml:"upstreams"`
	Tools      Tools                `toml:"tools"`
	Profiles   map[string]*Profile  `toml:"profiles"`
	Groups     map[string][]string  `toml:"groups"`
	Endpoints  map[string]*Endpoint `toml:"endpoints"`
	Telemetry  Telemetry            `toml:"telemetry"`
	Security   Security             `toml:"security"`    // security.go
	Auth       Auth                 `toml:"auth"`        // OAuth resource-server mode (identity.go)
	RateLimits RateLimits           `toml:"rate_limits"` // token buckets (identity.go)
	Audit      Audit                `toml:"audit"`       // the audit log (identity.go)

	// Warnings collects non-fatal findings of Load (clamped values and the like).
	Warnings []string `toml:"-"`
	// stdioWarnings are findings that hold only while server.transport is
	// "stdio" (a bearer token, endpoints); see AllWarnings.
	stdioWarnings []string
	// secrets are the values substituted for ${VAR} references; see Redact.
	secrets []string
	// fromEnv holds the dotted keys (toml.Key form) whose value came from a
	// ${VAR} reference; Summary shows those values as "***".
	fromEnv map[string]bool
	// secretKeys holds the dotted keys whose whole value is a literal
	// secret by its key name (collectLiteralSecrets); Summary shows "***".
	secretKeys map[string]bool
	// redactor caches the replacer Redact uses; built by Parse.
	redactor *redact.Replacer
}

// Server is the [server] table: how clients reach the proxy.
type Server struct {
	Transport      string   `toml:"transport"`       // "stdio" (default) | "http"
	Listen         string   `toml:"listen"`          // default "127.0.0.1:8080"
	BearerToken    string   `toml:"bearer_token"`    // optional; ${VAR} expanded; secret
	AllowedOrigins []string `toml:"allowed_origins"` // extra Origins accepted besides loopback ones
	AllowedHosts   []string `toml:"allowed_hosts"`   // extra Host header values accepted besides loopback ones
	NameSeparator  string   `toml:"name_separator"`  // default "__"; must match ^[a-zA-Z0-9_-]{1,4}$
	ShutdownGrace  Duration `toml:"shutdown_grace"`  // default 3s: time a stdio child gets after stdin closes before SIGTERM, and again before SIGKILL

	// Client sessions (HTTP). See docs/config.md.
	SessionIdleTimeout Duration `toml:"session_idle_timeout"` // default 30m; "0s" = never: a Streamable HTTP session with no request for this long is closed
	DrainTimeout       Duration `toml:"drain_timeout"`        // default 10s; "0s" = none: at shutdown (SIGTERM) the HTTP front stops accepting and waits this long, at most, for client requests in flight
	MaxSessions        int      `toml:"max_sessions"`         // default 1000, clamped to 1..1000000: client sessions open at once; initialize past it is refused
	// MaxSessionsPerSubject is one subject's share of max_sessions (an
	// OAuth user, an endpoint with its own token, else a client address,
	// the one trusted_proxies forward): default max_sessions/10 (at least
	// 10, at most max_sessions), clamped to 1..max_sessions.
	MaxSessionsPerSubject int `toml:"max_sessions_per_subject"`
	// InitializeTimeout closes a legacy SSE stream (GET /sse) whose
	// session has not sent initialize within it; default 15s.
	InitializeTimeout     Duration `toml:"initialize_timeout"`
	MaxPerClientUpstreams int      `toml:"max_per_client_upstreams"` // default 100, clamped to 0..100000: per-client upstream sessions open at once (all clients)
	KeepaliveInterval     Duration `toml:"keepalive_interval"`       // default 25s: an SSE comment on every open event stream idle this long
	WatchConfig           bool     `toml:"watch_config"`             // default false: reload when the config file changes (SIGHUP always reloads on Unix)

	// Scale-out: docs/scale-out.md.
	Stateless bool `toml:"stateless"` // default false: the HTTP front keeps no client state between requests
	// MaxMessageBytes caps one JSON-RPC message from an upstream on every
	// transport, and one line from a stdio client; default 32 MiB, clamped
	// to 64 KiB..1 GiB.
	MaxMessageBytes int `toml:"max_message_bytes"`
	// StartupWait bounds how long `serve` waits for upstreams still on
	// their first connection attempt before it answers clients; default
	// 5s, "0s" = not at all, at most 10m. Upstreams that come up later are
	// announced with notifications/tools/list_changed.
	StartupWait Duration `toml:"startup_wait"`
	// ClientPrefixRoom is the number of characters exposed names leave
	// free for a prefix the client adds (Claude Code: "mcp__<server>__");
	// names are at most 64 minus this. Default 0, clamped to 0..48.
	ClientPrefixRoom int `toml:"client_prefix_room"`
	FrontLimits          // timeouts and connection caps of the HTTP front (front.go)
	ClientAddress        // whose X-Forwarded-For/Forwarded is believed (clientaddr.go)
	StateStore           // the state replicas share (statestore.go)
}

// ToolSearch is the [tool_search] table (SPEC §3, §4).
type ToolSearch struct {
	Enabled            bool     `toml:"enabled"`              // default false: direct mode
	Mode               string   `toml:"mode"`                 // "code" (default) | "tools" | "directory"
	CodeTimeoutMS      int      `toml:"code_timeout_ms"`      // default 10000, clamped to 1000..60000
	SearchDefaultLimit int      `toml:"search_default_limit"` // default 8, clamped to 1..MaxSearchLimit
	MaxSearchLimit     int      `toml:"max_search_limit"`     // default 20, clamped to 1..50
	Pinned             []string `toml:"pinned"`               // directory mode: tools shown with full schemas
	DirectoryMaxChars  int      `toml:"directory_max_chars"`  // directory mode: default 6000, clamped to 500..50000
	// Code-mode sandbox limits (docs/config.md). Trust:
	// they bound what model-written code can make the proxy hold and how
	// many sandbox slots one client session can take.
	CodeMaxRuns           int `toml:"code_max_runs"`             // runs at once; default 4, clamped to 1..64
	CodeMaxRunsPerSession int `toml:"code_max_runs_per_session"` // runs at once per client session; default code_max_runs/2 (at least 1), clamped to 1..code_max_runs
	CodeMaxCallBytes      int `toml:"code_max_call_bytes"`       // JSON arguments of one bridge call, bytes; default 262144, clamped to 16384..33554432
	CodeMaxRunBytes       int `toml:"code_max_run_bytes"`        // JSON arguments of all bridge calls of a run, bytes; default 2097152, clamped to code_max_call_bytes..268435456
	// Semantic switches the search's semantic signal (a related-terms
	// table shipped in the binary, fused with BM25F); nil means the
	// default, catalog.DefaultRankParams().Semantic > 0.
	Semantic *bool `toml:"semantic"`
	// Dense switches the search's dense signal (a static embedding table
	// distilled from a sentence encoder, shipped in the binary, fused with
	// BM25F); nil means the default, catalog.DefaultRankParams().Dense > 0.
	Dense *bool `toml:"dense"`
}

// Upstream is one [upstreams.NAME] table: a stdio child (Command set) or an
// HTTP server (URL set), never both.
type Upstream struct {
	Name string `toml:"-"` // the table key

	Command string            `toml:"command"`
	Args    []string          `toml:"args"`
	Env     map[string]string `toml:"env"`
	// InheritEnv gives the child the proxy's whole environment plus Env;
	// default false: only the minimal variables (upstream/env.go) plus Env.
	InheritEnv bool   `toml:"inherit_env"`
	Cwd        string `toml:"cwd"` // relative paths are resolved against the config file's folder

	URL       string `toml:"url"`
	Transport string `toml:"transport"` // "streamable-http" (default with url) | "sse"
	// TransportAuto: url without transport. Streamable HTTP is tried first
	// and, when the server refuses its POST with 400, 404 or 405, the
	// legacy SSE transport (what the MCP spec's backwards-compatibility
	// section asks of clients, and what Cursor does with a bare url).
	TransportAuto bool `toml:"-"`
	// SSEPathPrefix is put before the absolute message-endpoint path a
	// legacy SSE server advertises ("/message?sessionId=…") when a reverse
	// proxy serves the server under a prefix the server does not know
	// ("/tools"): the POSTs then go to /tools/message. Unset, the prefix is
	// derived when the advertised path is the end of url's path (the
	// go-sdk's SSE handler advertises its own path) (upstream/http.go).
	SSEPathPrefix string            `toml:"sse_path_prefix"`
	Headers       map[string]string `toml:"headers"`
	// Public names env variables and headers of this upstream whose values
	// are not secrets: `check` shows them and outputs do not hide them.
	// Every other env and header value is a secret (secrets.go).
	Public []string `toml:"public"`

	Trusted        bool        `toml:"trusted"`
	Prefix         *string     `toml:"prefix"` // nil means Name; "" allowed
	DirectOnly     []string    `toml:"direct_only"`
	Enabled        *bool       `toml:"enabled"`         // nil means true
	StartupTimeout Duration    `toml:"startup_timeout"` // default 30s
	CallTimeout    Duration    `toml:"call_timeout"`    // default 55s
	PingInterval   Duration    `toml:"ping_interval"`   // default 30s: health ping of a ready upstream; two failed pings in a row reconnect it
	Session        string      `toml:"session"`         // "shared" (default) | "per-client"
	Credential     *Credential `toml:"credential"`      // per-user credentials (identity.go); nil means static
	// AllowInternalRedirects lets redirects of this HTTP upstream reach
	// link-local, cloud-metadata, unspecified, (for a url not on loopback)
	// loopback and (for a url not on a private address) private addresses;
	// default false (upstream/redirect.go).
	AllowInternalRedirects bool `toml:"allow_internal_redirects"`
	// ValidateInput: check each call's arguments against the tool's
	// inputSchema before forwarding. nil means on in the
	// code, tools and directory modes and off in direct mode.
	ValidateInput *bool `toml:"validate_input"`
	// Roots: offer the MCP roots capability (MCP spec, client/roots) to
	// this upstream, so that its roots/list reaches the calling client
	// (docs/policy.md). nil means true. false: the upstream is told the
	// client has no roots, so a server that takes its folders from roots
	// keeps the ones on its command line and asks nothing at start
	// (server-filesystem).
	Roots *bool `toml:"roots"`
	// Protocol is the MCP version the proxy speaks to this upstream:
	// "auto" (default; docs/config.md, upstream/version.go) or one of
	// Protocols' versions.
	Protocol string `toml:"protocol"`
	// AlwaysLoad: whether this upstream's tools, where they are listed to
	// the client as tools of their own, carry _meta["anthropic/alwaysLoad"]
	// (Claude Code then never defers them behind its own tool search).
	// nil: on for the direct-only and pinned tools of the search modes (as
	// for the proxy's own tools there), and in direct mode the _meta the
	// upstream sent; true sets it, false removes it.
	AlwaysLoad *bool `toml:"always_load"`
}

// OffersRoots reports whether the upstream is offered the roots capability
// (key roots, default true).
func (u *Upstream) OffersRoots() bool { return u.Roots == nil || *u.Roots }

// IsPublic reports whether name, an env variable (exact) or a header
// (any case) of the upstream, is listed in public.
func (u *Upstream) IsPublic(name string) bool {
	for _, p := range u.Public {
		if p == name {
			return true
		}
		if _, isHeader := u.Headers[name]; isHeader && strings.EqualFold(p, name) {
			return true
		}
	}
	return false
}

// IsEnabled reports whether the upstream is enabled (default true).
func (u *Upstream) IsEnabled() bool { return u.Enabled == nil || *u.Enabled }

// PrefixOrName returns the exposed-name prefix: Prefix if set, else Name.
func (u *Upstream) PrefixOrName() string {
	if u.Prefix != nil {
		return *u.Prefix
	}
	return u.Name
}

// IsHTTP reports whether the upstream is reached over HTTP.
func (u *Upstream) IsHTTP() bool { return u.URL != "" }

// ToolRules is a set of policy rules (SPEC §6). Entries are exposed names,
// catalog ids, glob patterns ("github__*", "*__delete_*") and groups
// ("group:<upstream>", "group:<name from [groups]>").
type ToolRules struct {
	Profile   string   `toml:"profile"` // "full" | "minimal" | a [profiles.NAME]; "" inherits
	Allow     []string `toml:"allow"`   // nil: not set; non-nil: an explicit allow list
	Deny      []string `toml:"deny"`
	AlsoAllow []string `toml:"also_allow"`
}

// Tools is the [tools] table: the deployment's policy.
type Tools struct {
	ToolRules
	RequireApproval []string              `toml:"require_approval"`
	ApprovalCommand []string              `toml:"approval_command"` // argv; receives the call as JSON on stdin, answers allow|deny on stdout
	ApprovalTimeout Duration              `toml:"approval_timeout"` // default 60s
	ByClient        map[string]*ToolRules `toml:"by_client"`        // key: glob on clientInfo.name
}

// Profile is a [profiles.NAME] table: a named base allow list.
type Profile struct {
	Allow []string `toml:"allow"`
	Deny  []string `toml:"deny"`
}

// Endpoint is an [endpoints.NAME] table: an extra HTTP path with its own
// token and tool rules.
type Endpoint struct {
	Name  string    `toml:"-"`
	Path  string    `toml:"path"`  // e.g. "/team-a/mcp"; SSE is served at Path+"/sse"... see docs
	Token string    `toml:"token"` // optional bearer token; ${VAR} expanded; secret
	Tools ToolRules `toml:"tools"`
}

// Telemetry is the [telemetry] table (SPEC §7).
type Telemetry struct {
	SessionLog    string `toml:"session_log"`    // JSON Lines file; "" disables
	LogArguments  bool   `toml:"log_arguments"`  // default false: no argument values in logs
	MetricsListen string `toml:"metrics_listen"` // for stdio deployments: address of /metrics and /healthz; "" disables
	// OpenTelemetry traces over OTLP/HTTP; off while TracesEndpoint is "".
	TracesEndpoint    string            `toml:"traces_endpoint"`     // e.g. "http://127.0.0.1:4318/v1/traces"
	TracesHeaders     map[string]string `toml:"traces_headers"`      // sent with every export; secrets
	TracesSampleRatio float64           `toml:"traces_sample_ratio"` // default 1.0, clamped to 0..1
}

// Duration is a time.Duration written in TOML as a string such as "30s" or "1500ms".
type Duration struct{ time.Duration }

// UnmarshalText parses a Go duration string ("30s", "1500ms", "1m30s") as
// accepted by time.ParseDuration. A bare number such as "30" is an error
// (no unit). Range checks (> 0) are done by Parse, which knows the key.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("invalid duration %q (write it like \"30s\" or \"1500ms\")", string(b))
	}
	d.Duration = v
	return nil
}

// MarshalText writes the duration in time.Duration.String form ("1m30s").
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.Duration.String()), nil }
