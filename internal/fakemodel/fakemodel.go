// Package fakemodel is a scripted model behind the HTTP APIs that agent
// clients call: the Anthropic Messages API (Claude Code), the OpenAI
// Responses API (Codex) and the Gemini API (Gemini CLI). A test points a
// real client's API base URL at it on loopback, so the client runs with no
// key and no network, and the test reads what the client sent: which tools
// it offered the model, with which descriptions, whether they were
// deferred, and the tool results the client sent back.
//
// The model's turns come from a Script, which sees each request decoded to
// one common form (the tools offered, the tool results so far). It is test
// infrastructure only; nothing in the proxy imports it.
package fakemodel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Tool is one tool a client offered the model.
type Tool struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Deferred is set when the client sent the tool with
	// "defer_loading": true (Anthropic tool search): the model sees only
	// its name until a search loads it, and cannot call it before.
	Deferred bool `json:"deferred,omitempty"`
	// Namespace is the tool's namespace, when the client grouped its
	// tools in one (Codex sends each MCP server's tools as a Responses
	// API "namespace" tool); a call of the tool names it too.
	Namespace string `json:"namespace,omitempty"`
}

// Result is one tool result a client sent back to the model.
type Result struct {
	Tool string `json:"tool,omitempty"` // the tool the result answers, when the API says
	Text string `json:"text"`           // the result as text (JSON for structured results)
}

// Turn is the model's answer: a tool call (Tool and Args) or a final text.
type Turn struct {
	Tool string          `json:"tool,omitempty"`
	Args json.RawMessage `json:"args,omitempty"`
	Text string          `json:"text,omitempty"`
}

// Request is one request a client sent, as received and as decoded.
type Request struct {
	API     string          `json:"api"` // "anthropic", "openai-responses", "openai-chat", "gemini"
	Path    string          `json:"path"`
	Body    json.RawMessage `json:"body"`
	Model   string          `json:"model,omitempty"`
	Tools   []Tool          `json:"tools"`
	Results []Result        `json:"results"`
	// Prompt is the text of the first user message.
	Prompt string `json:"prompt,omitempty"`
	// JSONSchema is the schema of a structured-output request (a client's
	// side request, such as Gemini CLI's next-speaker check), nil otherwise.
	JSONSchema json.RawMessage `json:"-"`
	Reply      Turn            `json:"reply"`
	Time       time.Time       `json:"time"` // when it arrived
}

// Tool returns the tool offered under name, or nil.
func (r *Request) Tool(name string) *Tool {
	for i := range r.Tools {
		if r.Tools[i].Name == name {
			return &r.Tools[i]
		}
	}
	return nil
}

// Script decides the model's turn for a request.
type Script func(r *Request) Turn

// Server is the fake model API. Its zero value answers every request with
// a short text; set Script to play a model.
type Server struct {
	Script Script

	mu   sync.Mutex
	reqs []*Request
	seq  int
}

// Requests returns every request received so far, in order.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.reqs...)
}

// next returns a fresh id suffix.
func (s *Server) next() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	return s.seq
}

// ServeHTTP answers POST .../messages (Anthropic), .../responses and
// .../chat/completions (OpenAI), and .../models/M:generateContent,
// :streamGenerateContent and :countTokens (Gemini). Anything else gets
// 404 with a JSON error, so that a client's unexpected call shows up in
// its log rather than hanging.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	path := r.URL.Path
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/messages/count_tokens"):
		writeJSON(w, map[string]any{"input_tokens": 100})
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/messages"):
		s.anthropic(w, path, body)
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/responses"):
		s.responses(w, path, body)
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/chat/completions"):
		s.chat(w, path, body)
	case r.Method == http.MethodPost && strings.HasSuffix(path, ":countTokens"):
		writeJSON(w, map[string]any{"totalTokens": 100})
	case r.Method == http.MethodPost && (strings.HasSuffix(path, ":generateContent") || strings.HasSuffix(path, ":streamGenerateContent")):
		s.gemini(w, r, path, body)
	case r.Method == http.MethodGet && strings.HasSuffix(path, "/models"):
		writeJSON(w, map[string]any{"object": "list", "data": []any{}, "models": []any{}})
	default:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"error":{"type":"not_found_error","message":"fakemodel: no such endpoint: %s %s"}}`, r.Method, path)
	}
}

// record decodes nothing itself: it runs the script on req and keeps it.
func (s *Server) record(req *Request) Turn {
	req.Time = time.Now()
	turn := Turn{Text: "OK"}
	if req.JSONSchema != nil {
		turn = Turn{Text: string(SampleJSON(req.JSONSchema))}
	} else if s.Script != nil {
		turn = s.Script(req)
	}
	req.Reply = turn
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
	return turn
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// sse writes one server-sent event (event may be empty) and flushes.
func sse(w http.ResponseWriter, event string, data any) {
	b, _ := json.Marshal(data)
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	fmt.Fprintf(w, "data: %s\n\n", b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

func startSSE(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
}

// contentText flattens a tool result's content as the APIs send it: a
// string, an array of text blocks, or any other JSON (kept as JSON text).
func contentText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) == nil {
		var b strings.Builder
		for _, bl := range blocks {
			b.WriteString(bl.Text)
		}
		return b.String()
	}
	return string(raw)
}

// SampleJSON returns a value that satisfies a simple JSON schema (object,
// string, number, boolean, array, enum): what a client's side request for
// structured output gets. An enum offering "user" answers "user" (Gemini
// CLI's next-speaker check then hands the turn back to the user).
func SampleJSON(schema json.RawMessage) json.RawMessage {
	var sc map[string]any
	if json.Unmarshal(schema, &sc) != nil {
		return json.RawMessage(`{}`)
	}
	b, _ := json.Marshal(sample(sc))
	return b
}

func sample(sc map[string]any) any {
	if en, ok := sc["enum"].([]any); ok && len(en) > 0 {
		for _, v := range en {
			if v == "user" {
				return v
			}
		}
		return en[0]
	}
	t, _ := sc["type"].(string)
	switch strings.ToLower(t) {
	case "string":
		return "the task is done"
	case "number", "integer":
		if m, ok := sc["minimum"].(float64); ok {
			return m
		}
		return 0
	case "boolean":
		return false
	case "array":
		return []any{}
	}
	out := map[string]any{}
	props, _ := sc["properties"].(map[string]any)
	for k, v := range props {
		if m, ok := v.(map[string]any); ok {
			out[k] = sample(m)
		}
	}
	return out
}
