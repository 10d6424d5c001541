package front

// The front's own stdio transport. The go-sdk's IOTransport ends the
// session at the first line that is not a JSON-RPC message, answers a
// cancelled request, and cannot take the fast path's requests off the
// line before the go-sdk decodes them. This transport frames lines with
// one reused buffer (lineReader), answers a bad line and goes on, keeps
// the request-id guard of guard.go, and builds the JSON-RPC message of a
// plain request by scanning it (params stay raw bytes). Anything else (an
// answer of the client, a notification with odd members, an id or method
// with escapes, params null, deep nesting) is decoded by the go-sdk's own
// jsonrpc.DecodeMessage, so its errors and edge cases stay the SDK's.
// Batches (protocol versions before 2025-06-18) are answered as one array,
// as the go-sdk does.
//
// Trust: the client is not trusted; a line it sends is scanned with the
// same depth limit as the go-sdk (1000 levels) and at most
// server.max_message_bytes long.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/jsonscan"
	"github.com/mcp-toolsearch/mcp-toolsearch/internal/linewrite"
)

// frontMaxDepth is the go-sdk's nesting limit for incoming JSON
// (internal/json defaultMaxDepth).
const frontMaxDepth = 1000

// Stdio is an mcp.Transport over the front's stdin (in, with the id
// guard) and stdout (out).
type Stdio struct {
	in  *lineReader
	out *linewrite.Writer // stdout; messages finished together go out in one write
	max int               // bytes per line

	mu   sync.Mutex
	last *Conn // the connection made last (tests)
}

// NewStdio is the stdio transport over in and out, messages of at most
// max bytes.
func NewStdio(in io.ReadCloser, out *linewrite.Writer, max int) *Stdio {
	return &Stdio{in: &lineReader{r: in, max: max}, out: out, max: max}
}

// FastCalls is how many requests the fast path of the transport's last
// connection served.
func (t *Stdio) FastCalls() int {
	c := t.lastConn()
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fastCalls
}

// FastEnabled reports whether the transport's last connection has its
// fast path on (EnableFast ran, right after the go-sdk's Connect returned).
func (t *Stdio) FastEnabled() bool {
	c := t.lastConn()
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fast != nil
}

func (t *Stdio) lastConn() *Conn {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.last
}

// Flush writes out what the transport's output holds.
func (t *Stdio) Flush() error { return t.out.Flush() }

func (t *Stdio) Connect(ctx context.Context) (mcp.Connection, error) {
	c := &Conn{in: t.in, out: t.out, max: t.max, incoming: make(chan frontMsg), closed: make(chan struct{}),
		base: context.WithoutCancel(ctx)}
	if slot, ok := ctx.Value(ConnSlot{}).(*atomic.Pointer[Conn]); ok {
		slot.Store(c) // stdio_fast.go
	}
	t.mu.Lock()
	t.last = c
	t.mu.Unlock()
	go c.readLoop()
	return c, nil
}

type frontMsg struct {
	msgs []jsonrpc.Message
	err  error
}

// Conn is the mcp.Connection of Stdio.
type Conn struct {
	in       *lineReader
	out      *linewrite.Writer
	max      int
	incoming chan frontMsg
	queue    []jsonrpc.Message // rest of a batch; Read is not concurrent

	closeOnce sync.Once
	closed    chan struct{}

	// lastName is the name of the last fast-path tools/call (fastParams;
	// the reader's alone).
	lastName string

	mu      sync.Mutex
	initID  jsonrpc.ID            // id of the client's initialize request
	version string                // negotiated protocol version
	batches map[jsonrpc.ID]*batch // open batches by request id

	// _meta elision (stdio_meta.go)
	sawInit     bool                  // the client sent initialize
	trip        []byte                // the accepted 2026-07-28 _meta triple
	tripPending map[jsonrpc.ID][]byte // triples of tools/calls not yet answered
	elided      int                   // requests whose triple was taken out
	// restRec: where elideMeta records the params it rebuilds (read
	// only by the connection's reader goroutine, one line at a time): a
	// record of the connection's own, since one on elideMeta's stack
	// moved to the heap, 160 B per call.
	restRec jsonscan.Members

	// tools/call fast path (stdio_fast.go)
	base      context.Context // fast-path calls' contexts derive from it (the Connect context's values)
	fast      *fastPath       // nil: every request goes to the go-sdk
	inflight  map[jsonrpc.ID]context.CancelCauseFunc
	notes     int                   // notifications passed to the go-sdk and not yet handled
	seq       uint64                // messages passed to the go-sdk so far
	noteSeq   uint64                // seq of the last counted notification
	sdkCalls  map[jsonrpc.ID]uint64 // call ids passed to the go-sdk and not yet answered: their seq
	fastCalls int                   // requests served on the fast path
	fastDone  bool                  // closing: no new fast-path calls
	boundTo   context.Context       // the session's life: its end cancels every fast-path call (BindFast)
	fastWG    sync.WaitGroup        // fast-path calls running

	cancelled map[jsonrpc.ID]bool // in-flight ids the client cancelled: no answer (cancel_stdio.go)
}

// batch collects the answers to one incoming batch (JSON-RPC 2.0 "Batch":
// one array holding every response, sent when all requests are answered).
type batch struct {
	open    int
	answers []*jsonrpc.Response
	index   map[jsonrpc.ID]int
	refused [][]byte // error objects of malformed elements (batch.go)
}

func (c *Conn) SessionID() string { return "" }

func (c *Conn) readLoop() {
	for {
		line, err := c.in.next()
		var m frontMsg
		switch {
		case messageOver(line, err, c.max):
			// Answered and skipped (the rest of the line is read and
			// dropped, never held): one oversized request does not end
			// the session with every call in flight.
			err = c.skipLong(line, err)
		case len(line) > 0:
			// One object (not a batch) is copied and scanned once, for
			// its id's check and its decoding.
			var f frontFields
			frame, one := frontFrame(line, &f)
			var refused [][]byte // batch.go: error objects of malformed messages or batch elements
			if one {
				if a := checkMessage(&f); a != nil {
					refused = [][]byte{a}
					frame = nil
				}
			} else if frame, refused = checkFrame(frame); frame == nil && len(refused) > 0 && !c.batchesAllowed() {
				frame, refused = bytes.TrimSpace(line), nil // refused whole below (decode)
			}
			if frame == nil {
				if one {
					_, _ = c.out.Write(append(refused[0], '\n'))
				} else {
					_, _ = c.out.Write(append(joinArray(refused, nil), '\n'))
				}
			} else {
				m.msgs, m.err = c.decode(frame, &f, one, refused)
				if m.err != nil && err == nil {
					// A whole line that is not a message (bad JSON, a wrong
					// version tag, a batch the version does not allow) is
					// answered and the session goes on (JSON-RPC 2.0 §5.1:
					// Parse error / Invalid Request with id null); the
					// go-sdk's transport ends the session instead, taking
					// every call in flight with it.
					_, _ = c.out.Write(append(lineError(line, m.err), '\n'))
					m.msgs, m.err = nil, nil
				}
				m.msgs = c.noteCancelled(m.msgs)                            // cancel_stdio.go
				if len(m.msgs) == 1 && c.takeFast(m.msgs[0], line, &f.pm) { // stdio_fast.go
					m.msgs = nil
				}
				liftTasks(m.msgs)
				c.toSDK(m.msgs) // stdio_fast.go
			}
		}
		if m.err == nil && len(m.msgs) == 0 && err != nil {
			m.err = err
		}
		if m.err != nil {
			// The fast-path calls end before the go-sdk learns that the
			// input ended: jsonrpc2 then closes this connection holding
			// its state lock, which a call still sending progress or a
			// log message to the client would wait for.
			c.EndFast() // stdio_fast.go
		}
		if m.err != nil || len(m.msgs) > 0 {
			select {
			case c.incoming <- m:
			case <-c.closed:
				return
			}
		}
		if m.err != nil {
			return
		}
	}
}

// lineEnd is the length of line's end: 2 for "\r\n", 1 for "\n", 0 when
// line has no newline.
func lineEnd(line []byte) int {
	n := len(line)
	switch {
	case n >= 2 && line[n-2] == '\r' && line[n-1] == '\n':
		return 2
	case n >= 1 && line[n-1] == '\n':
		return 1
	}
	return 0
}

// messageOver reports whether a piece from lineReader (with the reader's
// error) holds a message longer than max bytes (server.max_message_bytes).
// The line's end ("\n" or "\r\n") is framing, not message (MCP
// basic/transports, stdio: messages are delimited by newlines), so a
// message of exactly max bytes is admitted. A piece without a newline
// while the input goes on was cut by the reader, which cuts only past
// max+2 bytes: over.
func messageOver(line []byte, err error, max int) bool {
	end := lineEnd(line)
	if end == 0 && err == nil && len(line) > 0 {
		return true
	}
	return len(line)-end > max
}

// skipLong answers a client line longer than server.max_message_bytes
// and reads the rest of it, dropping it; first is its first piece and
// err the reader's error with it. The answer is -32600 with the line's id
// when the piece shows one (its members before the cut), else id null
// (JSON-RPC 2.0 §5). It returns the reader's error (nil while the input
// goes on). Trust: the client is not trusted; memory stays bounded by the
// reader's pieces.
func (c *Conn) skipLong(first []byte, err error) error {
	id := []byte("null")
	_, _ = jsonscan.Object(first, func(k, v []byte) bool {
		if string(k) == "id" {
			if vv := bytes.TrimSpace(v); len(vv) > 0 && (vv[0] == '"' || vv[0] == '-' || (vv[0] >= '0' && vv[0] <= '9')) && json.Valid(vv) {
				id = append([]byte(nil), vv...)
			}
			return false
		}
		return true
	})
	total := len(first)
	piece := first
	for err == nil && (len(piece) == 0 || piece[len(piece)-1] != '\n') {
		piece, err = c.in.next()
		total += len(piece)
	}
	total -= lineEnd(piece) // a "\r\n" split across pieces counts its "\r"
	b, _ := json.Marshal(&jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("a JSON-RPC message of %d bytes or more is longer than server.max_message_bytes (%d): its line was skipped", total, c.max)})
	_, _ = c.out.Write(append(append(append(append([]byte(`{"jsonrpc":"2.0","id":`), id...), `,"error":`...), b...), '}', '\n'))
	return err
}

// lineError is the answer to a line that is not a JSON-RPC message:
// -32700 when it is not JSON, else -32600, with id null (JSON-RPC 2.0
// §5: the id could not be read) and the decoder's reason.
func lineError(line []byte, err error) []byte {
	code := int64(jsonrpc.CodeInvalidRequest)
	if !json.Valid(bytes.TrimSpace(line)) {
		code = jsonrpc.CodeParseError
	}
	b, _ := json.Marshal(&jsonrpc.Error{Code: code, Message: "not a JSON-RPC message (the line was skipped): " + err.Error()})
	return append(append([]byte(`{"jsonrpc":"2.0","id":null,"error":`), b...), '}')
}

// liftTasks lifts the "task" member of each tools/call into _meta
// (LiftTask), where the go-sdk's CallToolParams keeps it.
func liftTasks(msgs []jsonrpc.Message) {
	for _, m := range msgs {
		if req, ok := m.(*jsonrpc.Request); ok && req.IsCall() && req.Method == "tools/call" {
			req.Params = LiftTask(req.Params)
		}
	}
}

// frontFrame is line without surrounding blanks; when that is one object
// (one: not empty, not a batch) it is a copy (the decoded message's params
// are slices of it; line is reused) and f is filled with its members
// (scanFront).
func frontFrame(line []byte, f *frontFields) (frame []byte, one bool) {
	frame = bytes.TrimSpace(line)
	if len(frame) == 0 || frame[0] == '[' {
		return frame, false
	}
	frame = bytes.Clone(frame)
	f.scan(frame)
	return frame, true
}

// decode turns one line into messages (several for a batch); frame, f and
// one are frontFrame's for the line. When the _meta elision rewrites a
// request's params, f.pm is made the record of the new params.
//
// refused are the error objects of a batch's malformed elements
// (checkFrame): they go out in the batch's answer. A request whose id is
// in flight is answered -32600 and dropped (batch.go).
func (c *Conn) decode(frame []byte, f *frontFields, one bool, refused [][]byte) ([]jsonrpc.Message, error) {
	if len(frame) == 0 {
		return nil, nil
	}
	if one {
		m, err := decodeScanned(frame, f)
		if err != nil {
			return nil, err
		}
		if r, ok := m.(*jsonrpc.Request); ok {
			if r.IsCall() && c.inFlight(r.ID) {
				_, _ = c.out.Write(append(duplicateAnswer(f.id, r.ID.Raw()), '\n'))
				return nil, nil
			}
			if r.Method == "initialize" {
				c.mu.Lock()
				c.sawInit = true
				if r.ID.IsValid() {
					c.initID = r.ID
				}
				c.mu.Unlock()
			} else {
				c.elideMeta(r, &f.pm, &f.mm) // stdio_meta.go
			}
		}
		return []jsonrpc.Message{m}, nil
	}
	frame = bytes.Clone(frame) // params are slices of this copy; line is reused
	var elems [][]byte
	if err := jsonscan.Array(frame, func(e []byte) bool { elems = append(elems, e); return true }); err != nil {
		return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
	}
	if len(elems) == 0 {
		return nil, errors.New("empty batch")
	}
	if !c.batchesAllowed() {
		c.mu.Lock()
		version := c.version
		c.mu.Unlock()
		return nil, fmt.Errorf("JSON-RPC batching is not supported in 2025-06-18 and later (request version: %s)", version)
	}
	msgs := make([]jsonrpc.Message, 0, len(elems))
	b := &batch{index: map[jsonrpc.ID]int{}, refused: refused}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range elems {
		ef := scanFront(e)
		m, err := decodeScanned(e, &ef)
		if err != nil {
			b.refused = append(b.refused, invalidAnswer(ef.usableID(), "invalid request: "+err.Error()))
			continue
		}
		if r, ok := m.(*jsonrpc.Request); ok && r.IsCall() {
			// checkFrame refused ids the batch holds twice; an id in
			// flight before the batch (a call of the go-sdk's, of the
			// fast path or of an open batch) gets its own error, and
			// that call goes on.
			if c.inFlightLocked(r.ID) {
				b.refused = append(b.refused, duplicateAnswer(ef.id, r.ID.Raw()))
				continue
			}
			b.index[r.ID] = len(b.answers)
			b.answers = append(b.answers, nil)
			b.open++
		}
		msgs = append(msgs, m)
	}
	if b.open == 0 {
		if len(b.refused) > 0 {
			_, _ = c.out.Write(append(joinArray(b.refused, nil), '\n'))
		}
		return msgs, nil
	}
	if c.batches == nil {
		c.batches = map[jsonrpc.ID]*batch{}
	}
	for id := range b.index {
		c.batches[id] = b
	}
	return msgs, nil
}

// batchesAllowed reports whether the session's protocol version allows
// JSON-RPC batches (before 2025-06-18).
func (c *Conn) batchesAllowed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.version < "2025-06-18"
}

// inFlight reports whether a call with id is in flight on the connection:
// passed to the go-sdk and not answered, on the fast path, or in an open
// batch.
func (c *Conn) inFlight(id jsonrpc.ID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.inFlightLocked(id)
}

func (c *Conn) inFlightLocked(id jsonrpc.ID) bool {
	if _, ok := c.sdkCalls[id]; ok {
		return true
	}
	if _, ok := c.inflight[id]; ok {
		return true
	}
	_, ok := c.batches[id]
	return ok
}

// decodeFront builds the message of one JSON-RPC object: a plain request
// or notification by scanning, anything else through the go-sdk.
func decodeFront(frame []byte) (jsonrpc.Message, error) {
	f := scanFront(frame)
	return decodeScanned(frame, &f)
}

// decodeScanned is decodeFront of frame, whose members f holds.
func decodeScanned(frame []byte, f *frontFields) (jsonrpc.Message, error) {
	id, method, params := f.id, f.method, f.params
	if f.err != nil || f.depth > frontMaxDepth || f.other || string(f.version) != `"2.0"` ||
		!PlainString(method) || string(params) == "null" {
		// result, error, unknown members, anything not plain: the SDK decides
		return jsonrpc.DecodeMessage(frame)
	}
	var rid jsonrpc.ID
	switch {
	case id == nil:
	case PlainString(id):
		rid, _ = jsonrpc.MakeID(string(id[1 : len(id)-1]))
	default:
		n, err := strconv.ParseInt(string(id), 10, 64)
		if err != nil || n > 1<<53 || n < -(1<<53) {
			return jsonrpc.DecodeMessage(frame)
		}
		rid, _ = jsonrpc.MakeID(float64(n)) // exact within ±2^53
	}
	return &jsonrpc.Request{ID: rid, Method: methodName(method[1 : len(method)-1]), Params: json.RawMessage(params)}, nil
}

// methodName is string(m), without a new string for the methods a client
// sends on every call.
func methodName(m []byte) string {
	switch string(m) {
	case "tools/call":
		return "tools/call"
	case "notifications/cancelled":
		return "notifications/cancelled"
	case "notifications/progress":
		return "notifications/progress"
	case "ping":
		return "ping"
	}
	return string(m)
}

// PlainString reports whether v is a JSON string without escapes.
func PlainString(v []byte) bool {
	return len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' && bytes.IndexByte(v[1:len(v)-1], '\\') < 0 && bytes.IndexByte(v[1:len(v)-1], '"') < 0
}

func (c *Conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	default:
	}
	if len(c.queue) > 0 {
		m := c.queue[0]
		c.queue = c.queue[1:]
		return m, nil
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case m := <-c.incoming:
		if m.err != nil {
			return nil, m.err
		}
		c.queue = m.msgs[1:]
		return m.msgs[0], nil
	case <-c.closed:
		return nil, io.EOF
	}
}

// Write writes msg as one line. A successful answer is written from its
// result bytes as they are (one copy); a batch's answers wait for the
// last one and go out as one array.
func (c *Conn) Write(ctx context.Context, msg jsonrpc.Message) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	default:
	}
	resp, isResp := msg.(*jsonrpc.Response)
	if isResp {
		c.answered(resp.ID) // stdio_fast.go
		c.noteVersion(resp)
		c.accepted(resp)                      // stdio_meta.go
		cancelled := c.dropCancelled(resp.ID) // cancel_stdio.go: the note goes either way
		if answers, refused, inBatch := c.batched(resp); inBatch {
			if answers == nil {
				return nil
			}
			buf := []byte{'['}
			for i, a := range answers {
				if i > 0 {
					buf = append(buf, ',')
				}
				var err error
				if buf, err = appendFront(buf, a); err != nil {
					return err
				}
			}
			for _, r := range refused {
				buf = append(append(buf, ','), r...)
			}
			_, err := c.out.Write(append(buf, ']', '\n'))
			return err
		}
		if cancelled {
			return nil
		}
	}
	b, err := appendFront(nil, msg)
	if err == nil {
		_, err = c.out.Write(append(b, '\n'))
	}
	return err
}

// appendFront appends the JSON of msg to buf: a successful answer built
// around its result bytes, anything else by the go-sdk.
func appendFront(buf []byte, msg jsonrpc.Message) ([]byte, error) {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || resp.Error != nil || len(resp.Result) == 0 || !resp.ID.IsValid() {
		b, err := jsonrpc.EncodeMessage(msg)
		if err != nil {
			return buf, err
		}
		return append(buf, b...), nil
	}
	start := len(buf)
	buf = append(buf, `{"jsonrpc":"2.0","id":`...)
	switch v := resp.ID.Raw().(type) {
	case int64:
		buf = strconv.AppendInt(buf, v, 10)
	case string:
		s, err := json.Marshal(v)
		if err != nil {
			return buf, err
		}
		buf = append(buf, s...)
	default:
		b, err := jsonrpc.EncodeMessage(msg)
		if err != nil {
			return buf, err
		}
		return append(buf[:start], b...), nil
	}
	buf = append(buf, `,"result":`...)
	buf = append(buf, resp.Result...)
	return append(buf, '}'), nil
}

// noteVersion records the negotiated protocol version from the answer to
// the client's initialize (batches are refused from 2025-06-18 on).
func (c *Conn) noteVersion(resp *jsonrpc.Response) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.initID.IsValid() || resp.ID != c.initID || resp.Error != nil {
		return
	}
	c.initID = jsonrpc.ID{}
	var r struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if json.Unmarshal(resp.Result, &r) == nil {
		c.version = r.ProtocolVersion
	}
}

// batched records resp in its batch: inBatch reports whether it belongs to
// one, answers is the whole batch once its last answer came (else nil).
func (c *Conn) batched(resp *jsonrpc.Response) (answers []*jsonrpc.Response, refused [][]byte, inBatch bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.batches[resp.ID]
	if !ok {
		return nil, nil, false
	}
	delete(c.batches, resp.ID)
	b.open--
	if b.open > 0 {
		// Kept until the batch's last answer: a copy, since resp is the
		// writer's again once Write returns.
		cp := *resp
		cp.Result = bytes.Clone(resp.Result)
		b.answers[b.index[resp.ID]] = &cp
		return nil, nil, true
	}
	b.answers[b.index[resp.ID]] = resp
	return b.answers, b.refused, true
}

func (c *Conn) Close() error {
	var err error
	c.closeOnce.Do(func() {
		c.EndFast() // stdio_fast.go
		close(c.closed)
		err = c.in.close()
	})
	return err
}
