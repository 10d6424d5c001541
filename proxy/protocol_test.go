package proxy

// Protocol cases: conversations with the proxy written as data
// (testdata/protocol/*.txtar), run on every front with the fast path on
// and off. A case passes on a front when every answer holds what the case
// wants, and the answers with the fast path on are byte for byte the
// answers with it off.
//
// Sections of a case (the archive's comment says what it checks):
//
//	config.toml  the proxy's config; %[1]s stands for the test upstream's
//	             URL (startTestUpstream), quoted. Default: defaultCaseConfig.
//	fronts       the fronts the case runs on, separated by blanks (default:
//	             all of caseFronts).
//	client       the client's name (clientInfo.name; default "case").
//	never        tools of the test upstream that no step may reach.
//	N            a message the client sends at step N (steps run in the
//	             order of the archive), written as a stdio client sends it.
//	             On a 2026-07-28 front the runner puts the client's _meta
//	             triple into params._meta (a key the step sets is kept; set
//	             to "(absent)" it is left out), and over HTTP adds the
//	             headers the protocol requires.
//	N.want       what the answer to the request of step N holds: a JSON
//	             object whose members the answer has with the same values
//	             (objects compared member by member, the same way; arrays
//	             and scalars exactly; "*" stands for any value), or the
//	             word "none": the request gets no answer.
//	N.want@F     what it holds on front F instead.
//	N.path       "fast": with the fast path on, the request is served by
//	             it (on fronts that have one); "sdk": it is not.
//	N.path@F     the same on front F.
//	N.header     HTTP headers of the request on the Streamable HTTP fronts,
//	             one "Name: value" a line (an empty value removes it).

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/tools/txtar"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/front"
)

// caseFronts are the fronts a case runs on: the stdio front at protocols
// 2025-11-25 (initialize) and 2026-07-28 (the _meta triple per request),
// a Streamable HTTP session (2025-11-25), the default HTTP front's
// 2026-07-28 requests, a `[server] stateless = true` front at 2025-11-25,
// and the legacy SSE transport.
var caseFronts = []string{"stdio-2025", "stdio-2026", "http-2025", "http-2026", "stateless-2025", "sse"}

const defaultCaseConfig = "[tool_search]\nenabled = false\n[upstreams.up]\nurl = %[1]s\n"

func TestProtocolCases(t *testing.T) {
	files, err := filepath.Glob("testdata/protocol/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no protocol cases: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			c := readCase(t, file)
			up := startTestUpstream(t)
			for _, fr := range c.fronts {
				t.Run(fr, func(t *testing.T) {
					cfg := fmt.Sprintf(c.config, tomlQuote(up.URL))
					if fr == "stateless-2025" {
						cfg = "[server]\ntransport = \"http\"\nstateless = true\n" + cfg
					}
					p := startProxyText(t, cfg)
					answers := map[bool][][]byte{}
					for _, fast := range []bool{true, false} {
						answers[fast] = c.run(t, p, fr, fast)
					}
					for i, s := range c.steps {
						if a, b := answers[true][i], answers[false][i]; !bytes.Equal(a, b) {
							t.Errorf("step %s: the fast path's answer differs from the go-sdk's:\nfast:   %s\ngo-sdk: %s", s.name, a, b)
						}
					}
					for _, tool := range c.never {
						if n := up.count(tool); n != 0 {
							t.Errorf("the upstream's %s ran %d times", tool, n)
						}
					}
				})
			}
		})
	}
}

// protoCase is a parsed case.
type protoCase struct {
	config, client string
	fronts, never  []string
	steps          []protoStep
}

type protoStep struct {
	name   string
	msg    []byte            // as a stdio client sends it
	want   any               // nil: anything (a notification); "none": no answer
	wantOn map[string]any    // want on a front (N.want@F)
	path   string            // "fast", "sdk" or ""
	pathOn map[string]string // path on a front (N.path@F)
	header http.Header       // N.header
}

func readCase(t *testing.T, file string) *protoCase {
	t.Helper()
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	c := &protoCase{config: defaultCaseConfig, client: "case", fronts: caseFronts}
	index := map[string]int{}
	for _, f := range ar.Files {
		data := bytes.TrimSpace(f.Data)
		name, kind, _ := strings.Cut(f.Name, ".")
		switch {
		case f.Name == "config.toml":
			c.config = string(f.Data)
		case f.Name == "fronts":
			c.fronts = strings.Fields(string(data))
			for _, fr := range c.fronts {
				if !slices.Contains(caseFronts, fr) {
					t.Fatalf("%s: unknown front %q (want one of %v)", file, fr, caseFronts)
				}
			}
		case f.Name == "client":
			c.client = string(data)
		case f.Name == "never":
			c.never = strings.Fields(string(data))
		case kind == "":
			if !json.Valid(data) {
				t.Fatalf("%s: step %s is not JSON: %s", file, name, data)
			}
			index[name] = len(c.steps)
			c.steps = append(c.steps, protoStep{name: name, msg: data})
		default:
			i, ok := index[name]
			if !ok {
				t.Fatalf("%s: %s comes before step %s", file, f.Name, name)
			}
			kind, front, _ := strings.Cut(kind, "@")
			if front != "" && !slices.Contains(caseFronts, front) {
				t.Fatalf("%s: %s: unknown front %q", file, f.Name, front)
			}
			switch kind {
			case "want":
				var want any = "none"
				if string(data) != "none" {
					if err := decodeNumber(data, &want); err != nil {
						t.Fatalf("%s: %s: %v", file, f.Name, err)
					}
				}
				if front == "" {
					c.steps[i].want = want
					break
				}
				if c.steps[i].wantOn == nil {
					c.steps[i].wantOn = map[string]any{}
				}
				c.steps[i].wantOn[front] = want
			case "path":
				if front == "" {
					c.steps[i].path = string(data)
					break
				}
				if c.steps[i].pathOn == nil {
					c.steps[i].pathOn = map[string]string{}
				}
				c.steps[i].pathOn[front] = string(data)
			case "header":
				c.steps[i].header = http.Header{}
				for _, line := range strings.Split(string(data), "\n") {
					k, v, ok := strings.Cut(line, ":")
					if !ok {
						t.Fatalf("%s: %s: %q is not Name: value", file, f.Name, line)
					}
					c.steps[i].header[http.CanonicalHeaderKey(strings.TrimSpace(k))] = []string{strings.TrimSpace(v)}
				}
			default:
				t.Fatalf("%s: unknown section %s", file, f.Name)
			}
		}
	}
	return c
}

// decodeNumber decodes b with numbers kept as json.Number.
func decodeNumber(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return d.Decode(v)
}

// run runs c's steps on front with the fast path on or off and returns
// each step's answer as written (nil: none), requestState values blanked.
func (c *protoCase) run(t *testing.T, p *Proxy, fr string, fast bool) [][]byte {
	t.Helper()
	defer func() { front.Fast = true }()
	front.Fast = fast
	cl := openCaseClient(t, p, fr, c.client, fast)
	defer cl.close()
	var out [][]byte
	for _, s := range c.steps {
		msg := s.msg
		if strings.HasSuffix(fr, "-2026") {
			msg = withTriple(t, msg, c.client)
		}
		var head struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(msg, &head)
		before := cl.fastServed()
		a := cl.send(msg, head.ID, s.header)
		path := s.path
		if p, ok := s.pathOn[fr]; ok {
			path = p
		}
		if fast && path != "" && cl.hasFast() {
			if served := cl.fastServed() > before; served != (path == "fast") {
				t.Errorf("fast=%v step %s: served by the fast path: %v, want %s", fast, s.name, served, path)
			}
		}
		want := s.want
		if w, ok := s.wantOn[fr]; ok {
			want = w
		}
		switch want := want.(type) {
		case nil:
		case string: // "none"
			if a != nil {
				t.Errorf("fast=%v step %s: want no answer, got %s", fast, s.name, a)
			}
		default:
			var got any
			if a == nil {
				t.Errorf("fast=%v step %s: no answer, want %s", fast, s.name, jsonText(want))
			} else if err := decodeNumber(a, &got); err != nil {
				t.Errorf("fast=%v step %s: answer is not JSON: %s", fast, s.name, a)
			} else if why := matchJSON(want, got, ""); why != "" {
				t.Errorf("fast=%v step %s: %s\nanswer: %s", fast, s.name, why, a)
			} else if m, _ := got.(map[string]any); !bytes.Equal(jsonRaw(m["id"]), head.ID) {
				t.Errorf("fast=%v step %s: answer's id %s, want %s", fast, s.name, jsonRaw(m["id"]), head.ID)
			}
		}
		rec := stateRE.ReplaceAll(a, []byte(`"requestState":"-"`))
		if hc, ok := cl.(*httpCase); ok {
			rec = append([]byte(hc.last+" "), rec...) // status and media type too
		}
		out = append(out, rec)
	}
	return out
}

var stateRE = regexp.MustCompile(`"requestState":"[^"]*"`)

func jsonText(v any) string { return string(jsonRaw(v)) }

// jsonRaw is v's JSON as a client writes it (no HTML escaping).
func jsonRaw(v any) []byte {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	_ = e.Encode(v)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// matchJSON reports why got does not hold want ("": it does), at path.
func matchJSON(want, got any, path string) string {
	if s, ok := want.(string); ok && s == "*" {
		return ""
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: want an object, got %s", orTop(path), jsonText(got))
		}
		for k, wv := range w {
			gv, ok := g[k]
			if !ok {
				return fmt.Sprintf("%s: no member %q", orTop(path), k)
			}
			if why := matchJSON(wv, gv, path+"."+k); why != "" {
				return why
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Sprintf("%s: want %s, got %s", orTop(path), jsonText(want), jsonText(got))
		}
		for i := range w {
			if why := matchJSON(w[i], g[i], fmt.Sprintf("%s[%d]", path, i)); why != "" {
				return why
			}
		}
		return ""
	}
	if !reflect.DeepEqual(want, got) {
		return fmt.Sprintf("%s: want %s, got %s", orTop(path), jsonText(want), jsonText(got))
	}
	return ""
}

func orTop(path string) string {
	if path == "" {
		return "the answer"
	}
	return "answer" + path
}

// withTriple puts the 2026-07-28 _meta triple of client into msg's
// params (a request or notification; an answer is left as it is).
func withTriple(t *testing.T, msg []byte, client string) []byte {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(msg, &m); err != nil || m["method"] == nil {
		return msg
	}
	params := map[string]json.RawMessage{}
	if len(m["params"]) > 0 && json.Unmarshal(m["params"], &params) != nil {
		return msg // not an object: sent as written
	}
	meta := map[string]json.RawMessage{}
	if len(params["_meta"]) > 0 && json.Unmarshal(params["_meta"], &meta) != nil {
		return msg
	}
	for k, v := range map[string]json.RawMessage{
		"io.modelcontextprotocol/protocolVersion":    json.RawMessage(`"2026-07-28"`),
		"io.modelcontextprotocol/clientInfo":         jsonRaw(map[string]string{"name": client, "version": "1"}),
		"io.modelcontextprotocol/clientCapabilities": json.RawMessage(`{}`),
	} {
		switch string(meta[k]) {
		case "":
			meta[k] = v
		case `"(absent)"`:
			delete(meta, k)
		}
	}
	params["_meta"] = jsonRaw(meta)
	m["params"] = jsonRaw(params)
	return jsonRaw(m)
}

// caseClient is a client of one front.
type caseClient interface {
	send(msg, id []byte, h http.Header) []byte // the answer to msg (nil: none, or msg is not a request); h: HTTP headers
	fastServed() int64
	hasFast() bool
	close()
}

func openCaseClient(t *testing.T, p *Proxy, fr, client string, fast bool) caseClient {
	t.Helper()
	switch fr {
	case "stdio-2025", "stdio-2026":
		c := &stdioCase{lc: startLineClient(t, p, fast)}
		if fr == "stdio-2025" {
			c.lc.call(-1, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"`+client+`","version":"1"}}`)
			c.lc.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			c.lc.call(-2, "ping", `{}`) // answered after the notification was handled
		} else {
			// The first 2026-07-28 request opens the session.
			c.lc.send(string(withTriple(t, []byte(`{"jsonrpc":"2.0","id":-1,"method":"tools/call","params":{"name":"up__echo","arguments":{}}}`), client)))
			c.answer([]byte("-1"))
		}
		return c
	case "http-2025", "stateless-2025", "http-2026":
		c := &httpCase{t: t, url: frontURL(t, p), p: p}
		if fr == "http-2026" {
			c.modern = true
			c.post(withTriple(t, []byte(`{"jsonrpc":"2.0","id":-1,"method":"tools/call","params":{"name":"up__echo","arguments":{}}}`), client), []byte("-1"), nil)
			return c
		}
		c.version = "2025-11-25"
		c.post([]byte(`{"jsonrpc":"2.0","id":-1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"`+client+`","version":"1"}}}`), []byte("-1"), nil)
		c.post([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), nil, nil)
		if fr == "http-2025" {
			c.session = true
			waitFor(t, "notifications/initialized handled", func() bool {
				return p.hsess.Ready(c.sid)
			})
		}
		return c
	case "sse":
		return openSSECase(t, p, client)
	}
	t.Fatalf("unknown fr %q", fr)
	return nil
}

// stdioCase is a client of the stdio front.
type stdioCase struct{ lc *lineClient }

func (c *stdioCase) send(msg, id []byte, _ http.Header) []byte {
	c.lc.send(string(msg))
	if id == nil || isAnswer(msg) {
		return nil
	}
	return c.answer(id)
}

// answer reads lines until the answer to id; nil when none comes within a
// second after the lines stop (a request that gets no answer).
func (c *stdioCase) answer(id []byte) []byte {
	for {
		select {
		case l, ok := <-c.lc.lines:
			if !ok {
				c.lc.t.Fatal("the proxy closed its output")
			}
			if a := answerWithID(l, id); a != nil {
				return a
			}
		case <-time.After(time.Second):
			return nil
		}
	}
}

func (c *stdioCase) fastServed() int64 { return int64(c.lc.fastCalls()) }
func (c *stdioCase) hasFast() bool     { return true }
func (c *stdioCase) close()            {}

// isAnswer reports whether msg is a response (it has no method).
func isAnswer(msg []byte) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(msg, &m) == nil && m["method"] == nil
}

// answerWithID is the message in line (a JSON-RPC message, or a batch) that
// answers id, or nil.
func answerWithID(line, id []byte) []byte {
	line = bytes.TrimSpace(line)
	var msgs []json.RawMessage
	if len(line) > 0 && line[0] == '[' {
		_ = json.Unmarshal(line, &msgs)
	} else {
		msgs = []json.RawMessage{line}
	}
	for _, m := range msgs {
		var head struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(m, &head) == nil && head.Method == "" && bytes.Equal(head.ID, id) {
			return m
		}
	}
	return nil
}

// httpCase is a client of the Streamable HTTP front: a session
// (2025-11-25), a stateless front (2025-11-25, no session), or 2026-07-28
// requests.
type httpCase struct {
	t               *testing.T
	p               *Proxy
	url, sid        string
	version         string
	session, modern bool
	last            string // the last answer's status and Content-Type
}

func (c *httpCase) send(msg, id []byte, h http.Header) []byte {
	if isAnswer(msg) {
		id = nil
	}
	return c.post(msg, id, h)
}

func (c *httpCase) post(msg, id []byte, h http.Header) []byte {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodPost, c.url, bytes.NewReader(msg))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.sid != "" {
		req.Header.Set("Mcp-Session-Id", c.sid)
	}
	if c.version != "" && !bytes.Contains(msg, []byte(`"method":"initialize"`)) {
		req.Header.Set("Mcp-Protocol-Version", c.version)
	}
	if c.modern {
		setModernHeaders(req.Header, msg)
	}
	for k, v := range h {
		if v[0] == "" {
			req.Header.Del(k)
		} else {
			req.Header[k] = v
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	if s := resp.Header.Get("Mcp-Session-Id"); s != "" && c.sid == "" {
		c.sid = s
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	c.last = fmt.Sprintf("%d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	if id == nil {
		return nil
	}
	if resp.Header.Get("Content-Type") == "text/event-stream" {
		for _, data := range sseData(body) {
			if a := answerWithID(data, id); a != nil {
				return a
			}
		}
		return nil
	}
	if a := answerWithID(body, id); a != nil {
		return a
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusAccepted && json.Valid(bytes.TrimSpace(body)) {
		return bytes.TrimSpace(body) // an error answer without the id (id null)
	}
	return nil
}

func (c *httpCase) fastServed() int64 {
	if c.modern {
		return c.p.stateless.Calls.Load()
	}
	return c.p.hsess.Calls.Load()
}

func (c *httpCase) hasFast() bool { return c.modern || c.session }
func (c *httpCase) close()        {}

// setModernHeaders sets the headers a 2026-07-28 request carries over
// Streamable HTTP: MCP-Protocol-Version, Mcp-Method and Mcp-Name.
func setModernHeaders(h http.Header, msg []byte) {
	var m struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
			URI  string `json:"uri"`
		} `json:"params"`
	}
	_ = json.Unmarshal(msg, &m)
	h.Set("Mcp-Protocol-Version", "2026-07-28")
	if m.Method != "" {
		h.Set("Mcp-Method", m.Method)
	}
	switch m.Method {
	case "tools/call", "prompts/get":
		h.Set("Mcp-Name", m.Params.Name)
	case "resources/read":
		h.Set("Mcp-Name", m.Params.URI)
	}
}

// sseData is the data of each event in an event stream.
func sseData(b []byte) [][]byte {
	var out [][]byte
	var data []byte
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case len(line) == 0:
			if data != nil {
				out = append(out, data)
			}
			data = nil
		case bytes.HasPrefix(line, []byte("data:")):
			data = append(data, bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))...)
		}
	}
	if data != nil {
		out = append(out, data)
	}
	return out
}

// sseCase is a client of the legacy SSE transport.
type sseCase struct {
	t        *testing.T
	endpoint string
	events   chan []byte
	cancel   context.CancelFunc
}

func openSSECase(t *testing.T, p *Proxy, client string) *sseCase {
	t.Helper()
	srv := httptest.NewServer(p.Handler(nil))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/sse", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	c := &sseCase{t: t, events: make(chan []byte, 64), cancel: cancel}
	endpoint := make(chan string, 1)
	go func() {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		var name string
		var data []byte
		for sc.Scan() {
			line := sc.Bytes()
			switch {
			case len(line) == 0:
				if name == "endpoint" {
					endpoint <- string(data)
				} else if data != nil {
					c.events <- data
				}
				name, data = "", nil
			case bytes.HasPrefix(line, []byte("event:")):
				name = strings.TrimSpace(string(line[len("event:"):]))
			case bytes.HasPrefix(line, []byte("data:")):
				data = append(data, bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))...)
			}
		}
		close(c.events)
	}()
	select {
	case e := <-endpoint:
		c.endpoint = srv.URL + e
		if strings.HasPrefix(e, "?") {
			c.endpoint = srv.URL + "/sse" + e
		}
	case <-time.After(10 * time.Second):
		cancel()
		t.Fatal("no endpoint event on /sse")
	}
	c.send([]byte(`{"jsonrpc":"2.0","id":-1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"`+client+`","version":"1"}}}`), []byte("-1"), nil)
	c.send([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), nil, nil)
	c.send([]byte(`{"jsonrpc":"2.0","id":-2,"method":"ping"}`), []byte("-2"), nil)
	return c
}

func (c *sseCase) send(msg, id []byte, _ http.Header) []byte {
	c.t.Helper()
	resp, err := http.Post(c.endpoint, "application/json", bytes.NewReader(msg))
	if err != nil {
		c.t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if id == nil || isAnswer(msg) {
		return nil
	}
	if resp.StatusCode >= 300 {
		if json.Valid(bytes.TrimSpace(body)) {
			return bytes.TrimSpace(body)
		}
		return nil
	}
	for {
		select {
		case e, ok := <-c.events:
			if !ok {
				c.t.Fatal("the SSE stream ended")
			}
			if a := answerWithID(e, id); a != nil {
				return a
			}
		case <-time.After(time.Second):
			return nil
		}
	}
}

func (c *sseCase) fastServed() int64 { return 0 }
func (c *sseCase) hasFast() bool     { return false }
func (c *sseCase) close()            { c.cancel() }
