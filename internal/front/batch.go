package front

// Malformed messages and batch elements on the fronts (JSON-RPC 2.0
// sections 4, 5.1 and 6). Every message object that is not a request, a
// notification or a response gets its own error object (-32600, with its
// id when it has a usable one, else null), and in a batch (protocol
// versions before 2025-06-18) the other elements still run: the answer is
// one array with their answers and the error objects. A request whose id
// is already in flight on the session gets -32600 "duplicate in-flight
// request ID …", on stdio as on Streamable HTTP (the go-sdk's own wording
// there). The go-sdk alone does neither: its decoder takes an object with
// an id and no method, result or error for a response (which then answers
// no request of its own and is dropped), its Streamable HTTP handler
// refuses a batch whole when one element does not decode, and jsonrpc2
// drops a call whose id is in flight without an answer.
//
// Trust: clients are not trusted; these checks only refuse, with an error
// that names the problem and the element.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/jsonscan"
)

// invalidAnswer is the error object (-32600) for a message with id id
// (raw JSON; nil: null).
func invalidAnswer(id []byte, msg string) []byte {
	if id == nil {
		id = []byte("null")
	}
	b, _ := json.Marshal(&jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: msg})
	out := append([]byte(`{"jsonrpc":"2.0","id":`), id...)
	out = append(out, `,"error":`...)
	out = append(out, b...)
	return append(out, '}')
}

// duplicateAnswer is the answer to a request whose id is in flight: the
// go-sdk Streamable HTTP handler's words (streamable.go, "duplicate
// in-flight request ID").
func duplicateAnswer(id []byte, raw any) []byte {
	return invalidAnswer(id, fmt.Sprintf("duplicate in-flight request ID %v", raw))
}

// usableID is f's id as received when it is one the proxy gives back
// exactly (a string, or an integer within ±2^53), else nil.
func (f *frontFields) usableID() []byte {
	if !f.hasID || len(f.id) == 0 {
		return nil
	}
	switch c := f.id[0]; {
	case c == '"':
		if json.Valid(f.id) {
			return f.id
		}
	case c == '-' || c >= '0' && c <= '9':
		if n, err := strconv.ParseInt(string(f.id), 10, 64); err == nil && strconv.FormatInt(n, 10) == string(f.id) && n >= -MaxExactID && n <= MaxExactID {
			return f.id
		}
	}
	return nil
}

// checkMessage is the error answer for one message object whose members
// f holds, nil when it may go on. A message that does not scan is left to
// the decoder (a line that is not JSON is -32700, lineError).
func checkMessage(f *frontFields) []byte {
	if f.err != nil {
		return nil
	}
	if raw, why, ok := f.badID(); !ok {
		return idError(raw, why)
	}
	id := f.usableID()
	switch {
	case string(f.version) != `"2.0"`:
		return invalidAnswer(id, `invalid request: "jsonrpc" must be "2.0"`)
	case f.method == nil && !f.hasResult && !f.hasError:
		return invalidAnswer(id, `invalid request: no "method" (a request or notification) and no "result" or "error" (a response)`)
	case f.method == nil && !f.hasID:
		return invalidAnswer(nil, `invalid request: a response without "id"`)
	case f.method != nil && (len(f.method) < 2 || f.method[0] != '"'):
		return invalidAnswer(id, `invalid request: "method" must be a string`)
	}
	return nil
}

// checkFrame checks a message or a batch (the body of an HTTP POST, a
// stdio line). For one message it returns the error answer when it is
// malformed (pass nil) or pass = frame. For a batch it returns pass, the
// batch of the elements that go on (nil when none does), and an error
// answer for each element that does not: one that is not an object, a
// malformed message (checkMessage), a request whose id an earlier
// element of the batch has. A frame that is not JSON passes (the
// decoder answers it).
func checkFrame(frame []byte) (pass []byte, answers [][]byte) {
	frame = bytes.TrimSpace(frame)
	if len(frame) == 0 || frame[0] != '[' {
		if len(frame) == 0 || frame[0] != '{' {
			return frame, nil
		}
		f := scanFront(frame)
		if a := checkMessage(&f); a != nil {
			return nil, [][]byte{a}
		}
		return frame, nil
	}
	var elems [][]byte
	if jsonscan.Array(frame, func(e []byte) bool { elems = append(elems, e); return true }) != nil {
		return frame, nil // not JSON: the decoder answers
	}
	var keep [][]byte
	seen := map[string]bool{}
	for _, e := range elems {
		e = bytes.TrimSpace(e)
		if len(e) == 0 || e[0] != '{' {
			answers = append(answers, invalidAnswer(nil, "invalid request: a batch element must be a JSON-RPC message object, not "+truncateJSON(e)))
			continue
		}
		f := scanFront(e)
		if f.err != nil {
			answers = append(answers, invalidAnswer(nil, "invalid request: a batch element that does not parse: "+f.err.Error()))
			continue
		}
		if a := checkMessage(&f); a != nil {
			answers = append(answers, a)
			continue
		}
		if f.method != nil && f.hasID {
			if seen[string(f.id)] {
				answers = append(answers, invalidAnswer(f.id, fmt.Sprintf("invalid request: the batch holds request id %s twice", f.id)))
				continue
			}
			seen[string(f.id)] = true
		}
		keep = append(keep, e)
	}
	if len(answers) == 0 {
		return frame, nil
	}
	if len(keep) == 0 {
		return nil, answers
	}
	return append(append([]byte{'['}, bytes.Join(keep, []byte{','})...), ']'), answers
}

// truncateJSON is e for an error message, cut at 64 bytes.
func truncateJSON(e []byte) string {
	if len(e) > 64 {
		return string(e[:64]) + "…"
	}
	return string(e)
}

// batchAnswers is an http.ResponseWriter that adds error objects for a
// batch's refused elements to the answer the go-sdk writes for the rest
// (checkFrame): as events before the go-sdk's on an event stream; in the
// array when the answer is JSON; and as the whole answer (HTTP 200, a
// JSON array) when the go-sdk accepts the rest with 202 (notifications and
// responses only). Other statuses (the request refused whole) pass as
// they are.
type batchAnswers struct {
	http.ResponseWriter
	pre     [][]byte
	mode    int // 0 until WriteHeader; 1 pass on; 2 swallow the go-sdk's body; 3 JSON kept for finish
	jsonBuf bytes.Buffer
}

func (b *batchAnswers) Unwrap() http.ResponseWriter { return b.ResponseWriter }

func (b *batchAnswers) WriteHeader(code int) {
	if b.mode != 0 {
		return
	}
	h := b.ResponseWriter.Header()
	switch ct := h.Get("Content-Type"); {
	case code == http.StatusOK && IsEventStream(ct):
		b.mode = 1
		b.ResponseWriter.WriteHeader(code)
		for _, a := range b.pre {
			_, _ = b.ResponseWriter.Write(append(append([]byte("event: message\ndata: "), a...), '\n', '\n'))
		}
		if fl, ok := b.ResponseWriter.(http.Flusher); ok {
			fl.Flush()
		}
	case code == http.StatusAccepted:
		b.mode = 2
		h.Set("Content-Type", "application/json")
		h.Del("Content-Length")
		b.ResponseWriter.WriteHeader(http.StatusOK)
		_, _ = b.ResponseWriter.Write(joinArray(b.pre, nil))
	case code == http.StatusOK && bytes.HasPrefix([]byte(ct), []byte("application/json")):
		b.mode = 3
		h.Del("Content-Length")
		b.ResponseWriter.WriteHeader(code)
	default:
		b.mode = 1
		b.ResponseWriter.WriteHeader(code)
	}
}

func (b *batchAnswers) Write(p []byte) (int, error) {
	if b.mode == 0 {
		b.WriteHeader(http.StatusOK)
	}
	switch b.mode {
	case 2:
		return len(p), nil
	case 3:
		return b.jsonBuf.Write(p)
	}
	return b.ResponseWriter.Write(p)
}

func (b *batchAnswers) Flush() {
	if b.mode == 1 {
		if fl, ok := b.ResponseWriter.(http.Flusher); ok {
			fl.Flush()
		}
	}
}

// finish writes what is left once the go-sdk returned: the merged JSON
// answer, or the error objects alone when it wrote nothing.
func (b *batchAnswers) finish() {
	switch b.mode {
	case 0:
		b.ResponseWriter.Header().Set("Content-Type", "application/json")
		b.ResponseWriter.WriteHeader(http.StatusOK)
		_, _ = b.ResponseWriter.Write(joinArray(b.pre, nil))
	case 3:
		body := bytes.TrimSpace(b.jsonBuf.Bytes())
		var rest [][]byte
		switch {
		case len(body) > 0 && body[0] == '[':
			_ = jsonscan.Array(body, func(e []byte) bool { rest = append(rest, e); return true })
		case len(body) > 0:
			rest = [][]byte{body}
		}
		_, _ = b.ResponseWriter.Write(joinArray(b.pre, rest))
	}
}

// joinArray is one JSON array of the objects of a and then b.
func joinArray(a, b [][]byte) []byte {
	all := append(append([][]byte(nil), a...), b...)
	return append(append([]byte{'['}, bytes.Join(all, []byte{','})...), ']')
}

// isBatch reports whether a POST body is a JSON array.
func isBatch(body []byte) bool {
	body = bytes.TrimSpace(body)
	return len(body) > 0 && body[0] == '['
}

// refuseBatch is the FrameHook of the legacy SSE transport's POSTs: a
// batch is answered HTTP 400 with an error object for each element (its
// own malformation, else that this transport takes no batches), instead
// of the go-sdk's plain-text "failed to parse body". JSON-RPC batches are
// of protocol 2025-03-26; the HTTP+SSE transport is of 2024-11-05.
func refuseBatch(w http.ResponseWriter, _ *http.Request, body []byte) ([]byte, bool) {
	if !isBatch(body) {
		return body, false
	}
	var answers [][]byte
	err := jsonscan.Array(bytes.TrimSpace(body), func(e []byte) bool {
		e = bytes.TrimSpace(e)
		if len(e) == 0 || e[0] != '{' {
			answers = append(answers, invalidAnswer(nil, "invalid request: a batch element must be a JSON-RPC message object, not "+truncateJSON(e)))
			return true
		}
		f := scanFront(e)
		if a := checkMessage(&f); a != nil {
			answers = append(answers, a)
			return true
		}
		if f.method != nil && f.hasID {
			answers = append(answers, invalidAnswer(f.usableID(), "JSON-RPC batches are not accepted on the HTTP+SSE transport (protocol 2024-11-05): POST each message on its own, or use Streamable HTTP"))
		}
		return true
	})
	if err != nil || len(answers) == 0 {
		answers = append(answers, invalidAnswer(nil, "JSON-RPC batches are not accepted on the HTTP+SSE transport (protocol 2024-11-05): POST each message on its own, or use Streamable HTTP"))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write(joinArray(answers, nil))
	return nil, true
}

// inFlightIDs are the request ids of each Streamable HTTP session whose
// POST is still being answered, so that a request reusing one gets
// -32600 "duplicate in-flight request ID" whichever path answers it (the
// go-sdk checks only the requests it serves itself, not those of the
// fast path, http_stateless.go). An id is released when its POST's
// answer is written.
type inFlightIDs struct {
	mu sync.Mutex
	m  map[string]map[string]bool // session id -> raw request id
}

// claim takes the ids of frame's requests for session sid. It returns the
// frame to pass on without the requests whose id is in flight (nil when
// none is left), their error objects, and the release of the ids taken.
func (g *inFlightIDs) claim(sid string, frame []byte) (rest []byte, dups [][]byte, release func()) {
	one := !isBatch(frame)
	var elems [][]byte
	if one {
		elems = [][]byte{frame}
	} else if jsonscan.Array(bytes.TrimSpace(frame), func(e []byte) bool { elems = append(elems, e); return true }) != nil {
		return frame, nil, func() {}
	}
	var keep [][]byte
	var taken []string
	g.mu.Lock()
	for _, e := range elems {
		f := scanFront(e)
		id := f.usableID()
		if f.method == nil || id == nil {
			keep = append(keep, e)
			continue
		}
		if g.m[sid][string(id)] {
			dups = append(dups, duplicateAnswer(id, idValue(id)))
			continue
		}
		if g.m == nil {
			g.m = map[string]map[string]bool{}
		}
		if g.m[sid] == nil {
			g.m[sid] = map[string]bool{}
		}
		g.m[sid][string(id)] = true
		taken = append(taken, string(id))
		keep = append(keep, e)
	}
	g.mu.Unlock()
	release = func() {
		if len(taken) == 0 {
			return
		}
		g.mu.Lock()
		defer g.mu.Unlock()
		for _, id := range taken {
			delete(g.m[sid], id)
		}
		if len(g.m[sid]) == 0 {
			delete(g.m, sid)
		}
	}
	switch {
	case len(dups) == 0:
		return frame, nil, release
	case len(keep) == 0:
		return nil, dups, release
	case one:
		return keep[0], dups, release
	}
	return joinArray(keep, nil), dups, release
}

// idValue is a usable id (usableID) as the go-sdk's jsonrpc.ID.Raw gives it:
// the string, or the integer.
func idValue(id []byte) any {
	if id[0] == '"' {
		var s string
		_ = json.Unmarshal(id, &s)
		return s
	}
	n, _ := strconv.ParseInt(string(id), 10, 64)
	return n
}

// IsEventStream reports whether a Content-Type is text/event-stream; the
// bare form, the usual one, is told without parsing.
func IsEventStream(ct string) bool {
	if ct == "text/event-stream" {
		return true
	}
	mt, _, _ := mime.ParseMediaType(ct)
	return mt == "text/event-stream"
}
