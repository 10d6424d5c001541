package upstream

// Requests the go-sdk client does not know. go-sdk
// v1.8.0 has no tasks utility (MCP 2025-11-25 basic/utilities/tasks): its
// client session refuses to send tasks/get, tasks/result, tasks/list and
// tasks/cancel, drops the "task" member of tools/call params, and cannot
// decode a CreateTaskResult. The proxy's own transports (stdio and
// Streamable HTTP, wire.go) send such requests themselves, past the SDK,
// with ids below zero (the SDK numbers its own from 1, so they never
// collide), and hand the answer, raw, to the waiting caller; the SDK never
// sees it. The legacy SSE transport (the go-sdk's) cannot: an upstream
// reached over SSE offers no tasks through the proxy.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/jsonscan"
)

// ownAnswer is the answer to one of our own requests: the result as
// received, or the upstream's JSON-RPC error (or the wire's, for a
// malformed answer).
type ownAnswer struct {
	result json.RawMessage
	err    error
	rec    *Records // a tools/call result's records (frameFields.rm, mm), nil: none
}

// ownSeq numbers our own requests: -1, -2, … (shared by every wire).
var ownSeq atomic.Int64

func ownAnswerOf(f frameFields) ownAnswer {
	if f.hasError {
		var we jsonrpc.Error
		if json.Unmarshal(f.err, &we) != nil || bytes.TrimSpace(f.err)[0] != '{' {
			return ownAnswer{err: &jsonrpc.Error{Code: errInvalid, Message: "invalid JSON-RPC from upstream: the error is not a JSON-RPC error object: " + preview(f.err, 80)}}
		}
		return ownAnswer{err: &we}
	}
	return ownAnswer{result: f.result}
}

// ownDone hands a to the waiter of our request id (if it still waits).
func (w *wire) ownDone(id int64, a ownAnswer) {
	w.mu.Lock()
	ch := w.own[id]
	delete(w.own, id)
	if w.due != nil {
		delete(w.due, id) // wiredue.go
	}
	w.mu.Unlock()
	if ch != nil {
		ch <- a // buffered (1)
	}
}

// closeOwn fails every own request still waiting: the connection ended
// (its answer can no longer come); cause is why (the read error, io.EOF).
func (w *wire) closeOwn(cause error) {
	w.mu.Lock()
	own := w.own
	w.own = map[int64]chan ownAnswer{}
	for id := range own {
		delete(w.pending, id)
		delete(w.due, id)
	}
	w.mu.Unlock()
	for _, ch := range own {
		ch <- ownAnswer{err: &connEnded{cause: cause}}
	}
}

// connEnded fails an own request whose connection ended before its
// answer came. It wraps the cause and mcp.ErrConnectionClosed.
type connEnded struct{ cause error }

func (e *connEnded) Error() string {
	return "the upstream connection ended before the answer: " + e.cause.Error()
}
func (e *connEnded) Unwrap() []error { return []error{e.cause, mcp.ErrConnectionClosed} }

// ownCaller is implemented by the proxy's own transport connections.
type ownCaller interface {
	ownCall(ctx context.Context, conn mcp.Connection, method string, params json.RawMessage) (json.RawMessage, error)
	initCapabilities() json.RawMessage
	ownWire() *wire
}

func (w *wire) ownWire() *wire { return w }

// ownCall sends method with params (raw JSON) on conn (the connection
// that embeds w) and waits for the answer, bounded by ctx (when ctx ends
// first, the upstream gets notifications/cancelled for it). A JSON-RPC
// error answer is returned as a *jsonrpc.Error.
func (w *wire) ownCall(ctx context.Context, conn mcp.Connection, method string, params json.RawMessage) (json.RawMessage, error) {
	res, err := w.call(ctx, conn, method, params, "", nil, time.Time{}, nil)
	var we *writeFailed
	switch {
	case err == nil:
		return res, nil
	case errors.As(err, &we):
		return nil, fmt.Errorf("%s: %w", method, we.err)
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return nil, fmt.Errorf("%s: %w", method, context.Cause(ctx))
	}
	return nil, err
}

// writeFailed is the error of call when the request could not be written.
type writeFailed struct{ err error }

func (e *writeFailed) Error() string { return e.err.Error() }
func (e *writeFailed) Unwrap() error { return e.err }

// cancelNotifyTimeout bounds the write of notifications/cancelled (the
// go-sdk's notifyCancellationTimeout).
const cancelNotifyTimeout = 5 * time.Second

// call sends one of our own requests (id below zero) on conn and waits
// for its answer, bounded by ctx. It returns the result as received, the
// upstream's *jsonrpc.Error, a *connEnded when the connection ended first,
// a *writeFailed when the request could not be written, or ctx.Err()
// when ctx ended first: then the upstream gets notifications/cancelled
// with our id and the call's reason (MCP spec basic/utilities/
// cancellation), written off the caller's path as the go-sdk does.
//
// With a sink, each notifications/progress the upstream sends under token
// goes to sink (the reader never waits for it) and is handed to the
// sink's function here, on the caller's goroutine, in arrival order and
// before the answer is returned.
//
// A non-zero due (only on a wire that timesCalls) is the call's deadline,
// kept by the wire's clock (wiredue.go): when it passes first, the call
// ends as at the end of ctx (notifications/cancelled with the reason
// "context deadline exceeded") and returns errWireDeadline.
//
// A non-nil rec receives the records of the result's members and of its
// _meta's as the frame's scan recorded them (RawResult.Records; for the
// caller's readers of the result); its JSON is not set.
func (w *wire) call(ctx context.Context, conn mcp.Connection, method string, params json.RawMessage, token string, sink *progressSink, due time.Time, rec *RawResult) (json.RawMessage, error) {
	id := ownSeq.Add(-1)
	ch := make(chan ownAnswer, 1)
	w.mu.Lock()
	w.own[id] = ch
	if sink != nil {
		w.progress[token] = sink
	}
	if !due.IsZero() {
		w.addDue(id, due)
	}
	w.mu.Unlock()
	forget := func() {
		w.mu.Lock()
		delete(w.own, id)
		delete(w.pending, id)
		if w.due != nil {
			delete(w.due, id)
		}
		if sink != nil {
			delete(w.progress, token)
		}
		w.mu.Unlock()
	}
	wctx := ctx
	if sink != nil {
		wctx = context.WithValue(ctx, ownSinkKey{}, sink) // a Write that reads the answer hands progress on (httpconn.go)
	}
	if err := conn.Write(wctx, &jsonrpc.Request{ID: intID(id), Method: method, Params: params}); err != nil {
		forget()
		if ctx.Err() != nil {
			// The request may have reached the upstream (an HTTP POST
			// whose answer had not begun): cancel it, as the go-sdk does.
			w.sendCancel(ctx, conn, id, ctx.Err().Error())
			return nil, ctx.Err()
		}
		return nil, &writeFailed{err: err}
	}
	var wake chan struct{}
	if sink != nil {
		wake = sink.wake
	}
	for {
		select {
		case a := <-ch:
			if a.err == errWireDeadline {
				forget()
				w.sendCancel(ctx, conn, id, context.DeadlineExceeded.Error())
				return nil, a.err
			}
			if sink != nil {
				w.mu.Lock()
				delete(w.progress, token)
				w.mu.Unlock()
				sink.flush()
				if n := sink.droppedCount(); n > 0 {
					w.log.Debug("progress notifications coalesced: the client read them slower than the upstream sent them", "method", method, "coalesced", n)
				}
			}
			if rec != nil {
				rec.setRecords(a.rec)
			}
			return a.result, a.err
		case <-wake:
			sink.flush()
		case <-ctx.Done():
			forget()
			w.sendCancel(ctx, conn, id, ctx.Err().Error())
			return nil, ctx.Err()
		}
	}
}

// sendCancel writes notifications/cancelled for our request id in the
// background, bounded by cancelNotifyTimeout; the params are the go-sdk
// client's (reason, then requestId): reason is the text of the error that
// ended the call (the context's).
func (w *wire) sendCancel(ctx context.Context, conn mcp.Connection, id int64, reason string) {
	p := appendString([]byte(`{"reason":`), reason)
	p = strconv.AppendInt(append(p, `,"requestId":`...), id, 10)
	p = append(p, '}')
	nctx, stop := context.WithTimeout(context.WithoutCancel(ctx), cancelNotifyTimeout)
	go func() {
		defer stop()
		if err := conn.Write(nctx, &jsonrpc.Request{Method: "notifications/cancelled", Params: p}); err != nil {
			w.log.Debug("notifications/cancelled not sent", "id", id, "err", err)
		}
	}()
}

// ownSinkKey is the context key of an own call's progress sink in the
// context its Write gets (wire.call).
type ownSinkKey struct{}

// ownSinkOf is the progress sink wire.call put in ctx, or nil.
func ownSinkOf(ctx context.Context) *progressSink {
	s, _ := ctx.Value(ownSinkKey{}).(*progressSink)
	return s
}

// progressSink queues an own call's upstream progress notifications
// (wire.call): the connection's reader appends, the caller hands them on.
//
// Trust: the upstream decides how many it sends, and the caller hands
// them to a client that may read slowly or not at all (a stalled stdio
// client, a slow SSE stream). So at most progressQueueMax wait; past that
// the newest replaces the last one waiting. Progress only grows (MCP spec
// 2025-11-25 basic/utilities/progress: "The progress value MUST increase
// with each notification"), so the client still gets the latest state,
// in order, and the proxy's memory stays bounded (a stalled
// client and an upstream flooding progress grew the proxy from 90 MB to
// 354 MB in 36 s, without bound).
type progressSink struct {
	fn      func(*mcp.ProgressNotificationParams)
	mu      sync.Mutex
	q       []*mcp.ProgressNotificationParams
	dropped int           // replaced while the queue was full
	wake    chan struct{} // cap 1
}

// progressQueueMax bounds the progress notifications of one own call
// waiting for the caller (see progressSink).
const progressQueueMax = 256

func newProgressSink(fn func(*mcp.ProgressNotificationParams)) *progressSink {
	return &progressSink{fn: fn, wake: make(chan struct{}, 1)}
}

func (s *progressSink) push(p *mcp.ProgressNotificationParams) {
	s.mu.Lock()
	if len(s.q) >= progressQueueMax {
		s.q[len(s.q)-1] = p
		s.dropped++
	} else {
		s.q = append(s.q, p)
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// droppedCount is how many notifications a newer one replaced (push).
func (s *progressSink) droppedCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropped
}

func (s *progressSink) flush() {
	for {
		s.mu.Lock()
		q := s.q
		s.q = nil
		s.mu.Unlock()
		if len(q) == 0 {
			return
		}
		for _, p := range q {
			s.fn(p)
		}
	}
}

// ownProgress hands a notifications/progress of the upstream to the own
// call that owns its token; false when none does (the go-sdk then gets
// it). params are the notification's params as received.
func (w *wire) ownProgress(params []byte) bool {
	w.mu.Lock()
	n := len(w.progress)
	w.mu.Unlock()
	if n == 0 || len(params) == 0 {
		return false
	}
	var p mcp.ProgressNotificationParams
	if json.Unmarshal(params, &p) != nil {
		return false
	}
	token, ok := p.ProgressToken.(string)
	if !ok {
		return false
	}
	w.mu.Lock()
	sink := w.progress[token]
	w.mu.Unlock()
	if sink == nil {
		return false
	}
	sink.push(&p)
	return true
}

// initCapabilities is the "capabilities" member of the upstream's
// initialize (or server/discover) result as received; nil when unknown.
func (w *wire) initCapabilities() json.RawMessage {
	w.mu.Lock()
	res := w.initResult
	w.mu.Unlock()
	var caps json.RawMessage
	_, _ = jsonscan.Object(res, func(k, v []byte) bool {
		if string(k) == "capabilities" {
			caps = v
			return false
		}
		return true
	})
	return caps
}

// ErrNoOwnRequests is returned for requests the go-sdk does not know when
// the upstream's transport cannot carry them (the go-sdk's SSE transport).
var ErrNoOwnRequests = errors.New("this upstream's transport (SSE) cannot carry requests the go-sdk does not know (tasks)")

// Capability returns the member name of the capabilities upstream sent in
// its initialize (or server/discover) answer, as received ("tasks": MCP
// 2025-11-25 basic/utilities/tasks), for the shared session, or for conn
// when not nil. nil when absent, unknown or the upstream is not ready.
func (m *Manager) Capability(upstream string, conn *ClientConn, name string) json.RawMessage {
	l := m.liveOf(upstream, conn)
	if l == nil {
		return nil
	}
	oc, ok := l.conn.(ownCaller)
	if !ok {
		return nil
	}
	var out json.RawMessage
	_, _ = jsonscan.Object(oc.initCapabilities(), func(k, v []byte) bool {
		if string(k) == name {
			out = v
			return false
		}
		return true
	})
	return out
}

// Request sends a request the go-sdk does not know (tasks/get,
// tasks/result, tasks/list, tasks/cancel) to upstream, on conn when not
// nil (a per-client session) or on the shared session, and returns its
// result as received. Bounded by ctx and by the upstream's call_timeout.
// Errors name the upstream; a JSON-RPC error answer is wrapped
// (errors.As finds the *jsonrpc.Error).
func (m *Manager) Request(ctx context.Context, upstream string, conn *ClientConn, method string, params json.RawMessage) (json.RawMessage, error) {
	c, ok := m.conns[upstream]
	if !ok {
		return nil, fmt.Errorf("upstream %q: %w", upstream, ErrUnknownUpstream)
	}
	l := m.liveOf(upstream, conn)
	if l == nil {
		if conn != nil {
			return nil, unavailable(upstream, "per-client session closed", nil)
		}
		_, err := c.ready()
		return nil, err
	}
	oc, ok := l.conn.(ownCaller)
	if !ok {
		return nil, fmt.Errorf("upstream %q: %s: %w", upstream, method, ErrNoOwnRequests)
	}
	timeout := c.cfg.CallTimeout.Duration
	if timeout <= 0 {
		timeout = defaultCallTimeout
	}
	cctx, cancel := context.WithTimeoutCause(ctx, timeout, errCallTimeout)
	defer cancel()
	res, err := oc.ownCall(cctx, l.conn, method, params)
	if err != nil {
		if cctx.Err() != nil && ctx.Err() == nil {
			return nil, fmt.Errorf("upstream %q: %s: call_timeout %s exceeded: %w", upstream, method, timeout, context.DeadlineExceeded)
		}
		return nil, fmt.Errorf("upstream %q: %w", upstream, err)
	}
	return res, nil
}

// liveOf is conn's connection, or the shared ready one (nil when none).
func (m *Manager) liveOf(upstream string, conn *ClientConn) *live {
	if conn != nil {
		if conn.closed.Load() {
			return nil
		}
		return conn.l
	}
	c, ok := m.conns[upstream]
	if !ok {
		return nil
	}
	l, err := c.ready()
	if err != nil {
		return nil
	}
	return l
}

// callTask sends a task-augmented tools/call (CallOptions.Task) on l past
// the go-sdk and puts the answer in o.Raw.JSON.
func (c *conn) callTask(ctx context.Context, l *live, params *mcp.CallToolParams, o CallOptions, timeout time.Duration) (*mcp.CallToolResult, error) {
	name := ""
	if params != nil {
		name = params.Name
	}
	if o.Raw == nil {
		return nil, fmt.Errorf("upstream %q: tools/call %q: a task-augmented call needs CallOptions.Raw", c.name, name)
	}
	oc, ok := l.conn.(ownCaller)
	if !ok {
		return nil, fmt.Errorf("upstream %q: tools/call %q as a task: %w", c.name, name, ErrNoOwnRequests)
	}
	p, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("upstream %q: tools/call %q: %w", c.name, name, err)
	}
	p = append(append(append(p[:len(p)-1], `,"task":`...), o.Task...), '}')
	cctx, cancel := context.WithTimeoutCause(ctx, timeout, errCallTimeout)
	defer cancel()
	res, err := oc.ownCall(cctx, l.conn, "tools/call", p)
	switch {
	case err == nil:
		o.Raw.JSON, o.Raw.Plain = res, false
		_, isErr, _ := rawPassable(res)
		return &mcp.CallToolResult{IsError: isErr}, nil
	case cctx.Err() != nil && ctx.Err() == nil:
		return nil, fmt.Errorf("upstream %q: tools/call %q: call_timeout %s exceeded: %w", c.name, name, timeout, context.DeadlineExceeded)
	}
	return nil, fmt.Errorf("upstream %q: tools/call %q: %w", c.name, name, err)
}
