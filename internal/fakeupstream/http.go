package fakeupstream

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// HTTP is a raw Streamable HTTP fake server: POST answers as JSON (or as
// an event stream with SSE set), sessions by Mcp-Session-Id, and the GET
// stream, lost sessions and odd bodies as configured.
type HTTP struct {
	Scenario *Scenario
	// GET is how the standalone GET stream behaves:
	//   ""       headers, then held open quietly
	//   "stall"  held open WITHOUT sending headers
	//   "flaky"  the first GET sends ping events and an empty data event
	//            without ids and closes after 300 ms; later GETs get 405
	//   "405"    405 Method Not Allowed
	GET string
	// SSE answers calls with text/event-stream instead of JSON.
	SSE bool
	// Lost is how a request for an unknown session is answered:
	//   "" or "404"  HTTP 404 (spec)
	//   "400"        HTTP 400 {"code":-32600,"message":"Bad Request: No valid session ID provided"}
	//   "sse-error"  HTTP 200, an event stream with that error
	//   "sse-bare"   HTTP 200, an event stream whose one event is
	//                {"error":"Session not found"} (not JSON-RPC: no
	//                jsonrpc, no id)
	Lost string
	// Answer, when set and returning ok, replaces the answer to a call
	// with a raw HTTP answer.
	Answer func(m *Msg) (status int, contentType, body string, ok bool)
	// BeforeAnswer, when set, returns raw messages (lines) sent on the
	// call's event stream before its answer (SSE only).
	BeforeAnswer func(m *Msg) []string

	Initializes atomic.Int64 // initialize requests served
	GETs        atomic.Int64 // GET requests received

	mu       sync.Mutex
	sessions map[string]*Session
	next     int
	answers  []string // raw ids of answers (responses) POSTed to us
}

// Forget drops every session, like a server restart.
func (h *HTTP) Forget() {
	h.mu.Lock()
	h.sessions = nil
	h.mu.Unlock()
}

// AnswerIDs are the raw ids of the answers clients POSTed to the fake's
// requests, in arrival order.
func (h *HTTP) AnswerIDs() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.answers...)
}

func (h *HTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		h.GETs.Add(1)
		h.get(w, r)
	case http.MethodPost:
		h.post(w, r)
	case http.MethodDelete:
		w.WriteHeader(http.StatusOK)
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}

func (h *HTTP) get(w http.ResponseWriter, r *http.Request) {
	switch h.GET {
	case "stall":
		<-r.Context().Done()
	case "405":
		w.WriteHeader(http.StatusMethodNotAllowed)
	case "flaky":
		if h.GETs.Load() > 1 {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		f, _ := w.(http.Flusher)
		for i := 0; i < 3; i++ {
			_, _ = io.WriteString(w, "event: ping\ndata: \n\n")
			_, _ = io.WriteString(w, "data:\n\n")
			if f != nil {
				f.Flush()
			}
			time.Sleep(100 * time.Millisecond)
		}
	default:
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		<-r.Context().Done()
	}
}

func (h *HTTP) session(id string) *Session {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sessions[id]
}

func (h *HTTP) post(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var m Msg
	if json.Unmarshal(body, &m) != nil {
		http.Error(w, "bad JSON", http.StatusBadRequest)
		return
	}
	var s *Session
	if m.Method == "initialize" {
		h.Initializes.Add(1)
		h.mu.Lock()
		h.next++
		sid := "s" + strconv.Itoa(h.next)
		s = &Session{Answers: make(chan Msg, 16), state: map[string]any{}}
		if h.sessions == nil {
			h.sessions = map[string]*Session{}
		}
		h.sessions[sid] = s
		h.mu.Unlock()
		w.Header().Set("Mcp-Session-Id", sid)
	} else if s = h.session(r.Header.Get("Mcp-Session-Id")); s == nil {
		h.lost(w, m.ID)
		return
	}
	if m.Method == "" { // an answer to one of our requests
		h.mu.Lock()
		h.answers = append(h.answers, string(m.ID))
		h.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if len(m.ID) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if h.Answer != nil {
		if status, ct, b, ok := h.Answer(&m); ok {
			w.Header().Set("Content-Type", ct)
			w.WriteHeader(status)
			_, _ = io.WriteString(w, b)
			return
		}
	}
	var out bytes.Buffer
	s.mu.Lock()
	s.out = &out
	s.mu.Unlock()
	Handle(h.Scenario, s, &m)
	s.mu.Lock()
	line := strings.TrimSpace(out.String())
	s.mu.Unlock()
	if h.SSE || m.Method == "tools/call" && h.BeforeAnswer != nil {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		if h.BeforeAnswer != nil {
			for _, l := range h.BeforeAnswer(&m) {
				fmt.Fprintf(w, "event: message\ndata: %s\n\n", l)
			}
			if f, ok := w.(http.Flusher); ok {
				f.Flush()
			}
			time.Sleep(200 * time.Millisecond) // let the client answer first
		}
		fmt.Fprintf(w, "id: %d\nevent: message\ndata: %s\n\n", time.Now().UnixNano(), line)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, line)
}

func (h *HTTP) lost(w http.ResponseWriter, id json.RawMessage) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	errBody := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32600,"message":"Bad Request: No valid session ID provided"}}`, id)
	switch h.Lost {
	case "400":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, errBody)
	case "sse-error":
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fmt.Fprintf(w, "event: message\ndata: %s\n\n", errBody)
	case "sse-bare":
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "event: message\ndata: {\"error\":\"Session not found\"}\n\n")
	default:
		http.Error(w, "session not found", http.StatusNotFound)
	}
}
