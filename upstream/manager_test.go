package upstream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
)

// logBuffer is a goroutine-safe log sink that tests can search.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// recorder collects the callbacks of a Manager.
type recorder struct {
	mu       sync.Mutex
	lists    map[string][][]string // tool names per OnToolsChanged call
	statuses []Status
	hook     func(Status) // optional, called outside mu
	log      *logBuffer
}

func newRecorder() *recorder {
	return &recorder{lists: map[string][][]string{}, log: &logBuffer{}}
}

func (r *recorder) options(o Options) Options {
	o.Logger = slog.New(slog.NewTextHandler(r.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	o.OnToolsChanged = func(up string, tools []*mcp.Tool) {
		var names []string
		if tools != nil {
			names = toolNames(tools)
		}
		r.mu.Lock()
		r.lists[up] = append(r.lists[up], names)
		r.mu.Unlock()
	}
	o.OnStatus = func(s Status) {
		r.mu.Lock()
		r.statuses = append(r.statuses, s)
		h := r.hook
		r.mu.Unlock()
		if h != nil {
			h(s)
		}
	}
	if o.BackoffMin == 0 {
		o.BackoffMin = 10 * time.Millisecond
		o.BackoffMax = 50 * time.Millisecond
	}
	if o.Grace == 0 {
		o.Grace = 2 * time.Second
	}
	return o
}

func (r *recorder) lastList(up string) ([]string, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.lists[up]
	if len(l) == 0 {
		return nil, 0
	}
	return l[len(l)-1], len(l)
}

func toolNames(tools []*mcp.Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Name)
	}
	slices.Sort(out)
	return out
}

// waitFor polls cond until it holds; it fails the test after a generous
// deadline (this is a liveness bound, not a speed assertion).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func stdioUpstream(name, mode string) *config.Upstream {
	u := &config.Upstream{
		Name:    name,
		Command: os.Args[0],
		Env:     map[string]string{testServerEnv: mode},
	}
	u.StartupTimeout.Duration = 30 * time.Second
	return u
}

func startManager(t *testing.T, ups []*config.Upstream, o Options) (*Manager, *recorder) {
	t.Helper()
	rec := newRecorder()
	m := NewManager(ups, rec.options(o))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := m.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	m.Start(context.Background())
	return m, rec
}

func textOf(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if res == nil || len(res.Content) == 0 {
		t.Fatalf("empty result %+v", res)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content is %T, want *mcp.TextContent", res.Content[0])
	}
	return tc.Text
}

func childPid(t *testing.T, m *Manager, name string) int {
	t.Helper()
	c := m.conns[name]
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cur == nil || c.cur.child == nil {
		t.Fatalf("%s has no live child", name)
	}
	return c.cur.child.pid
}

var wantInitialTools = []string{"add_tool", "big", "crash", "echo", "sleep"}

func TestStdioStartListCallBanner(t *testing.T) {
	m, rec := startManager(t, []*config.Upstream{stdioUpstream("alpha", "banner")}, Options{})

	st, ok := m.Status("alpha")
	if !ok || st.State != StateReady {
		t.Fatalf("status = %+v, want ready", st)
	}
	// PageSize is 2, so all 5 tools mean 3 pages were followed.
	if got := toolNames(m.Tools("alpha")); !slices.Equal(got, wantInitialTools) {
		t.Fatalf("tools = %v, want %v", got, wantInitialTools)
	}
	if st.Tools != testToolCount {
		t.Errorf("Status.Tools = %d, want %d", st.Tools, testToolCount)
	}
	if got, n := rec.lastList("alpha"); n != 1 || !slices.Equal(got, wantInitialTools) {
		t.Errorf("OnToolsChanged calls = %d, last %v; want 1 call with %v", n, got, wantInitialTools)
	}
	res, err := m.CallTool(context.Background(), "alpha", &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := textOf(t, res); got != "hello" {
		t.Errorf("echo = %q, want hello", got)
	}
	if !strings.Contains(rec.log.String(), "this banner is not JSON") {
		t.Errorf("banner line was not logged as skipped; log:\n%s", rec.log.String())
	}
	if !strings.Contains(rec.log.String(), "test server serving on stdio") {
		t.Errorf("child stderr was not logged")
	}
	if m.Session("alpha") == nil {
		t.Error("Session(alpha) = nil while ready")
	}
	if m.Session("nope") != nil || m.Tools("nope") != nil {
		t.Error("unknown upstream has a session or tools")
	}
}

func TestStdioLargeMessage(t *testing.T) {
	m, _ := startManager(t, []*config.Upstream{stdioUpstream("alpha", "plain")}, Options{})
	const size = 12 << 20
	res, err := m.CallTool(context.Background(), "alpha", &mcp.CallToolParams{Name: "big", Arguments: map[string]any{"bytes": size}})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(textOf(t, res)); got != size {
		t.Errorf("len = %d, want %d", got, size)
	}
}

func TestListChangedRefresh(t *testing.T) {
	var theirs atomic.Int32
	o := Options{ClientOptions: func(up string) *mcp.ClientOptions {
		return &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { theirs.Add(1) }}
	}}
	m, rec := startManager(t, []*config.Upstream{stdioUpstream("alpha", "plain")}, o)
	res, err := m.CallTool(context.Background(), "alpha", &mcp.CallToolParams{Name: "add_tool"})
	if err != nil {
		t.Fatal(err)
	}
	if textOf(t, res) != "extra_1" {
		t.Fatalf("add_tool = %q", textOf(t, res))
	}
	want := append(slices.Clone(wantInitialTools), "extra_1")
	slices.Sort(want)
	waitFor(t, "re-listing with extra_1", func() bool { return slices.Equal(toolNames(m.Tools("alpha")), want) })
	waitFor(t, "OnToolsChanged with extra_1", func() bool { got, _ := rec.lastList("alpha"); return slices.Equal(got, want) })
	waitFor(t, "the hook's list_changed handler", func() bool { return theirs.Load() > 0 })
	res, err = m.CallTool(context.Background(), "alpha", &mcp.CallToolParams{Name: "extra_1"})
	if err != nil || textOf(t, res) != "extra_1" {
		t.Fatalf("extra_1 = %v, %v", res, err)
	}
}

// TestRelistCutByCloseIsQuiet: a re-listing after list_changed that the
// proxy's own shutdown cuts (every one-shot command on an upstream that
// sends list_changed at start, as server-everything does) is not logged as
// a failed listing.
func TestRelistCutByCloseIsQuiet(t *testing.T) {
	rec := newRecorder()
	m := NewManager([]*config.Upstream{stdioUpstream("alpha", "plain,slowrelist")}, rec.options(Options{Grace: 200 * time.Millisecond}))
	m.Start(context.Background())
	if _, err := m.CallTool(context.Background(), "alpha", &mcp.CallToolParams{Name: "add_tool"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the re-listing to be in flight", func() bool { return strings.Contains(rec.log.String(), "relist held") })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := m.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if log := rec.log.String(); strings.Contains(log, "after list_changed failed") {
		t.Errorf("the re-listing cut by Close was logged as a failure:\n%s", log)
	}
}

func TestCrashFailsThenRecovers(t *testing.T) {
	rec := newRecorder()
	release := make(chan struct{})
	failed := make(chan Status, 1)
	var once sync.Once
	rec.hook = func(s Status) {
		if s.State == StateFailed {
			once.Do(func() {
				failed <- s
				<-release // hold the supervisor: the upstream stays down
			})
		}
	}
	m := NewManager([]*config.Upstream{stdioUpstream("alpha", "plain")}, rec.options(Options{}))
	defer m.Close(context.Background())
	m.Start(context.Background())
	pid := childPid(t, m, "alpha")

	_, err := m.CallTool(context.Background(), "alpha", &mcp.CallToolParams{Name: "crash"})
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), `"alpha"`) {
		t.Fatalf("crash call: %v; want ErrUnavailable naming alpha", err)
	}
	st := <-failed
	if !strings.Contains(st.Err, "exited with status 3") || !strings.Contains(st.Err, "crashing on purpose") {
		t.Errorf("failure reason = %q, want the exit status and last stderr line", st.Err)
	}
	if got, _ := rec.lastList("alpha"); got != nil {
		t.Errorf("OnToolsChanged after crash = %v, want nil", got)
	}
	if m.Tools("alpha") != nil || m.Session("alpha") != nil {
		t.Error("tools or session still present while failed")
	}
	_, err = m.CallTool(context.Background(), "alpha", &mcp.CallToolParams{Name: "echo"})
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), `"alpha"`) || !strings.Contains(err.Error(), "exited with status 3") {
		t.Errorf("call while down: %v; want ErrUnavailable naming alpha and the reason", err)
	}
	if err != nil && strings.Contains(err.Error(), "crashing on purpose") { // the model reads it
		t.Errorf("call while down: %v; want the reason in the proxy's words (Status.Cause), not the upstream's stderr", err)
	}
	if !pidGone(pid) {
		t.Errorf("crashed child %d not reaped", pid)
	}
	close(release)

	waitFor(t, "ready again", func() bool { s, _ := m.Status("alpha"); return s.State == StateReady })
	st, _ = m.Status("alpha")
	if st.Restarts < 1 || st.Err != "" {
		t.Errorf("status after recovery = %+v, want Restarts >= 1 and no error", st)
	}
	if pid2 := childPid(t, m, "alpha"); pid2 == pid {
		t.Errorf("same pid %d after restart", pid)
	}
	res, err := m.CallTool(context.Background(), "alpha", &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "back"}})
	if err != nil || textOf(t, res) != "back" {
		t.Fatalf("echo after recovery = %v, %v", res, err)
	}
	if got, _ := rec.lastList("alpha"); !slices.Equal(got, wantInitialTools) {
		t.Errorf("OnToolsChanged after reconnect = %v", got)
	}
}

func TestStartupFailuresDoNotBlockOthers(t *testing.T) {
	missing := &config.Upstream{Name: "missing", Command: "nosuchcmd-upstream-test"}
	hang := stdioUpstream("hang", "hang")
	hang.StartupTimeout.Duration = 200 * time.Millisecond
	ups := []*config.Upstream{
		stdioUpstream("good", "plain"),
		missing,
		stdioUpstream("failing", "failstart"),
		hang,
	}
	m, rec := startManager(t, ups, Options{Grace: 100 * time.Millisecond, BackoffMin: time.Hour, BackoffMax: time.Hour})
	if got := m.Names(); !slices.Equal(got, []string{"failing", "good", "hang", "missing"}) {
		t.Errorf("Names = %v", got)
	}
	want := map[string]struct {
		state State
		err   string
	}{
		"good":    {StateReady, ""},
		"missing": {StateFailed, `exec: "nosuchcmd-upstream-test": executable file not found in $PATH`},
		"failing": {StateFailed, "exited with status 1: boom: bad config"},
		"hang":    {StateFailed, "initialize: "},
	}
	sts := m.Statuses()
	if len(sts) != 4 {
		t.Fatalf("Statuses = %+v", sts)
	}
	for _, st := range sts {
		w := want[st.Name]
		if st.State != w.state {
			t.Errorf("%s: state %s (%q), want %s", st.Name, st.State, st.Err, w.state)
		}
		if w.err == "" && st.Err != "" || !strings.Contains(st.Err, w.err) {
			t.Errorf("%s: err %q, want it to contain %q", st.Name, st.Err, w.err)
		}
	}
	if st, _ := m.Status("hang"); !strings.Contains(st.Err, "startup_timeout (") || !strings.Contains(st.Err, "exceeded") {
		t.Errorf("hang: err %q, want it to name startup_timeout", st.Err)
	}
	if got, n := rec.lastList("failing"); n != 1 || got != nil {
		t.Errorf("failing: OnToolsChanged = %d calls, last %v; want one nil", n, got)
	}
	_, err := m.CallTool(context.Background(), "missing", &mcp.CallToolParams{Name: "x"})
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), `"missing"`) {
		t.Errorf("call to failed upstream: %v", err)
	}
	_, err = m.CallTool(context.Background(), "nope", &mcp.CallToolParams{Name: "x"})
	if !errors.Is(err, ErrUnknownUpstream) || !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("call to unknown upstream: %v", err)
	}
}

func TestCloseKillsChildren(t *testing.T) {
	// The polite child exits when its stdin closes (a long grace proves it
	// needed no signal); the stubborn one ignores stdin EOF and SIGTERM.
	politeM := NewManager([]*config.Upstream{stdioUpstream("polite", "plain")}, newRecorder().options(Options{Grace: 20 * time.Second}))
	politeM.Start(context.Background())
	rec := newRecorder()
	m := NewManager([]*config.Upstream{stdioUpstream("stubborn", "trapterm")}, rec.options(Options{Grace: 100 * time.Millisecond}))
	m.Start(context.Background())
	polite, stubborn := childPid(t, politeM, "polite"), childPid(t, m, "stubborn")
	stubbornChild := m.conns["stubborn"].cur.child
	politeChild := politeM.conns["polite"].cur.child
	if err := m.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := politeM.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, pid := range []int{polite, stubborn} {
		if !pidGone(pid) {
			t.Errorf("child %d still exists after Close", pid)
		}
	}
	// The same words on every OS (on Windows it read "exited
	// with status 1", the code proc's job kill used).
	const killedAfterGrace = "killed by the proxy (the upstream is stopping: proxy shutdown or reload; still running 100ms after its stdin was closed"
	if r := stubbornChild.reason(); !strings.Contains(r, killedAfterGrace) {
		t.Errorf("stubborn child exit = %q, want %q (killed after the grace period)", r, killedAfterGrace)
	}
	if r := politeChild.reason(); r != "exited with status 0: test server serving on stdio" {
		t.Errorf("polite child exit = %q, want a clean exit after stdin closed", r)
	}
	for _, st := range m.Statuses() {
		if st.State != StateStopped {
			t.Errorf("%s: state %s after Close", st.Name, st.State)
		}
	}
	if got, _ := rec.lastList("stubborn"); got != nil {
		t.Errorf("OnToolsChanged after Close = %v, want nil", got)
	}
	if err := m.Close(context.Background()); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestPaginationLimits(t *testing.T) {
	t.Run("repeated cursor", func(t *testing.T) {
		m, rec := startManager(t, []*config.Upstream{stdioUpstream("rep", "repeatcursor")}, Options{})
		// Page 1 holds add_tool and big; the repeated cursor stops the loop
		// after the duplicate second page.
		if got := toolNames(m.Tools("rep")); !slices.Equal(got, []string{"add_tool", "big"}) {
			t.Errorf("tools = %v", got)
		}
		if !strings.Contains(rec.log.String(), "repeated a cursor") {
			t.Error("no warning about the repeated cursor")
		}
	})
	t.Run("max pages", func(t *testing.T) {
		m, rec := startManager(t, []*config.Upstream{stdioUpstream("capped", "plain")}, Options{MaxPages: 2})
		if got := len(m.Tools("capped")); got != 4 {
			t.Errorf("tools = %d, want 4 (2 pages of 2)", got)
		}
		if !strings.Contains(rec.log.String(), "page limit reached") {
			t.Error("no warning about the page limit")
		}
	})
}

func TestCallErrors(t *testing.T) {
	u := stdioUpstream("alpha", "plain")
	u.CallTimeout.Duration = 100 * time.Millisecond
	m, _ := startManager(t, []*config.Upstream{u}, Options{})

	_, err := m.CallTool(context.Background(), "alpha", &mcp.CallToolParams{Name: "no_such_tool"})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || !strings.Contains(err.Error(), `"alpha"`) {
		t.Fatalf("unknown tool: %v; want a *jsonrpc.Error naming the upstream", err)
	}
	if errors.Is(err, ErrUnavailable) {
		t.Error("a JSON-RPC error must not read as unavailable")
	}

	_, err = m.CallTool(context.Background(), "alpha", &mcp.CallToolParams{Name: "sleep", Arguments: map[string]any{"ms": 60000}})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "call_timeout") {
		t.Fatalf("slow call: %v; want call_timeout exceeded", err)
	}
	if st, _ := m.Status("alpha"); st.State != StateReady {
		t.Errorf("state after a timeout = %s, want ready", st.State)
	}
	res, err := m.CallTool(context.Background(), "alpha", &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "still"}})
	if err != nil || textOf(t, res) != "still" {
		t.Fatalf("echo after timeout = %v, %v", res, err)
	}
}

// httpTestServer serves newTestServer over Streamable HTTP or SSE, requires
// the header X-Test-Token: secret, and answers 404 to the next `reject`
// requests that carry a session id (a server that forgot the session).
type httpTestServer struct {
	*httptest.Server
	reject atomic.Int32
	seen   atomic.Int32 // requests with the right token
}

func newHTTPTestServer(t *testing.T, sse bool) *httpTestServer {
	srv := newTestServer("", false)
	h := &httpTestServer{}
	var inner http.Handler
	if sse {
		inner = mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	} else {
		inner = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Test-Token") != "secret" {
			http.Error(w, "missing token", http.StatusUnauthorized)
			return
		}
		h.seen.Add(1)
		if r.Method == http.MethodPost && h.reject.Load() > 0 {
			h.reject.Add(-1)
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(h.Server.Close)
	return h
}

func httpUpstream(name, url, transport string) *config.Upstream {
	u := &config.Upstream{Name: name, URL: url, Transport: transport, Headers: map[string]string{"X-Test-Token": "secret"}}
	u.StartupTimeout.Duration = 30 * time.Second
	return u
}

func TestStreamableHTTP(t *testing.T) {
	hs := newHTTPTestServer(t, false)
	m, rec := startManager(t, []*config.Upstream{httpUpstream("web", hs.URL, "")}, Options{})
	if st, _ := m.Status("web"); st.State != StateReady {
		t.Fatalf("status = %+v", st)
	}
	if hs.seen.Load() == 0 {
		t.Fatal("no request carried the configured header")
	}
	if got := toolNames(m.Tools("web")); !slices.Equal(got, wantInitialTools) {
		t.Fatalf("tools = %v", got)
	}
	res, err := m.CallTool(context.Background(), "web", &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "over http"}})
	if err != nil || textOf(t, res) != "over http" {
		t.Fatalf("echo = %v, %v", res, err)
	}
	if _, err := m.CallTool(context.Background(), "web", &mcp.CallToolParams{Name: "add_tool"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "list_changed over HTTP", func() bool { return slices.Contains(toolNames(m.Tools("web")), "extra_1") })

	// The server forgets the session (HTTP 404): the upstream is
	// initialized again and the call is resent once on the new session.
	hs.reject.Store(1)
	res, err = m.CallTool(context.Background(), "web", &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
	if err != nil || textOf(t, res) != "x" {
		t.Fatalf("call with a forgotten session = %v, %v; want it resent after a new initialize", res, err)
	}
	if s, _ := m.Status("web"); s.Restarts < 1 {
		t.Errorf("restarts = %d after the forgotten session, want >= 1", s.Restarts)
	}
	res, err = m.CallTool(context.Background(), "web", &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "again"}})
	if err != nil || textOf(t, res) != "again" {
		t.Fatalf("echo after reconnect = %v, %v", res, err)
	}
	rec.mu.Lock()
	sawFailed := slices.ContainsFunc(rec.statuses, func(s Status) bool { return s.Name == "web" && s.State == StateFailed })
	rec.mu.Unlock()
	if !sawFailed {
		t.Error("no failed status was reported")
	}
}

func TestSSE(t *testing.T) {
	hs := newHTTPTestServer(t, true)
	m, _ := startManager(t, []*config.Upstream{httpUpstream("legacy", hs.URL, "sse")}, Options{})
	if st, _ := m.Status("legacy"); st.State != StateReady {
		t.Fatalf("status = %+v", st)
	}
	if got := toolNames(m.Tools("legacy")); !slices.Equal(got, wantInitialTools) {
		t.Fatalf("tools = %v", got)
	}
	res, err := m.CallTool(context.Background(), "legacy", &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "over sse"}})
	if err != nil || textOf(t, res) != "over sse" {
		t.Fatalf("echo = %v, %v", res, err)
	}
	if _, err := m.CallTool(context.Background(), "legacy", &mcp.CallToolParams{Name: "add_tool"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "list_changed over SSE", func() bool { return slices.Contains(toolNames(m.Tools("legacy")), "extra_1") })
}

func TestHTTPBadConfig(t *testing.T) {
	ups := []*config.Upstream{
		{Name: "badscheme", URL: "ftp://example.com/mcp"},
		{Name: "badtransport", URL: "http://127.0.0.1:1/mcp", Transport: "websocket"},
		{Name: "both", URL: "http://127.0.0.1:1/mcp", Command: "x"},
	}
	m, _ := startManager(t, ups, Options{BackoffMin: time.Hour, BackoffMax: time.Hour})
	want := map[string]string{
		"badscheme":    `scheme must be http or https`,
		"badtransport": `transport "websocket"`,
		"both":         "both command and url are set",
	}
	for name, w := range want {
		st, _ := m.Status(name)
		if st.State != StateFailed || !strings.Contains(st.Err, w) {
			t.Errorf("%s: %+v, want failed with %q", name, st, w)
		}
	}
}

func TestDisabledUpstreamSkipped(t *testing.T) {
	off := false
	m := NewManager([]*config.Upstream{{Name: "off", Command: "x", Enabled: &off}, nil}, Options{})
	if len(m.Names()) != 0 {
		t.Errorf("Names = %v, want none", m.Names())
	}
	if _, ok := m.Status("off"); ok {
		t.Error("disabled upstream has a status")
	}
	if err := m.Close(context.Background()); err != nil {
		t.Error(err)
	}
}

func ExampleManager() {
	u := &config.Upstream{Name: "fs", Command: "nosuchcmd-example"}
	m := NewManager([]*config.Upstream{u}, Options{Logger: slog.New(slog.DiscardHandler), BackoffMin: time.Hour})
	m.Start(context.Background())
	st, _ := m.Status("fs")
	fmt.Println(st.State, st.Err)
	_ = m.Close(context.Background())
	// Output: failed exec: "nosuchcmd-example": executable file not found in $PATH
}
