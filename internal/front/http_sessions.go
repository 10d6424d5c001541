package front

//lint:file-ignore SA1019 sampling, roots and logging are deprecated from protocol 2026-07-28 on; clients and servers of earlier protocols still use them

// The stateful Streamable HTTP front's sessions, and a tools/call fast path
// for them.
//
// go-sdk v1.8.0's stateful handler decodes a 2025-11-25 tools/call six
// times (readBatch three times, extractRequestMeta in servePOST and in
// validateRequestMeta, the params) and runs it through jsonrpc2's
// goroutines; served here a proxied call costs about a third less CPU and
// 4.5 KB less (docs/performance.md). As for 2026-07-28 requests
// (http_stateless.go) the front serves a plain tools/call on a known
// session itself; everything else reaches the go-sdk unchanged.
//
// What the go-sdk keeps per session in unexported state is kept here, for
// both paths alike (Sessions.Handler):
//   - the idle timer (server.session_idle_timeout): the go-sdk handler gets
//     no SessionTimeout; a session's timer starts when the POST that
//     created it ends, stops while any POST of the session is in flight and
//     restarts when the last one ends (as go-sdk sessionInfo startPOST /
//     endPOST do); on expiry the session is closed (ServerSession.Close, as
//     the go-sdk's timer does; httpSess.expire). GET streams do not hold it
//     (as before);
//   - the owner: the user id of the token whose POST created the session
//     (auth.TokenInfo, as the go-sdk records it). The fast path serves only
//     a request of that user, on the mount ([endpoints]) that created the
//     session; any other reaches the go-sdk, which answers 403 "session
//     user mismatch" or 404 as before.
//
// The fast path takes a POST only when all of these hold: the session is
// known here and its go-sdk session has handled notifications/initialized
// (the go-sdk handles a session's notifications in order before later
// requests; over HTTP a client may send its first call before that),
// it has no log level set (logging/setLevel: log notifications could go
// on the call's stream), no Last-Event-ID, MCP-Protocol-Version absent or
// a version this front serves below 2026-07-28, Content-Type and Accept as
// the go-sdk requires, the body within the go-sdk's 4 MiB and one
// JSON-RPC request object: jsonrpc "2.0", an id the front can write back
// exactly, method tools/call, params with a name without escapes,
// arguments and _meta only, _meta without a progress token (progress
// notifications go on the call's stream), without a task (LiftTask moves
// a tools/call's "task" member into _meta before this), without
// io.modelcontextprotocol/ keys, escaped or repeated keys. The call runs on the session's own
// *mcp.ServerSession through the server's receiving chain
// (Proxy.receivingMiddleware), so identity, policy, telemetry and
// per-session state are the same; the answer is an SSE "message" event
// with the headers the go-sdk writes (the protocol cases check the bytes
// against the go-sdk's).
//
// Messages of the call other than its answer. The go-sdk routes a
// request's messages to its POST stream only through an unexported context
// key (mcp/streamable.go idContextKey). Notifications that would use it
// are ruled out above. A request the proxy makes of the client during the
// call (elicitation for an approval or a connect, an upstream's sampling,
// elicitation or roots/list relayed) is sent by SessionSending on the
// call's POST stream, as the go-sdk sends it, with
// an id of the form "mts-N" that the go-sdk never uses; the client's
// answer, POSTed back, is taken here (202 Accepted, as the go-sdk answers a
// POST without requests) and handed to the waiting request. Any
// notification still sent with the call's context goes on the POST stream
// before the answer, as the go-sdk does.
//
// Cancellation: notifications/cancelled naming a fast-path call in flight
// cancels it (as jsonrpc2 cancels its own) and its stream ends without an
// answer (MCP basic/utilities/cancellation; CancelGate does the same to
// the go-sdk's answers, cancel_http.go); the session's end (DELETE, idle
// expiry) cancels it through the session binding (session.bind), with no
// answer written. A client that closes the POST stream does not cancel it
// (MCP 2025-11-25 basic/transports: a disconnection is not a
// cancellation), as on the go-sdk's path, whose handler's context is the
// session's.
//
// Trust: the client is not trusted; what it reaches here is what the
// go-sdk would have passed to the same chain, and answers to the proxy's
// own requests are taken only from the session the request went to.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/jsonscan"
)

// sessTable is the proxy's record of the stateful Streamable HTTP
// sessions, keyed by Mcp-Session-Id (globally unique: the go-sdk's
// crypto/rand ids).
type sessTable struct {
	mu sync.Mutex
	m  map[string]*httpSess
}

// Sessions is the stateful Streamable HTTP front's record of its sessions
// (the idle timer and owner the go-sdk keeps unexported), and the
// tools/call fast path for them.
type Sessions struct {
	Calls atomic.Int64 // calls the fast path served
	// EndRequests ends the requests in flight of the session with this
	// Mcp-Session-Id: a DELETE of it is coming, and the go-sdk waits for
	// them before it closes the session.
	EndRequests func(id string)
	table       sessTable
}

// SessionFlags are what the fast path asks of a client session, set by
// the receiving chain: Initialized, the go-sdk handled its
// notifications/initialized; LogLevel, the client set a log level (log
// notifications could go on a call's stream). The fast path serves
// neither before the one nor after the other.
type SessionFlags struct {
	Initialized, LogLevel atomic.Bool
}

// httpSess is one session of the table.
type httpSess struct {
	id       string
	endpoint string        // the mount that created it: no other serves it (as each go-sdk handler knows only its own)
	owner    string        // TokenInfo.UserID of the POST that created it; "" none
	timeout  time.Duration // server.session_idle_timeout; 0 none

	mu    sync.Mutex
	refs  int                // POSTs in flight
	timer *time.Timer        // nil: no timeout, or stopped for good
	ss    *mcp.ServerSession // the go-sdk's session, once registered (Record)
	flags *SessionFlags
	life  context.Context // its end cancels the session's requests
	calls map[jsonrpc.ID]context.CancelCauseFunc
	asks  map[string]chan []byte // own requests waiting for the client's answer

	expired bool      // the idle timer closed the session (expire): the fast path no longer serves it
	idleAt  time.Time // when refs last fell to 0 (endPOST): a firing of the timer before idleAt+timeout is stale
}

func (t *sessTable) get(id string) *httpSess {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.m[id]
}

// add records a session the go-sdk just created, with its creating POST
// in flight.
func (t *sessTable) add(id, endpoint, owner string, timeout time.Duration) *httpSess {
	e := &httpSess{id: id, endpoint: endpoint, owner: owner, timeout: timeout, refs: 1}
	if timeout > 0 {
		e.timer = time.AfterFunc(timeout, e.expire)
		e.timer.Stop() // runs once the creating POST ends (endPOST)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[string]*httpSess{}
	}
	t.m[id] = e
	return e
}

// drop forgets the session of id (it ended), stopping its timer.
func (t *sessTable) drop(id string) {
	t.mu.Lock()
	e := t.m[id]
	delete(t.m, id)
	t.mu.Unlock()
	if e != nil {
		e.mu.Lock()
		if e.timer != nil {
			e.timer.Stop()
			e.timer = nil
		}
		e.mu.Unlock()
	}
}

// expire closes the session after its idle time (go-sdk v1.8.0: the
// session timer's ServerSession.Close). A POST that started as the timer
// fired (startPOST's Stop came too late) holds the session: it is not idle,
// and endPOST restarts the timer. The same firing may run expire only
// after that POST ended (the timer's goroutine is late: a loaded machine):
// the session has not been idle for its timeout then (idleAt), and the
// timer endPOST restarted fires again, so expire leaves it.
// Once expire closes it, the fast path no longer serves it (sessReady), so
// a POST in the window before the entry is dropped (sessionFor's Wait
// goroutine) reaches the go-sdk, which answers 404, instead of starting a
// call on the closed session that its end cancels unanswered.
func (e *httpSess) expire() {
	e.mu.Lock()
	if e.refs > 0 || e.timer == nil || time.Since(e.idleAt) < e.timeout {
		e.mu.Unlock()
		return
	}
	e.expired = true
	e.timer = nil
	ss := e.ss
	e.mu.Unlock()
	if ss != nil {
		_ = ss.Close()
	}
}

// startPOST and endPOST hold the idle timer while POSTs are in flight, as
// go-sdk v1.8.0 sessionInfo does.
func (e *httpSess) startPOST() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.refs == 0 && e.timer != nil {
		e.timer.Stop()
	}
	e.refs++
}

func (e *httpSess) endPOST() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.refs--
	if e.refs == 0 && e.timer != nil {
		e.idleAt = time.Now()
		e.timer.Reset(e.timeout)
	}
}

// ownedBy reports whether r may use the session: no owner, or r's token
// names the owner (go-sdk v1.8.0 lookupSession).
func (e *httpSess) ownedBy(r *http.Request) bool {
	if e.owner == "" {
		return true
	}
	ti := auth.TokenInfoFromContext(r.Context())
	return ti != nil && ti.UserID == e.owner
}

// Handler wraps next, the go-sdk's stateful Streamable HTTP handler of
// endpoint (made without SessionTimeout), with the session table and the
// tools/call fast path (see the file comment), handed ep's receiving
// chain. timeout is server.session_idle_timeout.
func (st *Sessions) Handler(endpoint string, ep Endpoint, timeout time.Duration, next http.Handler) http.Handler {
	fs := sync.OnceValue(func() *fastServer {
		srv, handle := ep.Server()
		return &fastServer{srv: srv, handle: handle}
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			// GET, DELETE: the go-sdk looks the session up and checks its
			// owner. A DELETE of the owner on the session's mount first
			// ends the session's requests in flight (the go-sdk waits for
			// them before it closes the session); one of anybody else
			// changes nothing (the go-sdk answers 403 or 404).
			if r.Method == http.MethodDelete {
				if e := st.table.get(r.Header.Get("Mcp-Session-Id")); e != nil && e.endpoint == endpoint && e.ownedBy(r) {
					st.EndRequests(e.id)
				}
			}
			next.ServeHTTP(w, r)
			return
		}
		id := r.Header.Get("Mcp-Session-Id")
		if id == "" {
			// An initialize (RequireSession): the session it creates is
			// recorded by its handler (Record); its idle timer
			// starts when this POST ends.
			slot := &newSess{timeout: timeout}
			if ti := auth.TokenInfoFromContext(r.Context()); ti != nil {
				slot.owner = ti.UserID
			}
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), newSessKey{}, slot)))
			if e := slot.e.Load(); e != nil {
				e.endPOST()
			}
			return
		}
		e := st.table.get(id)
		if e == nil || e.endpoint != endpoint || !e.ownedBy(r) {
			next.ServeHTTP(w, r) // the go-sdk answers 404 / 403
			return
		}
		e.startPOST()
		defer e.endPOST()
		if st.serve(w, r, e, fs) {
			return
		}
		next.ServeHTTP(w, r)
	})
}

// newSessKey is the context key of a POST that may create a session: the
// go-sdk's session contexts derive from that POST's (mcp/streamable.go
// connectStreamable), so the initialize handler finds the slot
// (recordSession).
type newSessKey struct{}

// newSess is that slot: who sent the POST, and the session it created.
type newSess struct {
	owner   string
	timeout time.Duration
	e       atomic.Pointer[httpSess]
}

// Record records the session ss of endpoint, whose initialize the proxy
// admitted, when ctx is that of a POST that Handler saw create it; flags
// are the session's (SessionFlags), life ends with it.
func (st *Sessions) Record(ctx context.Context, ss *mcp.ServerSession, endpoint string, flags *SessionFlags, life context.Context) {
	slot, ok := ctx.Value(newSessKey{}).(*newSess)
	if !ok || ss.ID() == "" || st.table.get(ss.ID()) != nil {
		return
	}
	e := st.table.add(ss.ID(), endpoint, slot.owner, slot.timeout)
	e.mu.Lock()
	e.ss, e.flags, e.life = ss, flags, life
	e.mu.Unlock()
	slot.e.Store(e)
}

// Drop forgets the session of id (it ended).
func (st *Sessions) Drop(id string) { st.table.drop(id) }

// Known reports whether the session of id is recorded (tests).
func (st *Sessions) Known(id string) bool { return st.table.get(id) != nil }

// Ready reports whether the fast path serves the session of id (tests).
func (st *Sessions) Ready(id string) bool {
	e := st.table.get(id)
	if e == nil {
		return false
	}
	_, _, ok := sessReady(e)
	return ok
}

// sessCallKey is the context key of a fast-path call on a session: its
// answer stream and session (SessionSending).
type sessCallKey struct{}

type sessCall struct {
	conn *fastHTTPConn
	e    *httpSess
	ss   *mcp.ServerSession
}

// sessReady returns the session's go-sdk session and life when the fast
// path may serve it: registered, not expired, initialized, no log level.
func sessReady(e *httpSess) (*mcp.ServerSession, context.Context, bool) {
	e.mu.Lock()
	ss, flags, life, expired := e.ss, e.flags, e.life, e.expired
	e.mu.Unlock()
	if expired || ss == nil || ss.InitializeParams() == nil || flags == nil || !flags.Initialized.Load() || flags.LogLevel.Load() {
		return nil, nil, false
	}
	return ss, life, true
}

// postOK reports whether r's headers are what the go-sdk's stateful POST
// accepts for a request the fast path may take, and returns its body.
func postOK(r *http.Request) ([]byte, bool) {
	h := r.Header
	if len(h.Values("Last-Event-ID")) > 0 {
		return nil, false
	}
	if v := h.Get("Mcp-Protocol-Version"); v != "" && (v >= ModernVersion || !slices.Contains(FrontVersions(), v)) {
		return nil, false
	}
	body, ok := FrameOf(r)
	if !ok || len(body) == 0 || len(body) > sdkMaxBody {
		return nil, false
	}
	if ct := h.Get("Content-Type"); ct != "application/json" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			return nil, false
		}
	}
	if jsonOK, streamOK := acceptsJSONAndStream(h.Values("Accept")); !jsonOK || !streamOK {
		return nil, false
	}
	return body, true
}

// rpcObject is the top level of a JSON-RPC message object, raw.
type rpcObject struct {
	rpc, id, method, params, result, err []byte
}

// scanRPC reads one JSON-RPC message object; ok is false for anything
// else (a batch, unknown or repeated members, invalid JSON or UTF-8, too
// deep).
func scanRPC(body []byte) (m rpcObject, ok bool) {
	if !utf8.Valid(body) {
		return m, false
	}
	bad := false
	depth, err := jsonscan.Object(body, func(k, v []byte) bool {
		var slot *[]byte
		switch string(k) {
		case "jsonrpc":
			slot = &m.rpc
		case "id":
			slot = &m.id
		case "method":
			slot = &m.method
		case "params":
			slot = &m.params
		case "result":
			slot = &m.result
		case "error":
			slot = &m.err
		}
		if slot == nil || *slot != nil {
			bad = true
			return false
		}
		*slot = v
		return true
	})
	if err != nil || bad || depth > fastMaxDepth || string(m.rpc) != `"2.0"` {
		return m, false
	}
	return m, true
}

// serve serves r on the fast path when it qualifies, reporting
// whether it did: a plain tools/call, notifications/cancelled of a
// fast-path call, or the client's answer to a request of one.
func (st *Sessions) serve(w http.ResponseWriter, r *http.Request, e *httpSess, server func() *fastServer) bool {
	if !Fast || goDebugSet() {
		return false
	}
	body, ok := postOK(r)
	if !ok {
		return false
	}
	m, ok := scanRPC(body)
	if !ok {
		return false
	}
	switch {
	case m.method == nil:
		return e.answered(w, m, body)
	case string(m.method) == `"notifications/cancelled"`:
		return e.cancelled(w, m)
	case string(m.method) != `"tools/call"` || m.id == nil || m.result != nil || m.err != nil:
		return false
	}
	ss, life, ready := sessReady(e)
	if !ready {
		return false
	}
	id, ok := plainID(m.id)
	if !ok {
		return false
	}
	params, ok := legacyCallParams(m.params)
	if !ok {
		return false
	}
	st.run(w, r, e, ss, life, server(), id, params)
	return true
}

// legacyCallParams reads tools/call params the fast path may take (see the
// file comment) as the go-sdk decodes them.
func legacyCallParams(raw []byte) (*mcp.CallToolParamsRaw, bool) {
	name, args, meta, ok := CallMembers(raw, nil) // stdio_fast.go
	if !ok || !PlainString(name) || len(name) == 2 {
		return nil, false
	}
	params := &mcp.CallToolParamsRaw{Name: string(name[1 : len(name)-1])}
	if args != nil {
		params.Arguments = json.RawMessage(args)
	}
	if meta == nil {
		return params, true
	}
	if meta[0] != '{' {
		return nil, false
	}
	var seen [fastMaxMetaKs][]byte
	n, bad := 0, false
	if _, err := jsonscan.Object(meta, func(k, _ []byte) bool {
		if n == len(seen) || strings.IndexByte(string(k), '\\') >= 0 || string(k) == "progressToken" || string(k) == TaskMetaKey || strings.HasPrefix(string(k), "io.modelcontextprotocol/") {
			bad = true
			return false
		}
		for _, s := range seen[:n] {
			if string(s) == string(k) {
				bad = true
				return false
			}
		}
		seen[n] = k
		n++
		return true
	}); err != nil || bad {
		return nil, false
	}
	if n > 0 {
		if json.Unmarshal(meta, &params.Meta) != nil {
			return nil, false
		}
	}
	return params, true
}

// run runs the call on the session's own ServerSession and writes the
// answer.
func (st *Sessions) run(w http.ResponseWriter, r *http.Request, e *httpSess, ss *mcp.ServerSession, life context.Context, fs *fastServer, id jsonrpc.ID, params *mcp.CallToolParamsRaw) {
	// Before 2026-07-28 a disconnection is not a cancellation (MCP
	// 2025-11-25 basic/transports, Streamable HTTP: "The disconnection
	// SHOULD NOT be interpreted as the client cancelling its request"), so
	// the call outlives the POST, as on the go-sdk's path; it ends on
	// notifications/cancelled (e.calls) or the session's end (the
	// receiving chain's session binding).
	callCtx, cancel := context.WithCancelCause(context.WithoutCancel(r.Context()))
	defer cancel(nil)
	e.mu.Lock()
	if _, dup := e.calls[id]; dup {
		e.mu.Unlock()
		// go-sdk v1.8.0 servePOST's answer to an id already in flight.
		writeRPCErrorID(w, http.StatusBadRequest, id, jsonrpc.CodeInvalidRequest, fmt.Sprintf("duplicate in-flight request ID %v", id.Raw()))
		return
	}
	if e.calls == nil {
		e.calls = map[jsonrpc.ID]context.CancelCauseFunc{}
	}
	e.calls[id] = cancel
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		delete(e.calls, id)
		e.mu.Unlock()
	}()
	st.Calls.Add(1)
	conn := &fastHTTPConn{legacy: true}
	conn.start(w, r)
	hdr := w.Header()
	hdr["Cache-Control"], hdr["Content-Type"], hdr["Connection"] = sseCacheControl, sseContentType, sseConnection
	req := &mcp.CallToolRequest{Session: ss, Params: params, Extra: &mcp.RequestExtra{
		TokenInfo: auth.TokenInfoFromContext(r.Context()), Header: r.Header, CloseSSEStream: noCloseSSE}}
	ctx := context.WithValue(callCtx, sessCallKey{}, &sessCall{conn: conn, e: e, ss: ss})
	ctx = context.WithValue(ctx, fastHTTPKey{}, r) // fastHTTPConn.Write: notifications of the call
	res, err := fs.handle(ctx, "tools/call", req)
	if context.Cause(callCtx) == errClientCancelled || (err != nil && life != nil && life.Err() != nil) {
		// MCP basic/utilities/cancellation: no answer for a request the
		// client cancelled (as CancelGate withholds the go-sdk's); the
		// stream ends without an event. Nor for one the session's end
		// (DELETE, idle expiry) cancelled, as on the go-sdk's path.
		conn.mu.Lock()
		conn.w, conn.cur = nil, nil
		conn.mu.Unlock()
		if r.Context().Err() == nil {
			w.WriteHeader(http.StatusOK)
		}
		return
	}
	conn.answer(r.Context(), id, res, err)
}

// writeRPCErrorID is writeRPCError with a decoded id.
func writeRPCErrorID(w http.ResponseWriter, status int, id jsonrpc.ID, code int64, msg string) {
	data, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: code, Message: msg}})
	if err != nil {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(data)
}

// cancelled cancels the fast-path call a notifications/cancelled names
// (MCP basic/utilities/cancellation) and answers 202; a cancellation of
// any other id goes to the go-sdk.
func (e *httpSess) cancelled(w http.ResponseWriter, m rpcObject) bool {
	if m.id != nil || len(m.params) == 0 || m.params[0] != '{' {
		return false
	}
	var rid []byte
	if _, err := jsonscan.Object(m.params, func(k, v []byte) bool {
		if string(k) == "requestId" {
			rid = v
		}
		return true
	}); err != nil || rid == nil {
		return false
	}
	id, ok := plainID(rid)
	if !ok {
		return false
	}
	e.mu.Lock()
	cancel := e.calls[id]
	e.mu.Unlock()
	if cancel == nil {
		return false
	}
	cancel(errClientCancelled)
	w.WriteHeader(http.StatusAccepted)
	return true
}

// errClientCancelled is the cause of a fast-path call the client cancelled
// with notifications/cancelled.
var errClientCancelled = errors.New("the client cancelled the request (notifications/cancelled)")

// answered hands the client's answer to a request of a fast-path call
// (SessionSending) to it and answers 202, as the go-sdk answers a POST of
// responses; any other response goes to the go-sdk.
func (e *httpSess) answered(w http.ResponseWriter, m rpcObject, body []byte) bool {
	if m.id == nil || m.params != nil || (m.result == nil) == (m.err == nil) || !PlainString(m.id) {
		return false
	}
	key := string(m.id[1 : len(m.id)-1])
	e.mu.Lock()
	ch := e.asks[key]
	delete(e.asks, key)
	e.mu.Unlock()
	if ch == nil {
		return false
	}
	ch <- body // buffered: one answer per request
	w.WriteHeader(http.StatusAccepted)
	return true
}

// askSeq numbers the requests fast-path calls send to clients ("mts-N":
// the go-sdk's own ids are numbers).
var askSeq atomic.Uint64

// SessionSending is a sending middleware of the stateful server: a
// message the proxy sends with the context of a fast-path call goes on
// that call's POST stream (see the file comment).
func SessionSending(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		sc, ok := ctx.Value(sessCallKey{}).(*sessCall)
		if !ok || req.GetSession() != sc.ss {
			return next(ctx, method, req)
		}
		var res mcp.Result
		switch req.GetParams().(type) { // the request is a ServerRequest[Params] here
		case *mcp.ElicitParams:
			res = new(mcp.ElicitResult)
		case *mcp.CreateMessageWithToolsParams:
			res = new(mcp.CreateMessageWithToolsResult)
		case *mcp.CreateMessageParams:
			res = new(mcp.CreateMessageResult)
		case *mcp.ListRootsParams:
			res = new(mcp.ListRootsResult)
		default:
			if strings.HasPrefix(method, "notifications/") {
				params, err := json.Marshal(req.GetParams())
				if err != nil {
					return nil, err
				}
				return nil, sc.conn.Write(ctx, &jsonrpc.Request{Method: method, Params: params})
			}
			return next(ctx, method, req)
		}
		return res, sc.ask(ctx, method, req.GetParams(), res)
	}
}

// ask sends a request to the client on the call's POST stream and decodes
// its answer into res; errors are worded as go-sdk v1.8.0's call words
// them (mcp/transport.go), and a request whose context ends is cancelled
// with notifications/cancelled on the stream, as the go-sdk does.
func (sc *sessCall) ask(ctx context.Context, method string, params mcp.Params, res mcp.Result) error {
	raw, err := json.Marshal(params)
	if err != nil {
		return err
	}
	key := "mts-" + strconv.FormatUint(askSeq.Add(1), 10)
	id, _ := jsonrpc.MakeID(key)
	data, err := jsonrpc.EncodeMessage(&jsonrpc.Request{ID: id, Method: method, Params: raw})
	if err != nil {
		return err
	}
	ch := make(chan []byte, 1)
	e := sc.e
	e.mu.Lock()
	if e.asks == nil {
		e.asks = map[string]chan []byte{}
	}
	e.asks[key] = ch
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		delete(e.asks, key)
		e.mu.Unlock()
	}()
	if err := sc.send(data); err != nil {
		return fmt.Errorf("calling %q: %w", method, err)
	}
	select {
	case b := <-ch:
		m, _ := scanRPC(b)
		if m.err != nil {
			var je jsonrpc.Error
			if err := json.Unmarshal(m.err, &je); err != nil {
				return fmt.Errorf("calling %q: the client's error answer does not decode: %v", method, err)
			}
			return fmt.Errorf("calling %q: %w", method, &je)
		}
		if err := json.Unmarshal(m.result, res); err != nil {
			return fmt.Errorf("calling %q: the client's answer does not decode: %v", method, err)
		}
		return nil
	case <-ctx.Done():
		cp, _ := json.Marshal(&mcp.CancelledParams{Reason: ctx.Err().Error(), RequestID: key})
		if note, err := jsonrpc.EncodeMessage(&jsonrpc.Request{Method: "notifications/cancelled", Params: cp}); err == nil {
			_ = sc.send(note)
		}
		return ctx.Err()
	}
}

// send writes data as an event of the call's POST stream while the call is
// not answered and the client has not closed the POST: a request written
// then would wait for an answer to a question the client never saw (the
// call outlives its POST, run), so it fails at once, as go-sdk
// v1.8.0's Write to a stream no longer connected does.
func (sc *sessCall) send(data []byte) error {
	c := sc.conn
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cur == nil {
		return fmt.Errorf("%w: write to closed stream", errRejected)
	}
	if c.cur.Context().Err() != nil {
		return fmt.Errorf("%w: undelivered message: stream not connected or already closed", errRejected)
	}
	if err := writeSSE(c.w, data); err != nil {
		return fmt.Errorf("%w: undelivered message: %v", errRejected, err)
	}
	return nil
}

// FrontVersions are the protocol versions offered to clients: every
// version the SDK supports up to 2025-11-25.
func FrontVersions() []string {
	var out []string
	for _, v := range mcp.SupportedProtocolVersions() {
		if v <= "2025-11-25" {
			out = append(out, v)
		}
	}
	return out
}
