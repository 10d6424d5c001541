package upstream

// The caller tag of a Streamable HTTP upstream's requests: a request that
// an upstream sends on the POST response stream of a call (sampling,
// elicitation, roots, and log messages) is marked with that call's token
// in params._meta, so the proxy can route it to the client that made the
// call (MCP spec, basic/transports, "Sending Messages to the Server").
//
// Trust: upstream servers are not trusted. The token is 128 random bits,
// never sent upstream, and valid only while its call is in flight;
// TagCallers removes the key from every request an upstream sends, so an
// upstream cannot name a client by writing the key itself.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/jsonscan"
)

// MetaKeyCaller is the params._meta key that carries a call's token from
// callerTagger to the proxy's relay; it never reaches a client.
const MetaKeyCaller = "io.github.mcp-toolsearch/caller"

type callerTokenKey struct{}

// WithCallerToken returns ctx carrying a call's token for callerTagger.
func WithCallerToken(ctx context.Context, token string) context.Context {
	return context.WithValue(ctx, callerTokenKey{}, token)
}

func NewCallerToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// TakeCallerToken removes MetaKeyCaller from the _meta of a relayed
// request's params and returns its value ("" when absent or not a string).
func TakeCallerToken(req mcp.Request) string {
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
	v, ok := m[MetaKeyCaller]
	if !ok {
		return ""
	}
	delete(m, MetaKeyCaller)
	if len(m) == 0 {
		params.SetMeta(nil)
	}
	tok, _ := v.(string)
	return tok
}

// TagCallers wraps base, the transport of an HTTP upstream's sessions
// (Options.WrapHTTP), with callerTagger; max is server.max_message_bytes.
func TagCallers(base http.RoundTripper, max int) http.RoundTripper {
	return callerTagger{base: base, max: max}
}

// callerTagger is the http.RoundTripper of HTTP upstream sessions: on
// every event-stream response it sets params._meta[MetaKeyCaller] of each
// JSON-RPC request (and log message) to the token of the call whose POST
// the stream answers, or removes the key when the stream
// answers no call of ours (the standalone GET stream, a resumed stream).
//
// Size: an event is buffered (to be rewritten) only up to max bytes plus
// tagSlack; past that, what was buffered and the rest of the event pass
// through as they are read, untouched (tagState.pass), so that memory
// stays within a small multiple of server.max_message_bytes whatever an
// upstream sends on a stream (trust: upstream servers are not trusted; one
// event of hundreds of megabytes once grew the proxy by gigabytes). The
// reader behind it (upstream's readSSE) keeps no data past the cap either
// and fails the call such an event answers. An event passed through is
// not tagged: a request in it (its data within the cap, padded with other
// fields) is routed by the proxy's fallback rule (one client with calls in flight), and a caller key the
// upstream wrote itself stays but names no call (tokens are never sent
// upstream).
type callerTagger struct {
	base http.RoundTripper
	max  int // server.max_message_bytes
}

func (c callerTagger) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	if mediaType(resp.Header.Get("Content-Type")) != "text/event-stream" {
		return resp, nil
	}
	token, _ := req.Context().Value(callerTokenKey{}).(string)
	if req.Method != http.MethodPost {
		token = ""
	}
	st := tagReaders.Get().(*tagState)
	st.in.Reset(resp.Body)
	limit := c.max
	if limit <= 0 {
		limit = MaxMessageBytes
	}
	st.limit = limit + tagSlack
	resp.Body = &tagReader{src: resp.Body, st: st, token: token}
	return resp, nil
}

// tagReaders pools the reading state of tagReader: its 64 KiB reader
// (one per event-stream response, i.e. per tools/call of an HTTP
// upstream, was the largest allocation of that path after the go-sdk's
// decoder) and its buffers.
var tagReaders = sync.Pool{New: func() any { return &tagState{in: bufio.NewReaderSize(nil, 64<<10)} }}

type tagState struct {
	in   *bufio.Reader
	line []byte       // the line being read
	ev   bytes.Buffer // the lines of the event being read, each without its line end, then "\n"
	out  bytes.Buffer // what Read hands out next
	more []byte       // handed out after out: a long line, not copied into out
	tail []byte       // handed out after more: a piece of an event passed through, in the reader's buffer (valid until the next read)
	// limit is the most bytes of one event that are buffered (ev and
	// line); past it the event passes through (pass) until its end.
	limit int
	// pass: the rest of the current event goes out as it is read;
	// atStart: the next byte read starts a line (pass mode's own line
	// tracking, to see the blank line that ends the event); sawData: the
	// event being buffered has a data line.
	pass, atStart, sawData bool
}

// tagSlack is room past server.max_message_bytes for an event's framing
// (field names, "data: " per line, id and event fields) before the event
// passes through untagged.
const tagSlack = 64 << 10

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
	st.pass, st.atStart, st.sawData = false, false, false
	st.more, st.tail = nil, nil
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
	for st.out.Len() == 0 && len(st.more) == 0 && len(st.tail) == 0 && t.err == nil {
		chunk, err := st.in.ReadSlice('\n')
		if st.pass {
			t.passChunk(chunk, err)
			if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
				t.err = err
			}
			continue
		}
		if st.ev.Len()+len(st.line)+len(chunk) > st.limit {
			// Past the bound: out goes what was kept, then the rest of
			// the event as it comes, unchanged.
			// (out is empty here: the buffers trade places and the line
			// is handed out from its own buffer, no copy.)
			st.ev, st.out = st.out, st.ev
			st.pass, st.atStart = true, len(st.line) == 0
			st.ev.Reset()
			if len(st.line) > 0 {
				st.more, st.line = st.line, nil
			}
			t.passChunk(chunk, err)
			if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
				t.err = err
			}
			continue
		}
		if len(st.line) == 0 && !st.sawData && isAnswerData(chunk) {
			// The first data line of an answer (the results of calls,
			// the large events): nothing to rewrite, so it passes as it
			// is read, without being kept.
			st.ev, st.out = st.out, st.ev
			st.pass, st.atStart = true, true
			st.ev.Reset()
			t.passChunk(chunk, err)
			if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
				t.err = err
			}
			continue
		}
		if len(st.line) == 0 && bytes.HasPrefix(chunk, []byte("data:")) {
			st.sawData = true
		}
		if need := len(st.line) + len(chunk); need > cap(st.line) { // grow by doubling, up to the bound: less garbage than append's quarter
			st.line = append(make([]byte, 0, max(min(2*cap(st.line), st.limit), need)), st.line...)
		}
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
	switch {
	case st.out.Len() > 0:
		return st.out.Read(p)
	case len(st.more) > 0:
		n := copy(p, st.more)
		if st.more = st.more[n:]; len(st.more) == 0 {
			st.more = nil
		}
		return n, nil
	case len(st.tail) > 0:
		n := copy(p, st.tail)
		st.tail = st.tail[n:]
		return n, nil
	}
	return 0, t.err
}

// passChunk hands out chunk, a piece of an event passed through, as it
// is (after out and more, without a copy); a blank line ends the event
// (and pass mode). err is the read's.
func (t *tagReader) passChunk(chunk []byte, err error) {
	st := t.st
	st.tail = chunk
	complete := err == nil // chunk ends with '\n'
	if complete && st.atStart && len(bytes.TrimRight(chunk, "\r\n")) == 0 {
		st.pass, st.sawData = false, false // the blank line: the event ended
	}
	st.atStart = complete
}

// flushEvent writes the buffered event's lines to out, rewriting its data.
// An event that cannot be a JSON-RPC request (no "method" in it: the
// answers of calls) passes as it is, without a copy per line.
func (t *tagReader) flushEvent() {
	st := t.st
	st.sawData = false
	if st.ev.Len() == 0 {
		return
	}
	defer st.ev.Reset()
	if !bytes.Contains(st.ev.Bytes(), []byte(`"method"`)) { // tag would return ""
		if st.out.Len() == 0 { // always, from Read: trade places, no copy
			st.ev, st.out = st.out, st.ev
			return
		}
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
	if json.Unmarshal([]byte(data), &msg) != nil || msg["method"] == nil {
		return ""
	}
	if msg["id"] == nil && string(msg["method"]) != `"notifications/message"` {
		return "" // a notification; log messages are tagged too
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
	_, had := meta[MetaKeyCaller]
	if t.token == "" && !had {
		return ""
	}
	delete(meta, MetaKeyCaller)
	if t.token != "" {
		meta[MetaKeyCaller], _ = json.Marshal(t.token)
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

// answerScan is how much of an event's first data line isAnswerData
// looks at.
const answerScan = 4 << 10

// isAnswerData reports whether line, the start of an event's first data
// line ("data: {..."), holds a JSON-RPC answer: its object has a "result"
// or "error" member before any "method" one, within its first answerScan
// bytes. Anything else (a request, a notification, a member name with an
// escape, text cut before the answer shows) is false and is buffered
// whole. An upstream that writes "method" after "result" makes a request
// that the go-sdk decodes as such and that passes untagged: it is routed
// by the fallback rule, and a caller key in it names no call.
func isAnswerData(line []byte) bool {
	v, ok := bytes.CutPrefix(line, []byte("data:"))
	if !ok {
		return false
	}
	v = bytes.TrimPrefix(v, []byte(" "))
	if len(v) > answerScan {
		v = v[:answerScan]
	}
	i := jsonscan.SkipSpace(v, 0)
	if i >= len(v) || v[i] != '{' {
		return false
	}
	for i++; ; i++ {
		i = jsonscan.SkipSpace(v, i)
		if i >= len(v) || v[i] != '"' {
			return false
		}
		end, _, err := jsonscan.Value(v, i)
		if err != nil {
			return false
		}
		switch key := v[i+1 : end-1]; {
		case bytes.IndexByte(key, '\\') >= 0:
			return false
		case string(key) == "result" || string(key) == "error":
			return true
		case string(key) == "method":
			return false
		}
		i = jsonscan.SkipSpace(v, end)
		if i >= len(v) || v[i] != ':' {
			return false
		}
		i = jsonscan.SkipSpace(v, i+1)
		if end, _, err = jsonscan.Value(v, i); err != nil {
			return false
		}
		i = jsonscan.SkipSpace(v, end)
		if i >= len(v) || v[i] != ',' {
			return false
		}
	}
}
