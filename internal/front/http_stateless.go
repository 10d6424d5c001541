package front

// The Streamable HTTP front's tools/call fast path.
//
// go-sdk v1.8.0's stateless Streamable HTTP handler, which serves every
// 2026-07-28 request, connects a new ServerSession per request and decodes
// one tools/call about a dozen times (readBatch twice, DecodeMessage,
// extractRequestMeta twice, the _meta triple's remarshal, extractName, the
// params): ~79 KB and twice the CPU of the call served here
// (docs/performance.md). For a plain tools/call what those decodes feed is
// fixed, so the front serves it itself:
//
//   - It checks what the go-sdk checks for such a request, and takes the
//     request only when every check passes (Content-Type, Accept, no
//     Last-Event-ID, the body within the go-sdk's 4 MiB, one JSON-RPC
//     request object, MCP-Protocol-Version 2026-07-28 equal to the _meta
//     protocolVersion, Mcp-Method and Mcp-Name equal to the body,
//     clientCapabilities present). Anything else, and every failed check,
//     goes to the go-sdk unchanged (the body is not consumed), so its
//     errors stay its own.
//   - The session's InitializeParams (client name, capabilities, version)
//     are the go-sdk's own: the first request with a given _meta triple
//     goes to the go-sdk, and the receiving chain records the params the
//     go-sdk decoded for it (LearnTriple); later requests with a
//     byte-identical triple reuse them (tripleCache).
//   - A *mcp.ServerSession is connected for the request as the go-sdk's
//     stateless handler connects one (Server.Connect with that state), over
//     a connection of its own (fastHTTPConn), and closed after the answer.
//   - The request runs through the server's receiving middleware chain
//     (Proxy.receivingMiddleware, the functions the go-sdk server runs,
//     ending in the proxy's tools/call handler), so the call still goes
//     (*Proxy).call -> forwardTraced -> forward.
//   - The answer is written as the go-sdk writes it: the same response
//     headers, an SSE "message" event, or for the errors SEP-2575 maps to
//     an HTTP status a JSON body with that status; the JSON-RPC response is
//     encoded by the go-sdk's jsonrpc.EncodeMessage from the result
//     marshalled as its jsonrpc2 does (no HTML escaping).
//
// Messages other than the answer. The go-sdk sends a request's
// notifications on its POST stream only when the context carries the
// request's id under an unexported key (mcp/streamable.go idContextKey).
// What can send one during a 2026-07-28 tools/call is left to the go-sdk:
// a progress token (progress), a log level (logging). Server-to-client
// requests do not exist on a stateless connection (the go-sdk refuses them;
// questions become input_required results). Should anything
// still send a notification with the call's context, fastHTTPConn writes
// it on the POST stream before the answer, as the go-sdk does; unrelated
// messages are refused with the go-sdk's errors.
//
// Cancellation: the handler's context is the HTTP request's, which ends
// when the client closes the request (MCP 2026-07-28 Cancellation); the
// go-sdk handler runs with PropagateRequestCancellation for the same reason.
//
// Trust: the client is not trusted; what it reaches here is what the go-sdk
// would have passed to the same chain.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/jsonscan"
)

// goDebugSet reports whether MCPGODEBUG is set: its compatibility
// parameters change go-sdk behaviour the fast path copies (e.g.
// nomethodnotfoundcodeinerror), so then every request goes to the go-sdk.
var goDebugSet = sync.OnceValue(func() bool { return os.Getenv("MCPGODEBUG") != "" })

// Constants of go-sdk v1.8.0's Streamable HTTP server that the fast path
// checks against (mcp/streamable.go, streamable_headers.go).
const (
	sdkMaxBody    = mcp.DefaultMaxRequestBodyBytes // StreamableHTTPOptions.MaxRequestBodyBytes left at zero
	fastMaxDepth  = 256                            // deeper bodies go to the go-sdk (its limit: 1000, internal/json)
	fastMaxMetaKs = 16                             // _meta members the fast path looks at
)

// Stateless is the tools/call fast path of 2026-07-28 requests over
// Streamable HTTP, for every endpoint of a proxy (Handler), with the
// triple cache and the idle sessions they share.
type Stateless struct {
	Log   *slog.Logger
	Calls atomic.Int64 // calls the fast path served
	trips tripleCache  // InitializeParams of known _meta triples
	idle  atomic.Int64 // idle fast-path sessions kept (sessionPool)
}

// Endpoint is what the fast path of one endpoint needs from the proxy.
type Endpoint struct {
	// Server is the endpoint's stateless server and its receiving chain
	// (the dispatch function the fast path hands a call to), called once,
	// on first use (as the go-sdk handler's getServer makes the server).
	Server func() (*mcp.Server, mcp.MethodHandler)
	// BindsHeaders reports whether the tool name, as the client named
	// client sees it on this endpoint with r's credentials, binds
	// arguments to Mcp-Param-* headers (SEP-2243): such calls go to the
	// go-sdk, whose headers check (with the proxy's) must see them.
	BindsHeaders func(r *http.Request, name, client string) bool
}

// Handler wraps next, the stateless Streamable HTTP handler of an
// endpoint, with the tools/call fast path.
func (st *Stateless) Handler(ep Endpoint, next http.Handler) http.Handler {
	fs := sync.OnceValue(func() *fastServer {
		srv, handle := ep.Server()
		return &fastServer{srv: srv, handle: handle, bindsHeaders: ep.BindsHeaders}
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served, r2 := st.serve(w, r, fs)
		if !served {
			next.ServeHTTP(w, r2)
		}
	})
}

// Idle is how many idle fast-path sessions are kept (tests).
func (st *Stateless) Idle() int64 { return st.idle.Load() }

// Close closes every idle fast-path session and keeps none from now on.
func (st *Stateless) Close() { st.trips.closeAll(&st.idle) }

// fastServer is what the fast path of one endpoint runs a call on: the
// endpoint's stateless server, its receiving chain and its header check.
type fastServer struct {
	srv          *mcp.Server
	handle       mcp.MethodHandler
	bindsHeaders func(r *http.Request, name, client string) bool
}

// httpCall is a tools/call the fast path may take, from the POST body.
type httpCall struct {
	id     jsonrpc.ID
	name   []byte // without quotes; no escapes
	args   []byte // raw; nil when absent
	meta   []byte // the _meta object, raw
	ci     []byte // its clientInfo, raw; nil when absent
	caps   []byte // its clientCapabilities, raw
	pv     []byte // its protocolVersion, raw (with quotes)
	params []byte
	others [fastMaxMetaKs][2][]byte // its other members: key (no escapes), raw value
	nother int
}

// serve serves r on the fast path when it qualifies, reporting
// whether it did; otherwise it returns the request to hand to the go-sdk
// (r, or r with a tripleLearn slot when only the triple was unknown).
func (st *Stateless) serve(w http.ResponseWriter, r *http.Request, server func() *fastServer) (bool, *http.Request) {
	if !Fast || goDebugSet() || r.Method != http.MethodPost {
		return false, r
	}
	h := r.Header
	if h.Get("Mcp-Protocol-Version") != ModernVersion || h.Get("Mcp-Method") != "tools/call" || len(h.Values("Last-Event-ID")) > 0 {
		return false, r
	}
	body, ok := FrameOf(r)
	if !ok || len(body) == 0 || len(body) > sdkMaxBody {
		return false, r
	}
	if ct := h.Get("Content-Type"); ct != "application/json" { // the go-sdk: its base media type
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			return false, r
		}
	}
	if jsonOK, streamOK := acceptsJSONAndStream(h.Values("Accept")); !jsonOK || !streamOK {
		return false, r
	}
	c, ok := scanHTTPCall(body)
	if !ok || len(c.name) == 0 || h.Get("Mcp-Name") != string(c.name) { // an empty name: the go-sdk's -32020
		return false, r
	}
	var kb [512]byte
	key := tripleKey(kb[:0], &c)
	t := st.trips.get(key)
	if t == nil {
		if len(key) <= maxTripleKey {
			r = r.WithContext(context.WithValue(r.Context(), tripleLearnKey{}, &tripleLearn{key: string(key), ci: bytes.Clone(c.ci), caps: bytes.Clone(c.caps)}))
		}
		return false, r
	}
	// Mcp-Param-* headers (SEP-2243) are checked by paramHeaderCheck:
	// a tool that binds any goes that way.
	fs := server()
	if fs.bindsHeaders(r, string(c.name), t.client) {
		return false, r
	}
	params := &mcp.CallToolParamsRaw{Name: string(c.name)}
	if c.args != nil {
		params.Arguments = json.RawMessage(c.args)
	}
	if params.Meta, ok = t.meta(&c); !ok {
		return false, r
	}
	st.run(w, r, fs, c.id, params, t)
	return true, r
}

// run runs the call on a session of the triple t and writes the
// answer. The session is one the triple's pool kept from an earlier call
// (sessionPool), or a new one.
func (st *Stateless) run(w http.ResponseWriter, r *http.Request, fs *fastServer, id jsonrpc.ID, params *mcp.CallToolParamsRaw, t *knownTriple) {
	st.Calls.Add(1)
	fsn := t.pool.take(&st.idle)
	if fsn == nil {
		conn := &fastHTTPConn{done: make(chan struct{})}
		state := *t.ip
		// The session outlives this request when it goes back to the pool:
		// its connection's context is not the request's (jsonrpc2 reads
		// nothing from it anyway: fastHTTPConn.Read only waits for Close).
		ss, err := fs.srv.Connect(context.Background(), conn, &mcp.ServerSessionOptions{State: &mcp.ServerSessionState{InitializeParams: &state}})
		if err != nil { // as the go-sdk's serveStateless answers a failed connect
			st.Log.Error(fmt.Sprintf("failed to connect: %v", err))
			http.Error(w, "failed connection", http.StatusInternalServerError)
			return
		}
		fsn = &fastSession{ss: ss, conn: conn}
	}
	conn := fsn.conn
	conn.start(w, r)
	// servePOST sets these before the request is handled.
	hdr := w.Header()
	hdr["Cache-Control"], hdr["Content-Type"], hdr["Connection"] = sseCacheControl, sseContentType, sseConnection
	req := &mcp.CallToolRequest{Session: fsn.ss, Params: params, Extra: &mcp.RequestExtra{
		TokenInfo: auth.TokenInfoFromContext(r.Context()), Header: r.Header, CloseSSEStream: noCloseSSE}}
	ctx := context.WithValue(r.Context(), fastHTTPKey{}, r)
	res, err := fs.handle(ctx, "tools/call", req)
	if err == nil {
		annotateServerInfo(res, ServerImpl()) // as ServerSession.handle does for 2026-07-28
	}
	// The session goes back to the pool once the answer is built and the
	// request detached from its connection, before the answer is written:
	// a client that sends its next call as soon as it has read this answer
	// finds the session idle (given back after the
	// write, the next call of a quick client often came first and
	// connected a second session; TestPooledSessionOwnIdentity). Whether
	// the call ran uncancelled is read before the write too: once written,
	// the client may close its connection, which cancels r's context
	// without cancelling anything.
	keep := err == nil && completeResult(res) && r.Context().Err() == nil
	conn.answerThen(r.Context(), id, res, err, func() {
		if keep {
			t.pool.put(fsn, &st.idle)
		}
	})
	if !keep {
		fsn.close()
	}
}

// completeResult reports whether res is a tools/call's final result: not
// input_required, so no exchange (exchange.go) was parked by the request
// and kept its session.
func completeResult(res mcp.Result) bool {
	switch r := res.(type) {
	case *RawResult:
		return true
	case *mcp.CallToolResult:
		return len(r.InputRequests) == 0 && r.RequestState == ""
	}
	return false
}

// Sessions of the fast path, kept for the next call with the same triple.
//
// A *mcp.ServerSession costs ~1.5 KB and a goroutine to connect (its
// jsonrpc2 connection); the go-sdk's stateless handler connects
// one per request and closes it after the answer. The fast path keeps the
// session of a request for the next one with the same _meta triple (its
// InitializeParams are the session's only state a tools/call reads) when
// nothing can still use it for the request that ended:
//   - the request returned a final result without an error, and was not
//     cancelled: an input_required result leaves its exchange parked with
//     the session (exchange.go), an error or a cancellation may leave the
//     call's goroutine running with it;
//   - the request's identity record (identity.go idents, keyed by the
//     session) was deleted when the chain returned (identityHandler), and
//     the proxy's session for the request (ephemeralSession) took the
//     identity then;
//   - a message sent later with the ended request's context is refused
//     (fastHTTPConn.Write compares the context's request with the current
//     one), as it was on the closed session before.
// The session goes back before the answer is written (answerThen), so a
// client's next call, sent once it has read the answer, finds it idle.
// Anything else closes the session, as before. At most maxIdlePerTriple
// sessions per triple and maxIdleSessions in all are kept (each holds the
// jsonrpc2 connection's reading goroutine); a triple dropped from the cache
// closes its idle sessions, and Proxy.Close closes them all (closeAll).

const (
	maxIdlePerTriple = 16
	maxIdleSessions  = 64
)

// fastSession is a fast-path ServerSession and its connection.
type fastSession struct {
	ss   *mcp.ServerSession
	conn *fastHTTPConn
}

func (f *fastSession) close() { _ = f.ss.Close() }

// sessionPool holds the idle sessions of one triple.
type sessionPool struct {
	mu   sync.Mutex
	idle []*fastSession
	dead bool // the triple left the cache: nothing more is kept
}

// take returns an idle session, or nil. total counts the idle sessions of
// every pool.
func (sp *sessionPool) take(total *atomic.Int64) *fastSession {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	n := len(sp.idle)
	if n == 0 {
		return nil
	}
	f := sp.idle[n-1]
	sp.idle[n-1] = nil
	sp.idle = sp.idle[:n-1]
	total.Add(-1)
	return f
}

// put keeps f for a later call, or closes it when the pool is full or dead.
func (sp *sessionPool) put(f *fastSession, total *atomic.Int64) {
	sp.mu.Lock()
	keep := !sp.dead && len(sp.idle) < maxIdlePerTriple
	if keep && total.Add(1) > maxIdleSessions {
		total.Add(-1)
		keep = false
	}
	if keep {
		sp.idle = append(sp.idle, f)
	}
	sp.mu.Unlock()
	if !keep {
		f.close()
	}
}

// drain marks the pool dead and closes its idle sessions.
func (sp *sessionPool) drain(total *atomic.Int64) {
	sp.mu.Lock()
	idle := sp.idle
	sp.idle, sp.dead = nil, true
	sp.mu.Unlock()
	total.Add(-int64(len(idle)))
	for _, f := range idle {
		f.close()
	}
}

// The response headers of a call answered as an event stream (values
// shared by every answer: net/http copies the header when it is written,
// and Header.Set or Add replace or grow a value, never change it).
var (
	sseCacheControl = []string{"no-cache, no-transform"}
	sseContentType  = []string{"text/event-stream"}
	sseConnection   = []string{"keep-alive"}
)

// noCloseSSE is RequestExtra.CloseSSEStream of a 2026-07-28 request: the
// go-sdk's does nothing at that version (SEP-2575 removed resumption).
func noCloseSSE(mcp.CloseSSEStreamArgs) {}

// annotateServerInfo is go-sdk v1.8.0's annotateServerInfo
// (mcp/server.go), which ServerSession.handle applies to a successful
// result of a 2026-07-28 request: serverInfo in the result's _meta unless
// it is there already (SEP-2575).
func annotateServerInfo(res mcp.Result, impl *mcp.Implementation) {
	if res == nil || impl == nil {
		return
	}
	m := res.GetMeta()
	if m == nil {
		m = map[string]any{}
	}
	if _, ok := m[mcp.MetaKeyServerInfo]; ok {
		return
	}
	m[mcp.MetaKeyServerInfo] = impl
	res.SetMeta(m)
}

// acceptsJSONAndStream is go-sdk v1.8.0's streamableAccepts: whether the
// Accept values name application/json and text/event-stream (or their
// wildcards).
func acceptsJSONAndStream(values []string) (jsonOK, streamOK bool) {
	for _, value := range values {
		for rest, more := value, true; more; { // strings.Split without its slice
			var raw string
			raw, rest, more = strings.Cut(rest, ",")
			base, _, _ := strings.Cut(strings.TrimSpace(raw), ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK, streamOK
}

// scanHTTPCall reads a POST body the fast path may take: one object with
// exactly jsonrpc "2.0", an id (a string of printable ASCII without
// escapes, or an integer within ±2^53), method "tools/call" and params;
// params with name (a string without escapes), arguments and _meta, each
// once; _meta with the 2026-07-28 triple (clientInfo optional), no log
// level, no progress token, no other io.modelcontextprotocol/ key, no
// escaped or repeated key. ok is false for anything else.
func scanHTTPCall(body []byte) (c httpCall, ok bool) {
	if !utf8.Valid(body) {
		return c, false
	}
	var rpc, id, method []byte
	bad := false
	depth, err := jsonscan.Object(body, func(k, v []byte) bool {
		var slot *[]byte
		switch string(k) {
		case "jsonrpc":
			slot = &rpc
		case "id":
			slot = &id
		case "method":
			slot = &method
		case "params":
			slot = &c.params
		}
		if slot == nil || *slot != nil {
			bad = true
			return false
		}
		*slot = v
		return true
	})
	if err != nil || bad || depth > fastMaxDepth || string(rpc) != `"2.0"` || string(method) != `"tools/call"` || id == nil || len(c.params) == 0 || c.params[0] != '{' {
		return c, false
	}
	if c.id, ok = plainID(id); !ok {
		return c, false
	}
	var name []byte
	if _, err := jsonscan.Object(c.params, func(k, v []byte) bool {
		var slot *[]byte
		switch string(k) {
		case "name":
			slot = &name
		case "arguments":
			slot = &c.args
		case "_meta":
			slot = &c.meta
		}
		if slot == nil || *slot != nil {
			bad = true
			return false
		}
		*slot = v
		return true
	}); err != nil || bad || !PlainString(name) || len(c.meta) == 0 || c.meta[0] != '{' {
		return c, false
	}
	c.name = name[1 : len(name)-1]
	var seen [fastMaxMetaKs][]byte
	n := 0
	if _, err := jsonscan.Object(c.meta, func(k, v []byte) bool {
		if n == len(seen) || bytes.IndexByte(k, '\\') >= 0 {
			bad = true
			return false
		}
		for _, s := range seen[:n] {
			if bytes.Equal(s, k) {
				bad = true
				return false
			}
		}
		seen[n] = k
		n++
		switch string(k) {
		case mcp.MetaKeyProtocolVersion:
			c.pv = v
		case mcp.MetaKeyClientInfo:
			c.ci = v
			bad = v[0] != '{'
		case mcp.MetaKeyClientCapabilities:
			c.caps = v
			bad = v[0] != '{'
		case "progressToken":
			bad = true
		default:
			bad = strings.HasPrefix(string(k), "io.modelcontextprotocol/")
			c.others[c.nother] = [2][]byte{k, v}
			c.nother++
		}
		return !bad
	}); err != nil || bad || string(c.pv) != `"`+ModernVersion+`"` || c.caps == nil {
		return c, false
	}
	return c, true
}

// plainID is the JSON-RPC id raw as the go-sdk decodes it, when the
// fast path can write it back exactly: a string of printable ASCII without
// escapes, or an integer within ±2^53 (guard.go refuses others).
func plainID(raw []byte) (jsonrpc.ID, bool) {
	if PlainString(raw) {
		for _, b := range raw[1 : len(raw)-1] {
			if b < 0x20 || b > 0x7e {
				return jsonrpc.ID{}, false
			}
		}
		id, err := jsonrpc.MakeID(string(raw[1 : len(raw)-1]))
		return id, err == nil
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || strconv.FormatInt(n, 10) != string(raw) || n < -MaxExactID || n > MaxExactID {
		return jsonrpc.ID{}, false
	}
	id, err := jsonrpc.MakeID(float64(n))
	return id, err == nil
}

// fastHTTPKey is the context key under which a fast-path call's context
// carries its request (fastHTTPConn.Write: messages of the call).
type fastHTTPKey struct{}

// errRejected is go-sdk v1.8.0's jsonrpc2.ErrRejected ("rejected by
// transport", -32005): errors.Is matches it by code.
var errRejected = &jsonrpc.Error{Code: -32005, Message: "rejected by transport"}

// errMethodNotFound is go-sdk v1.8.0's jsonrpc2.ErrMethodNotFound.
var errMethodNotFound = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found"}

// fastHTTPConn is the mcp.Transport and mcp.Connection of a fast-path
// ServerSession, which serves one request at a time (sessionPool). No
// message reaches the session through it (the request is handed to the
// chain directly); Write behaves as the go-sdk's stateless
// streamableServerConn.Write for a session whose only stream is the
// current request's.
type fastHTTPConn struct {
	done chan struct{}
	once sync.Once

	mu     sync.Mutex
	w      http.ResponseWriter
	cur    *http.Request // the request not answered yet; nil: none
	legacy bool          // a call on a session before 2026-07-28 (http_sessions.go): no SEP-2575 status
}

// start makes r, answered on w, the connection's current request.
func (c *fastHTTPConn) start(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	c.w, c.cur = w, r
	c.mu.Unlock()
}

func (c *fastHTTPConn) Connect(context.Context) (mcp.Connection, error) { return c, nil }

func (c *fastHTTPConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.done:
		return nil, io.EOF
	}
}

func (c *fastHTTPConn) Close() error {
	c.once.Do(func() { close(c.done) })
	return nil
}

func (c *fastHTTPConn) SessionID() string { return "" }

// Write sends a notification of the call on its POST stream while the
// call is open, as an SSE event; it refuses requests (a stateless server
// makes none) and anything else, with the go-sdk's errors.
func (c *fastHTTPConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		return fmt.Errorf("%w: stateless servers cannot make requests", errRejected)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, resp := msg.(*jsonrpc.Response); resp || c.cur == nil || ctx.Value(fastHTTPKey{}) != any(c.cur) {
		return fmt.Errorf("%w: write to closed stream", errRejected)
	}
	if err := writeSSE(c.w, data); err != nil {
		return fmt.Errorf("%w: undelivered message: %v", errRejected, err)
	}
	return nil
}

// answer writes the response to the call as the go-sdk's jsonrpc2
// (processResult) and streamable server (Write, deliverLocked) would. A
// client that has gone (ctx done) gets nothing.
func (c *fastHTTPConn) answer(ctx context.Context, id jsonrpc.ID, res mcp.Result, err error) {
	c.answerThen(ctx, id, res, err, nil)
}

// answerThen is answer, calling detached (when not nil) once res is
// encoded and the request is no longer c's current one, before the answer
// is written: from then on nothing of the request uses c (Write refuses
// its messages), so c may start another request while this answer is
// written (sessionPool).
func (c *fastHTTPConn) answerThen(ctx context.Context, id jsonrpc.ID, res mcp.Result, err error, detached func()) {
	if err != nil && errors.Is(err, errMethodNotFound) {
		err = fmt.Errorf("%w: %q", errMethodNotFound, "tools/call")
	}
	var b []byte
	if err == nil && res == nil {
		err = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "tools/call returned no result"}
	}
	if err == nil {
		// The bytes jsonrpc.EncodeMessage writes for the response: the
		// result marshalled as jsonrpc2 does (encoding/json, no HTML
		// escaping: compact JSON, which EncodeMessage's encoder copies
		// unchanged), the id as plainID took it.
		b = append(b, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":"...)
		b = appendID(b, id)
		b = append(b, `,"result":`...)
		buf := bytes.NewBuffer(b)
		if merr := MarshalResult(buf, res); merr != nil {
			err = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "tools/call returned a malformed result: " + merr.Error()}
		} else {
			b = bytes.TrimRight(buf.Bytes(), "\n")
			b = append(b, "}\n\n"...)
		}
	}
	var status int
	write := true
	if err != nil { // a result next to an error is dropped, as jsonrpc2 does
		data, eerr := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Error: err})
		write = eerr == nil
		b = b[:0]
		if !c.legacy {
			status = errorStatus2026(err)
		}
		if status == 0 {
			b = append(b, "event: message\ndata: "...)
			b = append(b, data...)
			b = append(b, "\n\n"...)
		} else {
			b = append(b, data...)
		}
	}
	c.mu.Lock()
	w := c.w
	c.w, c.cur = nil, nil
	c.mu.Unlock()
	if detached != nil {
		detached()
	}
	if !write || ctx.Err() != nil {
		return
	}
	flush := status == 0
	hdr := w.Header()
	if status != 0 {
		hdr.Set("Content-Type", "application/json")
	} else {
		status = http.StatusOK
	}
	// The answer is the whole body (unless an event of the call was
	// written before it, when the header is out and this has no effect):
	// with its length declared, net/http writes the header and the body in
	// one write and no chunk framing; a flushed chunked stream took a
	// second write for its terminating chunk (one write syscall
	// per call).
	hdr["Content-Length"] = []string{strconv.Itoa(len(b))}
	WriteWhole(w, status, b, flush)
}

// appendID appends id as jsonrpc.EncodeMessage writes an id plainID made.
func appendID(b []byte, id jsonrpc.ID) []byte {
	switch v := id.Raw().(type) {
	case int64:
		return strconv.AppendInt(b, v, 10)
	case string:
		b = append(b, '"')
		b = append(b, v...)
		return append(b, '"')
	}
	return append(b, "null"...)
}

// errorStatus2026 is the HTTP status SEP-2575 gives a JSON-RPC error
// answer on protocol 2026-07-28 (go-sdk v1.8.0 extractErrorStatus), or 0.
func errorStatus2026(err error) int {
	var je *jsonrpc.Error
	if err == nil || !errors.As(err, &je) {
		return 0
	}
	switch je.Code {
	case jsonrpc.CodeMethodNotFound:
		return http.StatusNotFound
	case jsonrpc.CodeInvalidParams, mcp.CodeUnsupportedProtocolVersion, mcp.CodeMissingRequiredClientCapabilities:
		return http.StatusBadRequest
	}
	return 0
}

// writeSSE writes data as one SSE "message" event and flushes it, as go-sdk
// v1.8.0's writeEvent does (no event id: no event store at 2026-07-28).
func writeSSE(w http.ResponseWriter, data []byte) error {
	b := append([]byte("event: message\ndata: "), data...)
	b = append(b, "\n\n"...)
	_, err := w.Write(b)
	_ = http.NewResponseController(w).Flush()
	return err
}

// The _meta triple cache (see the file comment). Keys are the raw bytes
// of protocolVersion, clientInfo and clientCapabilities; values the
// InitializeParams go-sdk v1.8.0 built from them (validateRequestMeta)
// and the two objects decoded as request _meta values (encoding/json into
// any, as fastParams decodes _meta). A client cannot teach it anything
// but the go-sdk's own decoding of bytes it sent; it holds at most
// maxTriples entries and starts over when full.

const (
	maxTriples   = 256
	maxTripleKey = 4 << 10
)

type tripleCache struct {
	mu     sync.Mutex
	m      map[string]*knownTriple
	closed bool // Proxy.Close ran (closeAll): no triple keeps sessions
}

// knownTriple is one entry of the triple cache. ci and caps are shared by
// the requests that use the entry, read-only: the _meta of a request maps
// them under hop keys (meta.go), which are never forwarded or changed.
type knownTriple struct {
	ip       *mcp.InitializeParams
	ci, caps any    // nil ci: no clientInfo
	client   string // the client name as paramHeaderCheck reads it (clientNameOf)
	// only is the _meta of a request whose _meta is the triple alone (the
	// usual one), shared by those requests like ci and caps, read-only:
	// the call path reads a request's _meta (forward passes its non-hop
	// members on; takeTask deletes only a task member, which it lacks).
	only mcp.Meta
	// pool holds the idle fast-path sessions of the triple.
	pool sessionPool
}

func (t *tripleCache) get(key []byte) *knownTriple {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.m[string(key)]
}

// put adds k under key; a full cache starts over, its entries' idle
// sessions closed (idle counts them).
func (t *tripleCache) put(key string, k *knownTriple, idle *atomic.Int64) {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		k.pool.drain(idle) // dead: a session given back is closed
		return
	}
	var old map[string]*knownTriple
	if t.m == nil || len(t.m) >= maxTriples {
		old, t.m = t.m, map[string]*knownTriple{}
	}
	if prev := t.m[key]; prev != nil {
		old = map[string]*knownTriple{key: prev}
	}
	t.m[key] = k
	t.mu.Unlock()
	for _, o := range old {
		o.pool.drain(idle)
	}
}

// closeAll closes every triple's idle sessions and their goroutines, and
// keeps none from now on (Proxy.Close: a session of a call still running
// is closed when the call ends).
func (t *tripleCache) closeAll(idle *atomic.Int64) {
	t.mu.Lock()
	old := t.m
	t.m, t.closed = nil, true
	t.mu.Unlock()
	for _, o := range old {
		o.pool.drain(idle)
	}
}

// meta is the request _meta of c, as encoding/json decodes the whole
// object into mcp.Meta: the triple's values from t, the other members
// decoded one by one (ok false when one does not decode).
func (t *knownTriple) meta(c *httpCall) (mcp.Meta, bool) {
	if c.nother == 0 && t.only != nil {
		return t.only, true
	}
	m := make(mcp.Meta, 3+c.nother)
	m[mcp.MetaKeyProtocolVersion] = ModernVersion
	if t.ci != nil {
		m[mcp.MetaKeyClientInfo] = t.ci
	}
	m[mcp.MetaKeyClientCapabilities] = t.caps
	for _, kv := range c.others[:c.nother] {
		var v any
		if json.Unmarshal(kv[1], &v) != nil {
			return nil, false
		}
		m[string(kv[0])] = v
	}
	return m, true
}

// tripleKey appends the triple cache key of c to dst.
func tripleKey(dst []byte, c *httpCall) []byte {
	dst = append(dst, c.pv...)
	dst = append(dst, 0)
	if c.ci == nil {
		dst = append(dst, 1)
	} else {
		dst = append(dst, c.ci...)
	}
	dst = append(dst, 0)
	return append(dst, c.caps...)
}

// tripleLearnKey is the context key of a request handed to the go-sdk
// because its triple was not in the cache.
type tripleLearnKey struct{}

type tripleLearn struct {
	key      string
	ci, caps []byte // raw
}

// LearnTriple records the InitializeParams the go-sdk built for
// a stateless tools/call whose triple the fast path did not know yet
// (outermost middleware of the stateless server).
func (st *Stateless) LearnTriple(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if l, ok := ctx.Value(tripleLearnKey{}).(*tripleLearn); ok && method == "tools/call" {
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
				if ip := ss.InitializeParams(); ip != nil && ip.ProtocolVersion == ModernVersion {
					cp := *ip
					k := &knownTriple{ip: &cp, client: ClientNameOf(l.ci)}
					err := json.Unmarshal(l.caps, &k.caps)
					if l.ci != nil && err == nil {
						err = json.Unmarshal(l.ci, &k.ci)
					}
					if err == nil {
						k.only, _ = k.meta(&httpCall{})
						st.trips.put(l.key, k, &st.idle)
					}
				}
			}
		}
		return next(ctx, method, req)
	}
}
