// Package proxy is the front of mcp-toolsearch: the MCP server clients talk
// to (stdio, Streamable HTTP, SSE), its sessions, and the single call path
// every tool call takes, whatever the mode (policy, approval, upstream call
// with timeout, output validation, telemetry).
//
// Dependencies point one way: proxy -> modes, upstream, catalog.
package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
	"github.com/mcp-toolsearch/mcp-toolsearch/config"
	"github.com/mcp-toolsearch/mcp-toolsearch/ingest"
	"github.com/mcp-toolsearch/mcp-toolsearch/internal/front"
	"github.com/mcp-toolsearch/mcp-toolsearch/modes"
	"github.com/mcp-toolsearch/mcp-toolsearch/policy"
	"github.com/mcp-toolsearch/mcp-toolsearch/sandbox"
	"github.com/mcp-toolsearch/mcp-toolsearch/telemetry"
	"github.com/mcp-toolsearch/mcp-toolsearch/tracing"
	"github.com/mcp-toolsearch/mcp-toolsearch/upstream"
)

// Version is the proxy's version, shown in serverInfo and `version`.
var Version = "0.1.0"

func init() { front.Version = Version } // the release build sets Version (-X)

// Options tune a Proxy beyond its config.
type Options struct {
	Logger *slog.Logger
	// Surface overrides the mode chosen from the config (tests, benchmarks).
	Surface modes.Surface
	// Tracing, when set, replaces [telemetry] traces_* (tests: an
	// in-process exporter; see tracing.Config).
	Tracing *tracing.Config
	// OneShot: the proxy runs for one command (check, list, describe, …)
	// and stops; Start's log does not promise background retries of an
	// upstream that failed to start.
	OneShot bool
}

// Proxy is one running deployment.
type Proxy struct {
	// cfgP, catP, surfP and polP are swapped as a whole by a reload
	// (reload.go); read them with conf, catalog, surf and pol.
	cfgP  atomic.Pointer[config.Config]
	catP  atomic.Pointer[catalog.Catalog]
	surfP atomic.Pointer[surfaceState]
	polP  atomic.Pointer[policy.Policy]
	// polOpen is the config's policy; polP is it with the upstreams a deny
	// entry that matches no tool names closed (policy.go: closeDeadDenies).
	polOpen      atomic.Pointer[policy.Policy]
	reloadMu     sync.Mutex // the switch of a reload; held by onToolsChanged too
	reloadSeq    sync.Mutex // one Reload at a time (it never waits for an upstream: reload.go)
	fixedSurface bool       // Options.Surface given: reload keeps it
	oneShot      bool       // Options.OneShot

	log       *slog.Logger
	ups       *upstream.Set
	api       modes.API
	viewIx    catalog.ViewIndexes // search indexes per policy view
	rec       *telemetry.Recorder
	metrics   *telemetry.Metrics
	pt        *passthrough // resources, prompts, relays, per-client sessions (passthrough*.go)
	st        statelessState
	cacheClk  cacheClock       // cache.go: when the catalog last changed (ttlMs)
	exs       exchanges        // exchange.go: 2026-07-28 calls waiting for client input
	stateless *front.Stateless // the fast path of 2026-07-28 requests over HTTP
	hsess     *front.Sessions  // the stateful Streamable HTTP sessions and their fast path
	pins      *pinGuard        // pins.go: pinned tool definitions
	idn       *idState         // identity, credentials, traces, rate limits, audit (identity.go)
	drains    drainCount       // drain.go: client requests in flight, waited for at shutdown
	shares    shareState       // shares.go: each subject's share of server.max_sessions

	mu        sync.Mutex
	servers   map[string]*mcp.Server       // endpoint name ("" = main) -> server
	chains    map[string]mcp.MethodHandler // the same keys: each server's receiving chain (server.go)
	sessions  map[*mcp.ServerSession]*session
	reserved  map[*mcp.ServerSession]bool // initialize admitted, session not created yet (lifetime.go)
	tickets   map[any]*shareTicket        // shares.go: the share each admitted session holds
	closed    bool
	refWarned map[string]bool // toolrefs.go: config tool references already warned about

	life    context.Context // ends at Close
	endLife context.CancelFunc
	fatal   chan error // see Fatal
	// startSettled is set once every upstream of the start has settled its
	// first attempt (/healthz?started, http.go).
	startSettled atomic.Bool
	// startBy is the end of the start-up window (unix nanoseconds; 0 when
	// there is none): set by StartServing in the search modes, whose
	// tool searches and calls wait up to then for upstreams still on
	// their first attempt (starting.go WaitStarting).
	startBy atomic.Int64
	startAt time.Time // when Start or StartServing began (logged with the settled start)

	shortened    sync.Map       // catalog id -> exposed name already logged as shortened (ingest.go)
	schemaWarned schemaWarnings // validate.go: schemas already warned about as not compiling

	removedP atomic.Pointer[removedTools] // removed.go: tools of the upstreams the last reload removed
}

// New builds a proxy from a loaded config. It starts nothing.
func New(cfg *config.Config, opts Options) (*Proxy, error) {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	p := &Proxy{log: log, servers: map[string]*mcp.Server{}, chains: map[string]mcp.MethodHandler{}, sessions: map[*mcp.ServerSession]*session{}, reserved: map[*mcp.ServerSession]bool{}, fatal: make(chan error, 1)}
	p.cfgP.Store(cfg)
	p.stateless = &front.Stateless{Log: log}
	p.hsess = &front.Sessions{EndRequests: p.endByID}
	p.life, p.endLife = context.WithCancel(context.Background())
	p.cacheClk.start = time.Now()
	p.catP.Store(newCatalog(cfg))
	p.catalog().OnPublish(p.viewIx.Published) // view indexes follow off the request path
	p.api = apiFor(cfg)
	if err := p.compilePolicy(); err != nil {
		return nil, err
	}
	p.metrics = telemetry.NewMetrics()
	rec, err := telemetry.NewRecorder(cfg.Telemetry.SessionLog, cfg.Telemetry.LogArguments, p.metrics)
	if err != nil {
		return nil, fmt.Errorf("telemetry.session_log: %w", err)
	}
	p.rec = rec
	rec.SetRedactor(cfg.Redact)       // the session log
	p.metrics.SetRedactor(cfg.Redact) // and metrics labels never show a secret
	if err := p.openPins(cfg); err != nil {
		return nil, err
	}
	p.oneShot = opts.OneShot
	if opts.Surface != nil {
		p.surfP.Store(&surfaceState{surface: opts.Surface})
		p.fixedSurface = true
	} else {
		p.surfP.Store(p.surfaceFor(cfg))
	}
	p.pt = newPassthrough(p)
	if err := p.setupIdentity(opts); err != nil {
		return nil, err
	}
	p.ups = upstream.NewSet(cfg, p.managerOptions, p.onToolsChanged)
	if reg := p.metrics.Registry(); reg != nil {
		if err := reg.Register(upstream.NotAppliedCollector{U: p.ups}); err != nil { // reloadkeep.go
			return nil, fmt.Errorf("metrics: %w", err)
		}
	}
	return p, nil
}

// managerOptions are the options of the upstream manager of each upstream
// of cfg.
func (p *Proxy) managerOptions(cfg *config.Config) upstream.Options {
	return upstream.Options{
		Logger:     p.log,
		Grace:      cfg.Server.ShutdownGrace.Duration,
		ClientInfo: &mcp.Implementation{Name: "mcp-toolsearch", Version: Version},
		// OnToolsChanged is set per manager (upstream.Set).
		// Notification handlers and the relay of sampling, elicitation
		// and roots (passthrough_relay.go).
		ClientOptions:    p.pt.clientOptions,
		ClientMiddleware: p.pt.clientMiddleware,
		// Request identity for server-to-client requests (passthrough_relay.go).
		WrapHTTP: func(_ string, rt http.RoundTripper) http.RoundTripper {
			return upstream.TagCallers(rt, cfg.Server.MaxMessageBytes)
		},
		Ingest:          ingest.New(ingestSteps(cfg, p.pins)...), // THE tool-ingest point (proxy/ingest.go)
		MaxMessageBytes: cfg.Server.MaxMessageBytes,
		SDKCalls:        !front.Fast, // the fast paths off: every call the go-sdk's way
	}
}

// newCatalog is an empty catalog for cfg's enabled upstreams.
func newCatalog(cfg *config.Config) *catalog.Catalog {
	c := catalog.New(cfg.Server.NameSeparator, modes.Reserved, enabledInfos(cfg))
	c.SetMaxNameLen(maxNameLen(cfg)) // room for a client's prefix
	c.SetSignals(cfg.ToolSearch.Semantic, cfg.ToolSearch.Dense)
	return c
}

func apiFor(cfg *config.Config) modes.API {
	return modes.API{
		Limits: modes.Limits{Default: cfg.ToolSearch.SearchDefaultLimit, Max: cfg.ToolSearch.MaxSearchLimit},
		Bounds: catalog.DefaultBounds(),
	}
}

// surfaceState is the active surface and, in code mode, its sandbox pool.
type surfaceState struct {
	surface modes.Surface
	pool    *sandbox.Pool // nil outside code mode
}

func (p *Proxy) conf() *config.Config      { return p.cfgP.Load() }
func (p *Proxy) catalog() *catalog.Catalog { return p.catP.Load() }
func (p *Proxy) surf() modes.Surface       { return p.surfP.Load().surface }
func (p *Proxy) pol() *policy.Policy       { return p.polP.Load() }

// surfaceFor picks the surface the config asks for (SPEC §3).
func (p *Proxy) surfaceFor(cfg *config.Config) *surfaceState {
	ts := cfg.ToolSearch
	api := apiFor(cfg)
	al := alwaysLoadSettings(cfg)
	if !ts.Enabled {
		return &surfaceState{surface: modes.Direct{AlwaysLoad: al}}
	}
	switch ts.Mode {
	case "directory":
		return &surfaceState{surface: &modes.Tools{API: api, Directory: true, DirectoryMaxChars: ts.DirectoryMaxChars, Pinned: ts.Pinned, AlwaysLoad: al}}
	case "tools":
		return &surfaceState{surface: &modes.Tools{API: api, AlwaysLoad: al}}
	}
	// "code" (the default). If the sandbox cannot start here, fall back to
	// tools mode before the catalog is compacted, and say why (SPEC §3).
	// The CPU limit must not end a run before its wall-clock timeout does
	// (that would report a crash instead of a timeout): timeout + 5 s.
	pool, err := sandbox.NewPool(sandbox.Options{Logger: p.log, CPUSeconds: ts.CodeTimeoutMS/1000 + 5,
		MaxConcurrentRuns: ts.CodeMaxRuns, MaxRunsPerOwner: ts.CodeMaxRunsPerSession,
		MaxMessageBytes: ts.CodeMaxCallBytes, MaxRunBridgeBytes: ts.CodeMaxRunBytes})
	if err != nil {
		p.log.Warn("code mode unavailable: the sandbox worker cannot start; falling back to tools mode", "err", err)
		return &surfaceState{surface: &modes.Tools{API: api, AlwaysLoad: al}}
	}
	if w := codeBudgetWarning(cfg); w != "" {
		p.log.Warn(w) // codebudget.go
	}
	return &surfaceState{surface: &modes.Code{API: api, Pool: pool, Timeout: time.Duration(ts.CodeTimeoutMS) * time.Millisecond, AlwaysLoad: al}, pool: pool}
}

// alwaysLoadSettings maps each enabled upstream with always_load set to
// its value (nil when none has it).
func alwaysLoadSettings(cfg *config.Config) map[string]bool {
	var out map[string]bool
	for _, up := range cfg.EnabledUpstreams() {
		if up.AlwaysLoad != nil {
			if out == nil {
				out = map[string]bool{}
			}
			out[up.Name] = *up.AlwaysLoad
		}
	}
	return out
}

// Mode is the active surface's mode name.
func (p *Proxy) Mode() string { return p.surf().Mode() }

// Catalog returns the current catalog snapshot.
func (p *Proxy) Catalog() *catalog.Snapshot { return p.catalog().Snapshot() }

// Statuses reports every upstream's state.
func (p *Proxy) Statuses() []upstream.Status { return p.ups.Statuses() }

// Start connects every enabled upstream concurrently and returns once each
// is ready, failed, or past its startup_timeout; failed ones keep retrying
// in the background.
//
// ctx bounds the wait only (`serve` passes server.startup_wait: no
// upstream holds the proxy longer): an upstream still
// on its first attempt when ctx ends is listed unavailable ("starting")
// and keeps connecting; its tools arrive with
// notifications/tools/list_changed. The fail-closed policy check (SPEC §6)
// runs once every upstream settled: here, or later in the background,
// when its failure is sent on Fatal.
func (p *Proxy) Start(ctx context.Context) error {
	if p.startAt.IsZero() {
		p.startAt = time.Now()
	}
	p.pins.start(p.watchApprovals) // pins.go: `mcp-toolsearch approve` while running
	p.ups.Launch()
	settled := p.ups.WaitSettled(ctx)
	p.markNotReady()
	p.logStarting()
	if !settled {
		go p.checkPolicyWhenSettled()
		return nil
	}
	p.startSettled.Store(true)
	// Fail closed: an explicit allow list resolving to no callable tool
	// stops the run (the operator meant some tools to be callable; none
	// is, so the config does not say what it meant).
	return p.CheckPolicy()
}

// StartServing is Start for `serve`: it returns as soon as the proxy can
// answer its clients. In direct mode the tools/list answer is the
// catalog, so it waits for the upstreams up to wait (server.startup_wait)
// as Start does. In the search modes (code, tools, directory) the
// surface does not depend on the upstreams: it returns at once, so a
// client's initialize and tools/list are answered on its first turn
// whatever the upstreams, and a search, describe or call of the
// surface's tools made before every upstream settled waits for them up to
// the same wait (counted from here), then answers with what is ready and
// names what is still starting (session.WaitStarting). The upstreams
// still starting when wait ends are logged as Start logs them.
func (p *Proxy) StartServing(ctx context.Context, wait time.Duration) error {
	if p.Mode() == "direct" || wait <= 0 {
		wctx, cancel := context.WithTimeout(ctx, wait)
		defer cancel()
		return p.Start(wctx)
	}
	p.startAt = time.Now()
	by := p.startAt.Add(wait)
	p.startBy.Store(by.UnixNano())
	p.pins.start(p.watchApprovals)
	p.ups.Launch()
	p.markNotReady()
	go func() {
		wctx, cancel := context.WithDeadline(p.life, by)
		defer cancel()
		if !p.ups.WaitSettled(wctx) && p.life.Err() == nil {
			p.logStarting()
		}
	}()
	go p.checkPolicyWhenSettled()
	return nil
}

// startingReason is the catalog's reason for an upstream whose first
// connection attempt is still running.
const startingReason = "starting: its first connection attempt is still running"

// markNotReady marks the upstreams that are not ready unavailable in the
// catalog: starting (startingReason) or failed (their error). It holds
// p.reloadMu, as applyListing does: an upstream that turns ready meanwhile
// is either seen ready here or has its listing applied after the mark
// (which clears it), never marked after its listing.
func (p *Proxy) markNotReady() {
	p.reloadMu.Lock()
	defer p.reloadMu.Unlock()
	for _, st := range p.ups.Statuses() {
		switch st.State {
		case upstream.StateReady:
		case upstream.StateStarting:
			p.catalog().SetUnavailable(st.Name, startingReason)
		default:
			p.catalog().SetUnavailable(st.Name, p.conf().Redact(st.Err))
		}
	}
}

// logStarting logs each upstream that is not ready at the end of the
// start-up wait: still starting, or failed and retrying.
func (p *Proxy) logStarting() {
	for _, st := range p.ups.Statuses() {
		switch st.State {
		case upstream.StateReady:
		case upstream.StateStarting:
			p.log.Warn("upstream still starting; serving without it until it is ready (server.startup_wait)", "upstream", st.Name)
		default:
			if p.oneShot {
				p.log.Warn("upstream failed to start", "upstream", st.Name, "reason", st.Err)
			} else {
				p.log.Warn("upstream not ready at start; retrying in the background", "upstream", st.Name, "state", st.State, "reason", st.Err)
			}
		}
	}
}

// checkPolicyWhenSettled runs the fail-closed policy check once every
// upstream's first attempt settled (after Start returned early) and sends
// its failure on Fatal.
func (p *Proxy) checkPolicyWhenSettled() {
	if !p.ups.WaitSettled(p.life) {
		return // closed first
	}
	p.startSettled.Store(true)
	snap := p.Catalog()
	p.log.Info("upstreams started", "tools", len(snap.Entries), "unavailable_upstreams", len(snap.Unavailable), "startup_ms", time.Since(p.startAt).Milliseconds())
	p.mu.Lock()
	open := make([]*session, 0, len(p.sessions))
	for _, s := range p.sessions {
		open = append(open, s)
	}
	p.mu.Unlock()
	for _, s := range open {
		s.recordCatalog()
	}
	// Serving already: a deny entry that matches no tool closes its
	// upstream (closeDeadDenies) rather than stopping every other one.
	if err := p.closeDeadDenies(true); err != nil {
		err = fmt.Errorf("policy fails closed: %w", err)
		p.log.Error("stopping: " + p.conf().Redact(err.Error()))
		select {
		case p.fatal <- err:
		default:
		}
	}
}

// Fatal delivers an error that must stop the proxy after Start returned
// (today: the fail-closed policy check that ran late, see Start).
func (p *Proxy) Fatal() <-chan error { return p.fatal }

// Close ends client sessions and stops every upstream (children are
// always waited on).
func (p *Proxy) Close(ctx context.Context) error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.endLife()
	p.closeSessions()
	p.stateless.Close() // idle fast-path sessions
	if pool := p.surfP.Load().pool; pool != nil {
		pool.Close()
	}
	p.closeIdentity(ctx) // per-user sessions, traces, audit log
	err := p.ups.Close(ctx)
	p.pins.close()
	_ = p.rec.Close()
	return err
}

// closeSessions closes every connected client session.
func (p *Proxy) closeSessions() {
	p.mu.Lock()
	sessions := make([]*mcp.ServerSession, 0, len(p.sessions))
	for ss := range p.sessions {
		sessions = append(sessions, ss)
	}
	p.mu.Unlock()
	for _, ss := range sessions {
		_ = ss.Close()
	}
}

// onToolsChanged is the upstream manager's callback: a fresh listing (or
// nil when the upstream went down) updates that upstream's part of the
// catalog, and connected clients get notifications/tools/list_changed.
func (p *Proxy) onToolsChanged(up string, tools []*mcp.Tool, current func() bool) {
	p.mu.Lock()
	closing := p.closed
	p.mu.Unlock()
	if closing {
		return
	}
	p.reloadMu.Lock() // a reload swaps the catalog (reload.go)
	defer p.reloadMu.Unlock()
	if current != nil && !current() {
		return // a reload switched up to another instance meanwhile
	}
	p.applyListing(up, tools)
}

// applyListing puts a listing of up in the catalog (tools nil: up went
// down) and tells the clients; p.reloadMu is held.
func (p *Proxy) applyListing(up string, tools []*mcp.Tool) {
	if tools == nil {
		reason := "down"
		if st, ok := p.ups.Status(up); ok && st.Err != "" {
			reason = st.Err
		}
		listed := false
		for range upstreamTools(p.catalog().Snapshot(), up) {
			listed = true
			break
		}
		p.catalog().SetUnavailable(up, p.conf().Redact(reason)) // reasons reach clients in hits
		p.metrics.SetUpstreamUp(up, false)
		switch {
		case p.oneShot:
			p.log.Warn("upstream unavailable", "upstream", up, "reason", reason)
		case listed:
			p.log.Warn("upstream unavailable; its tools stay listed and calls to them fail until it is back", "upstream", up, "reason", reason)
		default: // never listed: it has no tools to keep
			p.log.Warn("upstream unavailable; retrying in the background, its tools join the catalog once it starts", "upstream", up, "reason", reason)
		}
	} else {
		st, _ := p.ups.Status(up)
		p.catalog().SetTools(up, entriesFromListing(tools, st.Diagnostics, st.Extra))
		p.logShortenedNames(up)
		p.metrics.SetUpstreamUp(up, true)
		q, n := ingest.Counts(st.Diagnostics)
		p.metrics.SetIngest(up, q, n)
		p.metrics.SetHiddenTools(up, hiddenTools(st.Diagnostics)) // security.go
		p.metrics.SetCatalogSize(up, p.trusted(up), len(tools))
		if p.pt.upRelay(up).listed.Allow() { // one line and one summary a minute (notifyrelay.go)
			p.log.Info("upstream tools listed", "upstream", up, "tools", len(tools))
		}
		p.warnToolRefs()     // toolrefs.go
		p.pt.resubscribe(up) // a new upstream session holds no subscription yet
		p.pt.upstreamReady(up)
		if p.startSettled.Load() {
			// A listing after the start (an upstream that was down, a
			// list_changed) may leave a deny entry naming no tool.
			_, _ = p.recheckDeniesLocked(false, false) // policy.go
		}
	}
	p.notifyToolsChanged()
}

func (p *Proxy) trusted(up string) bool {
	u, ok := p.conf().Upstreams[up]
	return ok && u.Trusted
}

// entryFromTool keeps an upstream tool's JSON exactly as received.
func entryFromTool(t *mcp.Tool) *catalog.Entry {
	e := &catalog.Entry{Name: t.Name, Title: t.Title, Description: t.Description}
	e.InputSchema = rawJSON(t.InputSchema)
	e.OutputSchema = rawJSON(t.OutputSchema)
	if t.Annotations != nil {
		e.Annotations = rawJSON(t.Annotations)
	}
	if len(t.Meta) > 0 {
		e.Meta = rawJSON(t.Meta)
	}
	if len(t.Icons) > 0 {
		e.Icons = rawJSON(t.Icons)
	}
	return e
}

func rawJSON(v any) json.RawMessage {
	switch x := v.(type) {
	case nil:
		return nil
	case json.RawMessage:
		return x
	}
	b, err := json.Marshal(v)
	if err != nil || string(b) == "null" {
		return nil
	}
	return b
}

// refreshTool is a tool that is added and removed at once on each server
// to make the SDK send notifications/tools/list_changed to every session
// (legacy sessions, and subscribed ones on protocol 2026-07-28). It is
// never listed: tools/list is answered by the proxy's middleware.
var refreshTool = &mcp.Tool{Name: "mcp-toolsearch-refresh", InputSchema: json.RawMessage(`{"type":"object"}`)}

func (p *Proxy) notifyToolsChanged() {
	p.cacheClk.changed(time.Now())
	p.mu.Lock()
	servers := make([]*mcp.Server, 0, len(p.servers))
	for _, s := range p.servers {
		servers = append(servers, s)
	}
	p.mu.Unlock()
	for _, s := range servers {
		s.AddTool(refreshTool, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, errors.New("not callable")
		})
		s.RemoveTools(refreshTool.Name)
	}
}

// CallUnavailableError is the error of a call to a tool whose upstream is down.
type CallUnavailableError struct {
	Upstream, Reason string
}

func (e *CallUnavailableError) Error() string {
	return fmt.Sprintf("upstream %q is unavailable: %s", e.Upstream, e.Reason)
}

// call is THE call path: every tool call, from every mode and route
// (direct tools/call, tool_call, the code bridge, a hydrated directory
// name, the CLI), runs through here, in this order:
//
//  1. policy (SPEC §6): a denied tool gets the same answer as an unknown one;
//  2. arguments validated against the inputSchema (inputcheck.go), so a
//     wrong call never reaches the upstream nor asks for approval;
//  3. rate limits ([rate_limits], callpath_identity.go): a refused call
//     gets an isError result with a retry hint;
//  4. approval (approval.go): require_approval tools ask the person first;
//  5. output schema compiled for trusted tools (validate.go), before any side effect;
//  6. forward (forward.go): the upstream call, with call_timeout, progress
//     and cancellation, and the calling client's context for requests the
//     upstream sends back; with the user's own credential for upstreams
//     with a per-user credential source (userconn.go), or the connect
//     prompt;
//  7. output validated for trusted tools (validate.go);
//  8. telemetry: one call record with outcome, duration and bytes; the
//     call's span (children: policy, approval, upstream call) and its audit
//     line (callpath_identity.go).
func (p *Proxy) call(ctx context.Context, s *session, e *catalog.Entry, args json.RawMessage, via string) (res *mcp.CallToolResult, err error) {
	start := time.Now()
	ctx, span := p.startCallSpan(ctx, s, e, via) // callpath_identity.go
	rec := telemetry.CallRecord{ID: e.ID, Upstream: e.Upstream, Trusted: e.Trusted, Mode: p.surf().Mode(), ViaBridge: via == modes.ViaBridge, BytesIn: len(args)}
	if p.conf().Telemetry.LogArguments {
		rec.Args = args
	}
	defer func() {
		rec.Outcome = outcomeOf(res, err)
		rec.DurationMs = msSince(start)
		if res != nil && p.conf().Telemetry.SessionLog != "" { // bytes go only to the session log
			if raw := rawSlotFrom(ctx); raw != nil && raw.JSON != nil {
				rec.BytesOut = len(raw.JSON)
			} else if b, err := json.Marshal(res); err == nil {
				rec.BytesOut = len(b)
			}
		}
		s.ts.Call(rec)
		if p.log.Enabled(ctx, slog.LevelDebug) { // its arguments are built (allocated) even when off
			p.log.Debug("tool call", "id", e.ID, "via", via, "outcome", rec.Outcome, "ms", rec.DurationMs)
		}
		p.callDone(ctx, span, s, e, via, args, rec.Outcome, rec.DurationMs, err) // span end, audit line
	}()
	d := p.decideTraced(ctx, s, e)
	if !d.Allowed {
		// Same answer as an unknown tool (SPEC §6): no hint it exists.
		rec.Rule = d.Rule
		p.log.Debug("denied", "id", e.ID, "via", via, "rule", d.Rule, "client", s.client, "session", s.id())
		return nil, &blockedError{outcome: telemetry.OutcomeDenied, err: modes.ErrUnknownTool(e.Exposed)}
	}
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`) // MCP: arguments is an object; missing or null means {}
	}
	if err := p.checkInput(e, args); err != nil {
		return nil, err
	}
	if res := p.rateLimited(ctx, s, e); res != nil {
		return res, nil // [rate_limits]: the upstream never sees the call
	}
	if d.NeedsApproval {
		if res, err := p.approveTraced(ctx, s, e, args, d.ApprovalRule); res != nil || err != nil {
			return res, err // blocked: the upstream never sees the call
		}
	}
	if rule, hash, ok := p.changeApproval(e); ok { // pins.go: a changed definition
		if res, err := p.approve(ctx, s, e, args, rule); res != nil || err != nil {
			return res, err
		}
		p.approvedChange(e, hash)
	}
	check := p.outputCheck(e)
	if tc := taskCallFrom(ctx); tc != nil && callRequest(ctx, e.Exposed) != nil && p.takesTaskCalls(e.Upstream) {
		// Called as a task on an upstream that offers task-augmented
		// tools/call (forward sends it so): the output comes with
		// tasks/result, checked there; an answer without a task is
		// checked by callAsTask (tasks.go). Not for a tool called from
		// inside tool_call or the code bridge. Any other upstream gets a
		// plain call, checked here.
		check = nil
		tc.asTask, tc.route = true, taskRoute{upstream: e.Upstream, entryID: e.ID}
	}
	if check != nil {
		ctx = withoutRawSlot(ctx) // the output is validated: decoded (rawslot.go)
	}
	res, err = p.forwardTraced(ctx, s, e, args) // forward, with span, trace context and per-user credentials
	if raw := rawSlotFrom(ctx); err == nil && raw != nil && raw.JSON != nil && res.IsError && len(p.conf().Secrets()) > 0 {
		res, err = materialize(raw) // an error result is redacted below
	}
	if err == nil && check != nil {
		res = check(res)
	}
	if err == nil {
		res, err = p.cleanResult(ctx, e, res) // results.go: hidden characters
	}
	return redactResult(p.conf(), res), p.redactErr(p.shapeErr(e, err))
}

// shapeErr is where an upstream's failure is shaped for clients: an upstream's JSON-RPC error answer becomes one clean
// `upstream "NAME": <its message>` (modes.UpstreamError) instead of the
// layers it came through (`upstream "x": tools/call "t": calling
// "tools/call": MCP error -32042: … (JSON-RPC error -32042)`), its code and
// data kept as data; a timeout loses the Go context text at its end.
// Unavailable upstreams and cancellations keep their messages.
func (p *Proxy) shapeErr(e *catalog.Entry, err error) error {
	if err == nil || errors.Is(err, upstream.ErrUnavailable) || errors.Is(err, context.Canceled) {
		return err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &timeoutError{msg: strings.TrimSuffix(err.Error(), ": "+context.DeadlineExceeded.Error()), err: err}
	}
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		ue := modes.NewUpstreamError(e.Upstream, je)
		if len(ue.Data) > 0 { // upstream text: may echo a secret like the message
			if red := p.conf().Redact(string(ue.Data)); red != string(ue.Data) {
				ue.Data = nil
				if json.Valid([]byte(red)) {
					ue.Data = json.RawMessage(red)
				}
			}
		}
		return ue
	}
	return err
}

// timeoutError is a call that ran out of time, without the Go context
// text in its message; errors.Is(err, context.DeadlineExceeded) holds.
type timeoutError struct {
	msg string
	err error
}

func (t *timeoutError) Error() string { return t.msg }
func (t *timeoutError) Unwrap() error { return t.err }

// redactErr hides secret values (${VAR} substitutions, tokens) in an
// error's message, e.g. an HTTP upstream's URL with an API key in a
// transport error; errors.As/Is still see the original.
func (p *Proxy) redactErr(err error) error {
	if err == nil {
		return nil
	}
	if msg := p.conf().Redact(err.Error()); msg != err.Error() {
		return &redactedError{msg: msg, err: err}
	}
	return err
}

type redactedError struct {
	msg string
	err error
}

func (r *redactedError) Error() string { return r.msg }
func (r *redactedError) Unwrap() error { return r.err }

// blockedError is a call stopped by policy or approval; outcome is its
// telemetry outcome.
type blockedError struct {
	outcome string
	err     error
}

func (b *blockedError) Error() string { return b.err.Error() }
func (b *blockedError) Unwrap() error { return b.err }

// outcomeOf classifies a call's result for telemetry.
func outcomeOf(res *mcp.CallToolResult, err error) string {
	if err != nil { // errors.As targets escape: two allocations per call even without an error
		if be, ok := errors.AsType[*blockedError](err); ok {
			return be.outcome
		}
		if _, ok := errors.AsType[*ArgumentsError](err); ok {
			return telemetry.OutcomeInvalidArguments
		}
	}
	switch {
	case err != nil && errors.Is(err, upstream.ErrUnavailable):
		return telemetry.OutcomeUnavailable
	case err != nil && errors.Is(err, context.DeadlineExceeded):
		return telemetry.OutcomeTimeout
	case err != nil:
		return telemetry.OutcomeError
	case res != nil && res.IsError:
		if res.Meta != nil {
			if b, blocked := res.Meta[MetaKeyBlocked]; blocked {
				switch b {
				case "rate_limit":
					return telemetry.OutcomeRateLimited
				case "connect":
					return telemetry.OutcomeConnect
				}
				return telemetry.OutcomeBlockedApproval
			}
		}
		return telemetry.OutcomeToolError
	}
	return telemetry.OutcomeOK
}

// MetaKeyBlocked marks (in _meta) a result the proxy made for a call it
// blocked, e.g. by approval: {"io.github.mcp-toolsearch/blocked": "approval"}.
const MetaKeyBlocked = "io.github.mcp-toolsearch/blocked"

func msSince(t time.Time) float64 { return float64(time.Since(t).Microseconds()) / 1000 }
