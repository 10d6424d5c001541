// Package upstream keeps one MCP client connection per configured upstream
// server: a stdio child process, a Streamable HTTP endpoint or an SSE
// endpoint (DESIGN.md "upstream/"). For each upstream it starts the
// transport, lets the go-sdk client run initialize, lists tools page by page
// (MCP spec 2025-11-25, server/tools "Pagination"), re-lists on
// notifications/tools/list_changed, watches the connection, reconnects with
// jittered exponential backoff when it dies, and on Close stops stdio
// children following the MCP stdio shutdown sequence (spec
// basic/lifecycle "Shutdown": close stdin, wait, SIGTERM, wait, SIGKILL),
// reaping every child so no zombie or orphan is left.
//
// The package knows nothing of the catalog, policy or modes: it hands out
// raw *mcp.Tool lists and forwards tools/call.
package upstream

//lint:file-ignore SA1019 sampling, roots and logging are deprecated from protocol 2026-07-28 on; clients and servers of earlier protocols still use them

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/sourcegraph/conc"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
	"github.com/mcp-toolsearch/mcp-toolsearch/ingest"
)

// State is the lifecycle state of one upstream connection.
type State string

const (
	// StateStarting: the first connection attempt is running.
	StateStarting State = "starting"
	// StateReady: initialized and tools listed; calls are forwarded.
	StateReady State = "ready"
	// StateFailed: the last attempt failed or the connection died; a
	// reconnect is scheduled with backoff. Status.Err holds the reason.
	StateFailed State = "failed"
	// StateStopped: the manager was closed (or never started).
	StateStopped State = "stopped"
)

// Status is a snapshot of one upstream connection.
type Status struct {
	Name  string
	State State
	// Err is the reason of the last failure ("" when never failed). It is
	// kept while the state is failed and cleared when the upstream becomes
	// ready again.
	Err string
	// Cause is Err in the proxy's own words, without what the upstream
	// wrote (its stderr, its non-JSON-RPC output), e.g. `exec: "uvx":
	// executable file not found in $PATH` or "the process exited with
	// status 1 during initialize", "initialize: connection refused",
	// "tools/list: answered with error code -32601"; for model-facing text
	//. It never quotes what the upstream sent nor the
	// configured URL (cause.go). Unbounded: clip before showing.
	Cause string
	// Since is when State was entered.
	Since time.Time
	// Restarts counts connection attempts after the first one (each
	// reconnect attempt adds one, whether it succeeds or not).
	Restarts int
	// Tools is the number of tools of the last successful listing (0 when
	// not ready).
	Tools int
	// Diagnostics are the ingest pipeline's decisions on the tools of the
	// last successful listing (normalised and quarantined tools); kept
	// while the upstream is down. Shared; read-only.
	Diagnostics []ingest.Diagnostic
	// Extra is ingest.Result.Extra of the last successful listing: each
	// tool's members that mcp.Tool does not carry ("execution", …), by
	// tool name. Read in OnToolsChanged it belongs to that call's tools
	// (both are set under the same lock, before the call). Shared;
	// read-only.
	Extra map[string]json.RawMessage `json:"-"`
}

// Options tunes a Manager. The zero value is usable.
type Options struct {
	// Logger receives connection events; nil means slog.Default(). Every
	// record carries the attribute upstream=<name>.
	Logger *slog.Logger
	// Grace is the shutdown grace for stdio children: after stdin is closed
	// the child gets Grace to exit, then SIGTERM and another Grace, then
	// SIGKILL of its process group. Default 3s (config server.shutdown_grace).
	Grace time.Duration
	// OnToolsChanged is called after every successful (re)listing, including
	// the first one and the first one after a reconnect, with the full tool
	// list as it left the ingest pipeline (never nil: zero tools is an empty
	// slice, a valid and healthy answer); and with nil tools when the upstream goes down (ready -> failed
	// or stopped) or its first attempt fails (starting -> failed); not again
	// on failed retries. Calls for one upstream are serialized and ordered; calls for
	// different upstreams may run concurrently. The callback must not call
	// Close. Tools must be treated as read-only.
	OnToolsChanged func(upstream string, tools []*mcp.Tool)
	// OnStatus is called on every state change, and on every failed retry
	// (the reason may differ), serialized per upstream and after the
	// OnToolsChanged call of the same transition.
	OnStatus func(Status)
	// ClientInfo is the name/version the proxy presents in initialize.
	// Default {Name: "mcp-toolsearch", Version: "dev"}.
	ClientInfo *mcp.Implementation
	// ClientOptions, when set, is called once per connection attempt and
	// may return options (handlers for sampling, elicitation, logging,
	// progress...) for the go-sdk client; nil is allowed. The returned value
	// is copied. Its ToolListChangedHandler, if any, is called after the
	// manager's own handler (which schedules the re-list).
	ClientOptions func(upstream string) *mcp.ClientOptions
	// ClientMiddleware, when set, is called once per connection (shared or
	// per-client) and may return a receiving middleware for the go-sdk
	// client: it sees every request and notification the upstream sends
	// (e.g. to relay sampling/createMessage, elicitation/create and
	// roots/list to a client; the go-sdk has no roots handler). nil is
	// allowed.
	ClientMiddleware func(upstream string) mcp.Middleware
	// WrapHTTP, when set, wraps the http.RoundTripper of every session of
	// an HTTP upstream (shared and per-client). The proxy uses it to learn
	// which of its calls a server-to-client request answers (the request
	// arrives on that call's POST response stream). nil is allowed.
	WrapHTTP func(upstream string, rt http.RoundTripper) http.RoundTripper
	// MaxMessageBytes caps one message from an upstream, on every
	// transport (a stdio line, an HTTP body, an SSE event). An answer past
	// it fails its request (tools/call: an isError result naming the size
	// and the cap); the session stays up. Default MaxMessageBytes (config
	// server.max_message_bytes).
	MaxMessageBytes int
	// MaxPages caps the number of tools/list pages read per listing.
	// Default 100.
	MaxPages int
	// SDKCalls keeps every tools/call on the go-sdk client: no call past
	// it (owntoolcall.go), so no raw result either (CallOptions.Raw stays
	// empty). The proxy sets it when its fast paths are off (front.Fast),
	// the reference path its protocol cases compare against.
	SDKCalls bool
	// Ingest is THE tool-ingest point: the pipeline every listed tool of
	// every session passes (package ingest). nil means ingest.Default().
	Ingest *ingest.Pipeline
	// BackoffMin and BackoffMax bound the reconnect delay: attempt n waits a
	// random duration in [d/2, d] with d = min(BackoffMax, BackoffMin*2^n).
	// Defaults 500ms and 30s.
	BackoffMin, BackoffMax time.Duration
}

// ProtocolVersion is the MCP version the proxy offers HTTP upstreams in
// initialize: 2025-11-25, the newest version of the initialize handshake
// (MCP spec, "Lifecycle"). The server may answer with an older one; each
// upstream leg negotiates on its own. Stdio upstreams are offered
// 2026-07-28 first (version.go).
const ProtocolVersion = "2025-11-25"

// progressSettle and progressDrain bound the wait, after a call that
// asked for progress, for progress notifications still queued in the SDK.
const (
	progressSettle = 10 * time.Millisecond
	progressDrain  = 200 * time.Millisecond
)

// ErrUnavailable is wrapped by CallTool errors when the upstream is not
// ready or its connection broke during the call.
var ErrUnavailable = errors.New("upstream unavailable")

// unavailableError is an ErrUnavailable with its own full message,
// `upstream "NAME" is unavailable (WHY)[: CAUSE]`; it also wraps the cause.
type unavailableError struct {
	msg   string
	cause error
}

func (e *unavailableError) Error() string   { return e.msg }
func (e *unavailableError) Unwrap() []error { return []error{ErrUnavailable, e.cause} }

// unavailable builds an unavailableError; cause may be nil.
func unavailable(upstream, why string, cause error) error {
	msg := fmt.Sprintf("upstream %q is unavailable (%s)", upstream, why)
	if cause != nil {
		msg += ": " + cause.Error()
	}
	return &unavailableError{msg: msg, cause: cause}
}

// ErrUnknownUpstream is returned (wrapped, naming the upstream) for a name
// that is not managed. It wraps ErrUnavailable.
var ErrUnknownUpstream = fmt.Errorf("%w: not configured", ErrUnavailable)

const (
	defaultGrace          = 3 * time.Second
	defaultMaxPages       = 100
	defaultBackoffMin     = 500 * time.Millisecond
	defaultBackoffMax     = 30 * time.Second
	defaultStartupTimeout = 30 * time.Second
	defaultCallTimeout    = DefaultCallTimeout
	// DefaultCallTimeout is an upstream's call_timeout when it sets none.
	DefaultCallTimeout = 55 * time.Second
	// CallCeilingFactor bounds how far progress can stretch a call: each
	// progress notification restarts the call's call_timeout, but the call
	// never runs longer than CallCeilingFactor * call_timeout in total.
	CallCeilingFactor = 10
)

// Manager owns the connections to all upstreams. Its methods are safe for
// concurrent use.
type Manager struct {
	opts  Options
	log   *slog.Logger
	conns map[string]*conn // immutable after NewManager
	names []string         // sorted

	ctx    context.Context // lives until Close
	cancel context.CancelFunc

	mu        sync.Mutex
	started   bool
	closed    bool
	wg        conc.WaitGroup // supervisors
	perClient map[*ClientConn]bool
	inflight  int           // CallToolWith calls running (retire.go)
	idle      chan struct{} // closed when inflight drops to 0 while retiring
	retired   string        // why Retire was called ("" = not retired)
	cutAfter  time.Duration // Retire's drain bound, for the error of a call it cut

	progMu   sync.Mutex
	progSeq  uint64
	progSubs map[string]func(*mcp.ProgressNotificationParams) // upstream progress token -> subscriber

	capsMu   sync.Mutex
	capsJSON map[*mcp.ClientCapabilities]json.RawMessage // relayedCaps

	// sdkCalls keeps every tools/call on the go-sdk client
	// (Options.SDKCalls; tests compare the two paths). Set before Start.
	sdkCalls bool
}

// NewManager prepares one connection per upstream; nothing is started until
// Start. Nil entries and upstreams with enabled = false are skipped. Names
// must be unique (config map keys are); a later duplicate replaces an
// earlier one. Option defaults are applied here.
func NewManager(ups []*config.Upstream, opts Options) *Manager {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Grace <= 0 {
		opts.Grace = defaultGrace
	}
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = MaxMessageBytes
	}
	if opts.MaxPages <= 0 {
		opts.MaxPages = defaultMaxPages
	}
	if opts.BackoffMin <= 0 {
		opts.BackoffMin = defaultBackoffMin
	}
	if opts.BackoffMax <= 0 {
		opts.BackoffMax = defaultBackoffMax
	}
	if opts.BackoffMax < opts.BackoffMin {
		opts.BackoffMax = opts.BackoffMin
	}
	if opts.Ingest == nil {
		opts.Ingest = ingest.Default()
	}
	if opts.ClientInfo == nil {
		opts.ClientInfo = &mcp.Implementation{Name: "mcp-toolsearch", Version: "dev"}
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{
		opts:     opts,
		sdkCalls: opts.SDKCalls,
		log:      opts.Logger,
		conns:    make(map[string]*conn),
		ctx:      ctx,
		cancel:   cancel,
	}
	for _, u := range ups {
		if u == nil || !u.IsEnabled() {
			continue
		}
		m.conns[u.Name] = newConn(m, u)
	}
	for name := range m.conns {
		m.names = append(m.names, name)
	}
	sort.Strings(m.names)
	return m
}

// Start launches every upstream concurrently and returns once each one is
// ready or failed (its first attempt is bounded by its startup_timeout,
// default 30s), or when ctx ends. Failed upstreams keep retrying in the
// background with backoff until Close. ctx only bounds the waiting: the
// connections live until Close. Start after Start or Close does nothing.
func (m *Manager) Start(ctx context.Context) {
	if !m.Launch() {
		return
	}
	m.WaitSettled(ctx)
}

// Launch starts every upstream concurrently and returns at once; false
// when the manager was already started or is closed. Use WaitSettled to
// wait for the first attempts.
func (m *Manager) Launch() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.started || m.closed {
		return false
	}
	m.started = true
	for _, name := range m.names {
		c := m.conns[name]
		c.mu.Lock()
		c.launched = true
		c.mu.Unlock()
		m.wg.Go(func() { c.run(m.ctx) })
	}
	return true
}

// WaitSettled waits until every upstream's first connection attempt
// settled (ready or failed; each is bounded by its startup_timeout) or ctx
// ends; it reports whether all settled.
func (m *Manager) WaitSettled(ctx context.Context) bool {
	var wait conc.WaitGroup
	for _, name := range m.names {
		c := m.conns[name]
		wait.Go(func() {
			select {
			case <-c.firstDone:
			case <-ctx.Done():
			}
		})
	}
	wait.Wait()
	for _, name := range m.names {
		select {
		case <-m.conns[name].firstDone:
		default:
			return false
		}
	}
	return true
}

// Names returns the managed upstream names, sorted.
func (m *Manager) Names() []string { return append([]string(nil), m.names...) }

// Status returns the status of one upstream; false if it is not managed.
func (m *Manager) Status(name string) (Status, bool) {
	c, ok := m.conns[name]
	if !ok {
		return Status{}, false
	}
	return c.status(), true
}

// Statuses returns the status of every upstream, sorted by name.
func (m *Manager) Statuses() []Status {
	out := make([]Status, 0, len(m.names))
	for _, name := range m.names {
		out = append(out, m.conns[name].status())
	}
	return out
}

// Tools returns the tools of the last successful listing of upstream name,
// or nil when it is not ready or not managed. The slice is a copy; the
// *mcp.Tool values are shared and must not be modified.
func (m *Manager) Tools(name string) []*mcp.Tool {
	c, ok := m.conns[name]
	if !ok {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state != StateReady {
		return nil
	}
	return append([]*mcp.Tool(nil), c.tools...)
}

// Session returns the current client session of upstream name, or nil when
// it is not ready or not managed. The session may be closed at any time by a
// reconnect; callers must handle errors wrapping mcp.ErrConnectionClosed.
func (m *Manager) Session(name string) *mcp.ClientSession {
	c, ok := m.conns[name]
	if !ok {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state != StateReady || c.cur == nil {
		return nil
	}
	return c.cur.session
}

// CallOptions tune one CallToolWith.
type CallOptions struct {
	// ClientCapabilities, when non-nil, are the capabilities of the client
	// the call is made for. On a 2026-07-28 leg the part the proxy relays
	// (sampling, elicitation, roots) is sent as the request's _meta
	// clientCapabilities instead of the proxy's own (MCP 2026-07-28:
	// capabilities are declared per request, SEP-2575), so the upstream
	// asks only for input that client can give, and refuses a tool that
	// needs more with -32021. Ignored on older legs (their capabilities
	// are the session's, from initialize).
	ClientCapabilities *mcp.ClientCapabilities
	// LogLevel, when set, is the log level of the client the call is made
	// for (its logging/setLevel, or a 2026-07-28 request's _meta
	// logLevel): on a 2026-07-28 leg it is sent as the request's _meta
	// logLevel; on an older leg the session's level is made at least this
	// verbose first (loglevel.go), so that the messages the tool logs
	// reach the proxy, which passes each client those at its own level.
	LogLevel mcp.LoggingLevel
	// Modern says the client the call is made for speaks 2026-07-28: on an
	// upstream whose shared session is of the initialize era by default
	// (protocol "auto") but which speaks 2026-07-28, the call goes over a
	// 2026-07-28 session of its own (generation.go), as it would directly.
	Modern bool
	// Conn, when non-nil, is the per-client session (OpenSession) to call
	// through instead of the upstream's shared session.
	Conn *ClientConn
	// OnProgress, when non-nil, asks the upstream for progress (MCP spec
	// basic/utilities/progress): the request carries a fresh progress token
	// of the form "github.com/mcp-toolsearch/mcp-toolsearch/<n>" in params._meta.progressToken (any
	// other _meta keys of params are kept), and each notifications/progress
	// the upstream sends with that token is passed to OnProgress, in
	// arrival order, with the upstream's token still in it. Each one also
	// restarts the call's call_timeout, up to CallCeilingFactor *
	// call_timeout in total.
	OnProgress func(*mcp.ProgressNotificationParams)
	// Raw, when non-nil, asks for the result as raw JSON (RawResult): when
	// the transport kept it raw, Raw.JSON is set and the returned result
	// carries only IsError; otherwise the result comes decoded as usual.
	Raw *RawResult
	// Task, when non-nil, is the "task" member of a task-augmented call
	// (MCP 2025-11-25 basic/utilities/tasks, e.g. {"ttl":60000}): the call
	// is sent past the go-sdk (owncall.go) with params.task set, and the
	// answer (a CreateTaskResult, or any result) is put in Raw.JSON as
	// received; Raw must be non-nil. No progress relay (the call returns
	// at once; the task's progress is read with tasks/get).
	Task json.RawMessage
}

// CallTool is CallToolWith with zero CallOptions.
func (m *Manager) CallTool(ctx context.Context, upstream string, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	return m.CallToolWith(ctx, upstream, params, CallOptions{})
}

// errCallTimeout and errCallCeiling are the causes of a call's context
// when call_timeout (without progress) or its ceiling ran out.
var (
	errCallTimeout = errors.New("call_timeout exceeded")
	errCallCeiling = errors.New("call time ceiling exceeded")
)

// CallToolWith forwards tools/call to upstream, bounded by ctx and by the
// upstream's call_timeout (default 55s; restarted by progress, see
// CallOptions.OnProgress). When ctx is cancelled the go-sdk client sends
// notifications/cancelled with the upstream's request id and the call
// returns at once. Errors name the upstream:
//   - not ready or unknown: wraps ErrUnavailable with the state and reason;
//   - the connection broke during the call: wraps ErrUnavailable and the
//     transport error, and the upstream is marked failed and reconnected;
//   - an HTTP upstream that forgot the session (HTTP 404,
//     mcp.ErrSessionMissing): the shared connection is initialized again
//     and the call is sent once more on the new session (the upstream never
//     processed the first one);
//   - a JSON-RPC error answer: wraps the *jsonrpc.Error (errors.As works);
//   - timeout/cancellation: wraps the context error.
//
// A tool-level failure is not an error: it is a result with IsError set.
func (m *Manager) CallToolWith(ctx context.Context, upstream string, params *mcp.CallToolParams, o CallOptions) (*mcp.CallToolResult, error) {
	c, ok := m.conns[upstream]
	if !ok {
		return nil, fmt.Errorf("upstream %q: %w", upstream, ErrUnknownUpstream)
	}
	if err := m.beginCall(upstream, o.Conn != nil); err != nil { // retire.go
		return nil, err
	}
	defer m.endCall()
	var cur *live
	if o.Conn != nil {
		cur = o.Conn.l
		if o.Conn.closed.Load() {
			// The session's own manager knows why it ended: after a
			// reload, m is the new instance and o.Conn belongs to the
			// retired one (retire.go).
			return nil, o.Conn.c.m.perClientClosed(upstream)
		}
	} else {
		var err error
		if cur, err = c.ready(); err != nil {
			return nil, err
		}
		if o.Modern {
			if ml := c.modernLeg(ctx, cur); ml != nil { // generation.go
				cur = ml
			}
		}
	}
	timeout := c.cfg.CallTimeout.Duration
	if timeout <= 0 {
		timeout = defaultCallTimeout
	}
	if o.Task != nil {
		return c.callTask(ctx, cur, params, o, timeout) // owncall.go
	}
	name := ""
	if params != nil {
		name = params.Name
	}
	var cctx context.Context
	var timer *time.Timer // restarted by progress
	// due: the deadline of a call the own wire times itself (wiredue.go);
	// a call that goes the go-sdk's way after all gets a context with it.
	var due time.Time
	if o.OnProgress == nil {
		// No progress restarts the deadline: one timer, or none where the
		// wire keeps the deadline.
		if w := cur.ownToolWire(); w != nil && w.timesCalls {
			cctx, due = ctx, time.Now().Add(timeout)
		} else {
			var cancel context.CancelFunc
			cctx, cancel = context.WithTimeoutCause(ctx, timeout, errCallTimeout)
			defer cancel()
		}
	} else {
		pctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		var cancelCeil context.CancelFunc
		cctx, cancelCeil = context.WithTimeoutCause(pctx, CallCeilingFactor*timeout, errCallCeiling)
		defer cancelCeil()
		timer = time.AfterFunc(timeout, func() { cancel(errCallTimeout) })
		defer timer.Stop()
	}
	var token string
	var onProgress func(*mcp.ProgressNotificationParams)
	ownSent := false // the call went past the go-sdk (owntoolcall.go)
	if o.OnProgress != nil {
		var lastMu sync.Mutex
		last := time.Now()
		onProgress = func(n *mcp.ProgressNotificationParams) {
			timer.Reset(timeout)
			lastMu.Lock()
			last = time.Now()
			lastMu.Unlock()
			o.OnProgress(n)
		}
		token = m.subscribeProgress(onProgress)
		defer m.unsubscribeProgress(token)
		// The go-sdk retires a response on its reader goroutine but hands
		// notifications read BEFORE it to a separate handler goroutine, so
		// the last progress notifications may still be queued when
		// CallTool returns. Before returning (and unsubscribing), wait until
		// no progress has come for progressSettle, at most progressDrain, so
		// that every upstream notification is relayed before the result.
		// A call sent past the go-sdk hands its progress on in order before
		// its result (wire.call) and needs no wait.
		defer func() {
			if ownSent {
				return
			}
			for deadline := time.Now().Add(progressDrain); time.Now().Before(deadline); {
				time.Sleep(progressSettle)
				lastMu.Lock()
				quiet := time.Since(last) >= progressSettle
				lastMu.Unlock()
				if quiet {
					return
				}
			}
		}()
	}
	if params != nil && (params.InputResponses != nil || params.RequestState != "") && !modernLeg(cur.session) {
		// inputResponses and requestState are of 2026-07-28 (SEP-2322).
		p := *params
		p.InputResponses, p.RequestState = nil, ""
		params = &p
	}
	// What the call adds to params._meta, over the caller's keys: the
	// progress token, and on a 2026-07-28 leg the capabilities of the
	// client the call is made for (CallOptions.ClientCapabilities).
	var extra []metaMember
	if token != "" {
		extra = append(extra, metaMember{key: "progressToken", val: appendString(nil, token)})
	}
	if o.ClientCapabilities != nil && modernLeg(cur.session) {
		extra = append(extra, metaMember{key: mcp.MetaKeyClientCapabilities, val: m.relayedCaps(o.ClientCapabilities)})
	}
	if o.LogLevel != "" {
		if modernLeg(cur.session) {
			extra = append(extra, metaMember{key: mcp.MetaKeyLogLevel, val: appendString(nil, string(o.LogLevel))})
		} else {
			cur.ensureLogLevel(cctx, o.LogLevel, c.log) // loglevel.go
		}
	}
	if bs := c.paramBindings(name); bs != nil {
		cctx = context.WithValue(cctx, paramBindingsKey{}, bs) // headers2026.go
	}
	var sdkDue context.Context // the go-sdk path's context when due was set
	send := func(l *live) (*mcp.CallToolResult, error) {
		if w := l.ownToolWire(); w != nil {
			d := due
			if !w.timesCalls {
				d = time.Time{}
			}
			res, err, sent := l.callOwn(cctx, w, params, extra, o.Raw, token, onProgress, d) // owntoolcall.go
			if sent {
				ownSent = true
				return res, err
			}
		}
		ctx := cctx
		if !due.IsZero() {
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadlineCause(ctx, due, errCallTimeout)
			defer cancel()
			sdkDue = ctx
		}
		return l.session.CallTool(ctx, withMeta(params, extra))
	}
	res, err := send(cur)
	if err != nil && o.Conn == nil && errors.Is(err, mcp.ErrSessionMissing) && ctx.Err() == nil {
		// The HTTP upstream restarted and forgot our session: initialize
		// again and resend once.
		c.log.Warn("upstream forgot the session; initializing again", "tool", name)
		c.connectionBroken(cur, "session forgotten by the server (HTTP 404)")
		if next, werr := c.waitReady(cctx, cur); werr == nil {
			cur = next
			res, err = send(cur)
		}
	}
	if err == nil {
		return res, nil
	}
	var rpcErr *jsonrpc.Error
	switch {
	case ctx.Err() != nil:
		return nil, fmt.Errorf("upstream %q: tools/call %q: %w", upstream, name, err)
	case cctx.Err() != nil || isWireDeadline(err) || sdkDue != nil && context.Cause(sdkDue) == errCallTimeout:
		what := fmt.Sprintf("call_timeout %s exceeded", timeout)
		if errors.Is(context.Cause(cctx), errCallCeiling) {
			what = fmt.Sprintf("ceiling of %d x call_timeout (%s) exceeded despite progress", CallCeilingFactor, CallCeilingFactor*timeout)
		}
		return nil, fmt.Errorf("upstream %q: tools/call %q: %s: %w", upstream, name, what, context.DeadlineExceeded)
	case isConnError(err) && m.cutByRetire():
		return nil, m.retiredError(upstream, name)
	case isConnError(err):
		if o.Conn == nil {
			c.connectionBroken(cur, "tools/call: "+err.Error())
		}
		return nil, unavailable(upstream, fmt.Sprintf("connection lost during tools/call %q", name), err)
	// A transport failure comes wrapped in a *jsonrpc.Error (go-sdk
	// ErrRejected, -32005): it is tested as a connection error first.
	case errors.As(err, &rpcErr):
		return nil, fmt.Errorf("upstream %q: tools/call %q: %w", upstream, name, err)
	default:
		return nil, fmt.Errorf("upstream %q: tools/call %q: %w", upstream, name, err)
	}
}

// ready returns the live connection of c, or an error wrapping
// ErrUnavailable naming the state and the reason in the proxy's own words
// (Status.Cause): the error reaches the model as the call's answer, and
// the upstream's stderr line in Status.Err (a start-up banner, an
// unrelated earlier complaint) is untrusted text that read as the reason
// (`killed by signal 9 (killed): Starting default (STDIO)
// server...`). The log keeps the full reason ("upstream down").
func (c *conn) ready() (*live, error) {
	c.mu.Lock()
	state, reason, cur := c.state, c.err, c.cur
	if c.cause != "" {
		reason = c.cause
	}
	c.mu.Unlock()
	if state != StateReady || cur == nil {
		if reason == "" {
			return nil, unavailable(c.name, string(state), nil)
		}
		return nil, unavailable(c.name, string(state), errors.New(reason))
	}
	return cur, nil
}

// waitReady waits until c has a ready connection other than old, or ctx
// ends.
func (c *conn) waitReady(ctx context.Context, old *live) (*live, error) {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		if l, err := c.ready(); err == nil && l != old {
			return l, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// subscribeProgress registers fn under a fresh upstream progress token.
func (m *Manager) subscribeProgress(fn func(*mcp.ProgressNotificationParams)) string {
	m.progMu.Lock()
	defer m.progMu.Unlock()
	m.progSeq++
	token := fmt.Sprintf("github.com/mcp-toolsearch/mcp-toolsearch/%d", m.progSeq)
	if m.progSubs == nil {
		m.progSubs = map[string]func(*mcp.ProgressNotificationParams){}
	}
	m.progSubs[token] = fn
	return token
}

func (m *Manager) unsubscribeProgress(token string) {
	m.progMu.Lock()
	defer m.progMu.Unlock()
	delete(m.progSubs, token)
}

// progress hands an upstream progress notification to the call that owns
// its token; false when no call of this manager does.
func (m *Manager) progress(p *mcp.ProgressNotificationParams) bool {
	if p == nil {
		return false
	}
	token, ok := p.ProgressToken.(string)
	if !ok {
		return false
	}
	m.progMu.Lock()
	fn := m.progSubs[token]
	m.progMu.Unlock()
	if fn == nil {
		return false
	}
	fn(p)
	return true
}

// Ping sends ping to upstream's shared session. An answer of -32601
// (method not found) counts as alive: the server answered, it just does
// not implement ping (MCP spec basic/utilities/ping says it SHOULD).
func (m *Manager) Ping(ctx context.Context, upstream string) error {
	c, ok := m.conns[upstream]
	if !ok {
		return fmt.Errorf("upstream %q: %w", upstream, ErrUnknownUpstream)
	}
	cur, err := c.ready()
	if err != nil {
		return err
	}
	return pingAlive(ctx, cur.session)
}

func pingAlive(ctx context.Context, cs *mcp.ClientSession) error {
	err := cs.Ping(ctx, nil)
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) && rpcErr.Code == jsonrpc.CodeMethodNotFound {
		return nil
	}
	return err
}

// Close stops every upstream and waits until all are stopped or ctx ends
// (then it returns ctx.Err(); the shutdown still completes in the
// background). Stdio children get stdin closed, Grace, SIGTERM, Grace,
// then SIGKILL of their process group, and are always reaped. HTTP sessions
// are closed (DELETE for Streamable HTTP). Every upstream ends in state
// stopped and OnToolsChanged(name, nil) is called for those that were
// ready. Close is idempotent.
func (m *Manager) Close(ctx context.Context) error {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	m.cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		m.wg.Wait()
	}()
	select {
	case <-done:
	case <-ctx.Done():
		return fmt.Errorf("upstream: close: %w", ctx.Err())
	}
	m.mu.Lock()
	pcs := make([]*ClientConn, 0, len(m.perClient))
	for cc := range m.perClient {
		pcs = append(pcs, cc)
	}
	m.mu.Unlock()
	var wg conc.WaitGroup
	for _, cc := range pcs {
		wg.Go(cc.Close)
	}
	wg.Wait()
	return nil
}
