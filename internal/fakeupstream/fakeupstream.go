// Package fakeupstream is a deliberately broken MCP server for tests: it
// speaks raw JSON-RPC lines over stdio, or raw HTTP, so that it can
// produce the faults a real SDK refuses to produce (log lines on stdout,
// responses without "jsonrpc", odd ids, schemas strict clients refuse,
// oversized results, a GET stream that stalls or flaps, lost sessions).
// The proxy's tests run it as an upstream (each kind of fault is
// one scenario). It is test infrastructure only; nothing in the proxy
// imports it.
package fakeupstream

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
)

// Msg is one decoded JSON-RPC message as the fake sees it.
type Msg struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

// Scenario is one fake server's behaviour. Every hook is optional.
type Scenario struct {
	// Tools is the tools/list "tools" array (raw JSON); default one tool
	// "echo".
	Tools func() string
	// Call answers tools/call for a tool name with a raw result; nil means
	// the default echo result.
	Call func(s *Session, name string, args json.RawMessage) string
	// OnLine may write anything (log lines) before a request is answered.
	OnLine func(s *Session, m *Msg)
	// Raw, when it returns true, has answered m itself (with s.Line).
	Raw func(s *Session, m *Msg) bool
	// BeforeInit runs once before the first message is read.
	BeforeInit func(s *Session)
}

// Session is one connection of the fake server.
type Session struct {
	mu  sync.Mutex
	out io.Writer
	// Responses received from the proxy (answers to requests the fake sent),
	// by raw id text.
	Answers chan Msg
	state   map[string]any
}

// Line writes one line (a newline is added).
func (s *Session) Line(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, _ = io.WriteString(s.out, text+"\n")
}

// Set and Get keep per-session scenario state.
func (s *Session) Set(k string, v any) { s.mu.Lock(); s.state[k] = v; s.mu.Unlock() }
func (s *Session) Get(k string) any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state[k]
}

// Result writes a response with a raw id and a raw result.
func (s *Session) Result(id json.RawMessage, result string) {
	s.Line(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, id, result))
}

// Error writes an error response.
func (s *Session) Error(id json.RawMessage, code int, msg string) {
	b, _ := json.Marshal(msg)
	s.Line(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}`, id, code, b))
}

// EchoResult is the default tools/call result.
func EchoResult(name string) string {
	b, _ := json.Marshal("called " + name)
	return `{"content":[{"type":"text","text":` + string(b) + `}]}`
}

// TextResult is a tools/call result with one text block.
func TextResult(text string) string {
	b, _ := json.Marshal(text)
	return `{"content":[{"type":"text","text":` + string(b) + `}]}`
}

// Serve runs sc over in/out until in ends. Lines that do not parse are
// ignored.
func Serve(sc *Scenario, in io.Reader, out io.Writer) {
	s := &Session{out: out, Answers: make(chan Msg, 16), state: map[string]any{}}
	if sc.BeforeInit != nil {
		sc.BeforeInit(s)
	}
	r := bufio.NewReaderSize(in, 1<<20)
	for {
		line, err := r.ReadString('\n')
		if strings.TrimSpace(line) != "" {
			var m Msg
			if json.Unmarshal([]byte(line), &m) == nil {
				Handle(sc, s, &m)
			}
		}
		if err != nil {
			return
		}
	}
}

// compact removes the blanks and newlines of well-formed JSON (one frame
// per line); other text is returned unchanged.
func compact(s string) string {
	var b bytes.Buffer
	if json.Compact(&b, []byte(s)) != nil {
		return s
	}
	return b.String()
}

// Handle answers one message (shared by the stdio and HTTP fakes).
func Handle(sc *Scenario, s *Session, m *Msg) {
	if sc.OnLine != nil {
		sc.OnLine(s, m)
	}
	if sc.Raw != nil && sc.Raw(s, m) {
		return
	}
	if m.Method == "" { // an answer to a request of ours
		select {
		case s.Answers <- *m:
		default:
		}
		return
	}
	if len(m.ID) == 0 { // notification
		return
	}
	switch m.Method {
	case "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(m.Params, &p)
		if p.ProtocolVersion == "" {
			p.ProtocolVersion = "2025-06-18"
		}
		s.Result(m.ID, fmt.Sprintf(`{"protocolVersion":%q,"capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"fakeupstream","version":"1"}}`, p.ProtocolVersion))
	case "tools/list":
		tools := `[{"name":"echo","description":"Echo.","inputSchema":{"type":"object"}}]`
		if sc.Tools != nil {
			tools = compact(sc.Tools())
		}
		s.Result(m.ID, `{"tools":`+tools+`}`)
	case "tools/call":
		var p struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		_ = json.Unmarshal(m.Params, &p)
		res := EchoResult(p.Name)
		if sc.Call != nil {
			res = sc.Call(s, p.Name, p.Arguments)
		}
		if res != "" {
			s.Result(m.ID, res)
		}
	case "ping":
		s.Result(m.ID, `{}`)
	default:
		s.Error(m.ID, -32601, "method not found: "+m.Method)
	}
}
