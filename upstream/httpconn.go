package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// streamableTransport is the proxy's own client side of MCP's Streamable
// HTTP transport (MCP spec 2025-11-25 basic/transports "Streamable
// HTTP"), used for every streamable-http upstream instead of the go-sdk's.
// What it does differently, each for a fault seen in the field:
//
//   - The optional standalone GET stream (server-to-client messages) runs
//     in the background from the first moment: Connect and initialize never
//     wait for it, so an upstream that holds GET open without headers cannot
//     stall start-up. Its failures (405, other statuses, a stream
//     that flaps, events without ids) are logged and retried with backoff;
//     they never end the session. Only a 404 for our session does.
//   - A POST answer that is not a JSON-RPC answer (an HTML error page, a
//     200 body that is not JSON-RPC, a stream that ends without the answer)
//     fails that one request with the cause; the session stays.
//   - Bodies and events are capped at maxBytes like stdio lines.
//   - A lost session is recognised in every form upstreams use: HTTP 404,
//     HTTP 400 naming the session, or a JSON-RPC error naming it in a 200
//     answer; each becomes an error wrapping mcp.ErrSessionMissing, on which
//     the manager initializes again and retries the call once.
//
// Trust: the upstream server is not trusted; the config (URL, headers) is.
type streamableTransport struct {
	url      string
	client   *http.Client
	log      *slog.Logger
	maxBytes int
}

func (t *streamableTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	c := &httpConn{
		wire:     newWire(t.log, t.maxBytes),
		url:      t.url,
		client:   t.client,
		ctx:      lctx,
		cancel:   cancel,
		incoming: make(chan jsonrpc.Message, 8),
		done:     make(chan struct{}),
		failed:   make(chan struct{}),
	}
	c.wire.onInit = c.initialized
	c.wire.lostSession = c.lostError
	return c, nil
}

// httpConn is one Streamable HTTP session.
type httpConn struct {
	*wire
	url    string
	client *http.Client
	ctx    context.Context // the connection's lifetime (GET stream, DELETE)
	cancel context.CancelFunc

	incoming chan jsonrpc.Message
	done     chan struct{}
	closeMu  sync.Once

	failOnce sync.Once
	failErr  error
	failed   chan struct{}

	mu        sync.Mutex
	sessionID string
	version   string // negotiated protocol version (MCP-Protocol-Version)
	getOnce   sync.Once
}

// standalone GET stream retry bounds.
const (
	getRetryMin = time.Second
	getRetryMax = time.Minute
)

// maxErrorBody bounds the part of an error answer's body that is read.
const maxErrorBody = 64 << 10

func (c *httpConn) initialized(result json.RawMessage) {
	var r struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if json.Unmarshal(result, &r) == nil && r.ProtocolVersion != "" {
		c.mu.Lock()
		c.version = r.ProtocolVersion
		c.mu.Unlock()
	}
}

func (c *httpConn) SessionID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessionID
}

func (c *httpConn) fail(err error) {
	c.failOnce.Do(func() {
		c.failErr = err
		close(c.failed)
	})
	c.closeOwn(err) // owncall.go
}

// failedWith returns the error the connection failed with, or nil while
// it has not failed. failErr is read only once c.failed is closed (which
// orders it after fail's write): Close may run while a stream is failing
// the connection.
func (c *httpConn) failedWith() error {
	select {
	case <-c.failed:
		return c.failErr
	default:
		return nil
	}
}

// Read implements mcp.Connection.
func (c *httpConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case m := <-c.incoming:
		return m, nil
	case <-c.failed:
		return nil, c.failErr
	case <-c.done:
		return nil, io.EOF
	}
}

// deliver hands messages to Read (false when the connection closed).
// inject hands m to the go-sdk behind what was delivered so far
// (Manager.Settle).
func (c *httpConn) inject(m jsonrpc.Message) bool { return c.deliver([]jsonrpc.Message{m}) }

func (c *httpConn) deliver(msgs []jsonrpc.Message) bool {
	for _, m := range msgs {
		select {
		case c.incoming <- m:
		case <-c.done:
			return false
		}
	}
	return true
}

// setHeaders sets the session's Mcp-Session-Id and MCP-Protocol-Version
// (spec 2025-11-25 basic/transports "Session Management", "Protocol
// Version Header") on h.
func (c *httpConn) setHeaders(h http.Header) {
	c.mu.Lock()
	sid, ver := c.sessionID, c.version
	c.mu.Unlock()
	if sid != "" {
		h.Set("Mcp-Session-Id", sid)
	}
	if ver != "" {
		h.Set("Mcp-Protocol-Version", ver)
	}
}

// postHeader is the header of a POST: the media types and the session's
// headers (setHeaders). Accept-Encoding is left to net/http's transport,
// which asks for gzip and decompresses the answer.
func (c *httpConn) postHeader() http.Header {
	h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	c.setHeaders(h)
	return h
}

// errRejected makes the go-sdk fail only the request a Write error belongs
// to, not the connection (go-sdk jsonrpc2.ErrRejected, -32005, compared by
// code).
var errRejected = &jsonrpc.Error{Code: -32005, Message: "rejected by transport"}

// Write implements mcp.Connection: one POST per message.
func (c *httpConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	select {
	case <-c.failed:
		return c.failErr
	case <-c.done:
		return mcp.ErrConnectionClosed
	default:
	}
	buf, err := c.encode(nil, msg)
	if err != nil {
		return err
	}
	pc := newPostCtx(ctx)
	streamed := false // readStream ends pc
	defer func() {
		if !streamed {
			pc.end()
		}
	}()
	// A *bytes.Reader body: net/http writes the request's header and body
	// in one write only for the standard library's in-memory readers.
	req, err := http.NewRequestWithContext(pc.ctx, http.MethodPost, c.url, bytes.NewReader(buf))
	if err != nil {
		return err
	}
	req.Header = c.postHeader()
	if hasModernMeta(msg) {
		c.setModernHeaders(ctx, req.Header, msg.(*jsonrpc.Request)) // headers2026.go
	}
	var call *jsonrpc.Request
	method := ""
	if r, ok := msg.(*jsonrpc.Request); ok {
		method = r.Method
		if r.IsCall() {
			call = r
		}
	}
	resp, err := c.client.Do(req)
	if err != nil {
		if call != nil {
			c.take(callID(call))
		}
		return fmt.Errorf("%w: POST %s: %w", errRejected, method, err)
	}
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		c.mu.Lock()
		if c.sessionID == "" {
			c.sessionID = sid
		}
		c.mu.Unlock()
	}
	if lost := c.lostSession(resp); lost != nil {
		_ = resp.Body.Close()
		if call != nil {
			c.take(callID(call))
		}
		c.fail(lost)
		return lost
	}
	if call == nil {
		// A notification or an answer: 202 Accepted, no body.
		if resp.StatusCode >= 300 {
			body := readSome(resp.Body, maxErrorBody)
			c.log.Warn("upstream refused a message", "method", method, "status", resp.Status, "body", preview(body, 200))
		}
		drainClose(resp.Body)
		if method == "notifications/initialized" && resp.StatusCode < 300 {
			c.getOnce.Do(func() { go c.standaloneGET() })
		}
		return nil
	}
	id := callID(call)
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		body := readSome(resp.Body, maxErrorBody)
		drainClose(resp.Body)
		go c.deliver(c.answerFromBody(id, resp.Status, body))
		return nil
	}
	// The answer to one of our own requests (owncall.go: its caller waits
	// for it as soon as Write returns) is read here, on the caller's
	// goroutine; the go-sdk's requests are answered through Read, by a
	// goroutine of their own (a goroutine and a hand-off to the
	// waiting caller per call).
	own := id < 0 && id != noCall
	switch ct := mediaType(resp.Header.Get("Content-Type")); ct {
	case "application/json":
		if own {
			c.readJSON(id, resp) // the deferred pc.end follows
			return nil
		}
		streamed = true
		go func() {
			defer pc.end()
			c.readJSON(id, resp)
		}()
	case "text/event-stream":
		streamed = true
		if own {
			c.readStream(ctx, id, resp, pc, &inlineRead{sink: ownSinkOf(ctx)})
			return nil
		}
		go c.readStream(ctx, id, resp, pc, nil)
	default:
		body := readSome(resp.Body, 512)
		drainClose(resp.Body)
		go c.deliver(c.failCall(id, fmt.Sprintf("invalid answer from upstream: HTTP %s with Content-Type %q (want application/json or text/event-stream): %s", resp.Status, ct, preview(body, 120))))
	}
	return nil
}

func callID(r *jsonrpc.Request) int64 {
	switch v := r.ID.Raw().(type) {
	case int64:
		return v
	case float64:
		return int64(v)
	}
	return noCall
}

// noCall is the call id of an event stream that answers no call (the
// standalone GET stream); our own requests have ids below zero.
const noCall = math.MinInt64

// lostSession reports a lost session as an error wrapping
// mcp.ErrSessionMissing: HTTP 404 for our session id (spec), or HTTP 400
// whose body names the session (what several servers answer after a
// restart).
func (c *httpConn) lostSession(resp *http.Response) error {
	sid := c.SessionID()
	if sid == "" {
		return nil
	}
	switch resp.StatusCode {
	case http.StatusNotFound:
		return fmt.Errorf("%w: HTTP 404 for session %s", mcp.ErrSessionMissing, sid)
	case http.StatusBadRequest:
		body := readSome(resp.Body, maxErrorBody)
		resp.Body = io.NopCloser(bytes.NewReader(body)) // readable again for the caller
		if bodyNamesSession(body) {
			return fmt.Errorf("%w: HTTP 400 for session %s: %s", mcp.ErrSessionMissing, sid, preview(body, 160))
		}
	}
	return nil
}

// lostInEvent is an error wrapping mcp.ErrSessionMissing when an event's
// data (or an HTTP 200 JSON body) is not a JSON-RPC message but an error object about the session
// ({"error":"Session not found"}, {"error":{"message":"…session…"}}): what
// some servers answer for an unknown session with HTTP 200 and an event
// stream. nil otherwise, and without a session of ours.
func (c *httpConn) lostInEvent(data []byte) error {
	sid := c.SessionID()
	if sid == "" || !bytes.Contains(bytes.ToLower(data), []byte("session")) {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil || m["jsonrpc"] != nil || m["error"] == nil {
		return nil
	}
	var text string
	if json.Unmarshal(m["error"], &text) != nil {
		var e struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(m["error"], &e) != nil {
			return nil
		}
		text = e.Message
	}
	if !strings.Contains(strings.ToLower(text), "session") {
		return nil
	}
	return fmt.Errorf("%w: HTTP 200 event stream for session %s: %s", mcp.ErrSessionMissing, sid, preview(data, 160))
}

// lostCall fails call id with lost (an error wrapping
// mcp.ErrSessionMissing), as failCall does with a message.
func (c *httpConn) lostCall(id int64, lost error) []jsonrpc.Message {
	pc := c.take(id)
	if pc.own {
		c.ownDone(id, ownAnswer{err: lost})
		return nil
	}
	return []jsonrpc.Message{&jsonrpc.Response{ID: intID(id), Error: lost}}
}

// bodyNamesSession reports whether an error body is about the session (a
// JSON-RPC error with a lost-session code or message, or plain text).
func bodyNamesSession(body []byte) bool {
	var r struct {
		Error *jsonrpc.Error `json:"error"`
	}
	if json.Unmarshal(body, &r) == nil && r.Error != nil {
		return sessionLostError(r.Error)
	}
	l := strings.ToLower(string(body))
	return strings.Contains(l, "session")
}

// sessionLostError reports whether a JSON-RPC error says the server does
// not know the session (servers use -32000, -32001 or -32600 with a
// message about the session or an uninitialized server).
func sessionLostError(e *jsonrpc.Error) bool {
	switch e.Code {
	case -32000, -32001, jsonrpc.CodeInvalidRequest:
		l := strings.ToLower(e.Message)
		return strings.Contains(l, "session") || strings.Contains(l, "not initialized")
	}
	return false
}

// answerFromBody turns a non-2xx answer to call id into its JSON-RPC
// answer: the body's JSON-RPC error when it has one, else an error naming
// the HTTP status and the start of the body.
func (c *httpConn) answerFromBody(id int64, status string, body []byte) []jsonrpc.Message {
	var r struct {
		Error *jsonrpc.Error `json:"error"`
	}
	if json.Unmarshal(body, &r) == nil && r.Error != nil {
		pc := c.take(id)
		r.Error.Message = fmt.Sprintf("HTTP %s: %s", status, r.Error.Message)
		if pc.own {
			c.ownDone(id, ownAnswer{err: r.Error})
			return nil
		}
		return []jsonrpc.Message{&jsonrpc.Response{ID: intID(id), Error: r.Error}}
	}
	return c.failCall(id, fmt.Sprintf("upstream answered HTTP %s: %s", status, preview(body, 200)))
}

// readJSON reads a JSON answer body (capped) and delivers its messages;
// a body that does not answer call id fails that call.
func (c *httpConn) readJSON(id int64, resp *http.Response) {
	defer drainClose(resp.Body)
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(c.maxBytes)+1))
	if err != nil {
		c.deliver(c.failCall(id, "reading the upstream's answer: "+err.Error()))
		return
	}
	if len(body) > c.maxBytes {
		var s idSniffer
		s.feed(body)
		n := len(body)
		if resp.ContentLength > 0 {
			n = int(resp.ContentLength)
		}
		msgs := c.oversized(s.id(), s.sawMethod, n)
		if c.isPending(id) {
			// The body did not answer call id (oversized answered nothing,
			// or another call: an own call is answered on its channel, so
			// an empty msgs does not say the call is still open).
			msgs = append(msgs, c.failCall(id, fmt.Sprintf("upstream answer too large: more than %d bytes (server.max_message_bytes)", c.maxBytes))...)
		}
		c.deliver(msgs)
		return
	}
	if lost := c.lostInEvent(body); lost != nil { // {"error":"Session not found"} as a JSON body
		if c.isPending(id) {
			c.deliver(c.lostCall(id, lost))
		}
		c.fail(lost)
		return
	}
	msgs := c.decode(body)
	if c.isPending(id) {
		msgs = append(msgs, c.failCall(id, "invalid JSON-RPC from upstream: the HTTP 200 body does not answer the request: "+preview(body, 120))...)
	}
	c.deliver(c.lostInAnswers(msgs))
}

// lostInAnswers turns an error answer that says the session is lost into
// an error wrapping mcp.ErrSessionMissing (the manager then initializes
// again and retries once).
func (c *httpConn) lostInAnswers(msgs []jsonrpc.Message) []jsonrpc.Message {
	if c.SessionID() == "" {
		return msgs
	}
	for _, m := range msgs {
		if r, ok := m.(*jsonrpc.Response); ok {
			if we, ok := r.Error.(*jsonrpc.Error); ok && sessionLostError(we) {
				r.Error = fmt.Errorf("%w: %s", mcp.ErrSessionMissing, we.Message)
			}
		}
	}
	return msgs
}

// lostError is lostInAnswers for one error answer to an own request
// (wire.lostSession): nil when it does not say the session is lost.
func (c *httpConn) lostError(we *jsonrpc.Error) error {
	if c.SessionID() == "" || !sessionLostError(we) {
		return nil
	}
	return fmt.Errorf("%w: %s", mcp.ErrSessionMissing, we.Message)
}

// readStream reads the SSE answer to call id until it has the answer.
// When the stream ends without it: resumed with Last-Event-ID when the
// server gave event ids, else the call fails. in is set when the stream
// is read on the goroutine of the call's caller (an own request, Write).
func (c *httpConn) readStream(ctx context.Context, id int64, resp *http.Response, pc *postCtx, in *inlineRead) {
	end := pc
	defer func() { end.end() }()
	lastID := ""
	for attempt := 0; ; attempt++ {
		answered, handed, err := c.events(resp, &lastID, id, pc, in)
		if handed && pc != nil {
			end = nil // the goroutine reading the stream's end ends pc
		}
		pc = nil // a resumed stream is read with ctx
		if answered || ctx.Err() != nil || c.closed() {
			return
		}
		if lastID == "" || attempt >= 3 {
			why := "the upstream ended the answer stream without answering"
			if err != nil {
				why += ": " + err.Error()
			}
			c.deliver(c.failCall(id, why))
			return
		}
		// Resume (spec: GET with Last-Event-ID).
		next, err := c.get(ctx, lastID)
		if err != nil || next.StatusCode != http.StatusOK || mediaType(next.Header.Get("Content-Type")) != "text/event-stream" {
			if next != nil {
				drainClose(next.Body)
			}
			c.deliver(c.failCall(id, "the upstream ended the answer stream without answering, and resuming it failed"))
			return
		}
		resp = next
	}
}

// events delivers the messages of one event stream; answered reports
// whether call id (noCall: none) was answered, after which it stops. pc,
// when not nil, is the context of the POST the stream answers: once the
// answer is read it is kept from the call's cancellation (postCtx.keep),
// so that reading the stream's end does not abort the connection.
//
// With in (the stream is read on the caller's goroutine): the call's
// progress is handed on after each event (in.sink), and when the answer
// came before the end of the stream, the end is read (and pc ended) off
// the caller's path, by a goroutine of its own; handed reports that.
func (c *httpConn) events(resp *http.Response, lastID *string, id int64, pc *postCtx, in *inlineRead) (answered, handed bool, err error) {
	var src io.Reader = resp.Body
	if in != nil {
		in.body, in.eof = resp.Body, false
		src = in
	}
	defer func() {
		if in != nil && answered && !in.eof {
			handed = true
			go func() {
				drainClose(resp.Body)
				pc.end()
			}()
			return
		}
		drainClose(resp.Body)
	}()
	err = readSSE(src, c.maxBytes, func(ev *sseEvent) bool {
		if ev.ID != "" {
			*lastID = ev.ID
		}
		if ev.Name != "" && ev.Name != "message" {
			return true
		}
		var msgs []jsonrpc.Message
		if ev.Oversize {
			msgs = c.oversized(ev.Sniff.id(), ev.Sniff.sawMethod, ev.Size)
		} else if len(ev.Data) > 0 {
			if lost := c.lostInEvent(ev.Data); lost != nil {
				// The third form of "session not found": HTTP 200 and an
				// event that is not JSON-RPC but says so. The call fails
				// with the lost session (the manager initializes again
				// and sends it once more) and the connection is done.
				if id != noCall && c.isPending(id) {
					c.deliver(c.lostCall(id, lost))
				}
				answered = true
				c.fail(lost)
				return false
			}
			msgs = c.decode(ev.Data)
		}
		if id != noCall && !c.isPending(id) {
			answered = true // answered, or forgotten (cancelled): stop reading
			if pc != nil {
				pc.keep()
			}
		}
		if !c.deliver(c.lostInAnswers(msgs)) {
			return false
		}
		if in != nil && in.sink != nil {
			in.sink.flush() // on the caller's goroutine, in arrival order, before the answer (wire.call)
		}
		return !answered
	})
	if errors.Is(err, errEventCut) && !answered && id != noCall && c.isPending(id) {
		// The stream was cut in the middle of an event past the cap: on
		// this call's stream it is the call's answer (or holds it up), so
		// the call fails with the cap named, and is not resumed.
		c.deliver(c.oversized(strconv.AppendInt(nil, id, 10), false, cutAfter(c.maxBytes)))
		answered = true
	}
	return answered, handed, err
}

// inlineRead is the body of an answer stream read on the goroutine of the
// call's caller (events): it notes whether the body's end was read.
type inlineRead struct {
	body io.Reader
	sink *progressSink // the call's progress (owncall.go), or nil
	eof  bool
}

func (r *inlineRead) Read(p []byte) (int, error) {
	n, err := r.body.Read(p)
	if err == io.EOF {
		r.eof = true
	}
	return n, err
}

func (c *httpConn) closed() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// get opens a GET event stream (resuming after lastID when set).
func (c *httpConn) get(ctx context.Context, lastID string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	c.setHeaders(req.Header)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	return c.client.Do(req)
}

// standaloneGET keeps the optional server-to-client stream open for the
// connection's lifetime, in the background (spec: "Listening for Messages
// from the Server"). 405 means the server offers none; 404 for our session
// means the session is gone (the connection fails); anything else is
// retried with backoff and never fails the session.
func (c *httpConn) standaloneGET() {
	delay := getRetryMin
	lastID := ""
	warned := false
	for c.ctx.Err() == nil {
		start := time.Now()
		resp, err := c.get(c.ctx, lastID)
		problem := ""
		switch {
		case err != nil:
			problem = err.Error()
		case resp.StatusCode == http.StatusMethodNotAllowed:
			drainClose(resp.Body)
			c.log.Debug("upstream offers no standalone GET stream (405)")
			return
		case resp.StatusCode == http.StatusNotFound && c.SessionID() != "":
			drainClose(resp.Body)
			c.fail(fmt.Errorf("%w: HTTP 404 on the GET stream", mcp.ErrSessionMissing))
			return
		case resp.StatusCode != http.StatusOK || mediaType(resp.Header.Get("Content-Type")) != "text/event-stream":
			problem = fmt.Sprintf("HTTP %s, Content-Type %q", resp.Status, resp.Header.Get("Content-Type"))
			drainClose(resp.Body)
		default:
			_, _, err := c.events(resp, &lastID, noCall, nil, nil)
			if errors.Is(err, errEventCut) {
				c.log.Warn("upstream's standalone GET stream cut off: it sent an event far past the cap (reconnecting with backoff)", "cap", c.maxBytes, "limit", "server.max_message_bytes")
			}
			if err != nil {
				problem = "stream ended: " + err.Error()
			} else {
				problem = "stream ended"
			}
		}
		if c.ctx.Err() != nil {
			return
		}
		if time.Since(start) > 10*time.Second {
			delay = getRetryMin // it worked for a while
		}
		if !warned {
			c.log.Info("upstream's standalone GET stream unavailable; retrying in the background (calls are not affected)", "problem", problem, "retry_in", delay.String())
			warned = true
		} else {
			c.log.Debug("standalone GET stream retry", "problem", problem, "retry_in", delay.String())
		}
		t := time.NewTimer(delay)
		select {
		case <-c.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		delay = min(2*delay, getRetryMax)
	}
}

// closeDeleteTimeout bounds the DELETE that ends the session on Close.
const closeDeleteTimeout = 2 * time.Second

// Close implements mcp.Connection: DELETE of the session (best effort,
// bounded), then every stream ends.
func (c *httpConn) Close() error {
	c.closeMu.Do(func() {
		sid := c.SessionID()
		if sid != "" && !errors.Is(c.failedWith(), mcp.ErrSessionMissing) {
			ctx, cancel := context.WithTimeout(c.ctx, closeDeleteTimeout)
			req, err := http.NewRequestWithContext(ctx, http.MethodDelete, c.url, nil)
			if err == nil {
				c.setHeaders(req.Header)
				if resp, err := c.client.Do(req); err == nil {
					drainClose(resp.Body)
				}
			}
			cancel()
		}
		c.cancel()
		close(c.done)
		c.closeOwn(io.EOF) // owncall.go
	})
	return nil
}

func mediaType(ct string) string {
	switch ct {
	case "application/json", "text/event-stream":
		return ct // the common forms, without parameters: nothing to parse
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return strings.ToLower(strings.TrimSpace(ct))
	}
	return mt
}

func readSome(r io.Reader, n int64) []byte {
	b, _ := io.ReadAll(io.LimitReader(r, n))
	return b
}

// postCtx is the context of one POST of a call: cancelled with the call's
// context (ctx) until the answer has been read (keep). The caller's context
// ends as soon as the answer is delivered (the call returned); reading the
// rest of the answer's event stream (drainClose) under it aborted the
// request, and net/http then closed the connection instead of reusing it:
// about a third of the calls of the overhead bench dialed a new
// connection. After keep, the rest is read for at most
// keepDrain.
type postCtx struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	stop   func() bool
	drain  *time.Timer // set by keep
}

// keepDrain bounds reading the end of an answered event stream.
const keepDrain = 2 * time.Second

func newPostCtx(ctx context.Context) *postCtx {
	rctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	pc := &postCtx{ctx: rctx, cancel: cancel}
	pc.stop = context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
	return pc
}

// keep detaches the POST from the call's context (the answer is in).
func (pc *postCtx) keep() {
	if pc.stop() {
		pc.drain = time.AfterFunc(keepDrain, func() { pc.cancel(context.DeadlineExceeded) })
	}
}

// end releases the POST's context (its body is closed).
func (pc *postCtx) end() {
	if pc == nil {
		return
	}
	pc.stop()
	if pc.drain != nil {
		pc.drain.Stop()
	}
	pc.cancel(context.Canceled)
}

// drainClose reads a little of what is left (so the connection can be
// reused) and closes the body.
func drainClose(b io.ReadCloser) {
	_, _ = io.Copy(io.Discard, io.LimitReader(b, 64<<10))
	_ = b.Close()
}
