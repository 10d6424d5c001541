package front

// -32601 for an unknown method on the session (2025-11-25 and older)
// Streamable HTTP front.
//
// go-sdk v1.8.0's Streamable HTTP handler checks each request's method
// before it reaches the session and, before protocol 2026-07-28, answers
// an unknown one with HTTP 400 and a plain-text body ("JSON RPC not
// handled: \"foo/bar\" unsupported"; mcp/streamable.go servePOST). A
// client waiting for that request's id then gets a transport error
// instead of the JSON-RPC error stdio and 2026-07-28 clients get
// (JSON-RPC 2.0 §5.1: -32601 Method not found). NotFound rewrites
// exactly that answer (and its "invalid request: …" answer, -32600), for a
// POST of one request, into the JSON-RPC error with the request's id, HTTP 200 (a JSON answer to a request the server
// accepted; MCP basic/transports "Sending Messages to the Server"). Any
// other answer passes unchanged.
//
// Trust: the client is not trusted; the id written back is the one its
// request carried, re-encoded from the decoded value.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/jsonscan"
)

// sdkNotHandled starts the go-sdk's plain-text answer to an unknown
// method (jsonrpc2.ErrNotHandled).
const sdkNotHandled = "JSON RPC not handled: "

// sdkInvalidRequest starts its plain-text answer to a request its method
// table refuses (jsonrpc2.ErrInvalidRequest: params missing, an id on a
// notification method).
const sdkInvalidRequest = "invalid request: "

// NotFound wraps the session Streamable HTTP handler h (see above).
func NotFound(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fb, ok := r.Body.(*frameBody)
		if r.Method != http.MethodPost || !ok {
			h.ServeHTTP(w, r)
			return
		}
		id, method, ok := singleCall(fb.b)
		if !ok {
			h.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(&notFoundWriter{ResponseWriter: w, id: id, method: method}, r)
	})
}

// singleCall is the id (as JSON) and method of body when it is one
// JSON-RPC request object with both.
func singleCall(body []byte) (id []byte, method string, ok bool) {
	var m []byte
	if _, err := jsonscan.Object(body, func(k, v []byte) bool {
		switch string(k) {
		case "id":
			id = v
		case "method":
			m = v
		}
		return true
	}); err != nil || id == nil || m == nil {
		return nil, "", false
	}
	var idv any
	if json.Unmarshal(id, &idv) != nil || json.Unmarshal(m, &method) != nil {
		return nil, "", false
	}
	jid, err := jsonrpc.MakeID(idv)
	if err != nil || !jid.IsValid() {
		return nil, "", false
	}
	id, err = json.Marshal(idv)
	return id, method, err == nil
}

// notFoundWriter holds back a 400 text/plain answer until its first
// write shows whether it is the go-sdk's unknown-method answer.
type notFoundWriter struct {
	http.ResponseWriter
	id      []byte
	method  string
	held    bool // a 400 text/plain status is held back
	decided bool
}

func (w *notFoundWriter) WriteHeader(code int) {
	if !w.decided && code == http.StatusBadRequest && strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		w.held = true
		return
	}
	w.decided = true
	w.ResponseWriter.WriteHeader(code)
}

func (w *notFoundWriter) Write(b []byte) (int, error) {
	if !w.held || w.decided {
		w.decided = true
		return w.ResponseWriter.Write(b)
	}
	w.decided = true
	var e []byte
	switch {
	case bytes.HasPrefix(b, []byte(sdkNotHandled)):
		e, _ = json.Marshal(&jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("method not found: %q", w.method)})
	case bytes.HasPrefix(b, []byte(sdkInvalidRequest)):
		// e.g. `invalid request: missing required "params"` (tools/call
		// without params): -32600 with the go-sdk's own words.
		e, _ = json.Marshal(&jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: string(bytes.TrimSpace(b))})
	default:
		w.ResponseWriter.WriteHeader(http.StatusBadRequest)
		return w.ResponseWriter.Write(b)
	}
	h := w.Header()
	h.Del("X-Content-Type-Options")
	h.Set("Content-Type", "application/json")
	w.ResponseWriter.WriteHeader(http.StatusOK)
	_, err := w.ResponseWriter.Write([]byte(`{"jsonrpc":"2.0","id":` + string(w.id) + `,"error":` + string(e) + "}\n"))
	return len(b), err
}

// Flush and Unwrap keep what the wrapped writer offers (event streams
// flush; http.ResponseController unwraps for the rest).
func (w *notFoundWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *notFoundWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
