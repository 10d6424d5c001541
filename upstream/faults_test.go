package upstream

// Broken and hostile upstream servers. Each test runs a raw fake
// upstream (internal/fakeupstream) that produces one kind of fault.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
	"github.com/mcp-toolsearch/mcp-toolsearch/ingest"
	"github.com/mcp-toolsearch/mcp-toolsearch/internal/fakeupstream"
)

func fakeUpstream(name, scenario string) *config.Upstream {
	return stdioUpstream(name, "fake:"+scenario)
}

func diagFor(ds []ingest.Diagnostic, tool string) *ingest.Diagnostic {
	for i := range ds {
		if ds[i].Tool == tool {
			return &ds[i]
		}
	}
	return nil
}

// Each tool is checked on its own; the healthy tool always
// survives, fixable schemas are normalised, a string root is quarantined
// with a diagnostic in the status (list/check) and the log.
func TestIngestOddSchemas(t *testing.T) {
	m, rec := startManager(t, []*config.Upstream{fakeUpstream("odd", "oddschemas")}, Options{})
	st, _ := m.Status("odd")
	if st.State != StateReady {
		t.Fatalf("state %s: %s", st.State, st.Err)
	}
	got := toolNames(m.Tools("odd"))
	want := []string{"anyvalue", "draft7", "emptyschema", "healthy", "oneof"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("tools %v, want %v", got, want)
	}
	for _, tool := range m.Tools("odd") {
		var s struct {
			Type string `json:"type"`
		}
		raw, _ := tool.InputSchema.(json.RawMessage)
		if err := json.Unmarshal(raw, &s); err != nil || s.Type != "object" {
			t.Errorf("%s: inputSchema %s has no root type object", tool.Name, raw)
		}
	}
	d := diagFor(st.Diagnostics, "stringroot")
	if d == nil || d.Action != ingest.Quarantined || !strings.Contains(d.Detail, `root type is "string"`) {
		t.Fatalf("stringroot diagnostic %+v", d)
	}
	if d := diagFor(st.Diagnostics, "draft7"); d == nil || d.Action != ingest.Normalised || !strings.Contains(string(d.Original), "draft-07") {
		t.Fatalf("draft7 diagnostic %+v", d)
	}
	if !strings.Contains(rec.log.String(), "tool quarantined") || !strings.Contains(rec.log.String(), "stringroot") {
		t.Errorf("log does not name the quarantined tool:\n%s", rec.log.String())
	}
}

// An upstream that lists zero tools is healthy: ready, with an
// empty (not nil) listing handed to OnToolsChanged.
func TestZeroToolsIsHealthy(t *testing.T) {
	var mu sync.Mutex
	var calls []string // "nil" or "n=<len>"
	rec := newRecorder()
	opts := rec.options(Options{})
	opts.OnToolsChanged = func(up string, tools []*mcp.Tool) {
		mu.Lock()
		defer mu.Unlock()
		if tools == nil {
			calls = append(calls, "nil")
		} else {
			calls = append(calls, "n="+string(rune('0'+len(tools))))
		}
	}
	m2 := NewManager([]*config.Upstream{fakeUpstream("zero", "zerotools")}, opts)
	t.Cleanup(func() { _ = m2.Close(context.Background()) })
	m2.Start(context.Background())
	if _, err := m2.CallTool(context.Background(), "zero", &mcp.CallToolParams{Name: "clear", Arguments: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the empty re-listing", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(calls) >= 2
	})
	mu.Lock()
	got := strings.Join(calls, ",")
	mu.Unlock()
	if got != "n=2,n=0" {
		t.Fatalf("OnToolsChanged calls %s, want n=2,n=0", got)
	}
	st, _ := m2.Status("zero")
	if st.State != StateReady || st.Tools != 0 {
		t.Fatalf("status %+v, want ready with 0 tools", st)
	}
}

// One tool nesting 1,500 levels is quarantined; the other five
// tools of its upstream stay.
func TestDeepSchemaQuarantinedAlone(t *testing.T) {
	m, _ := startManager(t, []*config.Upstream{fakeUpstream("deep", "deep")}, Options{})
	st, _ := m.Status("deep")
	if st.State != StateReady {
		t.Fatalf("state %s: %s", st.State, st.Err)
	}
	if got := strings.Join(toolNames(m.Tools("deep")), ","); got != "five,four,one,three,two" {
		t.Fatalf("tools %s", got)
	}
	d := diagFor(st.Diagnostics, "deep")
	if d == nil || d.Action != ingest.Quarantined || !strings.Contains(d.Detail, "JSON nesting deeper than 512 levels") {
		t.Fatalf("deep diagnostic %+v", d)
	}
}

// fakeHTTP serves h on a test server and returns its upstream config.
func fakeHTTP(t *testing.T, name string, h *fakeupstream.HTTP) *config.Upstream {
	t.Helper()
	if h.Scenario == nil {
		h.Scenario = fakeupstream.Named("plain")
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	u := &config.Upstream{Name: name, URL: srv.URL + "/mcp"}
	u.StartupTimeout.Duration = 5 * time.Second
	return u
}

func callText(t *testing.T, m *Manager, up, tool string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := m.CallTool(ctx, up, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
	if err != nil {
		return "", err
	}
	return textOf(t, res), nil
}

// An upstream that holds GET /mcp open without headers is ready
// at once (next to a healthy stdio upstream), and its calls work.
func TestHTTPStallingGETDoesNotBlock(t *testing.T) {
	h := &fakeupstream.HTTP{GET: "stall"}
	m, _ := startManager(t, []*config.Upstream{fakeHTTP(t, "stall", h), fakeUpstream("healthy", "plain")}, Options{})
	for _, up := range []string{"stall", "healthy"} {
		if st, _ := m.Status(up); st.State != StateReady {
			t.Fatalf("%s: %s %s", up, st.State, st.Err)
		}
		if got, err := callText(t, m, up, "echo"); err != nil || got != "called echo" {
			t.Fatalf("%s: %q %v", up, got, err)
		}
	}
	if h.GETs.Load() == 0 {
		t.Error("the GET stream was never opened")
	}
}

// A GET stream that sends pings without ids, closes after 0.3 s
// and then answers 405 never tears the session down.
func TestHTTPFlakyGETKeepsSession(t *testing.T) {
	h := &fakeupstream.HTTP{GET: "flaky"}
	m, _ := startManager(t, []*config.Upstream{fakeHTTP(t, "flaky", h)}, Options{})
	deadline := time.Now().Add(2500 * time.Millisecond) // past the flap and the 405 retry
	n := 0
	for time.Now().Before(deadline) || h.GETs.Load() < 2 {
		if _, err := callText(t, m, "flaky", "echo"); err != nil {
			t.Fatalf("call %d: %v", n, err)
		}
		n++
		time.Sleep(50 * time.Millisecond)
	}
	st, _ := m.Status("flaky")
	if st.State != StateReady || st.Restarts != 0 || h.Initializes.Load() != 1 {
		t.Fatalf("after %d calls: state %s, restarts %d, initializes %d (want ready, 0, 1)", n, st.State, st.Restarts, h.Initializes.Load())
	}
}

// An HTTP 200 body that is not JSON-RPC fails that call only.
func TestHTTPNonJSONRPCBodyFailsOneCall(t *testing.T) {
	h := &fakeupstream.HTTP{Answer: func(m *fakeupstream.Msg) (int, string, string, bool) {
		if strings.Contains(string(m.Params), `"bad"`) {
			return 200, "application/json", `{"status":"ok","note":"this is not JSON-RPC"}`, true
		}
		if strings.Contains(string(m.Params), `"html"`) {
			return 200, "text/html", `<html>proxy error</html>`, true
		}
		return 0, "", "", false
	}}
	m, _ := startManager(t, []*config.Upstream{fakeHTTP(t, "odd", h)}, Options{})
	for _, tool := range []string{"bad", "html"} {
		_, err := callText(t, m, "odd", tool)
		if err == nil || !strings.Contains(err.Error(), "upstream") || errors.Is(err, ErrUnavailable) {
			t.Fatalf("%s: err %v (want a failed call naming the cause, upstream still available)", tool, err)
		}
		t.Logf("%s: %v", tool, err)
	}
	if got, err := callText(t, m, "odd", "echo"); err != nil || got != "called echo" {
		t.Fatalf("next call: %q %v", got, err)
	}
	if st, _ := m.Status("odd"); st.Restarts != 0 || h.Initializes.Load() != 1 {
		t.Fatalf("the session was restarted: %+v, initializes %d", st, h.Initializes.Load())
	}
}

// One cap for every transport: an HTTP answer past it becomes an
// isError result naming the size and the cap; the session stays (JSON and
// event-stream answers, on the go-sdk's path and past it).
func TestHTTPOversizedAnswer(t *testing.T) {
	for _, path := range []string{"go-sdk", "own"} {
		for _, sse := range []bool{false, true} {
			for _, size := range []int{3 << 20, 12 << 20} { // 12 MiB: an event past 4 times the cap is cut off
				t.Run(fmt.Sprintf("%s/sse=%v/%dMiB", path, sse, size>>20), func(t *testing.T) {
					o := Options{}
					if path == "own" {
						o = proxyLikeOptions()
					}
					o.MaxMessageBytes = 1 << 20
					testHTTPOversizedAnswer(t, sse, o, size)
				})
			}
		}
	}
}

func testHTTPOversizedAnswer(t *testing.T, sse bool, o Options, size int) {
	sc := &fakeupstream.Scenario{Call: func(s *fakeupstream.Session, name string, _ json.RawMessage) string {
		if name == "big" {
			return fakeupstream.TextResult(strings.Repeat("x", size))
		}
		return fakeupstream.EchoResult(name)
	}}
	h := &fakeupstream.HTTP{Scenario: sc, SSE: sse}
	m, rec := startManager(t, []*config.Upstream{fakeHTTP(t, "big", h)}, o)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	res, err := m.CallTool(ctx, "big", &mcp.CallToolParams{Name: "big", Arguments: map[string]any{}})
	cancel()
	if err != nil || !res.IsError || !strings.Contains(textOf(t, res), "exceeds the cap of 1048576 bytes") {
		t.Fatalf("res %+v err %v", res, err)
	}
	// One WARN for the failed call, naming its method (not twice, the second
	// WARN with method="", for a JSON answer).
	logs := rec.log.String()
	if n := strings.Count(logs, "upstream answer too large"); n != 1 || !strings.Contains(logs, "method=tools/call") || strings.Contains(logs, `method=""`) {
		t.Fatalf("want one WARN naming method=tools/call, got %d in:\n%s", n, logs)
	}
	if got, err := callText(t, m, "big", "echo"); err != nil || got != "called echo" {
		t.Fatalf("next call %q %v", got, err)
	}
}

// An upstream that lost the session after a restart and says so
// with HTTP 404, HTTP 400 / -32600, a JSON-RPC error in a 200 event
// stream, or a bare {"error":"Session not found"} event (not JSON-RPC),
// is initialized again and the call retried once: the call succeeds.
func TestHTTPLostSessionRetried(t *testing.T) {
	for _, lost := range []string{"404", "400", "sse-error", "sse-bare"} {
		h := &fakeupstream.HTTP{Lost: lost}
		m, _ := startManager(t, []*config.Upstream{fakeHTTP(t, "re", h)}, Options{})
		if _, err := callText(t, m, "re", "echo"); err != nil {
			t.Fatal(err)
		}
		h.Forget()
		if got, err := callText(t, m, "re", "echo"); err != nil || got != "called echo" {
			t.Fatalf("lost=%s: the first call after the restart: %q %v", lost, got, err)
		}
		if n := h.Initializes.Load(); n != 2 {
			t.Errorf("lost=%s: %d initializes, want 2", lost, n)
		}
	}
}

// Upstream side, HTTP: a request of the upstream with id 1.5 is
// answered with id 1.5.
func TestHTTPUpstreamRequestIDExact(t *testing.T) {
	h := &fakeupstream.HTTP{BeforeAnswer: func(m *fakeupstream.Msg) []string {
		return []string{`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, `{"jsonrpc":"2.0","id":1180591620717411303424,"method":"ping"}`}
	}}
	m, _ := startManager(t, []*config.Upstream{fakeHTTP(t, "ids", h)}, Options{})
	if _, err := callText(t, m, "ids", "echo"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the answers to the upstream's pings", func() bool { return len(h.AnswerIDs()) >= 2 })
	ids := h.AnswerIDs()
	slices.Sort(ids)
	if got := strings.Join(ids, ","); got != "1.5,1180591620717411303424" {
		t.Fatalf("answer ids %s", got)
	}
}

// The legacy HTTP+SSE transport holds the cap too, while the event is
// read (the go-sdk's own bound was 16 MiB whatever the cap): an answer
// past it ends that session with the go-sdk's error, the call fails, and
// the manager connects again.
func TestLegacySSEOversizedAnswer(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "legacy", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "big", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("x", 3<<20)}}}, nil
	})
	s.AddTool(&mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "called echo"}}}, nil
	})
	srv := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	u := &config.Upstream{Name: "legacy", URL: srv.URL, Transport: "sse"}
	u.StartupTimeout.Duration = 5 * time.Second
	m, rec := startManager(t, []*config.Upstream{u}, Options{MaxMessageBytes: 1 << 20})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	res, err := m.CallTool(ctx, "legacy", &mcp.CallToolParams{Name: "big", Arguments: map[string]any{}})
	cancel()
	if err == nil && !res.IsError {
		t.Fatalf("a 3 MiB answer past a 1 MiB cap was delivered (%d bytes)", len(textOf(t, res)))
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := callText(t, m, "legacy", "echo")
		if err == nil && got == "called echo" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no call works after the oversized answer: %q %v\n%s", got, err, rec.log.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if !strings.Contains(rec.log.String(), "SSE event past the cap") {
		t.Errorf("the log does not say why the session ended:\n%s", rec.log.String())
	}
}

// One burst of notifications/tools/list_changed (five, 1 to 13 ms apart,
// the tool list growing with each) is one re-listing handed on
// (OnToolsChanged: one client notification), holding the final list, in
// each of 12 bursts.
func TestListChangedBurstIsOneChange(t *testing.T) {
	m, rec := startManager(t, []*config.Upstream{stdioUpstream("b", "fake:burst")}, Options{})
	seen := func() [][]string {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return append([][]string(nil), rec.lists["b"]...)
	}
	before := len(seen()) // the first listing
	for burst := 1; burst <= 12; burst++ {
		if _, err := callText(t, m, "b", "burst"); err != nil {
			t.Fatal(err)
		}
		want := 1 + 5*burst
		waitFor(t, "the burst's last tool listed", func() bool { return len(m.Tools("b")) == want })
		time.Sleep(400 * time.Millisecond) // a second re-listing would come within relistGap
		lists := seen()
		var got []int
		for _, l := range lists[before:] {
			got = append(got, len(l))
		}
		before = len(lists)
		if len(got) != 1 || got[0] != want {
			t.Errorf("burst %d: re-listings handed on with %v tools, want one with %d", burst, got, want)
		}
	}
}
