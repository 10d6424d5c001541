package front

// Two checks on what clients send the front, before the go-sdk server
// sees it. Trust: clients without a token and
// client-declared values are not trusted; these checks only refuse, with an
// error that names the problem.
//
//  1. Request ids the go-sdk cannot give back exactly. JSON-RPC 2.0
//     (section 5) requires the response to carry the same id as the
//     request; go-sdk v1.8.0 keeps a numeric id as an int64 converted from
//     a float64 (jsonrpc.MakeID), so 1.5 comes back as 1 and 2^70 as the
//     smallest int64, and it treats "id": null as a notification (no
//     answer at all). The front refuses such a request with -32600 and
//     the id written back exactly as received: strings, and integers
//     written plainly within ±2^53, pass.
//  2. A POST to the stateful Streamable HTTP endpoint without an
//     Mcp-Session-Id that is not an initialize: the go-sdk answers HTTP 200
//     with an error of code 0; the front answers HTTP 400 with -32600
//     (MCP spec basic/transports "Session Management": a server that
//     requires a session SHOULD answer 400 to a request without one; an
//     unknown id keeps getting 404).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/jsonscan"
)

// MaxExactID is 2^53, the largest integer the go-sdk's float64-based ids
// hold exactly.
const MaxExactID = 1 << 53

// frontFields are the top-level members of one message object that
// checkMessage and decodeFront read (raw; the last of a repeated key), so
// that the stdio front scans a line once for both.
type frontFields struct {
	version, id, method, params []byte
	hasID, other                bool // other: a member besides these four
	hasResult, hasError         bool // the members of a response (batch.go)
	depth                       int  // jsonscan.Object's
	err                         error
	// pm: params' members, recorded in the same scan
	// (jsonscan.ObjectNested; Complete(params) only when params is an
	// object scanned whole): the _meta elision and the fast path read
	// them instead of scanning params again. mm: the same
	// for params' _meta (the 2026-07-28 triple's object).
	pm, mm jsonscan.Members
}

func scanFront(msg []byte) (f frontFields) {
	f.scan(msg)
	return f
}

// scan fills f from msg (scanFront without copying f: it is ~0.5 KB).
func (f *frontFields) scan(msg []byte) {
	f.depth, f.err = jsonscan.ObjectNested2(msg, "params", &f.pm, "_meta", &f.mm, func(k, v []byte) bool {
		switch string(k) {
		case "jsonrpc":
			f.version = v
		case "id":
			f.id, f.hasID = v, true
		case "method":
			f.method = v
		case "params":
			f.params = v
		case "result":
			f.hasResult, f.other = true, true
		case "error":
			f.hasError, f.other = true, true
		default:
			f.other = true // result, error, unknown members
		}
		return true
	})
}

// badID checks the id of the request f was scanned from: it returns the
// id as received and what is wrong with it, or ok.
func (f *frontFields) badID() (raw []byte, why string, ok bool) {
	id := f.id
	if f.err != nil || f.method == nil || !f.hasID || !json.Valid(id) {
		return nil, "", true // not a request with an id (or not JSON: 01): the decoder judges it
	}
	switch c := id[0]; {
	case c == '"':
		return nil, "", true
	case c == 'n':
		return id, "a null id (JSON-RPC 2.0 section 4: a request with id null cannot be told from a notification here)", false
	case c == '-' || c >= '0' && c <= '9':
		if n, err := strconv.ParseInt(string(id), 10, 64); err == nil && strconv.FormatInt(n, 10) == string(id) && n >= -MaxExactID && n <= MaxExactID {
			return nil, "", true
		}
		return id, "a number that is not an integer within ±2^53 (JSON-RPC 2.0 section 4: numbers SHOULD NOT have fractional parts)", false
	default:
		return id, "not a string, number or null", false
	}
}

// idError is the JSON-RPC answer refusing a request id.
func idError(raw []byte, why string) []byte {
	msg := fmt.Sprintf("invalid request id %s: %s; mcp-toolsearch answers only requests whose id it can give back exactly: use a string or an integer", raw, why)
	b, _ := json.Marshal(&jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: msg})
	out := append([]byte(`{"jsonrpc":"2.0","id":`), raw...)
	out = append(out, `,"error":`...)
	out = append(out, b...)
	return append(out, '}')
}

// isInitialize reports whether a POST body is an initialize request (or a
// batch holding one).
func isInitialize(body []byte) bool {
	found := false
	check := func(m []byte) {
		_, _ = jsonscan.Object(m, func(k, v []byte) bool {
			if string(k) == "method" && string(v) == `"initialize"` {
				found = true
			}
			return true
		})
	}
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		_ = jsonscan.Array(body, func(e []byte) bool { check(e); return !found })
	} else {
		check(body)
	}
	return found
}

// IDGuard wraps an HTTP front handler (Streamable HTTP or SSE) with the
// id check above. maxBody bounds the body read (bytes; larger bodies get
// HTTP 413).
//
// It guards the legacy SSE transport's POSTs, where the go-sdk takes no
// batch ("failed to parse body", even for a valid one): a batch is refused
// whole with an error object per element (refuseBatch, batch.go).
func IDGuard(h http.Handler, maxBody int) http.Handler { return IDGuardWith(h, maxBody, refuseBatch) }

// FrameHook sees a POST body that passed the id check before h does: it
// returns the body to pass on (possibly rewritten), or answered true when
// it has answered w itself (tasks.go, tasksFrame).
type FrameHook func(w http.ResponseWriter, r *http.Request, body []byte) (out []byte, answered bool)

// readBody reads r's body, at most maxBody+1 bytes, as io.ReadAll does but
// into one slice of the declared Content-Length when there is one
// (io.ReadAll starts at 512 bytes and grows by copying).
func readBody(r *http.Request, maxBody int) ([]byte, error) {
	lr := io.LimitReader(r.Body, int64(maxBody)+1)
	n := r.ContentLength
	if n <= 0 || n > int64(maxBody) {
		return io.ReadAll(lr)
	}
	b := make([]byte, 0, n+1) // +1: room for the read that sees the end
	for {
		m, err := lr.Read(b[len(b):cap(b)])
		b = b[:len(b)+m]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}

// IDGuardWith is IDGuard with a FrameHook (nil: none), so that the body
// is read once.
func IDGuardWith(h http.Handler, maxBody int, hook FrameHook) http.Handler {
	ids := &inFlightIDs{} // batch.go
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			h.ServeHTTP(w, r)
			return
		}
		body, err := readBody(r, maxBody)
		if err != nil {
			bodyFailed(w, err)
			return
		}
		_ = r.Body.Close()
		if len(body) > maxBody {
			writeRPCError(w, http.StatusRequestEntityTooLarge, []byte("null"), jsonrpc.CodeInvalidRequest, fmt.Sprintf("request body larger than %d bytes (server.max_message_bytes)", maxBody))
			return
		}
		if hook != nil && isBatch(body) {
			if _, answered := hook(w, r, body); answered {
				return // refuseBatch
			}
		}
		pass, answers := checkFrame(body) // batch.go
		if sid := r.Header.Get("Mcp-Session-Id"); sid != "" && pass != nil {
			var dups [][]byte
			var release func()
			pass, dups, release = ids.claim(sid, pass)
			defer release()
			answers = append(answers, dups...)
		}
		if pass == nil && len(answers) > 0 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			if len(answers) == 1 && bytes.TrimSpace(body)[0] != '[' {
				_, _ = w.Write(answers[0])
			} else {
				_, _ = w.Write(joinArray(answers, nil))
			}
			return
		}
		if len(answers) > 0 {
			// A batch with malformed elements: the rest goes on, and
			// the answer holds an error object for each refused one.
			body = pass
			ba := &batchAnswers{ResponseWriter: w, pre: answers}
			defer ba.finish()
			w = ba
		}
		if hook != nil {
			var answered bool
			if body, answered = hook(w, r, body); answered {
				return
			}
		}
		r.Body = newFrameBody(body) // http_stateless.go reads the bytes without a copy
		r.ContentLength = int64(len(body))
		h.ServeHTTP(w, r)
	})
}

// RequireSession wraps the stateful Streamable HTTP handler with the
// session check above (item 2 of this file's comment).
func RequireSession(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil || r.Header.Get("Mcp-Session-Id") != "" {
			h.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			bodyFailed(w, err)
			return
		}
		_ = r.Body.Close()
		if !isInitialize(body) {
			writeRPCError(w, http.StatusBadRequest, []byte("null"), jsonrpc.CodeInvalidRequest,
				"Bad Request: missing Mcp-Session-Id header: send initialize first, then the session id it returned with every request (MCP spec, basic/transports, Session Management)")
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		h.ServeHTTP(w, r)
	})
}

// bodyFailed answers a request whose body could not be read (e.g. it did
// not arrive within server.read_timeout, front.go) and closes the
// connection, without reading more of it.
func bodyFailed(w http.ResponseWriter, err error) {
	w.Header().Set("Connection", "close")
	_ = http.NewResponseController(w).SetReadDeadline(time.Now())
	http.Error(w, "reading the request body: "+err.Error(), http.StatusBadRequest)
}

func writeRPCError(w http.ResponseWriter, status int, id []byte, code int64, msg string) {
	b, _ := json.Marshal(&jsonrpc.Error{Code: code, Message: msg})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"error":` + string(b) + `}`))
}

// lineReader reads newline-terminated lines (the newline kept) into one
// reused buffer; a returned line is valid until the next call. A line
// longer than max+2 bytes (a max-byte message and its "\r\n") is passed
// on in pieces without a newline but the last (stdio.go, messageOver
// and skipLong, refuse it).
type lineReader struct {
	r     io.ReadCloser
	max   int
	data  []byte
	start int
	err   error
}

func (l *lineReader) next() ([]byte, error) {
	for {
		if i := bytes.IndexByte(l.data[l.start:], '\n'); i >= 0 {
			line := l.data[l.start : l.start+i+1]
			l.start += i + 1
			return line, nil
		}
		if l.err != nil || len(l.data)-l.start >= l.max+2 { // room for a max-byte message and "\r\n"
			line := l.data[l.start:]
			l.start = len(l.data)
			return line, l.err
		}
		n := copy(l.data, l.data[l.start:]) // compact
		l.data, l.start = l.data[:n], 0
		if n == 0 && cap(l.data) > 1<<20 {
			l.data = nil // one huge line passed: do not keep its buffer
		}
		if cap(l.data)-len(l.data) < 16<<10 {
			grown := make([]byte, len(l.data), 2*cap(l.data)+64<<10)
			copy(grown, l.data)
			l.data = grown
		}
		m, err := l.r.Read(l.data[len(l.data):cap(l.data)])
		l.data = l.data[:len(l.data)+m]
		l.err = err
	}
}

func (l *lineReader) close() error { return l.r.Close() }

// frameBody is a POST body IDGuardWith has read: readable as the body,
// and its bytes available to the fast path without a copy.
type frameBody struct {
	bytes.Reader
	b []byte
}

func (*frameBody) Close() error { return nil }

func newFrameBody(b []byte) *frameBody {
	fb := &frameBody{b: b}
	fb.Reset(b)
	return fb
}

// FrameOf returns the bytes of r's body when the id guard read it whole
// and nothing read it since (the fast path takes them without a copy).
func FrameOf(r *http.Request) ([]byte, bool) {
	fb, ok := r.Body.(*frameBody)
	if !ok || fb.Len() != len(fb.b) {
		return nil, false
	}
	return fb.b, true
}
