package front

//lint:file-ignore SA1019 sampling, roots and logging are deprecated from protocol 2026-07-28 on; clients and servers of earlier protocols still use them

// The stdio front's tools/call fast path.
//
// go-sdk v1.8.0's server decodes every request's params and, separately,
// its _meta (ServerSession.handle: validateRequestMeta, then
// handleReceive) and hands each request to a goroutine of jsonrpc2's:
// served here a proxied call costs 30-40% less CPU, and less than half the
// instructions (docs/performance.md). Once a connection's session is
// open, what those decodes feed is fixed: the request is a plain
// tools/call of an initialized session, with no per-request protocol
// _meta to validate (a 2026-07-28 client's repeated triple is elided by
// stdio_meta.go). The front then
// decodes the params itself (jsonscan plus one encoding/json decode of the
// rest of _meta) into the mcp.CallToolRequest the go-sdk would build, and
// runs the server's own receiving middleware chain on it
// (Proxy.receivingMiddleware: the same functions the go-sdk server runs,
// ending in the proxy's tools/call handler, so the call still goes
// (*Proxy).call -> forwardTraced -> forward). It writes the answer the way
// the go-sdk's JSON-RPC layer would (the result marshalled without HTML
// escaping, an error through jsonrpc.EncodeMessage), so both paths give
// the same bytes.
//
// Taken only when every one of these holds, else the request reaches the
// go-sdk unchanged: the proxy enabled it for the connection
// (EnableFast, with Fast on); the session is open (a 2026-07-28 triple was accepted, or the
// answer to initialize went out); the line is one object, not a batch;
// params is an object with only name (a string without escapes),
// arguments and _meta (an object without a protocol version), each once,
// keys without escapes; no notification the go-sdk is still handling
// (below); the id is not in use on the fast path.
//
// Order. The go-sdk handles notifications one at a time, before the next
// request starts (jsonrpc2 handleAsync), and a tools/call that follows
// notifications/initialized relies on it (the per-client upstream
// sessions it opens). The front counts the notifications it passes to the
// go-sdk that reach the receiving chain (NotesMiddleware counts them
// down when they are handled) and takes no fast path while one is
// pending.
//
// Cancellation. notifications/cancelled naming a fast-path call cancels
// that call's context here (as the go-sdk's jsonrpc2 Connection.Cancel
// does for its own); the proxy's upstream leg then sends
// notifications/cancelled upstream, as before. Any other reaches the
// go-sdk. When the client's input ends (or the connection closes) every
// fast-path call is cancelled, as jsonrpc2 cancels its in-flight calls.
//
// Trust: the client is not trusted; what it can reach here is what the
// go-sdk would have passed to the same chain.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync/atomic"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/jsonscan"
)

// fastPath is what a connection needs to serve tools/call itself: its
// go-sdk session (req.Session: progress, logging, the proxy's session)
// and the server's receiving chain.
type fastPath struct {
	ss     *mcp.ServerSession
	handle mcp.MethodHandler
}

// ConnSlot is the context key under which runStdio hands
// Stdio.Connect a slot for the connection it makes; the go-sdk's
// request contexts derive from that context, so NotesMiddleware
// finds the connection through it.
type ConnSlot struct{}

// EnableFast turns on the fast path of connection c for session ss,
// running handle (Proxy.receivingHandler).
func (c *Conn) EnableFast(ss *mcp.ServerSession, handle mcp.MethodHandler) {
	if !Fast {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fast = &fastPath{ss: ss, handle: handle}
}

// countedNote reports whether notification method (with params present
// or not) reaches the go-sdk server's receiving chain, where
// NotesMiddleware counts it down. notifications/cancelled is not
// counted: its effect (jsonrpc2's Preempt) does not wait for the queue.
func countedNote(method string, params bool) bool {
	switch method {
	case "notifications/initialized", "notifications/roots/list_changed":
		return true
	case "notifications/progress":
		return params // the go-sdk refuses it without params before the chain
	}
	return false
}

// NotesMiddleware counts down a notification the stdio front passed
// to the go-sdk once the chain has handled it (outermost middleware of
// the stdio server).
func NotesMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if countedNote(method, true) {
			if slot, ok := ctx.Value(ConnSlot{}).(*atomic.Pointer[Conn]); ok {
				if c := slot.Load(); c != nil {
					defer c.noteDone()
				}
			}
		}
		return next(ctx, method, req)
	}
}

func (c *Conn) noteDone() {
	c.mu.Lock()
	if c.notes > 0 {
		c.notes--
	}
	c.mu.Unlock()
}

// takeFast serves m on the fast path when it qualifies (see the file
// comment) and reports whether it did; it also answers a cancellation of
// a fast-path call and counts notifications bound for the go-sdk. frame
// is the line m came from; rec (nil: none) records the members of m's
// params (fastParams).
func (c *Conn) takeFast(m jsonrpc.Message, frame []byte, rec *jsonscan.Members) bool {
	r, ok := m.(*jsonrpc.Request)
	if !ok {
		return false
	}
	if !r.IsCall() {
		return r.Method == "notifications/cancelled" && c.cancelFast(r.Params)
	}
	if bytes.HasPrefix(bytes.TrimSpace(frame), []byte{'['}) {
		return false
	}
	c.mu.Lock()
	fp := c.fast
	_, fastInUse := c.inflight[r.ID]
	_, sdkInUse := c.sdkCalls[r.ID]
	ready := fp != nil && c.notes == 0 && (c.trip != nil || (c.sawInit && c.version != ""))
	c.mu.Unlock()
	if fastInUse || (sdkInUse && ready && r.Method == "tools/call") {
		// A call whose id is in flight: jsonrpc2 (acceptRequest) drops
		// it unanswered and unrun; so does the front. The go-sdk does
		// not know the fast path's ids, and a tools/call taken here
		// would not reach the go-sdk's own check.
		return true
	}
	if !ready || r.Method != "tools/call" {
		return false
	}
	f := &fastCall{c: c, fp: fp, resp: jsonrpc.Response{ID: r.ID}}
	if !fastParams(r.Params, rec, &f.params, &c.lastName) {
		return false
	}
	ctx, cancel := context.WithCancelCause(c.base)
	c.mu.Lock()
	if c.fastDone {
		c.mu.Unlock()
		cancel(nil)
		return false
	}
	c.fastWG.Add(1)
	if c.inflight == nil {
		c.inflight = map[jsonrpc.ID]context.CancelCauseFunc{}
	}
	c.inflight[r.ID] = cancel
	c.fastCalls++
	c.mu.Unlock()
	f.mark(ctx)
	GoWarmTask(f) // warm.go: f.run
	return true
}

// fastCallKey is the context key of a fast-path call's *fastCall.
type fastCallKey struct{}

// fastCall is one fast-path tools/call: its context (the call's own, the
// one c.inflight cancels, marked for bindFast: Value(fastCallKey{}) is the
// fastCall), what serveFast needs, and its answer. One allocation for what
// were a context value, its mark, the closure handed to GoWarm and the
// answer.
type fastCall struct {
	context.Context
	c      *Conn
	done   <-chan struct{} // the Done channel of the call's own context
	fp     *fastPath
	params mcp.CallToolParamsRaw
	resp   jsonrpc.Response
}

// Value is the embedded context's, with fastCallKey{} naming f.
func (f *fastCall) Value(key any) any {
	if _, ok := key.(fastCallKey); ok {
		return f
	}
	return f.Context.Value(key)
}

// run serves the call (warm.go).
func (f *fastCall) Run() { f.c.serveFast(f) }

// mark makes ctx, the call's own context (the one c.inflight cancels),
// f's, marked for bindFast.
func (f *fastCall) mark(ctx context.Context) {
	f.Context, f.done = ctx, ctx.Done()
}

// ErrSessionEnded is the cause of a request cancelled because its client
// session ended.
var ErrSessionEnded = errors.New("the client session ended")

// BindFast binds a fast-path call to the life of its client session
// (life, whose end cancels the session's requests): instead of a context
// and an AfterFunc on the session per call, the session's end cancels
// every fast-path call of the connection at once (cancelAllFast),
// registered once per connection. ok is false, and the caller binds ctx
// itself, when ctx is not governed by a fast-path call's own context (no
// mark, or a context in between that is cancelled otherwise, or cut off
// by context.WithoutCancel: its Done differs) or the connection serves
// another session.
func BindFast(ctx context.Context, life context.Context) (context.Context, bool) {
	m, ok := ctx.Value(fastCallKey{}).(*fastCall)
	if !ok || ctx.Done() != m.done {
		return ctx, false
	}
	c := m.c
	c.mu.Lock()
	switch c.boundTo {
	case life:
	case nil:
		c.boundTo = life
		context.AfterFunc(life, func() { c.cancelAllFast(ErrSessionEnded) })
	default:
		c.mu.Unlock()
		return ctx, false
	}
	c.mu.Unlock()
	if life.Err() != nil {
		// Ended before this call was bound; cancelAllFast may have run
		// before the call was in flight.
		ctx, cancel := context.WithCancelCause(ctx)
		cancel(ErrSessionEnded)
		return ctx, true
	}
	return ctx, true
}

// serveFast runs one fast-path tools/call and writes its answer.
func (c *Conn) serveFast(f *fastCall) {
	res, err := f.fp.handle(f, "tools/call", &mcp.CallToolRequest{Session: f.fp.ss, Params: &f.params})
	if cancel := c.answerFast(f, res, err); cancel != nil {
		cancel(nil)
	}
	c.fastWG.Done()
}

// answerFast writes the answer of fast-path call f (res or err) and
// returns the cancel of its context, which it took out of c.inflight.
func (c *Conn) answerFast(f *fastCall, res mcp.Result, err error) context.CancelCauseFunc {
	resp, id := &f.resp, f.resp.ID
	switch {
	case err != nil: // a result next to an error is dropped, as jsonrpc2 does
		resp.Error = err
	case res == nil:
		resp.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "tools/call returned no result"}
	default:
		var buf bytes.Buffer
		if merr := MarshalResult(&buf, res); merr != nil {
			resp.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "tools/call returned a malformed result: " + merr.Error()}
		} else {
			resp.Result = bytes.TrimRight(buf.Bytes(), "\n")
		}
	}
	// The id may be reused as soon as the answer is out (jsonrpc2 does
	// the same for its own).
	c.mu.Lock()
	cancel := c.inflight[id]
	delete(c.inflight, id)
	c.mu.Unlock()
	_ = c.Write(context.Background(), resp)
	return cancel
}

// MarshalResult writes res as the go-sdk's JSON-RPC layer marshals a
// result (encoding/json without HTML escaping; jsonrpc2 jsonMarshal),
// with a trailing newline.
func MarshalResult(buf *bytes.Buffer, res mcp.Result) error {
	if r, ok := res.(*RawResult); ok {
		// What the encoder does with a json.Marshaler (encoding/json
		// marshalerEncoder), without its reflection.
		if err := r.compactInto(buf); err != nil {
			return err
		}
		return buf.WriteByte('\n')
	}
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	return enc.Encode(res)
}

// toSDK books the messages passed to the go-sdk: the ids of its calls
// (answered removes them), and the notifications it must have handled
// before a tools/call may take the fast path (NotesMiddleware
// counts those down; batch elements included).
func (c *Conn) toSDK(msgs []jsonrpc.Message) {
	if len(msgs) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range msgs {
		r, ok := m.(*jsonrpc.Request)
		if !ok {
			continue
		}
		c.seq++
		switch {
		case r.IsCall():
			if c.sdkCalls == nil {
				c.sdkCalls = map[jsonrpc.ID]uint64{}
			}
			if _, dup := c.sdkCalls[r.ID]; !dup {
				c.sdkCalls[r.ID] = c.seq
			}
		case countedNote(r.Method, len(r.Params) > 0):
			c.notes++
			c.noteSeq = c.seq
		}
	}
}

// answered is called for every answer written: the go-sdk answered call
// id. Once it answers a call it received after the last counted
// notification, it has handled (or refused) every notification before
// it (jsonrpc2 handles notifications in order, before later requests),
// so a count left by a notification it refused before the receiving
// chain (undecodable params) is cleared rather than keeping the fast path
// off for the rest of the connection.
func (c *Conn) answered(id jsonrpc.ID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if seq, ok := c.sdkCalls[id]; ok {
		delete(c.sdkCalls, id)
		if seq > c.noteSeq {
			c.notes = 0
		}
	}
}

// cancelFast cancels the fast-path call that notifications/cancelled
// params name, reporting whether there was one.
func (c *Conn) cancelFast(params []byte) bool {
	id, ok := cancelledID(params) // cancel_stdio.go
	if !ok {
		return false
	}
	c.mu.Lock()
	cancel, ok := c.inflight[id]
	c.mu.Unlock()
	if ok {
		cancel(nil)
	}
	return ok
}

// cancelAllFast cancels every fast-path call (the input ended or the
// connection closed), with cause as the reason.
func (c *Conn) cancelAllFast(cause error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cancel := range c.inflight {
		cancel(cause)
	}
}

// EndFast cancels the fast-path calls, takes no new ones and waits until
// they have returned, as the go-sdk's jsonrpc2 connection waits for its
// calls before it closes.
func (c *Conn) EndFast() {
	c.mu.Lock()
	c.fastDone = true
	c.mu.Unlock()
	c.cancelAllFast(io.EOF)
	c.fastWG.Wait()
}

// CallMembers splits tools/call params, an object, into its name,
// arguments and _meta members (raw JSON; nil when absent). ok is false
// when raw is not an object or holds any other member or one twice: the
// fast paths then leave the request to the go-sdk. raw's members are read
// from rec when it holds them all (jsonscan.Members.Complete; nil: none),
// else raw is scanned.
func CallMembers(raw []byte, rec *jsonscan.Members) (name, args, meta []byte, ok bool) {
	if len(raw) == 0 || raw[0] != '{' {
		return nil, nil, nil, false
	}
	bad := false
	if err := EachMember(raw, rec, func(k, v []byte) bool {
		var slot *[]byte
		switch string(k) {
		case "name":
			slot = &name
		case "arguments":
			slot = &args
		case "_meta":
			slot = &meta
		}
		if slot == nil || *slot != nil {
			bad = true
			return false
		}
		*slot = v
		return true
	}); err != nil || bad {
		return nil, nil, nil, false
	}
	return name, args, meta, true
}

// fastParams decodes tools/call params the fast path can take: an object
// with only name (a string without escapes), arguments (kept raw, as the
// go-sdk keeps it) and _meta (an object without a protocol version, which
// would make it a 2026-07-28 request for the go-sdk to validate), each at
// most once. ok is false for anything else, which the go-sdk then decodes
// (and refuses with its own error where it must). The params go into p;
// *last is the name of the connection's last such call, reused when the
// name is the same (one string fewer per call; only the connection's
// reader calls this). rec is CallMembers'.
func fastParams(raw []byte, rec *jsonscan.Members, p *mcp.CallToolParamsRaw, last *string) bool {
	name, args, meta, ok := CallMembers(raw, rec)
	if !ok || !PlainString(name) || !utf8.Valid(name) {
		return false
	}
	if name = name[1 : len(name)-1]; string(name) != *last {
		*last = string(name)
	}
	p.Name = *last
	if args != nil {
		p.Arguments = json.RawMessage(args)
	}
	if meta != nil {
		if meta[0] != '{' || !utf8.Valid(meta) {
			return false
		}
		if err := json.Unmarshal(meta, &p.Meta); err != nil {
			return false
		}
		for _, k := range []string{mcp.MetaKeyProtocolVersion, mcp.MetaKeyClientInfo, mcp.MetaKeyClientCapabilities, mcp.MetaKeyLogLevel} {
			if _, ok := p.Meta[k]; ok {
				return false
			}
		}
	}
	return true
}
