package front

// No answer for a cancelled request on the stateful Streamable HTTP front
// (protocols before 2026-07-28).
//
// MCP basic/utilities/cancellation: a receiver of notifications/cancelled
// SHOULD "not send a response for the cancelled request". go-sdk v1.8.0
// answers it anyway: its jsonrpc2 layer writes a response for every call
// whose handler returned (processResult), so the proxy's handler error
// for the cancelled upstream call ("context canceled") goes out as -32603
// on the call's POST stream, as on stdio (cancel_stdio.go). The go-sdk
// routes that response inside its session handler, so the proxy cannot
// withhold it at the jsonrpc2 layer without ending the POST stream, which
// the go-sdk closes only once every call of the POST is answered.
// CancelGate therefore works on the HTTP exchange: it notes the calls each
// POST of a session carries while the POST is open, marks the ones a
// later POST of the same session cancels (notifications/cancelled naming
// an id in flight), and drops the SSE event that answers a marked call.
// The POST then ends with no event for it. A cancellation that arrives
// after the answer was written finds nothing to drop.
//
// The legacy SSE front (2024-11-05 transport), whose answers go on the
// session's GET stream, gets the same from SSECancelGate (below). Not
// needed: a 2026-07-28 request, which a client cancels by closing its POST
// (nothing is written after that).
//
// Trust: the client is not trusted; a cancellation reaches only calls of
// the same session (Mcp-Session-Id) sent with a token of the same user id
// (the go-sdk's own owner check, mcp/streamable.go lookupSession), so a
// client can only suppress answers to its own requests.

import (
	"bytes"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/jsonscan"
)

// cancelKey is one call in flight: its session, the user id of the
// request's token (as the go-sdk compares it with the session's owner) and
// the call's id.
type cancelKey struct {
	sid, user string
	id        jsonrpc.ID
}

// cancelPost is one open POST's calls that the client cancelled.
type cancelPost struct {
	any       atomic.Bool // some call of the POST was cancelled
	mu        sync.Mutex
	cancelled map[jsonrpc.ID]bool
}

func (c *cancelPost) mark(id jsonrpc.ID) {
	c.mu.Lock()
	if c.cancelled == nil {
		c.cancelled = map[jsonrpc.ID]bool{}
	}
	c.cancelled[id] = true
	c.mu.Unlock()
	c.any.Store(true)
}

func (c *cancelPost) isCancelled(id jsonrpc.ID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cancelled[id]
}

// CancelGate wraps the stateful Streamable HTTP handler h (see above).
func CancelGate(h http.Handler) http.Handler {
	var mu sync.Mutex
	inflight := map[cancelKey]*cancelPost{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fb, ok := r.Body.(*frameBody)
		sid := r.Header.Get("Mcp-Session-Id")
		if r.Method != http.MethodPost || !ok || sid == "" {
			h.ServeHTTP(w, r)
			return
		}
		user := ""
		if ti := auth.TokenInfoFromContext(r.Context()); ti != nil {
			user = ti.UserID
		}
		var calls, cancels []jsonrpc.ID
		eachMessage(fb.b, func(id, method, params []byte) {
			switch {
			case id != nil && method != nil:
				if jid, ok := rawID(id); ok {
					calls = append(calls, jid)
				}
			case id == nil && string(method) == `"notifications/cancelled"`:
				if jid, ok := cancelledID(params); ok {
					cancels = append(cancels, jid)
				}
			}
		})
		if len(cancels) > 0 {
			mu.Lock()
			for _, id := range cancels {
				if post := inflight[cancelKey{sid, user, id}]; post != nil {
					post.mark(id)
				}
			}
			mu.Unlock()
		}
		if len(calls) == 0 {
			h.ServeHTTP(w, r)
			return
		}
		post := &cancelPost{}
		var mine []cancelKey // a repeated id in flight is the go-sdk's to refuse
		mu.Lock()
		for _, id := range calls {
			if k := (cancelKey{sid, user, id}); inflight[k] == nil {
				inflight[k] = post
				mine = append(mine, k)
			}
		}
		mu.Unlock()
		defer func() {
			mu.Lock()
			for _, k := range mine {
				delete(inflight, k)
			}
			mu.Unlock()
		}()
		h.ServeHTTP(&cancelWriter{ResponseWriter: w, post: post}, r)
	})
}

// eachMessage calls fn with the raw id, method and params of each message
// of a POST body (one object, or a batch before 2025-06-18); a member that
// is absent is nil. A body that is not JSON calls fn for nothing.
func eachMessage(body []byte, fn func(id, method, params []byte)) {
	one := func(m []byte) {
		var id, method, params []byte
		if _, err := jsonscan.Object(m, func(k, v []byte) bool {
			switch string(k) {
			case "id":
				id = v
			case "method":
				method = v
			case "params":
				params = v
			}
			return true
		}); err == nil {
			fn(id, method, params)
		}
	}
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		_ = jsonscan.Array(body, func(e []byte) bool { one(e); return true })
		return
	}
	one(body)
}

// cancelWriter drops the SSE event answering a call of its POST that the
// client cancelled. The go-sdk writes each event with one Write
// (mcp/event.go writeEvent: "event: message\n", no id line without an
// event store, "data: " and the message, "\n\n").
type cancelWriter struct {
	http.ResponseWriter
	post *cancelPost
}

func (w *cancelWriter) Write(b []byte) (int, error) {
	if w.post.any.Load() && strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
		if id, ok := sseResponseID(b); ok && w.post.isCancelled(id) {
			return len(b), nil
		}
	}
	return w.ResponseWriter.Write(b)
}

// sseResponseID is the id of the JSON-RPC response that the SSE event b
// carries; ok is false for anything else (a request, a notification, a
// comment, several events).
func sseResponseID(b []byte) (id jsonrpc.ID, ok bool) {
	var data []byte
	for _, line := range bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n")) {
		if d, found := bytes.CutPrefix(line, []byte("data: ")); found {
			if data != nil {
				return id, false
			}
			data = d
		} else if len(line) == 0 {
			return id, false // more than one event
		}
	}
	if data == nil {
		return id, false
	}
	var raw []byte
	response := false
	if _, err := jsonscan.Object(data, func(k, v []byte) bool {
		switch string(k) {
		case "id":
			raw = v
		case "result", "error":
			response = true
		case "method":
			response, raw = false, nil
			return false
		}
		return true
	}); err != nil || !response || raw == nil {
		return id, false
	}
	return rawID(raw)
}

// Flush and Unwrap keep what the wrapped writer offers (event streams
// flush; http.ResponseController unwraps for the rest).
func (w *cancelWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *cancelWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// sseCancels is one legacy SSE session's calls in flight (from their POST
// until their answer is written on the session's GET stream) and those of
// them the client cancelled.
type sseCancels struct {
	user      string // the user id of the token that opened the stream
	inflight  map[jsonrpc.ID]bool
	cancelled map[jsonrpc.ID]bool
}

// SSECancelGate wraps the legacy SSE handler h (2024-11-05 transport) as
// CancelGate wraps the Streamable HTTP one: there a call's answer goes on
// the session's GET stream, not on the call's POST, so the GET's writer
// learns its session id from the go-sdk's first event ("endpoint", data
// "...?sessionid=ID") and drops the answer to a call a later POST of the
// session (same token user) cancelled while it was in flight.
func SSECancelGate(h http.Handler) http.Handler {
	var mu sync.Mutex
	sessions := map[string]*sseCancels{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user := ""
		if ti := auth.TokenInfoFromContext(r.Context()); ti != nil {
			user = ti.UserID
		}
		sid := r.URL.Query().Get("sessionid")
		switch {
		case r.Method == http.MethodGet && sid == "":
			sw := &sseStreamWriter{ResponseWriter: w, mu: &mu, sessions: sessions, user: user}
			defer func() {
				if sw.sid != "" {
					mu.Lock()
					delete(sessions, sw.sid)
					mu.Unlock()
				}
			}()
			h.ServeHTTP(sw, r)
			return
		case r.Method == http.MethodPost && sid != "":
			fb, ok := r.Body.(*frameBody)
			if !ok {
				break
			}
			mu.Lock()
			if s := sessions[sid]; s != nil && s.user == user {
				eachMessage(fb.b, func(id, method, params []byte) {
					switch {
					case id != nil && method != nil:
						if jid, ok := rawID(id); ok {
							s.inflight[jid] = true
						}
					case id == nil && string(method) == `"notifications/cancelled"`:
						if jid, ok := cancelledID(params); ok && s.inflight[jid] {
							s.cancelled[jid] = true
						}
					}
				})
			}
			mu.Unlock()
		}
		h.ServeHTTP(w, r)
	})
}

// sseStreamWriter is the writer of a legacy SSE session's GET stream (see
// SSECancelGate). The go-sdk writes each event with one Write.
type sseStreamWriter struct {
	http.ResponseWriter
	mu       *sync.Mutex
	sessions map[string]*sseCancels
	user     string
	sid      string // "" until the endpoint event
}

func (w *sseStreamWriter) Write(b []byte) (int, error) {
	if w.sid == "" {
		if sid := endpointSession(b); sid != "" {
			w.sid = sid
			w.mu.Lock()
			w.sessions[sid] = &sseCancels{user: w.user, inflight: map[jsonrpc.ID]bool{}, cancelled: map[jsonrpc.ID]bool{}}
			w.mu.Unlock()
			// The go-sdk advertises the absolute path it was reached at
			// ("/sse?sessionid=ID"), which misses the prefix of a reverse
			// proxy that serves the front under one (/tools/sse → /sse). A
			// reference relative to the stream's own URL reaches this
			// handler whatever the prefix: clients resolve it against the
			// URL they opened (the SSE transport of MCP 2024-11-05).
			if _, err := w.ResponseWriter.Write([]byte("event: endpoint\ndata: ?sessionid=" + url.QueryEscape(sid) + "\n\n")); err != nil {
				return 0, err
			}
			return len(b), nil
		}
		return w.ResponseWriter.Write(b)
	}
	if id, ok := sseResponseID(b); ok {
		w.mu.Lock()
		s := w.sessions[w.sid]
		drop := s != nil && s.cancelled[id]
		if s != nil {
			delete(s.inflight, id)
			delete(s.cancelled, id)
		}
		w.mu.Unlock()
		if drop {
			return len(b), nil
		}
	}
	return w.ResponseWriter.Write(b)
}

// endpointSession is the session id that the go-sdk's "endpoint" event b
// names ("event: endpoint\ndata: /sse?sessionid=ID\n\n"), or "".
func endpointSession(b []byte) string {
	if !bytes.HasPrefix(b, []byte("event: endpoint\n")) {
		return ""
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			if u, err := url.Parse(string(d)); err == nil {
				return u.Query().Get("sessionid")
			}
		}
	}
	return ""
}

func (w *sseStreamWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *sseStreamWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
