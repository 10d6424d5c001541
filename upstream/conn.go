package upstream

//lint:file-ignore SA1019 sampling, roots and logging are deprecated from protocol 2026-07-28 on; clients and servers of earlier protocols still use them

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
	"github.com/mcp-toolsearch/mcp-toolsearch/ingest"
	"github.com/mcp-toolsearch/mcp-toolsearch/internal/logwindow"
	"github.com/mcp-toolsearch/mcp-toolsearch/internal/paramheader"
)

// conn supervises one upstream: it connects, watches, and reconnects.
type conn struct {
	m    *Manager
	cfg  *config.Upstream
	name string
	log  *slog.Logger

	firstDone chan struct{} // closed after the first attempt settled
	firstOnce sync.Once

	// cbMu serializes state transitions together with their callbacks, so
	// that OnStatus/OnToolsChanged calls of one upstream are ordered.
	cbMu sync.Mutex

	mu sync.Mutex // guards the fields below
	// launched is set by Manager.Launch, before run starts: until run's
	// first transition the upstream reports StateStarting, so a status
	// read right after Launch never sees it as stopped.
	launched bool
	state    State
	err      string
	cause    string // Status.Cause
	since    time.Time
	restarts int
	tools    []*mcp.Tool
	diags    []ingest.Diagnostic              // of the last listing; kept while down
	extra    map[string]json.RawMessage       // ingest.Result.Extra of the last listing
	params   map[string][]paramheader.Binding // tools with x-mcp-header arguments (headers2026.go)
	cur      *live                            // the ready connection, nil otherwise

	// relistLog keeps "tools re-listed" to one line and one summary a
	// minute (an upstream may send list_changed in a loop).
	relistLog *logwindow.Window

	// sseFound: a url upstream without transport answered the legacy SSE
	// transport after refusing Streamable HTTP (http.go sseFallback);
	// later attempts use SSE at once.
	sseFound atomic.Bool
	// modernFound: at protocol "auto", the upstream refused the
	// initialize era and answered 2026-07-28 (version.go eraRefused);
	// later attempts offer 2026-07-28 at once.
	modernFound atomic.Bool
}

// live is one connection attempt and, once ready, one live connection.
type live struct {
	client  *mcp.Client
	session *mcp.ClientSession
	child   *child          // stdio only
	httpTr  *http.Transport // HTTP only
	conn    mcp.Connection  // the transport connection (set once connected)
	ctx     context.Context // connection lifetime; cancelled by teardown
	cancel  context.CancelFunc
	down    chan string   // first failure reason (cap 1)
	relist  chan struct{} // pending re-list request (cap 1)
	up      time.Time     // when it became ready
	// initial is the listing done by connect.
	initial ingest.Result
	wg      sync.WaitGroup
	torn    atomic.Bool
	// ownTools: plain tools/call go past the go-sdk client when the
	// transport is the proxy's own (owntoolcall.go).
	ownTools bool
	// gate drops an upstream's notifications past its limits before the
	// go-sdk queues them (notifygate.go); nil when not gated.
	gate *notifyGate
	// meta is the 2026-07-28 _meta triple as the go-sdk client sent it
	// on this session (captureMeta); metaSet once it is known.
	metaMu  sync.Mutex
	meta    []metaMember
	metaSet atomic.Bool

	logMu    sync.Mutex
	logLevel mcp.LoggingLevel // the level last sent with logging/setLevel (loglevel.go)

	settleMu  sync.Mutex
	settleSeq int64
	settles   map[int64]chan struct{} // Settle's markers not yet handled (loglevel.go)

	// modern is this initialize-era leg's 2026-07-28 companion, for the
	// calls of 2026-07-28 clients (generation.go); noModern: the upstream
	// does not speak 2026-07-28, or the leg is ending.
	modMu    sync.Mutex
	modern   *live
	noModern bool
}

func (l *live) fail(reason string) {
	select {
	case l.down <- reason:
	default:
	}
}

func (l *live) requestRelist() {
	select {
	case l.relist <- struct{}{}:
	default:
	}
}

func newConn(m *Manager, u *config.Upstream) *conn {
	c := &conn{
		m:         m,
		cfg:       u,
		name:      u.Name,
		log:       m.log.With("upstream", u.Name),
		firstDone: make(chan struct{}),
		state:     StateStopped,
		since:     time.Now(),
	}
	c.relistLog = logwindow.New(relistLogWindow, func(n int, every time.Duration) {
		if n > 0 {
			c.log.Info("tools re-listed more times (each after notifications/tools/list_changed)", "times", n, "in_last", every)
		}
	})
	return c
}

// relistLogWindow is the period of the "tools re-listed" summary;
// relistGap the least time between the starts of two re-listings of one
// session (relistEach).
const (
	relistLogWindow = time.Minute
	relistGap       = 200 * time.Millisecond
	// relistSettle, relistSettleMax, relistHold: a burst of list_changed
	// is one change (relistEach).
	relistSettle    = 50 * time.Millisecond
	relistSettleMax = time.Second
	relistHold      = 5
)

func (c *conn) status() Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.statusLocked()
}

func (c *conn) statusLocked() Status {
	state := c.state
	if state == StateStopped && c.launched && !c.firstSettled() {
		state = StateStarting
	}
	return Status{Name: c.name, State: state, Err: c.err, Cause: c.cause, Since: c.since, Restarts: c.restarts, Tools: len(c.tools), Diagnostics: c.diags, Extra: c.extra}
}

// firstSettled reports whether the first attempt settled (firstDone closed).
func (c *conn) firstSettled() bool {
	select {
	case <-c.firstDone:
		return true
	default:
		return false
	}
}

func (c *conn) signalFirst() { c.firstOnce.Do(func() { close(c.firstDone) }) }

// transition changes the state under cbMu and runs the callbacks:
// OnToolsChanged first (the listing's tools on ready, never nil; nil when
// leaving ready, or entering failed from another state), then OnStatus.
// listing is the new listing (ready) or nil (the last listing's
// diagnostics are kept).
func (c *conn) transition(state State, reason, cause string, cur *live, listing *ingest.Result) {
	c.cbMu.Lock()
	defer c.cbMu.Unlock()
	var tools []*mcp.Tool
	c.mu.Lock()
	if listing != nil {
		tools = listing.Tools
		c.logDiagnostics(c.diags, listing.Diagnostics)
		c.diags, c.extra = listing.Diagnostics, listing.Extra
	}
	prev := c.state
	c.state, c.err, c.cause, c.cur, c.tools = state, reason, cause, cur, tools
	if listing != nil {
		c.params = paramIndex(tools)
	}
	if prev != state {
		c.since = time.Now()
	}
	st := c.statusLocked()
	c.mu.Unlock()
	var notify bool
	switch state {
	case StateReady:
		notify = true
	case StateFailed:
		notify = prev != StateFailed
	case StateStopped:
		notify = prev == StateReady
	}
	if f := c.m.opts.OnToolsChanged; f != nil && notify {
		f(c.name, tools)
	}
	if f := c.m.opts.OnStatus; f != nil && (prev != state || state == StateFailed) {
		f(st)
	}
}

// run is the supervisor loop; it returns when ctx (the manager's) ends.
func (c *conn) run(ctx context.Context) {
	defer c.signalFirst()
	defer c.transition(StateStopped, "", "", nil, nil)
	c.transition(StateStarting, "", "", nil, nil)
	attempt := 0
	for first := true; ; first = false {
		if ctx.Err() != nil {
			return
		}
		if !first {
			c.mu.Lock()
			c.restarts++
			c.mu.Unlock()
		}
		l, err := c.connect(ctx, nil, nil)
		if err != nil {
			if ctx.Err() != nil {
				if l != nil {
					l.teardown(c.m.opts.Grace, c.log, whyStopping)
				}
				return
			}
			c.log.Warn("upstream connection failed", "error", err.Error(), "attempt", attempt+1)
			c.transition(StateFailed, err.Error(), causeOf(err), nil, nil)
			c.signalFirst()
			if l != nil {
				l.teardown(c.m.opts.Grace, c.log, "its connection attempt failed")
			}
		} else {
			l.up = time.Now()
			c.transition(StateReady, "", "", l, &l.initial)
			c.signalFirst()
			if l.child != nil {
				l.child.quiet.Store(true)
			}
			c.log.Info("upstream ready", "tools", len(l.initial.Tools), "quarantined", l.initial.Quarantined())
			l.wg.Add(1)
			go func() {
				defer l.wg.Done()
				c.relistLoop(l)
			}()
			reason, closing := c.watch(ctx, l, "")
			if closing {
				c.transition(StateStopped, "", "", nil, nil)
				l.teardown(c.m.opts.Grace, c.log, whyStopping)
				return
			}
			c.log.Warn("upstream down", "reason", reason)
			c.transition(StateFailed, reason, downCause(l), nil, nil)
			l.teardown(c.m.opts.Grace, c.log, "the upstream is down, to be started again")
			if time.Since(l.up) >= c.m.opts.BackoffMax {
				attempt = 0
			}
		}
		delay := backoff(c.m.opts.BackoffMin, c.m.opts.BackoffMax, attempt)
		attempt++
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// backoff returns a random delay in [d/2, d], d = min(max, min*2^attempt).
func backoff(lo, hi time.Duration, attempt int) time.Duration {
	d := lo
	for i := 0; i < attempt && d < hi; i++ {
		d *= 2
	}
	if d > hi {
		d = hi
	}
	half := d / 2
	return half + rand.N(d-half+1)
}

// watch blocks until the connection fails (returns the reason) or ctx ends
// (closing = true): the session ends, the child exits, or pingFailuresDown
// health pings in a row fail. what names the session in the log ("" for
// the shared one). Both legs of an upstream are watched by it: the shared
// one by run, its 2026-07-28 companion by watchModern (generation.go).
func (c *conn) watch(ctx context.Context, l *live, what string) (reason string, closing bool) {
	sess := l.session
	go func() {
		err := sess.Wait()
		if l.torn.Load() {
			return
		}
		if err != nil {
			l.fail("connection closed: " + err.Error())
		} else {
			l.fail("connection closed")
		}
	}()
	var exited <-chan struct{}
	if l.child != nil {
		exited = l.child.exited
	}
	// Health ping (MCP spec basic/utilities/ping): a hung upstream is
	// found even when no call is running; -32601 counts as alive.
	interval := c.cfg.PingInterval.Duration
	var tick <-chan time.Time
	if interval > 0 {
		t := time.NewTicker(interval)
		defer t.Stop()
		tick = t.C
	}
	failures := 0
wait:
	for {
		select {
		case <-ctx.Done():
			return "", true
		case reason = <-l.down:
			break wait
		case <-exited:
			return l.child.reason(), false
		case <-tick:
			pctx, cancel := context.WithTimeout(ctx, min(interval, maxPingTimeout))
			err := pingAlive(pctx, sess)
			cancel()
			if err == nil || ctx.Err() != nil || l.torn.Load() {
				failures = 0 // a ping cut by the leg's teardown says nothing of the upstream
				continue
			}
			failures++
			c.log.Warn(what+"upstream did not answer ping", "failures", failures, "err", err)
			if failures >= pingFailuresDown {
				l.fail(fmt.Sprintf("no answer to %d pings in a row: %v", failures, err))
			}
		}
	}
	if l.child != nil {
		// The child's exit status says more than "connection closed"; a
		// failure with its own cause keeps it first (the child may have
		// exited only because its stdin was closed).
		t := time.NewTimer(exitReasonWait)
		defer t.Stop()
		select {
		case <-l.child.exited:
			if reason == "connection closed" || strings.HasSuffix(reason, "EOF") {
				return l.child.reason(), false
			}
			return reason + "; then the process " + l.child.reason(), false
		case <-t.C:
		}
	}
	return reason, false
}

// pingFailuresDown consecutive failed health pings mark an upstream down;
// each ping waits at most min(ping_interval, maxPingTimeout).
const (
	pingFailuresDown = 2
	maxPingTimeout   = 10 * time.Second
)

// exitReasonWait bounds how long a failure waits for a stdio child's exit
// status to name the reason.
const exitReasonWait = time.Second

// relistLoop re-lists tools after notifications/tools/list_changed, one
// listing at a time; requests arriving during a listing coalesce into one.
// A connection error ends the connection (it is reconnected).
func (c *conn) relistLoop(l *live) {
	c.relistEach(l, "", func(res ingest.Result) {
		c.cbMu.Lock()
		defer c.cbMu.Unlock()
		c.mu.Lock()
		ok := c.cur == l && c.state == StateReady
		if ok {
			c.logDiagnostics(c.diags, res.Diagnostics)
			c.tools, c.diags, c.extra = res.Tools, res.Diagnostics, res.Extra
			c.params = paramIndex(res.Tools)
		}
		c.mu.Unlock()
		if ok {
			if c.relistLog.Allow() {
				c.log.Info("tools re-listed", "tools", len(res.Tools), "quarantined", res.Quarantined())
			}
			if f := c.m.opts.OnToolsChanged; f != nil {
				f(c.name, res.Tools)
			}
		}
	})
}

// relistEach runs until l ends: after each re-list request it lists the
// tools (bounded by startup_timeout) and hands them to got. A failed
// listing is logged (what names the session kind) and, for a connection
// error, fails l.
//
// Requests coalesce (l.relist holds one): at most one listing runs and one
// waits, however many notifications/tools/list_changed arrive, and a
// listing starts at least relistGap after the previous one started, so an
// upstream that sends list_changed in a loop costs at most 1/relistGap
// listings a second (trust: upstreams are not trusted; notifygate.go).
//
// A burst is one change: a listing starts once no request came for
// relistSettle (at most relistSettleMax after the first), and a listing
// during which another request came is not handed on but followed by the
// next one (at most relistHold times in a row), so that the clients are
// told once, about the list the burst ended with, not about each step.
func (c *conn) relistEach(l *live, what string, got func(ingest.Result)) {
	var last time.Time
	held := 0
	for {
		select {
		case <-l.ctx.Done():
			return
		case <-l.relist:
		}
		if !c.settle(l) {
			return
		}
		if wait := relistGap - time.Since(last); !last.IsZero() && wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-l.ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
		last = time.Now()
		ctx, cancel := context.WithTimeout(l.ctx, c.startupTimeout())
		res, err := c.listTools(ctx, l)
		cancel()
		if err != nil {
			if l.ctx.Err() != nil || l.torn.Load() {
				// l is being torn down (its session closes before
				// l.ctx ends): the listing was cut by us, not failed.
				return
			}
			c.log.Warn(what+"tools/list after list_changed failed", "error", err.Error())
			if isConnError(err) {
				l.fail("tools/list: " + err.Error())
			}
			continue
		}
		select {
		case <-l.relist:
			if held < relistHold {
				held++
				l.requestRelist() // this listing may be a step of a burst: the next one is handed on
				continue
			}
		default:
		}
		held = 0
		got(res)
	}
}

// settle waits until no re-list request came for relistSettle, at most
// relistSettleMax; false when l ended.
func (c *conn) settle(l *live) bool {
	deadline := time.Now().Add(relistSettleMax)
	for {
		wait := min(relistSettle, time.Until(deadline))
		if wait <= 0 {
			return true
		}
		t := time.NewTimer(wait)
		select {
		case <-l.ctx.Done():
			t.Stop()
			return false
		case <-l.relist:
			t.Stop()
		case <-t.C:
			return true
		}
	}
}

func (c *conn) startupTimeout() time.Duration {
	if d := c.cfg.StartupTimeout.Duration; d > 0 {
		return d
	}
	return defaultStartupTimeout
}

// connectionBroken marks l as failed (if it is still the live connection).
func (c *conn) connectionBroken(l *live, reason string) { l.fail(reason) }

// connect runs one attempt: transport, initialize, first listing, all
// bounded by startup_timeout. On error the returned live (if non-nil) still
// needs teardown. own and ownMW, when non-nil, replace the
// Options.ClientOptions and Options.ClientMiddleware hooks (a per-client
// session's options).
func (c *conn) connect(ctx context.Context, own *mcp.ClientOptions, ownMW mcp.Middleware) (*live, error) {
	if c.modernFound.Load() {
		return c.connectWith(ctx, own, ownMW, true)
	}
	l, err := c.connectWith(ctx, own, ownMW, false)
	if err == nil || !c.eraFallback() || !eraRefused(err) || ctx.Err() != nil {
		return l, err
	}
	// The server answered the initialize era with a refusal (version.go):
	// offer 2026-07-28, as a client of that version connected directly
	// would at once.
	if l != nil {
		go l.teardown(c.m.opts.Grace, c.log, "it refused the initialize handshake at "+ProtocolVersion)
	}
	ml, merr := c.connectWith(ctx, own, ownMW, true)
	if merr != nil {
		return ml, &causeError{msg: fmt.Sprintf("%v; offered 2026-07-28 next (server/discover), it failed too: %v", err, merr), cause: causeOf(err), err: err}
	}
	if modernLeg(ml.session) && !c.modernFound.Swap(true) {
		c.log.Info("the upstream refused the initialize handshake at "+ProtocolVersion+" and speaks 2026-07-28: using it (protocol = \"2026-07-28\" in its table skips the first try)", "refusal", err.Error())
	}
	return ml, nil
}

// connectWith is connect; modern offers 2026-07-28 whatever the config
// says (no stateless upgrade, no SSE fallback: generation.go).
func (c *conn) connectWith(ctx context.Context, own *mcp.ClientOptions, ownMW mcp.Middleware, modern bool) (*live, error) {
	actx, cancel := context.WithTimeout(ctx, c.startupTimeout())
	defer cancel()
	lctx, lcancel := context.WithCancel(context.WithoutCancel(ctx))
	l := &live{
		ctx:    lctx,
		cancel: lcancel,
		down:   make(chan string, 1),
		relist: make(chan struct{}, 1),
	}
	var transport mcp.Transport
	cfg := c.cfg
	if c.sseFound.Load() {
		cfg = asSSE(cfg) // http.go
	}
	switch {
	case c.cfg.URL != "" && c.cfg.Command != "":
		lcancel()
		return nil, fmt.Errorf("both command and url are set")
	case c.cfg.URL != "":
		t, tr, err := c.httpTransport(ctx, cfg)
		if err != nil {
			lcancel()
			return nil, err
		}
		transport, l.httpTr = t, tr
	case c.cfg.Command != "":
		ch, err := startChild(c.cfg, c.log)
		if err != nil {
			lcancel()
			return nil, err
		}
		l.child = ch
		transport = ch.transport(c.m.opts.MaxMessageBytes)
	default:
		lcancel()
		return nil, fmt.Errorf("neither command nor url is set")
	}
	opts := c.clientOptions(l, own)
	client := mcp.NewClient(c.m.opts.ClientInfo, opts)
	l.client = client
	// owntoolcall.go: not when the go-sdk client answers input_required
	// results itself (its multi-round-trip middleware is on).
	l.ownTools = !c.m.sdkCalls && opts.MultiRoundTrip != nil && opts.MultiRoundTrip.Disabled
	client.AddSendingMiddleware(l.captureMeta, l.noteLogLevel)
	client.AddReceivingMiddleware(l.noteSettled) // loglevel.go
	if ownMW != nil {
		client.AddReceivingMiddleware(ownMW)
	} else if hook := c.m.opts.ClientMiddleware; hook != nil && own == nil {
		if mw := hook(c.name); mw != nil {
			client.AddReceivingMiddleware(mw)
		}
	}
	if _, sdk := transport.(*mcp.StreamableClientTransport); !sdk { // its connection must reach the go-sdk unwrapped
		l.gate = newNotifyGate(c.name, c.log)
	}
	offered := offeredVersion(cfg) // version.go
	if modern {
		offered = ""
	}
	sess, err := client.Connect(actx, &lifeTransport{inner: transport, life: lctx, got: func(mc mcp.Connection) { l.conn = mc }, gate: l.gate}, &mcp.ClientSessionOptions{ProtocolVersion: offered})
	if err == nil && !modern && sess.ID() == "" && statelessUpgrade(cfg, offered) {
		_ = sess.Close()
		sess, err = client.Connect(actx, &lifeTransport{inner: transport, life: lctx, got: func(mc mcp.Connection) { l.conn = mc }, gate: l.gate}, nil)
	}
	triedSSE := err != nil && !modern && sseFallback(cfg, err) // http.go
	if triedSSE {
		streamErr := err
		sse := asSSE(cfg)
		t, tr, terr := c.httpTransport(ctx, sse)
		if terr != nil {
			return l, terr
		}
		l.httpTr.CloseIdleConnections()
		l.httpTr = tr
		sess, err = client.Connect(actx, &lifeTransport{inner: t, life: lctx, got: func(mc mcp.Connection) { l.conn = mc }, gate: l.gate}, &mcp.ClientSessionOptions{ProtocolVersion: offeredVersion(sse)})
		if err != nil {
			err = fmt.Errorf("%w; the legacy SSE transport, tried next, failed too: %v", streamErr, err)
		} else {
			c.sseFound.Store(true)
			c.log.Info("the upstream refused Streamable HTTP and speaks the legacy SSE transport: using it (transport = \"sse\" in its table skips the first try)", "status", refusalStatus(streamErr))
		}
	}
	if err != nil && triedSSE {
		return l, c.attemptError(l, "initialize", err)
	}
	if err != nil {
		return l, wrongTransportHint(cfg, c.attemptError(l, "initialize", err)) // http.go
	}
	l.session = sess
	res, err := c.listTools(actx, l)
	if err != nil {
		return l, c.attemptError(l, "tools/list", err)
	}
	l.initial = res
	return l, nil
}

// attemptError names the phase, preferring a stdio child's exit reason
// when the child exited on its own; after startup_timeout it names the
// timeout (a child that exits then only followed its stdin being closed).
// Either way it adds what the upstream wrote that is not JSON-RPC
// (skippedNote, startfail.go).
func (c *conn) attemptError(l *live, phase string, err error) error {
	if errors.Is(err, errNoMessages) { // the proxy stopped reading; the child's exit follows from that
		own := fmt.Sprintf("%s: %v", phase, errNoMessages)
		return &causeError{msg: own + skippedNote(l), cause: own, err: err}
	}
	timedOut := errors.Is(err, context.DeadlineExceeded)
	if l.child != nil && !timedOut {
		t := time.NewTimer(exitReasonWait)
		defer t.Stop()
		select {
		case <-l.child.exited:
			// err stays wrapped: what the process answered before it
			// exited (version.go eraRefused reads it).
			return &causeError{msg: l.child.reason() + skippedNote(l), cause: "the process " + l.child.exitOwn + " during " + phase, err: err}
		case <-t.C:
		}
	}
	if timedOut {
		own := fmt.Sprintf("%s: startup_timeout (%s) exceeded: no answer to %s", phase, c.startupTimeout(), phase)
		return &causeError{msg: own + skippedNote(l), cause: own, err: err}
	}
	return &causeError{msg: fmt.Sprintf("%s: %v%s", phase, err, skippedNote(l)), cause: ownCause(phase, err), err: err} // cause.go
}

// causeError is a connection failure whose message may quote the upstream
// (its last stderr line, the non-JSON-RPC lines it wrote: skippedNote) and
// whose cause says the same in the proxy's own words (Status.Cause).
type causeError struct {
	msg, cause string
	err        error // wrapped, for errors.Is; may be nil
}

func (e *causeError) Error() string { return e.msg }
func (e *causeError) Unwrap() error { return e.err }

// causeOf is Status.Cause for a failed connection attempt: a causeError's
// cause; the text of an error starting the command (the OS's words on the
// operator's command, e.g. `exec: "uvx": executable file not found in
// $PATH`); else the error's kind only (errorKind, cause.go: a transport
// error may quote the configured URL, whose query may hold a key).
func causeOf(err error) string {
	var (
		ce *causeError
		ee *exec.Error
		pe *os.PathError
	)
	switch {
	case errors.As(err, &ce):
		return ce.cause
	case errors.Is(err, errNotFound), errors.As(err, &ee), errors.As(err, &pe):
		return err.Error()
	default:
		return "start: " + errorKind(err)
	}
}

// downCause is Status.Cause for a connection of l lost after ready:
// "connection lost", with the process's exit status when it exited (not
// its stderr, which Status.Err quotes).
func downCause(l *live) string {
	if l.child != nil {
		select {
		case <-l.child.exited:
			return "connection lost: the process " + l.child.exitOwn
		default:
		}
	}
	return "connection lost"
}

// clientOptions merges the proxy's hook (or own, for a per-client
// session) with the manager's list_changed and progress handlers.
func (c *conn) clientOptions(l *live, own *mcp.ClientOptions) *mcp.ClientOptions {
	var o mcp.ClientOptions
	if own != nil {
		o = *own
	} else if hook := c.m.opts.ClientOptions; hook != nil {
		if p := hook(c.name); p != nil {
			o = *p
		}
	}
	theirProgress := o.ProgressNotificationHandler
	o.ProgressNotificationHandler = func(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
		if c.m.progress(req.Params) {
			return
		}
		if theirProgress != nil {
			theirProgress(ctx, req)
		}
	}
	// The list_changed handlers clear the gate's mark first (notifygate.go),
	// so that one arriving while they run is queued again.
	theirs := o.ToolListChangedHandler
	o.ToolListChangedHandler = func(ctx context.Context, req *mcp.ToolListChangedRequest) {
		l.gate.handled("notifications/tools/list_changed")
		l.requestRelist()
		if theirs != nil {
			theirs(ctx, req)
		}
	}
	theirResources := o.ResourceListChangedHandler
	o.ResourceListChangedHandler = func(ctx context.Context, req *mcp.ResourceListChangedRequest) {
		l.gate.handled("notifications/resources/list_changed")
		if theirResources != nil {
			theirResources(ctx, req)
		}
	}
	theirPrompts := o.PromptListChangedHandler
	o.PromptListChangedHandler = func(ctx context.Context, req *mcp.PromptListChangedRequest) {
		l.gate.handled("notifications/prompts/list_changed")
		if theirPrompts != nil {
			theirPrompts(ctx, req)
		}
	}
	if o.Logger == nil {
		o.Logger = c.log
	}
	return &o
}

// whyStopping is the reason teardown gives a child when the upstream's
// manager closes (the proxy shuts down, or a reload retires this instance).
const whyStopping = "the upstream is stopping: proxy shutdown or reload"

// teardown closes the session, stops the child (stdin, Grace, SIGTERM,
// Grace, SIGKILL of the group, reap) and waits for the connection's
// goroutines. why is the proxy's reason, for the child's exit reason when
// a signal or the kill ended it. It is idempotent.
func (l *live) teardown(grace time.Duration, log *slog.Logger, why string) {
	if !l.torn.CompareAndSwap(false, true) {
		return
	}
	l.modMu.Lock()
	mod := l.modern
	l.modern, l.noModern = nil, true
	l.modMu.Unlock()
	if mod != nil {
		mod.teardown(grace, log, why) // generation.go
	}
	sessDone := make(chan struct{})
	go func() {
		defer close(sessDone)
		if l.session != nil {
			_ = l.session.Close()
		}
	}()
	if l.child != nil {
		l.child.stop(grace, why)
	}
	t := time.NewTimer(grace)
	select {
	case <-sessDone:
	case <-t.C:
		log.Warn("session close did not finish within the grace period")
	}
	t.Stop()
	l.cancel()
	l.wg.Wait()
	if l.httpTr != nil {
		l.httpTr.CloseIdleConnections()
	}
}

// lifeTransport connects the inner transport with the connection-lifetime
// context (so SSE's hanging GET outlives the startup deadline) while still
// honouring the attempt's deadline.
type lifeTransport struct {
	inner mcp.Transport
	life  context.Context
	got   func(mcp.Connection) // called with the connection before Connect returns it
	gate  *notifyGate          // when set, the go-sdk reads through it (notifygate.go)
}

func (t *lifeTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	type result struct {
		c   mcp.Connection
		err error
	}
	ch := make(chan result, 1)
	go func() {
		c, err := t.inner.Connect(t.life)
		ch <- result{c, err}
	}()
	select {
	case r := <-ch:
		if r.c != nil && t.got != nil {
			t.got(r.c) // the transport's own connection (owncall.go asserts on it)
		}
		if r.c != nil && t.gate != nil {
			return &gateConn{Connection: r.c, gate: t.gate}, r.err
		}
		return r.c, r.err
	case <-ctx.Done():
		go func() {
			if r := <-ch; r.c != nil {
				_ = r.c.Close()
			}
		}()
		return nil, fmt.Errorf("connect: %w", ctx.Err())
	}
}

// isConnError reports whether err means the transport or session is gone
// (as opposed to a JSON-RPC error answer or a cancelled call).
func isConnError(err error) bool {
	var ue *url.Error
	var ne net.Error
	return errors.Is(err, mcp.ErrConnectionClosed) ||
		errors.Is(err, mcp.ErrSessionMissing) ||
		errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) ||
		isConnRefused(err) ||
		isConnReset(err) ||
		errors.Is(err, syscall.EPIPE) ||
		errors.As(err, &ue) ||
		errors.As(err, &ne)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
