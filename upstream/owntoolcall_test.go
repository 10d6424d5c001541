package upstream

//lint:file-ignore SA1019 sampling, roots and logging are deprecated from protocol 2026-07-28 on; clients and servers of earlier protocols still use them

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
)

// frameLog collects the JSON-RPC frames an upstream received (stdio: the
// lines the test server tees to a file; HTTP: POST bodies with the
// headers 2026-07-28 adds).
type frameLog struct {
	path string // stdio

	mu     sync.Mutex
	frames []recFrame // HTTP
}

type recFrame struct {
	body    []byte
	headers string // Mcp-Method, Mcp-Name, Mcp-Protocol-Version
}

func (f *frameLog) all(t *testing.T) []recFrame {
	t.Helper()
	if f.path == "" {
		f.mu.Lock()
		defer f.mu.Unlock()
		return append([]recFrame(nil), f.frames...)
	}
	b, err := os.ReadFile(f.path)
	if err != nil {
		t.Fatal(err)
	}
	var out []recFrame
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		out = append(out, recFrame{body: bytes.Clone(sc.Bytes())})
	}
	return out
}

// method returns the frames of method, each as its members.
func (f *frameLog) method(t *testing.T, method string) []map[string]json.RawMessage {
	t.Helper()
	var out []map[string]json.RawMessage
	for _, fr := range f.all(t) {
		var m map[string]json.RawMessage
		if json.Unmarshal(fr.body, &m) != nil {
			continue
		}
		if string(m["method"]) == `"`+method+`"` {
			m["headers"] = json.RawMessage(fmt.Sprintf("%q", fr.headers))
			out = append(out, m)
		}
	}
	return out
}

// recordingUpstream is an upstream that records what it receives: the
// stdio test server (mode, with the extras) or the same server over
// Streamable HTTP.
func recordingUpstream(t *testing.T, name, transport, mode string) (*config.Upstream, *frameLog) {
	t.Helper()
	log := &frameLog{}
	var u *config.Upstream
	switch transport {
	case "stdio":
		log.path = filepath.Join(t.TempDir(), "frames")
		if !strings.HasPrefix(mode, "fake:") {
			mode = "extras," + mode
		}
		u = stdioUpstream(name, mode)
		u.Env[testServerRecordEnv] = log.path
	default: // "http" (2025-11-25: a session), "http-stateless" (2026-07-28)
		srv := newTestServer("extras", false)
		inner := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: transport == "http-stateless"})
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				body, _ := io.ReadAll(r.Body)
				log.mu.Lock()
				log.frames = append(log.frames, recFrame{body: body, headers: strings.Join([]string{r.Header.Get("Mcp-Method"), r.Header.Get("Mcp-Name"), r.Header.Get("Mcp-Protocol-Version")}, "|")})
				log.mu.Unlock()
				r.Body = io.NopCloser(bytes.NewReader(body))
			}
			inner.ServeHTTP(w, r)
		}))
		t.Cleanup(hs.Close)
		u = &config.Upstream{Name: name, URL: hs.URL}
		u.StartupTimeout.Duration = 30 * time.Second
	}
	u.CallTimeout.Duration = time.Minute
	return u, log
}

// proxyLikeOptions are the client options the proxy gives a shared
// upstream session (proxy/passthrough_relay.go): the go-sdk's
// multi-round-trip middleware off, sampling and elicitation offered.
func proxyLikeOptions() Options {
	return Options{ClientOptions: func(string) *mcp.ClientOptions {
		return &mcp.ClientOptions{
			MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
			Capabilities: &mcp.ClientCapabilities{
				Sampling:    &mcp.SamplingCapabilities{},
				Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}},
			},
			CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				return &mcp.CreateMessageResult{Content: &mcp.TextContent{Text: "sampled"}}, nil
			},
		}
	}}
}

// startPaths starts two managers on the same kind of upstream: sdk keeps
// every tools/call on the go-sdk client (the old path), own sends plain
// calls past it.
func startPaths(t *testing.T, transport, mode string) (sdk, own *Manager, sdkLog, ownLog *frameLog) {
	t.Helper()
	return startPathsWith(t, transport, mode, nil)
}

// startPathsWith is startPaths with set applied to both upstreams' configs
// (nil: none).
func startPathsWith(t *testing.T, transport, mode string, set func(*config.Upstream)) (sdk, own *Manager, sdkLog, ownLog *frameLog) {
	t.Helper()
	us, sdkLog := recordingUpstream(t, "u", transport, mode)
	uo, ownLog := recordingUpstream(t, "u", transport, mode)
	if set != nil {
		set(us)
		set(uo)
	}
	sdk = NewManager([]*config.Upstream{us}, proxyLikeOptions())
	sdk.sdkCalls = true
	own = NewManager([]*config.Upstream{uo}, proxyLikeOptions())
	for _, m := range []*Manager{sdk, own} {
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_ = m.Close(ctx)
		})
		m.Start(context.Background())
		if st, _ := m.Status("u"); st.State != StateReady {
			t.Fatalf("upstream not ready: %+v", st)
		}
	}
	return sdk, own, sdkLog, ownLog
}

// ownCallCase is one tools/call made the same way through both paths.
type ownCallCase struct {
	name   string
	params *mcp.CallToolParams
	opts   func() CallOptions
}

func ownCallCases() []ownCallCase {
	return []ownCallCase{
		{"raw args with blanks and HTML characters", &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{ "text" : "a<b>&c \u2028 é" }`)}, func() CallOptions { return CallOptions{Raw: &RawResult{}} }},
		{"decoded (no raw slot)", &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "plain"}}, func() CallOptions { return CallOptions{} }},
		{"no arguments", &mcp.CallToolParams{Name: "echo"}, func() CallOptions { return CallOptions{Raw: &RawResult{}} }},
		{"client _meta, progress, caller capabilities", &mcp.CallToolParams{Name: "progress", Arguments: json.RawMessage(`{"n":3}`), Meta: mcp.Meta{"traceparent": "00-abc-def-01", "x-obj": map[string]any{"b": 1.5, "a": []any{"<", true, nil}}, "x-num": 7.0}}, func() CallOptions {
			return CallOptions{Raw: &RawResult{}, OnProgress: func(*mcp.ProgressNotificationParams) {}, ClientCapabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}}}
		}},
		{"unknown tool (JSON-RPC error)", &mcp.CallToolParams{Name: "nope", Arguments: json.RawMessage(`{}`)}, func() CallOptions { return CallOptions{Raw: &RawResult{}} }},
		{"bad arguments (tool error)", &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"text":5}`)}, func() CallOptions { return CallOptions{Raw: &RawResult{}} }},
	}
}

// outcome is what a caller of CallToolWith sees: a raw result (the path
// past the go-sdk keeps one, the go-sdk path decodes) as the go-sdk
// decodes it, with the isError the caller got beside it.
func outcome(res *mcp.CallToolResult, raw *RawResult, err error) string {
	if err != nil {
		var we *jsonrpc.Error
		code := 0
		if errors.As(err, &we) {
			code = int(we.Code)
		}
		return fmt.Sprintf("error %d: %v (unavailable %v)", code, err, errors.Is(err, ErrUnavailable))
	}
	if raw != nil && raw.JSON != nil {
		var full mcp.CallToolResult
		if err := json.Unmarshal(raw.JSON, &full); err != nil {
			return fmt.Sprintf("raw %s: %v", raw.JSON, err)
		}
		if full.IsError != res.IsError {
			return fmt.Sprintf("raw %s isError=%v", raw.JSON, res.IsError)
		}
		res = &full
	}
	b, _ := json.Marshal(res)
	return "decoded " + string(b)
}

// The frames a plain tools/call puts on the wire past the go-sdk are the
// go-sdk client's, byte for byte apart from the id (params with the
// 2026-07-28 _meta triple, the relayed capabilities, the client's _meta
// and the proxy's progress token; over HTTP the 2026-07-28 headers), and
// the caller gets the same result or error, over stdio and Streamable
// HTTP at 2026-07-28 (the go-sdk test server) and over stdio at
// 2025-11-25 (a raw fake server that knows no server/discover).
func TestOwnToolCallSameFrames(t *testing.T) {
	for _, leg := range []struct{ transport, mode, version string }{
		{"stdio", "plain", "2026-07-28"}, {"http-stateless", "plain", "2026-07-28"},
		{"http", "plain", "2025-11-25"}, {"stdio", "fake:plain", "2025-11-25"}, {"stdio", "plain", "2025-11-25"},
	} {
		{
			transport, version := leg.transport, leg.version
			t.Run(transport+"/"+leg.mode+"/"+version, func(t *testing.T) {
				sdk, own, sdkLog, ownLog := startPathsWith(t, transport, leg.mode, func(u *config.Upstream) {
					if version == config.ProtocolModern {
						u.Protocol = version // a stdio leg's default is 2025-11-25 (version.go)
					}
				})
				for _, tc := range ownCallCases() {
					var got [2]string
					for i, m := range []*Manager{sdk, own} {
						o := tc.opts()
						p := *tc.params
						res, err := m.CallToolWith(context.Background(), "u", &p, o)
						got[i] = outcome(res, o.Raw, err)
					}
					if got[0] != got[1] {
						t.Errorf("%s: the caller saw\n  go-sdk: %s\n  own:    %s", tc.name, got[0], got[1])
					}
				}
				sf, of := sdkLog.method(t, "tools/call"), ownLog.method(t, "tools/call")
				if len(sf) != len(ownCallCases()) || len(of) != len(sf) {
					t.Fatalf("tools/call frames: go-sdk %d, own %d, want %d", len(sf), len(of), len(ownCallCases()))
				}
				for i := range sf {
					if string(sf[i]["params"]) != string(of[i]["params"]) || string(sf[i]["headers"]) != string(of[i]["headers"]) {
						t.Errorf("%s: params differ\n  go-sdk: %s %s\n  own:    %s %s", ownCallCases()[i].name, sf[i]["params"], sf[i]["headers"], of[i]["params"], of[i]["headers"])
					}
					if !strings.HasPrefix(string(of[i]["id"]), "-") || strings.HasPrefix(string(sf[i]["id"]), "-") {
						t.Errorf("%s: ids go-sdk %s, own %s: want the own call past the go-sdk (below zero)", ownCallCases()[i].name, sf[i]["id"], of[i]["id"])
					}
				}
				if triple := bytes.Contains(of[0]["params"], []byte(mcp.MetaKeyProtocolVersion)); triple != (version == "2026-07-28") {
					t.Errorf("leg %s: _meta triple sent = %v: %s", version, triple, of[0]["params"])
				}
			})
		}
	}
}

// Progress of a call sent past the go-sdk reaches OnProgress under the
// upstream token, all of it, in order, before the call returns.
func TestOwnToolCallProgress(t *testing.T) {
	for _, transport := range []string{"stdio", "http", "http-stateless"} {
		t.Run(transport, func(t *testing.T) {
			_, own, _, ownLog := startPaths(t, transport, "plain")
			var mu sync.Mutex
			var got []string
			o := CallOptions{Raw: &RawResult{}, OnProgress: func(n *mcp.ProgressNotificationParams) {
				mu.Lock()
				got = append(got, fmt.Sprintf("%v %v/%v %s", strings.HasPrefix(fmt.Sprint(n.ProgressToken), "github.com/mcp-toolsearch/mcp-toolsearch/"), n.Progress, n.Total, n.Message))
				mu.Unlock()
			}}
			if _, err := own.CallToolWith(context.Background(), "u", &mcp.CallToolParams{Name: "progress", Arguments: json.RawMessage(`{"n":25}`)}, o); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			n := len(got)
			mu.Unlock()
			if n != 25 {
				t.Fatalf("%d progress notifications before the result, want 25: %v", n, got)
			}
			for i, g := range got {
				if want := fmt.Sprintf("true %d/25 step %d", i+1, i+1); g != want {
					t.Errorf("progress %d = %q, want %q", i, g, want)
				}
			}
			if f := ownLog.method(t, "tools/call"); len(f) != 1 || !strings.HasPrefix(string(f[0]["id"]), "-") {
				t.Errorf("the call did not go past the go-sdk: %v", f)
			}
		})
	}
}

// When the caller's context ends, the upstream gets notifications/cancelled
// for the call's own id, for a plain call and for an own request
// (Manager.Request, the path of task calls).
func TestOwnToolCallCancelReachesUpstream(t *testing.T) {
	for _, transport := range []string{"stdio", "http"} { // a stateless server cannot cancel
		t.Run(transport, func(t *testing.T) {
			_, own, _, ownLog := startPaths(t, transport, "plain")
			for i, call := range []func(ctx context.Context) error{
				func(ctx context.Context) error {
					_, err := own.CallToolWith(ctx, "u", &mcp.CallToolParams{Name: "sleep", Arguments: json.RawMessage(`{"ms":60000}`)}, CallOptions{Raw: &RawResult{}})
					return err
				},
				func(ctx context.Context) error {
					_, err := own.Request(ctx, "u", nil, "tools/call", json.RawMessage(`{"name":"sleep","arguments":{"ms":60000}}`))
					return err
				},
			} {
				ctx, cancel := context.WithCancel(context.Background())
				go func() {
					waitFor(t, "the call upstream", func() bool { return len(ownLog.method(t, "tools/call")) > i })
					cancel()
				}()
				if err := call(ctx); !errors.Is(err, context.Canceled) {
					t.Errorf("call %d: %v, want context.Canceled", i, err)
				}
				calls := ownLog.method(t, "tools/call")
				id := string(calls[i]["id"])
				waitFor(t, "notifications/cancelled", func() bool {
					for _, c := range ownLog.method(t, "notifications/cancelled") {
						if string(c["params"]) == `{"reason":"context canceled","requestId":`+id+`}` {
							return true
						}
					}
					return false
				})
			}
			// The session still works.
			if _, err := own.CallToolWith(context.Background(), "u", &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"text":"x"}`)}, CallOptions{}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// An upstream that dies during a call past the go-sdk fails it at once
// with the error the go-sdk path gave (ErrUnavailable, same text up to
// the cause), and the upstream is reconnected.
func TestOwnToolCallUpstreamDeath(t *testing.T) {
	sdk, own, _, ownLog := startPaths(t, "stdio", "plain")
	var got [2]string
	for i, m := range []*Manager{sdk, own} {
		_, err := m.CallToolWith(context.Background(), "u", &mcp.CallToolParams{Name: "crash", Arguments: json.RawMessage(`{}`)}, CallOptions{Raw: &RawResult{}})
		got[i] = outcome(nil, nil, err)
	}
	// The cause after "calling" is the read error, or, when the child's
	// exit closed the connection first, that it was closed: either way
	// the same unavailable error up to it.
	prefix := func(s string) string { return s[:strings.Index(s, ": calling")] }
	if !strings.Contains(got[0], ": calling") || !strings.Contains(got[1], ": calling") || prefix(got[0]) != prefix(got[1]) || !strings.Contains(got[1], "unavailable true") {
		t.Errorf("upstream death:\n  go-sdk: %s\n  own:    %s", got[0], got[1])
	}
	if f := ownLog.method(t, "tools/call"); len(f) != 1 || !strings.HasPrefix(string(f[0]["id"]), "-") {
		t.Errorf("the call did not go past the go-sdk: %v", f)
	}
	waitFor(t, "reconnect", func() bool { st, _ := own.Status("u"); return st.State == StateReady && st.Restarts > 0 })
}

// Calls keep the go-sdk path where they must: a session whose go-sdk
// client answers input_required results itself, and the legacy SSE
// transport.
func TestOwnToolCallKeepsSDKPath(t *testing.T) {
	u, log := recordingUpstream(t, "u", "stdio", "plain")
	m, _ := startManager(t, []*config.Upstream{u}, Options{}) // multi-round-trip on
	if _, err := m.CallToolWith(context.Background(), "u", &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"text":"x"}`)}, CallOptions{Raw: &RawResult{}}); err != nil {
		t.Fatal(err)
	}
	if f := log.method(t, "tools/call"); len(f) != 1 || strings.HasPrefix(string(f[0]["id"]), "-") {
		t.Errorf("a session with the multi-round-trip middleware on went past the go-sdk: %v", f)
	}
	hs := newHTTPTestServer(t, true)
	ms, _ := startManager(t, []*config.Upstream{httpUpstream("sse", hs.URL, "sse")}, proxyLikeOptions())
	res, err := ms.CallToolWith(context.Background(), "sse", &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"text":"over sse"}`)}, CallOptions{Raw: &RawResult{}})
	if err != nil || textOf(t, res) != "over sse" {
		t.Errorf("SSE call: %v", err)
	}
}

// TestAppendCallParamsManyMetaKeys: a client's _meta with many keys (it
// sends as many as it likes; untrusted) is written once each, sorted,
// with the members the proxy adds (extra) and the 2026-07-28 triple not
// repeated where the client sent the same key: extra wins over the
// client's value, the client's over the triple's. Checking each key
// against every member collected so far is too slow (40k keys: 13.5 s;
// BenchmarkAppendCallParamsManyMeta).
func TestAppendCallParamsManyMetaKeys(t *testing.T) {
	meta := mcp.Meta{"progressToken": "client", "io.modelcontextprotocol/clientInfo": map[string]any{"name": "mine"}}
	for i := 0; i < 20000; i++ {
		meta[fmt.Sprintf("k%05d", i)] = i
	}
	l := &live{meta: []metaMember{{key: "io.modelcontextprotocol/clientInfo", val: []byte(`{"name":"triple"}`)}, {key: "io.modelcontextprotocol/protocolVersion", val: []byte(`"2026-07-28"`)}}}
	b, err := l.appendCallParams(nil, &mcp.CallToolParams{Name: "x", Meta: meta}, []metaMember{{key: "progressToken", val: []byte(`"proxy-7"`)}}, true)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("%v: %.200s", err, b)
	}
	if len(got.Meta) != 20003 || string(got.Meta["progressToken"]) != `"proxy-7"` || string(got.Meta["io.modelcontextprotocol/clientInfo"]) != `{"name":"mine"}` || string(got.Meta["io.modelcontextprotocol/protocolVersion"]) != `"2026-07-28"` {
		t.Errorf("%d members, progressToken %s, clientInfo %s, protocolVersion %s", len(got.Meta), got.Meta["progressToken"], got.Meta["io.modelcontextprotocol/clientInfo"], got.Meta["io.modelcontextprotocol/protocolVersion"])
	}
	if n := strings.Count(string(b), `"progressToken"`); n != 1 {
		t.Errorf("progressToken written %d times", n)
	}
}

func BenchmarkAppendCallParamsManyMeta(b *testing.B) {
	meta := mcp.Meta{}
	for i := 0; i < 40000; i++ {
		meta[fmt.Sprintf("k%d", i)] = 0
	}
	l := &live{}
	p := &mcp.CallToolParams{Name: "x", Meta: meta}
	extra := []metaMember{{key: "progressToken", val: []byte(`"t"`)}}
	for i := 0; i < b.N; i++ {
		if _, err := l.appendCallParams(nil, p, extra, false); err != nil {
			b.Fatal(err)
		}
	}
}

// An upstream that floods progress while the caller hands it to a client
// that does not read: at most progressQueueMax wait, the newest last
// (the queue must not grow without bound).
func TestProgressSinkBounded(t *testing.T) {
	var got []float64
	s := newProgressSink(func(n *mcp.ProgressNotificationParams) { got = append(got, n.Progress) })
	const sent = 100000
	for i := 1; i <= sent; i++ {
		s.push(&mcp.ProgressNotificationParams{ProgressToken: "t", Progress: float64(i)})
		s.mu.Lock()
		n := len(s.q)
		s.mu.Unlock()
		if n > progressQueueMax {
			t.Fatalf("%d progress notifications waiting after %d pushed, want at most %d", n, i, progressQueueMax)
		}
	}
	s.flush()
	if len(got) != progressQueueMax || got[len(got)-1] != sent {
		t.Fatalf("flushed %d notifications, last %v; want %d, the last the newest (%d)", len(got), got[len(got)-1], progressQueueMax, sent)
	}
	for i := 1; i < len(got); i++ {
		if got[i] <= got[i-1] {
			t.Fatalf("progress out of order at %d: %v then %v", i, got[i-1], got[i])
		}
	}
	if s.droppedCount() != sent-progressQueueMax {
		t.Errorf("droppedCount %d, want %d", s.droppedCount(), sent-progressQueueMax)
	}
}
