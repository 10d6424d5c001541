package proxy

//lint:file-ignore SA1019 sampling, roots and logging are deprecated from protocol 2026-07-28 on; clients and servers of earlier protocols still use them

// Requests an upstream sends to the client (sampling/createMessage,
// elicitation/create, roots/list), notifications an upstream sends
// (progress, logging, resources/updated, list_changed), and per-client
// upstream sessions (config `session = "per-client"`).
//
// Which client gets an upstream's request (DESIGN.md "Upstream sessions";
// the rule is below):
//   - a request tied to a task (_meta "io.modelcontextprotocol/related-task"):
//     the client session that holds the task (its taskBook) and, on a
//     shared session, waits in tasks/result for it; none: refused;
//   - per-client upstream session: the client session it was opened for;
//   - shared upstream session: the client session whose call the request
//     answers, by request identity (Streamable HTTP upstreams), or the only
//     client session with calls in flight on that upstream; with calls of
//     several client sessions in flight and no identity, nobody.
//
// When no such client exists the upstream gets an error at once (-32601,
// naming the upstream and the capability) and the proxy logs a warning.
//
// Capabilities offered to upstreams: a shared session offers sampling,
// elicitation (form and url) and roots, which the proxy can relay during a
// call; the shared ("probe") session of a per-client upstream offers none,
// so the catalog lists the tools any client gets; a per-client session
// offers exactly what its client offered of those three.
//
// Which client gets a request that an upstream sends during a call
// (sampling/createMessage, elicitation/create, roots/list) on a SHARED
// upstream session. The rule, in order:
//
//  1. Request identity. A Streamable HTTP upstream sends a request that a
//     call caused on that call's POST response stream (MCP spec,
//     basic/transports, "Sending Messages to the Server": such messages
//     SHOULD relate to the originating request; the go-sdk and the
//     TypeScript SDK servers do). The proxy's HTTP client (upstream.TagCallers)
//     knows which of its calls each stream answers and marks the requests
//     arriving on it with that call's token in params._meta; the relay
//     routes by the token to the client session that made the call.
//  2. Otherwise (stdio and SSE upstreams, or a request on the standalone
//     GET stream), the go-sdk gives no way to know which call caused it.
//     When the calls in flight on that upstream all belong to ONE client
//     session, it goes there; when calls of two or more client sessions are
//     in flight, the upstream gets an error and the proxy logs a warning:
//     fail closed, never a guess.
//
// Per-client upstream sessions (session = "per-client") are always exact:
// the session belongs to one client.
//
// Trust: upstream servers are not trusted. The token is 128 random bits,
// never sent upstream, and valid only while its call is in flight;
// upstream.TagCallers removes the token key from every request an upstream sends,
// so an upstream cannot name a client by writing the key itself.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
	"github.com/mcp-toolsearch/mcp-toolsearch/internal/logwindow"
	"github.com/mcp-toolsearch/mcp-toolsearch/modes"
	"github.com/mcp-toolsearch/mcp-toolsearch/telemetry"
	"github.com/mcp-toolsearch/mcp-toolsearch/upstream"
)

// inflight is one tools/call running on a shared upstream session.
type inflight struct {
	up    string
	s     *session
	token string          // request identity (upstream.TagCallers); "" when not used
	ctx   context.Context // the client's call: relayed requests go on its stream
	task  string          // tasks/result of this task id (serveTasks); "" for a tools/call
	logs  sync.WaitGroup  // its log messages on their way (logroute.go)
	logN  atomic.Int32    // log messages ever sent to it (waitLogs skips the wait without)
}

// relatedTaskKey is the _meta key that ties a request to a task (MCP
// 2025-11-25 basic/utilities/tasks, "Associating Task-Related Messages").
const relatedTaskKey = "io.modelcontextprotocol/related-task"

// relatedTaskID is _meta[relatedTaskKey].taskId of an upstream's
// client-directed request ("" when absent).
func relatedTaskID(req mcp.Request) string {
	var meta map[string]any
	switch r := req.(type) {
	case *mcp.ElicitRequest:
		if r.Params != nil {
			meta = r.Params.Meta
		}
	case *mcp.CreateMessageWithToolsRequest:
		if r.Params != nil {
			meta = r.Params.Meta
		}
	case *mcp.ListRootsRequest:
		if r.Params != nil {
			meta = r.Params.Meta
		}
	}
	rt, _ := meta[relatedTaskKey].(map[string]any)
	id, _ := rt["taskId"].(string)
	return id
}

// taskWaiter is the tasks/result of task id in flight on the shared
// session of up whose client session holds that task (its taskBook), nil
// when none: a request tied to a task goes to that client only, never by
// the in-flight rule of callerFor.
func (pt *passthrough) taskWaiter(up, id string) *inflight {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	for _, c := range pt.inflight {
		if c.up == up && c.task == id && c.s.tasks != nil {
			if _, ok := c.s.tasks.get(id); ok {
				return c
			}
		}
	}
	return nil
}

// clientState is the per-client upstream sessions of one client session.
type clientState struct {
	done  chan struct{} // closed once every per-client session was opened (or failed)
	mu    sync.Mutex
	conns map[string]*upstream.ClientConn
	errs  map[string]string // upstream -> why its per-client session failed
	dirty bool              // per-client tools changed since cat was built
	base  *catalog.Snapshot // shared snapshot cat was built from
	cat   *catalog.Catalog
}

// Capability names used in relays and logs.
const (
	capSampling    = "sampling"
	capElicitation = "elicitation"
	capRoots       = "roots"
)

// clientHas reports whether client session s advertised capability c.
func clientHas(s *session, c string) bool {
	if s == nil || s.ss == nil {
		return false
	}
	ip := s.ss.InitializeParams()
	if ip == nil || ip.Capabilities == nil {
		return false
	}
	switch c {
	case capSampling:
		return ip.Capabilities.Sampling != nil
	case capElicitation:
		return ip.Capabilities.Elicitation != nil
	case capRoots:
		return ip.Capabilities.RootsV2 != nil
	}
	return false
}

func methodCap(method string) string {
	switch method {
	case "sampling/createMessage":
		return capSampling
	case "elicitation/create":
		return capElicitation
	case "roots/list":
		return capRoots
	}
	return ""
}

// startCall records a call of client session s on the shared session of
// up; it returns ctx to make the call with (carrying the call's token for
// upstream.TagCallers when up is an HTTP upstream) and a func that removes the
// record.
func (pt *passthrough) startCall(ctx context.Context, up string, s *session) (context.Context, func()) {
	return pt.startTaskCall(ctx, up, s, "")
}

// startTaskCall is startCall for a tasks/result of task id (serveTasks):
// requests tied to that task (relatedTaskID) reach s while it waits.
func (pt *passthrough) startTaskCall(ctx context.Context, up string, s *session, task string) (context.Context, func()) {
	ctx, f := pt.beginCall(ctx, up, s, task)
	return ctx, func() { pt.endCall(f) }
}

// beginCall is startTaskCall without the closure (forward: one allocation
// fewer per call); pt.endCall(f) removes the record.
func (pt *passthrough) beginCall(ctx context.Context, up string, s *session, task string) (context.Context, *inflight) {
	f := &inflight{up: up, s: s, ctx: ctx, task: task}
	if u, ok := pt.p.conf().Upstreams[up]; ok && u.IsHTTP() {
		f.token = upstream.NewCallerToken()
		ctx = upstream.WithCallerToken(ctx, f.token)
	}
	pt.mu.Lock()
	pt.inflight = append(pt.inflight, f)
	pt.mu.Unlock()
	return ctx, f
}

// endCall removes the record beginCall made.
func (pt *passthrough) endCall(f *inflight) {
	waitLogs(f) // logroute.go: its log messages go before its answer
	pt.mu.Lock()
	defer pt.mu.Unlock()
	if i := slices.Index(pt.inflight, f); i >= 0 {
		pt.inflight = slices.Delete(pt.inflight, i, i+1)
		pt.noteEnded(f) // logroute.go
	}
}

// exchangeCall is the one 2026-07-28 call (running as an exchange) of
// owner's client in flight on owner's per-client session of up, nil when
// there is none or several (then the request goes to owner as before).
func (pt *passthrough) exchangeCall(up string, owner *session) *inflight {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	var found *inflight
	for _, c := range pt.inflight {
		if c.up == up && c.s.ex != nil && c.s.ss == owner.ss {
			if found != nil {
				return nil
			}
			found = c
		}
	}
	return found
}

// callerFor finds the call that a request of the shared session of up
// belongs to (rule at the top of this file): by token, else the calls in flight
// on up when they all belong to one client session. why says why there is
// none.
func (pt *passthrough) callerFor(up, token string) (f *inflight, why string, ambiguous bool) {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	var sessions []*session
	var last *inflight
	for _, c := range pt.inflight {
		if c.up != up {
			continue
		}
		if token != "" && c.token == token {
			return c, "", false
		}
		if !slices.Contains(sessions, c.s) {
			sessions = append(sessions, c.s)
		}
		last = c
	}
	switch len(sessions) {
	case 0:
		return nil, "no tools/call is in flight on it", false
	case 1:
		return last, "", false
	}
	return nil, fmt.Sprintf("calls of %d client sessions are in flight on its shared session and the request does not say which call caused it (session = \"per-client\" routes exactly)", len(sessions)), true
}

// relayMiddleware intercepts the upstream's client-directed requests.
// owner is the client of a per-client session, nil for a shared one.
func (pt *passthrough) relayMiddleware(up string, owner *session) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			c := methodCap(method)
			if c == "" {
				return next(ctx, method, req)
			}
			token := upstream.TakeCallerToken(req)
			target := owner
			why := "its client did not advertise that capability"
			callCtx := context.Context(nil)
			code := int64(jsonrpc.CodeMethodNotFound)
			if task := relatedTaskID(req); task != "" {
				// Tied to a task: only the client session that created it
				// (and, on a shared session, waits in tasks/result for it).
				target = nil
				if owner != nil {
					if owner.tasks != nil {
						if _, ok := owner.tasks.get(task); ok {
							target = owner
						}
					}
				} else if f := pt.taskWaiter(up, task); f != nil {
					target, callCtx = f.s, f.ctx
				}
				if target == nil {
					why = "no client session that holds task " + bounded(task, 200) + " waits for its result"
				}
			} else if owner != nil {
				// A 2026-07-28 client cannot be sent a request: the call of
				// it that is in flight on this session asks through its
				// exchange (exchange.go).
				if f := pt.exchangeCall(up, owner); f != nil {
					target = f.s
					callCtx := f.ctx
					relCtx, cancel := context.WithCancel(context.WithoutCancel(callCtx))
					stop := context.AfterFunc(ctx, cancel)
					defer func() { stop(); cancel() }()
					ctx = relCtx
				}
			}
			if target == nil && relatedTaskID(req) == "" {
				var f *inflight
				var ambiguous bool
				if f, why, ambiguous = pt.callerFor(up, token); f != nil {
					target, callCtx = f.s, f.ctx
					why = "the client whose call it belongs to did not advertise that capability"
				} else if ambiguous {
					// Not "unsupported": the proxy cannot tell whose it is.
					// -32603 keeps the explanation (the go-sdk replaces the
					// message of a -32601).
					code = jsonrpc.CodeInternalError
				}
			}
			if target == nil || !clientHas(target, c) {
				return nil, pt.refuseRelay(ctx, up, method, why, code)
			}
			release, ok := pt.relaySlot(up, target)
			if !ok {
				why = fmt.Sprintf("%d requests of this upstream already wait for this client's answer (a bound against an upstream flooding the user with questions); ask again once one is answered", maxRelayedPerClient)
				pt.relayRefusedLog(up).Log(ctx, method, why)
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("mcp-toolsearch: %s from upstream %q not relayed: %s", method, up, why)}
			}
			defer release()
			if callCtx != nil {
				// Sent in the context of the client's call, so that it goes on
				// that call's stream; cancelled with the upstream's request,
				// and when the call ends (answered, cancelled, its session
				// gone): the upstream's own cancellation would come on the
				// stream of the tools/call the proxy has just ended, so it
				// never arrives, and the request would wait for ever.
				relCtx, cancel := context.WithCancel(context.WithoutCancel(callCtx))
				stop := context.AfterFunc(ctx, cancel)
				stopCall := context.AfterFunc(callCtx, cancel)
				defer func() { stop(); stopCall(); cancel() }()
				ctx = relCtx
			}
			res, err, asked := askFor(ctx, target, req)
			if !asked {
				return next(ctx, method, req)
			}
			if err != nil {
				pt.p.log.Info("relayed request failed", "upstream", up, "method", method, "err", err)
				var rpc *jsonrpc.Error
				if errors.As(err, &rpc) {
					return nil, rpc
				}
				return nil, err
			}
			return res, nil
		}
	}
}

// refuseRelay logs why the request method of upstream up is not relayed
// and returns the error its answer carries (code: -32601, or -32603 when
// the proxy cannot tell whose it is). roots/list outside a call is
// routine (servers ask right after initialize); sampling and elicitation
// refused is news, summarised when they flood.
func (pt *passthrough) refuseRelay(ctx context.Context, up, method, why string, code int64) error {
	if method == "roots/list" {
		pt.p.log.Log(ctx, slog.LevelDebug, "upstream request refused", "upstream", up, "method", method, "reason", why)
	} else {
		pt.relayRefusedLog(up).Log(ctx, method, why)
	}
	return &jsonrpc.Error{Code: code, Message: fmt.Sprintf("mcp-toolsearch: %s from upstream %q not relayed: %s", method, up, why)}
}

// askFor asks target's client what req asks (exchange.go askClient: a
// request on the client's session, or a question of a 2026-07-28 call's
// input_required result); asked is false for any other request.
func askFor(ctx context.Context, target *session, req mcp.Request) (res mcp.Result, err error, asked bool) {
	switch r := req.(type) {
	case *mcp.CreateMessageWithToolsRequest:
		res, err = askClient(ctx, target, r.Params)
	case *mcp.ElicitRequest:
		res, err = askClient(ctx, target, r.Params)
	case *mcp.ListRootsRequest:
		res, err = askClient(ctx, target, r.Params)
	default:
		return nil, nil, false
	}
	return res, err, true
}

// maxRelayedPerClient bounds the requests of one upstream (sampling,
// elicitation, roots) relayed to one client session and not yet answered.
// An upstream is not trusted: one that sends hundreds of
// elicitation/create requests at once during a call would otherwise put
// hundreds of questions in front of the user (417 relayed
// during one call); a server that asks one question at a time, or a few
// concurrent calls each asking, stay well below it. Past it, the request
// is answered -32603 naming the bound.
const maxRelayedPerClient = 8

// relayKey names the relayed requests of one upstream to one client session.
type relayKey struct {
	up string
	s  *session
}

// relaySlot takes one of the maxRelayedPerClient slots of (up, s); ok is
// false when all are taken. release gives the slot back.
func (pt *passthrough) relaySlot(up string, s *session) (release func(), ok bool) {
	k := relayKey{up, s}
	pt.mu.Lock()
	defer pt.mu.Unlock()
	if pt.relaying[k] >= maxRelayedPerClient {
		return nil, false
	}
	if pt.relaying == nil {
		pt.relaying = map[relayKey]int{}
	}
	pt.relaying[k]++
	return func() {
		pt.mu.Lock()
		defer pt.mu.Unlock()
		if pt.relaying[k]--; pt.relaying[k] <= 0 {
			delete(pt.relaying, k)
		}
	}, true
}

// refusedLog logs the requests of one upstream the proxy refused to relay
// (no call of a client that can answer them, or over maxRelayedPerClient):
// the first of a relayDropWindow in full, the rest counted in one summary,
// so a flood of requests does not flood the log either.
type refusedLog struct {
	pt     *passthrough
	up     string
	window *logwindow.Window
}

func (pt *passthrough) relayRefusedLog(up string) *refusedLog {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	if r := pt.refused[up]; r != nil {
		return r
	}
	r := &refusedLog{pt: pt, up: up}
	r.window = logwindow.New(relayDropWindow, func(n int, every time.Duration) {
		if n > 0 {
			pt.p.log.Warn("more upstream requests refused (sampling, elicitation)", "upstream", up, "refused", n, "in_last", every)
		}
	})
	if pt.refused == nil {
		pt.refused = map[string]*refusedLog{}
	}
	pt.refused[up] = r
	return r
}

func (r *refusedLog) Log(ctx context.Context, method, why string) {
	if r.window.Allow() {
		r.pt.p.log.Warn("upstream request refused", "upstream", r.up, "method", method, "reason", why)
	}
}

// clientOptions is the upstream manager's ClientOptions hook for the
// shared session of up.
func (pt *passthrough) clientOptions(up string) *mcp.ClientOptions {
	o := pt.handlers(up, nil)
	if pt.perClient(up) {
		o.Capabilities = &mcp.ClientCapabilities{} // the probe offers nothing
	} else {
		o.Capabilities = &mcp.ClientCapabilities{
			Sampling:    &mcp.SamplingCapabilities{},
			Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}},
		}
		if pt.offersRoots(up) {
			o.Capabilities.RootsV2 = &mcp.RootCapabilities{}
		}
	}
	return o
}

// handlers are the notification handlers for a session of up (owner nil:
// shared).
func (pt *passthrough) handlers(up string, owner *session) *mcp.ClientOptions {
	return &mcp.ClientOptions{
		// mrtr.go: input_required results of 2026-07-28 upstreams are
		// answered by the calling client (callRounds), not by this client.
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		LoggingMessageHandler: func(ctx context.Context, r *mcp.LoggingMessageRequest) {
			pt.logMessage(context.WithoutCancel(ctx), up, owner, r.Params)
		},
		ResourceUpdatedHandler: func(ctx context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			pt.resourceUpdated(context.WithoutCancel(ctx), up, r.Params)
		},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { pt.listChanged("resources") },
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { pt.listChanged("prompts") },
	}
}

// clientMiddleware is the upstream manager's ClientMiddleware hook.
func (pt *passthrough) clientMiddleware(up string) mcp.Middleware {
	return pt.relayMiddleware(up, nil)
}

// clientInitialized opens the per-client upstream sessions of s (on
// notifications/initialized, so each upstream sees the client's
// capabilities and lists the tools that client gets). It returns at once;
// surfaces wait for it (waitOpen).
func (pt *passthrough) clientInitialized(s *session) {
	var ups []string
	for _, up := range pt.p.ups.Names() {
		// An upstream the client may use nothing of gets no session (and
		// no child process) for it.
		if pt.perClient(up) && pt.visible(s, up) {
			ups = append(ups, up)
		}
	}
	if len(ups) == 0 || s.ss == nil {
		return
	}
	pt.mu.Lock()
	if _, ok := pt.clients[s]; ok {
		pt.mu.Unlock()
		return
	}
	st := &clientState{done: make(chan struct{}), conns: map[string]*upstream.ClientConn{}, errs: map[string]string{}}
	pt.clients[s] = st
	pt.mu.Unlock()
	go func() {
		defer close(st.done)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		for _, up := range ups {
			o := pt.handlers(up, s)
			caps := &mcp.ClientCapabilities{}
			ip := s.ss.InitializeParams()
			if ip != nil && ip.Capabilities != nil {
				caps.Sampling = ip.Capabilities.Sampling
				caps.Elicitation = ip.Capabilities.Elicitation
				if ip.Capabilities.RootsV2 != nil && pt.offersRoots(up) {
					caps.RootsV2 = &mcp.RootCapabilities{ListChanged: ip.Capabilities.RootsV2.ListChanged}
				}
			}
			o.Capabilities = caps
			if !pt.reservePerClient() {
				max := pt.p.conf().Server.MaxPerClientUpstreams
				st.mu.Lock()
				st.errs[up] = fmt.Sprintf("server.max_per_client_upstreams (%d) reached: that many per-client upstream sessions are open for other clients; try again in a new session later", max)
				st.mu.Unlock()
				pt.p.metrics.Refused(telemetry.LimitMaxPerClientUpstreams)
				pt.p.log.Warn("per-client upstream session refused", "upstream", up, "client", s.client, "limit", "server.max_per_client_upstreams", "max", max)
				continue
			}
			cc, err := pt.p.ups.OpenSession(ctx, up, o, pt.relayMiddleware(up, s), func([]*mcp.Tool) {
				st.mu.Lock()
				st.dirty = true
				st.mu.Unlock()
				pt.p.notifyToolsChanged()
			})
			st.mu.Lock()
			if err != nil {
				pt.releasePerClient()
				st.errs[up] = err.Error()
				pt.p.log.Warn("per-client upstream session failed", "upstream", up, "client", s.client, "err", err)
			} else {
				pt.p.metrics.PerClientOpened()
				st.conns[up] = cc
				st.dirty = true
			}
			st.mu.Unlock()
		}
		go func() {
			_ = s.ss.Wait()
			pt.mu.Lock()
			delete(pt.clients, s)
			pt.mu.Unlock()
			st.mu.Lock()
			conns := st.conns
			st.conns = map[string]*upstream.ClientConn{}
			st.mu.Unlock()
			for _, cc := range conns {
				cc.Close()
				pt.releasePerClient()
				pt.p.metrics.PerClientClosed()
			}
		}()
	}()
}

// reservePerClient takes one of the server.max_per_client_upstreams slots;
// false when none is left.
func (pt *passthrough) reservePerClient() bool {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	if pt.perClientN >= pt.p.conf().Server.MaxPerClientUpstreams {
		return false
	}
	pt.perClientN++
	return true
}

// releasePerClient gives a slot back.
func (pt *passthrough) releasePerClient() {
	pt.mu.Lock()
	pt.perClientN--
	pt.mu.Unlock()
}

// state returns s's per-client state after waiting (bounded) for its
// sessions to open; nil when it has none.
func (pt *passthrough) state(s *session) *clientState {
	if s == nil {
		return nil
	}
	if s.base != nil { // a 2026-07-28 call's copy: the session's own state
		s = s.base
	}
	pt.mu.Lock()
	st := pt.clients[s]
	pt.mu.Unlock()
	if st == nil {
		return nil
	}
	select {
	case <-st.done:
	case <-time.After(2 * time.Minute):
	}
	return st
}

// conn is s's per-client session for up, or nil.
func (pt *passthrough) conn(s *session, up string) *upstream.ClientConn {
	if !pt.perClient(up) {
		return nil
	}
	st := pt.state(s)
	if st == nil {
		return nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.conns[up]
}

// perClientErr is why s has no per-client session for up ("" when it has
// one or up is shared).
func (pt *passthrough) perClientErr(s *session, up string) string {
	st := pt.state(s)
	if st == nil {
		return ""
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.errs[up]
}

// sessionSnapshot is s's catalog when it has per-client upstream
// sessions: the shared catalog with each per-client upstream's tools
// replaced by the ones its session lists. nil means "use the shared one".
func (pt *passthrough) sessionSnapshot(s *session) *catalog.Snapshot {
	st := pt.state(s)
	if st == nil {
		return nil
	}
	base := pt.p.catalog().Snapshot()
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.conns) == 0 {
		return nil
	}
	if st.cat != nil && !st.dirty && st.base == base {
		return st.cat.Snapshot()
	}
	cat := catalog.New(pt.p.conf().Server.NameSeparator, modes.Reserved, enabledInfos(pt.p.conf()))
	cat.SetMaxNameLen(maxNameLen(pt.p.conf()))
	byUp := map[string][]*catalog.Entry{}
	for _, e := range base.Entries {
		byUp[e.Upstream] = append(byUp[e.Upstream], e)
	}
	for _, info := range enabledInfos(pt.p.conf()) {
		up := info.Name
		if cc, ok := st.conns[up]; ok {
			cat.SetTools(up, entriesFromListing(cc.Tools(), cc.Diagnostics(), cc.Extra()))
			continue
		}
		if len(byUp[up]) > 0 {
			cat.SetTools(up, byUp[up])
		}
		if reason, down := base.Unavailable[up]; down {
			cat.SetUnavailable(up, reason)
		}
	}
	st.cat, st.base, st.dirty = cat, base, false
	return cat.Snapshot()
}

// callContext carries the client's tools/call request (progress token,
// _meta) from the front middleware to forward.
type callContext struct{}

// withCallRequest returns ctx carrying the client's tools/call request.
func withCallRequest(ctx context.Context, req *mcp.CallToolRequest) context.Context {
	return context.WithValue(ctx, callContext{}, req)
}

// callRequest is the client's tools/call request that ctx serves, when the
// call being forwarded is that very tool (not a tool called from inside
// tool_search_code or tool_call).
func callRequest(ctx context.Context, exposed string) *mcp.CallToolRequest {
	req, _ := ctx.Value(callContext{}).(*mcp.CallToolRequest)
	if req == nil || req.Params == nil || !strings.EqualFold(req.Params.Name, exposed) {
		return nil
	}
	return req
}

// toolCallRequest is the client's tools/call request that ctx serves when
// that request is a call of the tool_call meta tool (modes.ToolCall) and
// ctx is the one call it makes for the client (session.CallEnveloped marks it
// with withInnerRawSlot; the mark stays when withoutRawSlot takes the
// slot away).
func toolCallRequest(ctx context.Context) *mcp.CallToolRequest {
	req, _ := ctx.Value(callContext{}).(*mcp.CallToolRequest)
	if req == nil || req.Params == nil || req.Params.Name != modes.ToolCall || ctx.Value(innerRawKey{}) == nil {
		return nil
	}
	return req
}

// rootsChanged passes a client's notifications/roots/list_changed on to its
// per-client upstream sessions (the only ones offered roots.listChanged;
// shared sessions are offered roots without listChanged).
func (pt *passthrough) rootsChanged(s *session) {
	for _, u := range pt.p.conf().EnabledUpstreams() {
		if cc := pt.conn(s, u.Name); cc != nil {
			cc.NotifyRootsChanged()
		}
	}
}
