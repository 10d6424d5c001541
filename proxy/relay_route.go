package proxy

// Which client gets a request that an upstream sends during a call
// (sampling/createMessage, elicitation/create, roots/list) on a SHARED
// upstream session (issue 11 item 2). The rule, in order:
//
//  1. Request identity. A Streamable HTTP upstream sends a request that a
//     call caused on that call's POST response stream (MCP spec,
//     basic/transports, "Sending Messages to the Server": such messages
//     SHOULD relate to the originating request; the go-sdk and the
//     TypeScript SDK servers do). The proxy's HTTP client (callerTagger)
//     knows which of its calls each stream answers and marks the requests
//     arriving on it with that call's token in params._meta; the relay
//     routes by the token to the client session that made the call.
//  2. Otherwise (stdio and SSE upstreams, or a request on the standalone
//     GET stream), the go-sdk gives no way to know which call caused it.
//     When the calls in flight on that upstream all belong to ONE client
//     session, it goes there; when calls of two or more client sessions are
//     in flight, the upstream gets an error and the proxy logs a warning:
//     fail closed, never a guess.
//
// Per-client upstream sessions (session = "per-client") are always exact:
// the session belongs to one client.
//
// Trust: upstream servers are not trusted. The token is 128 random bits,
// never sent upstream, and valid only while its call is in flight;
// callerTagger removes the token key from every request an upstream sends,
// so an upstream cannot name a client by writing the key itself.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// metaKeyCaller is the params._meta key that carries a call's token from
// callerTagger to the relay; it never reaches a client.
const metaKeyCaller = "io.github.mcp-toolsearch/caller"

type callerTokenKey struct{}

// withCallerToken returns ctx carrying a call's token for callerTagger.
func withCallerToken(ctx context.Context, token string) context.Context {
	return context.WithValue(ctx, callerTokenKey{}, token)
}

func newCallerToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// takeCallerToken removes metaKeyCaller from the _meta of a relayed
// request's params and returns its value ("" when absent or not a string).
func takeCallerToken(req mcp.Request) string {
	var params mcp.Params
	switch r := req.(type) {
	case *mcp.CreateMessageWithToolsRequest:
		if r.Params != nil {
			params = r.Params
		}
	case *mcp.ElicitRequest:
		if r.Params != nil {
			params = r.Params
		}
	case *mcp.ListRootsRequest:
		if r.Params != nil {
			params = r.Params
		}
	}
	if params == nil {
		return ""
	}
	m := params.GetMeta()
	v, ok := m[metaKeyCaller]
	if !ok {
		return ""
	}
	delete(m, metaKeyCaller)
	if len(m) == 0 {
		params.SetMeta(nil)
	}
	tok, _ := v.(string)
	return tok
}

// callerTagger is the http.RoundTripper of HTTP upstream sessions (see the
// top of this file): on every event-stream response it sets
// params._meta[metaKeyCaller] of each JSON-RPC request to the token of the
// call whose POST the stream answers, or removes the key when the stream
// answers no call of ours (the standalone GET stream, a resumed stream).
type callerTagger struct{ base http.RoundTripper }

func (c callerTagger) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	if !isEventStream(resp.Header.Get("Content-Type")) {
		return resp, nil
	}
	token, _ := req.Context().Value(callerTokenKey{}).(string)
	if req.Method != http.MethodPost {
		token = ""
	}
	st := tagReaders.Get().(*tagState)
	st.in.Reset(resp.Body)
	resp.Body = &tagReader{src: resp.Body, st: st, token: token}
	return resp, nil
}

// isEventStream reports whether a Content-Type is text/event-stream; the
// bare form, the usual one, is told without parsing (issue 16: a map per
// answer).
func isEventStream(ct string) bool {
	if ct == "text/event-stream" {
		return true
	}
	mt, _, _ := mime.ParseMediaType(ct)
	return mt == "text/event-stream"
}

// tagReaders pools the reading state of tagReader: its 64 KiB reader
// (issue 16: one per event-stream response, i.e. per tools/call of an HTTP
// upstream, was the largest allocation of that path after the go-sdk's
// decoder) and its buffers.
var tagReaders = sync.Pool{New: func() any { return &tagState{in: bufio.NewReaderSize(nil, 64<<10)} }}

type tagState struct {
	in   *bufio.Reader
	line []byte       // the line being read
	ev   bytes.Buffer // the lines of the event being read, each without its line end, then "\n"
	out  bytes.Buffer // what Read hands out next
}

// tagKeep is the most buffer capacity a pooled tagState keeps.
const tagKeep = 64 << 10

func (st *tagState) release() {
	st.in.Reset(nil)
	st.line = st.line[:0]
	if cap(st.line) > tagKeep {
		st.line = nil
	}
	if st.ev.Cap() > tagKeep || st.out.Cap() > tagKeep {
		st.ev, st.out = bytes.Buffer{}, bytes.Buffer{}
	}
	st.ev.Reset()
	st.out.Reset()
	tagReaders.Put(st)
}

// tagReader rewrites an event stream event by event: each event's data
// lines are joined (as an SSE parser does) and, when the data is a JSON-RPC
// request, written back as one data line with the token set (or removed).
// Other events and fields pass unchanged (line ends become "\n").
type tagReader struct {
	mu    sync.Mutex // held by Read; Close pools in only when it is free
	src   io.Closer
	st    *tagState // nil once pooled again
	token string
	err   error
}

// Close closes the response body and returns the reading state to
// tagReaders when no Read is running (a Read blocked on the body ends
// with the body's error; its state is then left to the garbage collector).
func (t *tagReader) Close() error {
	err := t.src.Close()
	if t.mu.TryLock() {
		if t.st != nil {
			t.st.release()
			t.st = nil
		}
		if t.err == nil {
			t.err = http.ErrBodyReadAfterClose
		}
		t.mu.Unlock()
	}
	return err
}

func (t *tagReader) Read(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.st == nil {
		return 0, t.err
	}
	st := t.st
	for st.out.Len() == 0 && t.err == nil {
		chunk, err := st.in.ReadSlice('\n')
		st.line = append(st.line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue // a line longer than the reader's buffer
		}
		if len(st.line) > 0 {
			if trimmed := bytes.TrimRight(st.line, "\r\n"); len(trimmed) == 0 {
				t.flushEvent()
				st.out.WriteByte('\n')
			} else {
				st.ev.Write(trimmed)
				st.ev.WriteByte('\n')
			}
			st.line = st.line[:0]
		}
		if err != nil {
			t.flushEvent()
			t.err = err
		}
	}
	if st.out.Len() > 0 {
		return st.out.Read(p)
	}
	return 0, t.err
}

// flushEvent writes the buffered event's lines to out, rewriting its data.
// An event that cannot be a JSON-RPC request (no "method" in it: the
// answers of calls) passes as it is, without a copy per line.
func (t *tagReader) flushEvent() {
	st := t.st
	if st.ev.Len() == 0 {
		return
	}
	defer st.ev.Reset()
	if !bytes.Contains(st.ev.Bytes(), []byte(`"method"`)) { // tag would return ""
		st.out.Write(st.ev.Bytes())
		return
	}
	event := strings.Split(strings.TrimSuffix(st.ev.String(), "\n"), "\n")
	var data []string
	first := -1
	for i, l := range event {
		if v, ok := strings.CutPrefix(l, "data:"); ok {
			if first < 0 {
				first = i
			}
			data = append(data, strings.TrimPrefix(v, " "))
		}
	}
	rewritten := ""
	if first >= 0 {
		rewritten = t.tag(strings.Join(data, "\n"))
	}
	for i, l := range event {
		if strings.HasPrefix(l, "data:") {
			if i == first && rewritten != "" {
				st.out.WriteString("data: " + rewritten + "\n")
				continue
			}
			if rewritten != "" {
				continue // joined into the first data line
			}
		}
		st.out.WriteString(l + "\n")
	}
}

// tag returns data with the token set on a JSON-RPC request (or removed),
// "" to leave data as it is (not a request, not JSON).
func (t *tagReader) tag(data string) string {
	if !strings.Contains(data, `"method"`) {
		return ""
	}
	var msg map[string]json.RawMessage
	if json.Unmarshal([]byte(data), &msg) != nil || msg["method"] == nil || msg["id"] == nil {
		return ""
	}
	params := map[string]json.RawMessage{}
	if raw := msg["params"]; len(raw) > 0 && string(raw) != "null" {
		if json.Unmarshal(raw, &params) != nil {
			return ""
		}
	}
	meta := map[string]json.RawMessage{}
	if raw := params["_meta"]; len(raw) > 0 && string(raw) != "null" {
		if json.Unmarshal(raw, &meta) != nil {
			return ""
		}
	}
	_, had := meta[metaKeyCaller]
	if t.token == "" && !had {
		return ""
	}
	delete(meta, metaKeyCaller)
	if t.token != "" {
		meta[metaKeyCaller], _ = json.Marshal(t.token)
	}
	if len(meta) > 0 {
		params["_meta"], _ = json.Marshal(meta)
	} else {
		delete(params, "_meta")
	}
	msg["params"], _ = json.Marshal(params)
	out, err := json.Marshal(msg)
	if err != nil {
		return ""
	}
	return string(out)
}
