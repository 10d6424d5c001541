package upstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/memtrim"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/jsonscan"
)

// wire is the JSON-RPC half shared by the proxy's own upstream transports
// (stdio, stdioconn.go; Streamable HTTP, httpconn.go): it turns one frame
// (a stdio line, an HTTP body, an SSE event) into go-sdk messages and
// back, and it is where a broken upstream's faults stop:
//
//   - a frame that is not a JSON-RPC message (a log line, whatever its
//     first character; a JSON value that is not a message) is skipped and
//     logged, rate-limited (skipLog);
//   - a malformed answer to one of our requests (no "jsonrpc":"2.0",
//     invalid JSON, a bad error object) fails THAT request with an error
//     naming the cause; the session stays up;
//   - an answer past the size cap fails that request (tools/call: an
//     isError result saying the size and the cap); the session stays up;
//   - ids are kept exactly: a request id of the upstream that the go-sdk
//     cannot represent (1.5, 2^70, null, a very long string) is replaced by
//     a surrogate on the way in and written back byte for byte in our
//     answer (JSON-RPC 2.0 section 5: the same id back);
//   - the "tools" array of each tools/list answer is kept raw for the
//     ingest pipeline (rawToolPages), and the go-sdk gets an empty array.
//
// Nothing here decodes params or results: they are handed to the go-sdk
// as slices of one copy of the frame. Trust: frames come from an upstream
// server, which is not trusted.
type wire struct {
	log      *slog.Logger
	maxBytes int
	skipped  skipLog

	mu      sync.Mutex
	pending map[int64]pendingCall      // our calls awaiting an answer, by id
	rawIDs  map[string]json.RawMessage // surrogate id -> the upstream's id as sent
	seq     uint64                     // surrogate counter
	pages   map[string][]json.RawMessage
	// onInit, when set, gets the initialize result (the HTTP transport
	// takes the negotiated protocol version from it).
	onInit func(result json.RawMessage)
	// rawTools turns on the split of tools/list answers (rawToolPages);
	// set by the manager, which reads the pages, before any message flows.
	rawTools bool
	// own are the waiters of our own requests (owncall.go), by id (<0).
	own map[int64]chan ownAnswer
	// initResult is the upstream's initialize (or server/discover) result
	// as received (owncall.go: capabilities the go-sdk does not know).
	initResult json.RawMessage
	// progress are the own calls' upstream progress tokens (owncall.go).
	progress map[string]*progressSink
	// timesCalls: the wire ends its own calls at their deadline itself
	// (wiredue.go; the stdio transport, whose writes do not need the
	// call's context to end). due, dueTimer and dueAt are that clock.
	timesCalls bool
	due        map[int64]time.Time
	dueTimer   *time.Timer
	dueAt      time.Time
	// lostSession, when set, turns a JSON-RPC error answer that says the
	// session is lost into an error wrapping mcp.ErrSessionMissing (the
	// HTTP transport, for own requests; the go-sdk's answers get the same
	// in httpConn.lostInAnswers).
	lostSession func(*jsonrpc.Error) error
	// cancelled are the ids of our calls cancelled lately
	// (forgetCancelled), the last maxCancelled, oldest first.
	cancelled []int64
}

type pendingCall struct {
	method string
	cursor string // tools/list
	own    bool   // one of our own requests (owncall.go): never the go-sdk's
}

func newWire(log *slog.Logger, maxBytes int) *wire {
	return &wire{
		log:      log,
		maxBytes: maxBytes,
		skipped:  skipLog{log: log},
		pending:  map[int64]pendingCall{},
		rawIDs:   map[string]json.RawMessage{},
		pages:    map[string][]json.RawMessage{},
		own:      map[int64]chan ownAnswer{},
		progress: map[string]*progressSink{},
	}
}

// surrogatePrefix starts the ids the wire substitutes for upstream ids the
// go-sdk cannot represent. An upstream string id that happens to start
// with it is substituted too, so a surrogate never collides.
const surrogatePrefix = "mcp-toolsearch/id/"

// maxPlainStringID bounds a string id passed to the go-sdk as it is;
// longer ones are substituted (the SDK keeps ids in maps and logs).
const maxPlainStringID = 256

// errInvalid is the JSON-RPC error code of a synthesized answer to a
// request whose answer was malformed or too large (internal error: the
// request did not fail because of its params).
const errInvalid = jsonrpc.CodeInternalError

// --- outgoing -------------------------------------------------------------

// encode appends msg's JSON to buf. A call is recorded as pending (so its
// answer can be matched even when malformed); an answer to a request of
// the upstream whose id was substituted gets the original id back.
func (w *wire) encode(buf []byte, msg jsonrpc.Message) ([]byte, error) {
	buf = append(buf, `{"jsonrpc":"2.0"`...)
	switch m := msg.(type) {
	case *jsonrpc.Request:
		if m.IsCall() {
			buf = append(buf, `,"id":`...)
			buf = appendID(buf, m.ID)
			if id, ok := m.ID.Raw().(int64); ok {
				pc := pendingCall{method: m.Method, own: id < 0}
				switch m.Method {
				case "tools/list":
					pc.cursor = cursorOf(m.Params)
				}
				w.mu.Lock()
				w.pending[id] = pc
				w.mu.Unlock()
			}
		} else if m.Method == "notifications/cancelled" {
			w.forgetCancelled(m.Params)
		}
		buf = append(buf, `,"method":`...)
		buf = appendString(buf, m.Method)
		if len(m.Params) > 0 {
			buf = append(buf, `,"params":`...)
			buf = append(buf, m.Params...)
		}
	case *jsonrpc.Response:
		buf = append(buf, `,"id":`...)
		if s, ok := m.ID.Raw().(string); ok && strings.HasPrefix(s, surrogatePrefix) {
			w.mu.Lock()
			raw, found := w.rawIDs[s]
			delete(w.rawIDs, s)
			w.mu.Unlock()
			if found {
				buf = append(buf, raw...)
			} else {
				buf = appendID(buf, m.ID)
			}
		} else {
			buf = appendID(buf, m.ID)
		}
		if m.Error != nil {
			b, err := json.Marshal(wireError(m.Error))
			if err != nil {
				return buf, err
			}
			buf = append(buf, `,"error":`...)
			buf = append(buf, b...)
		} else {
			buf = append(buf, `,"result":`...)
			if len(m.Result) == 0 {
				buf = append(buf, "null"...)
			} else {
				buf = append(buf, m.Result...)
			}
		}
	default:
		return buf, fmt.Errorf("unknown message type %T", msg)
	}
	return append(buf, '}'), nil
}

// wireError is the JSON-RPC error object of err, as the go-sdk writes it:
// a *jsonrpc.Error as it is; any other error with its text as message and
// the code of a wrapped *jsonrpc.Error (0 when none).
func wireError(err error) *jsonrpc.Error {
	if we, ok := err.(*jsonrpc.Error); ok {
		return we
	}
	out := &jsonrpc.Error{Message: err.Error()}
	var wrapped *jsonrpc.Error
	if errors.As(err, &wrapped) {
		out.Code = wrapped.Code
	}
	return out
}

func appendID(buf []byte, id jsonrpc.ID) []byte {
	switch v := id.Raw().(type) {
	case int64:
		return strconv.AppendInt(buf, v, 10)
	case string:
		return appendString(buf, v)
	}
	return append(buf, "null"...)
}

// appendString appends s as a JSON string (no HTML escaping).
func appendString(buf []byte, s string) []byte {
	plain := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			plain = false
			break
		}
	}
	if plain {
		buf = append(buf, '"')
		buf = append(buf, s...)
		return append(buf, '"')
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return append(buf, bytes.TrimRight(b.Bytes(), "\n")...)
}

func cursorOf(params json.RawMessage) string {
	if len(params) == 0 {
		return ""
	}
	var p struct {
		Cursor string `json:"cursor"`
	}
	_ = json.Unmarshal(params, &p)
	return p.Cursor
}

// maxCancelled bounds wire.cancelled.
const maxCancelled = 64

// forgetCancelled drops the pending entry of a call that was cancelled
// (notifications/cancelled: the go-sdk or the wire stops waiting) and
// remembers its id: a late answer is dropped (lateAnswer) rather than
// reported as a fault. MCP (basic/utilities/cancellation) lets the server
// answer a request it was told is cancelled, and asks the sender to
// ignore that answer; one that comes often when the proxy stops while an
// upstream is still answering its first tools/list.
func (w *wire) forgetCancelled(params json.RawMessage) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	if id, err := strconv.ParseInt(string(p.RequestID), 10, 64); err == nil {
		w.mu.Lock()
		delete(w.pending, id)
		if len(w.cancelled) == maxCancelled {
			w.cancelled = append(w.cancelled[:0], w.cancelled[1:]...)
		}
		w.cancelled = append(w.cancelled, id)
		w.mu.Unlock()
	}
}

// lateAnswer reports whether f answers a call of ours that was cancelled
// (forgetCancelled), and forgets that id.
func (w *wire) lateAnswer(f frameFields) bool {
	if !f.hasID || f.method != nil {
		return false
	}
	id, err := strconv.ParseInt(string(f.id), 10, 64)
	if err != nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	i := slices.Index(w.cancelled, id)
	if i < 0 {
		return false
	}
	w.cancelled = slices.Delete(w.cancelled, i, i+1)
	return true
}

// --- incoming -------------------------------------------------------------

// maxExactInt is 2^53: the go-sdk builds integer ids from float64
// (jsonrpc.MakeID), exact only up to here.
const maxExactInt = 1 << 53

func intID(n int64) jsonrpc.ID  { id, _ := jsonrpc.MakeID(float64(n)); return id }
func strID(s string) jsonrpc.ID { id, _ := jsonrpc.MakeID(s); return id }

// frameFields are the members of one message object, raw.
type frameFields struct {
	jsonrpc, id, method, params, result, err []byte
	hasID, hasResult, hasError               bool
	// rm: result's members, recorded in the frame's one scan
	// (jsonscan.ObjectNested; Complete(result) only when result is an
	// object scanned whole): rawPassable and the proxy read them instead
	// of scanning the result again. mm: the same for the
	// result's _meta.
	rm, mm jsonscan.Members
}

// decode turns one frame into messages (several for a JSON-RPC batch;
// none for a frame that is skipped). It never fails: every fault becomes a
// skip (logged) or a synthesized answer to our pending request.
func (w *wire) decode(frame []byte) []jsonrpc.Message {
	frame = bytes.TrimSpace(frame)
	if len(frame) == 0 {
		return nil
	}
	if frame[0] == '[' {
		var elems [][]byte
		if err := jsonscan.Array(frame, func(e []byte) bool { elems = append(elems, e); return true }); err != nil || len(elems) == 0 {
			w.skipped.note("not a JSON-RPC message", frame)
			return nil
		}
		var out []jsonrpc.Message
		for _, e := range elems {
			if e[0] != '{' {
				w.skipped.note("not a JSON-RPC message", frame)
				return nil
			}
			out = append(out, w.decode(e)...)
		}
		return out
	}
	own := bytes.Clone(frame) // params/results are slices of this copy
	var f frameFields
	_, scanErr := jsonscan.ObjectNested2(own, "result", &f.rm, "_meta", &f.mm, func(k, v []byte) bool {
		switch string(k) {
		case "jsonrpc":
			f.jsonrpc = v
		case "id":
			f.id, f.hasID = v, true
		case "method":
			f.method = v
		case "params":
			f.params = v
		case "result":
			f.result, f.hasResult = v, true
		case "error":
			f.err, f.hasError = v, true
		}
		return true
	})
	if errors.Is(scanErr, jsonscan.ErrNotObject) {
		w.skipped.note("not a JSON-RPC message", frame)
		return nil
	}
	// An answer to one of our calls that is broken in any way fails that
	// call, with the cause.
	if id, ok := w.ourCallID(f); ok && f.method == nil {
		switch {
		case scanErr != nil:
			return w.failCall(id, "invalid JSON-RPC from upstream: "+scanErr.Error())
		case string(f.jsonrpc) != `"2.0"`:
			what := `no "jsonrpc":"2.0"`
			if f.jsonrpc != nil {
				what = `"jsonrpc" is ` + preview(f.jsonrpc, 20) + `, not "2.0"`
			}
			return w.failCall(id, "invalid JSON-RPC from upstream: the answer has "+what)
		case f.hasResult == f.hasError:
			return w.failCall(id, `invalid JSON-RPC from upstream: the answer must have exactly one of "result" and "error"`)
		}
		return w.answer(id, f)
	}
	if scanErr != nil || string(f.jsonrpc) != `"2.0"` {
		w.skipped.note("not a JSON-RPC message", frame)
		return nil
	}
	if f.method != nil {
		return w.request(f, frame)
	}
	if w.lateAnswer(f) {
		w.log.Debug("dropped the upstream's answer to a request it was told is cancelled", "id", string(f.id))
		return nil
	}
	// An answer that is not to a pending call of ours.
	w.skipped.note("an answer to no pending request", frame)
	return nil
}

// ourCallID is the id of f when it is one of our pending calls. An id
// echoed as a string of digits or an integral float ("5", 5.0) is
// accepted with a warning: the go-sdk would otherwise wait for the call
// until its timeout.
func (w *wire) ourCallID(f frameFields) (int64, bool) {
	if !f.hasID {
		return 0, false
	}
	raw := string(f.id)
	id, err := strconv.ParseInt(raw, 10, 64)
	exact := err == nil
	if !exact {
		s := strings.Trim(raw, `"`)
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			id, err = n, nil
		} else if fl, err := strconv.ParseFloat(s, 64); err == nil && fl == float64(int64(fl)) {
			id = int64(fl)
		} else {
			return 0, false
		}
	}
	w.mu.Lock()
	_, ok := w.pending[id]
	w.mu.Unlock()
	if ok && !exact {
		w.skipped.warnOnce("id", "the upstream echoed a request id in another form (JSON-RPC 2.0 requires the same id)", "sent", id, "got", raw)
	}
	return id, ok
}

// isPending reports whether call id still awaits its answer.
func (w *wire) isPending(id int64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, ok := w.pending[id]
	return ok
}

// take removes and returns the pending call id.
func (w *wire) take(id int64) pendingCall {
	w.mu.Lock()
	defer w.mu.Unlock()
	pc := w.pending[id]
	delete(w.pending, id)
	return pc
}

// failCall answers our call id with a JSON-RPC error (the session stays).
func (w *wire) failCall(id int64, msg string) []jsonrpc.Message {
	pc := w.take(id)
	switch pc.method {
	case "": // no longer pending: no method to name
		w.log.Warn("failed one request: "+msg, "id", id)
	case "server/discover", "initialize":
		// The connection attempt fails with it and says so; the legacy SSE
		// transport may be tried next (http.go sseFallback).
		w.log.Debug("failed one request: "+msg, "method", pc.method, "id", id)
	default:
		w.log.Warn("failed one request: "+msg, "method", pc.method, "id", id)
	}
	if pc.own {
		w.ownDone(id, ownAnswer{err: &jsonrpc.Error{Code: errInvalid, Message: msg}})
		return nil
	}
	return []jsonrpc.Message{&jsonrpc.Response{ID: intID(id), Error: &jsonrpc.Error{Code: errInvalid, Message: msg}}}
}

// answer builds the go-sdk response to our call id.
func (w *wire) answer(id int64, f frameFields) []jsonrpc.Message {
	pc := w.take(id)
	if pc.own {
		a := ownAnswerOf(f)
		if pc.method == "tools/call" && a.err == nil {
			a.rec = recordsOf(f.result, &f.rm, &f.mm) // one record, by pointer
		}
		if we, ok := a.err.(*jsonrpc.Error); ok && w.lostSession != nil {
			if lost := w.lostSession(we); lost != nil {
				a.err = lost
			}
		}
		w.ownDone(id, a)
		return nil
	}
	resp := &jsonrpc.Response{ID: intID(id)}
	if f.hasError {
		var we jsonrpc.Error
		if json.Unmarshal(f.err, &we) != nil || bytes.TrimSpace(f.err)[0] != '{' {
			resp.Error = &jsonrpc.Error{Code: errInvalid, Message: "invalid JSON-RPC from upstream: the error is not a JSON-RPC error object: " + preview(f.err, 80)}
		} else {
			resp.Error = &we
		}
		return []jsonrpc.Message{resp}
	}
	resp.Result = f.result
	switch pc.method {
	case "tools/list":
		w.mu.Lock()
		split := w.rawTools
		w.mu.Unlock()
		if split {
			resp.Result = w.splitToolsPage(pc.cursor, f.result)
		}
	case "initialize", "server/discover":
		w.mu.Lock()
		w.initResult = f.result // a slice of this frame's own copy
		w.mu.Unlock()
		if w.onInit != nil && pc.method == "initialize" {
			w.onInit(f.result)
		}
	}
	return []jsonrpc.Message{resp}
}

// request builds a request or notification of the upstream; an id the
// go-sdk cannot represent exactly is substituted (see wire).
func (w *wire) request(f frameFields, frame []byte) []jsonrpc.Message {
	var method string
	if json.Unmarshal(f.method, &method) != nil {
		w.skipped.note(`"method" is not a string`, frame)
		return nil
	}
	if !f.hasID && method == "notifications/progress" && w.ownProgress(f.params) {
		return nil // an own call's progress (owncall.go)
	}
	req := &jsonrpc.Request{Method: method, Params: f.params}
	if f.hasID {
		id, ok := w.requestID(f.id)
		if !ok {
			w.skipped.note("a request id that is not a string, number or null", frame)
			return nil
		}
		req.ID = id
	}
	return []jsonrpc.Message{req}
}

// requestID maps the upstream's raw id to a go-sdk id: an integer within
// ±2^53 written plainly, or a short string, passes as it is; anything else
// JSON-RPC allows (a fraction, a huge integer, null, a long string, a
// string with our surrogate prefix) gets a surrogate.
func (w *wire) requestID(raw []byte) (jsonrpc.ID, bool) {
	switch c := raw[0]; {
	case c == '"':
		var s string
		if json.Unmarshal(raw, &s) == nil && len(s) <= maxPlainStringID && !strings.HasPrefix(s, surrogatePrefix) {
			return strID(s), true
		}
	case c == '-' || c >= '0' && c <= '9':
		if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil && strconv.FormatInt(n, 10) == string(raw) && n >= -maxExactInt && n <= maxExactInt {
			return intID(n), true
		}
	case c == 'n':
	default:
		return jsonrpc.ID{}, false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seq++
	s := surrogatePrefix + strconv.FormatUint(w.seq, 10)
	w.rawIDs[s] = bytes.Clone(raw)
	return strID(s), true
}

// splitToolsPage keeps the raw tools of a tools/list result for cursor
// and returns the result with "tools":[] (other members unchanged). A
// result that is not an object with a tools array is returned unchanged
// (the go-sdk then reports its own error for the call).
func (w *wire) splitToolsPage(cursor string, result []byte) json.RawMessage {
	var tools []byte
	rest := make([]byte, 0, 64)
	rest = append(rest, '{')
	_, err := jsonscan.Object(result, func(k, v []byte) bool {
		if string(k) == "tools" {
			tools = v
			return true
		}
		if len(rest) > 1 {
			rest = append(rest, ',')
		}
		rest = append(rest, '"')
		rest = append(rest, k...)
		rest = append(rest, `":`...)
		rest = append(rest, v...)
		return true
	})
	if err != nil {
		return result
	}
	page := []json.RawMessage{}
	if tools != nil && !bytes.Equal(tools, []byte("null")) {
		if jsonscan.Array(tools, func(e []byte) bool { page = append(page, e); return true }) != nil {
			return result
		}
	}
	if len(rest) > 1 {
		rest = append(rest, ',')
	}
	rest = append(rest, `"tools":[]}`...)
	w.mu.Lock()
	w.pages[cursor] = page
	w.mu.Unlock()
	return rest
}

// keepToolPages implements rawToolPages.
func (w *wire) keepToolPages() {
	w.mu.Lock()
	w.rawTools = true
	w.mu.Unlock()
}

// takeToolsPage implements rawToolPages.
func (w *wire) takeToolsPage(cursor string) ([]json.RawMessage, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	p, ok := w.pages[cursor]
	delete(w.pages, cursor)
	return p, ok
}

// oversized is the answer to a frame past the size cap: when it answers
// one of our calls (its id was found while it was skipped), that call
// fails (tools/call: an isError result, so the model sees why); otherwise
// the frame is skipped with a warning. size is the frame's size in bytes
// as far as it was read.
func (w *wire) oversized(id []byte, isRequest bool, size int) []jsonrpc.Message {
	memtrim.Soon() // reading it grew the heap by about the cap: give that back once it is over
	what := fmt.Sprintf("a message of %d bytes exceeds the cap of %d bytes (server.max_message_bytes)", size, w.maxBytes)
	if !isRequest && id != nil {
		if cid, ok := w.ourCallID(frameFields{id: id, hasID: true}); ok {
			pc := w.take(cid)
			w.log.Warn("upstream answer too large; failed that request", "method", pc.method, "bytes", size, "cap", w.maxBytes)
			resp := &jsonrpc.Response{ID: intID(cid)}
			if pc.method == "tools/call" {
				res, _ := json.Marshal(&mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "The tool's result is too large: " + what + "."}}})
				resp.Result = res
			} else {
				resp.Error = &jsonrpc.Error{Code: errInvalid, Message: "upstream answer too large: " + what}
			}
			if pc.own {
				a := ownAnswer{result: resp.Result}
				if resp.Error != nil {
					a = ownAnswer{err: resp.Error}
				}
				w.ownDone(cid, a)
				return nil
			}
			return []jsonrpc.Message{resp}
		}
	}
	w.log.Warn("skipped a message from the upstream: "+what, "id", string(id))
	return nil
}

func preview(b []byte, n int) string {
	s := string(bytes.TrimSpace(b))
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// skipLog rate-limits warnings about skipped frames: the first
// skipLogFirst are logged one by one, then one summary per minute with the
// count (a chatty upstream once wrote 228 MB of proxy log in 20 s).
type skipLog struct {
	log *slog.Logger

	mu      sync.Mutex
	logged  int
	count   int
	since   time.Time
	onceFor map[string]bool
	total   int    // frames skipped in all (startfail.go)
	first   string // the first one: why, and a preview of the frame
}

const (
	skipLogFirst  = 5
	skipLogWindow = time.Minute
)

func (s *skipLog) note(why string, frame []byte) {
	s.mu.Lock()
	if s.total++; s.first == "" {
		s.first = why + ": " + preview(frame, maxLogLine/8)
	}
	if s.logged < skipLogFirst {
		s.logged++
		last := s.logged == skipLogFirst
		s.mu.Unlock()
		s.log.Warn("skipped a line from the upstream: "+why, "line", preview(frame, maxLogLine/8))
		if last {
			s.log.Warn("further skipped lines are counted and reported once a minute")
		}
		return
	}
	if s.count == 0 {
		s.since = time.Now()
	}
	s.count++
	if time.Since(s.since) < skipLogWindow {
		s.mu.Unlock()
		return
	}
	n, since := s.count, s.since
	s.count = 0
	s.mu.Unlock()
	s.log.Warn("skipped lines from the upstream (not JSON-RPC)", "count", n, "since", since.Format(time.RFC3339))
}

// warnOnce logs msg once per key for this connection.
func (s *skipLog) warnOnce(key, msg string, args ...any) {
	s.mu.Lock()
	if s.onceFor == nil {
		s.onceFor = map[string]bool{}
	}
	done := s.onceFor[key]
	s.onceFor[key] = true
	s.mu.Unlock()
	if !done {
		s.log.Warn(msg, args...)
	}
}
