package telemetry

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// stepClock returns a clock that advances by 1 ms on every reading, so
// durations in records are deterministic.
func stepClock() func() time.Time {
	var mu sync.Mutex
	t := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Millisecond)
		return t
	}
}

func newTestRecorder(t *testing.T, logArgs bool, m *Metrics) (*Recorder, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "session.jsonl")
	r, err := NewRecorder(path, logArgs, m)
	if err != nil {
		t.Fatal(err)
	}
	r.now = stepClock()
	return r, path
}

const secretArg = "sk-live-7f3a9c1e55d0SECRET"
const secretQuery = "find the payroll export for ACME"

// script plays a Tool Search (code mode) session: one tools/list carrying the
// bridge tool and one direct-only tool, a catalog of two upstreams, a code
// run that searches, describes and calls through the bridge, and a direct
// call of the direct-only tool that is blocked by approval.
func script(s *Session) {
	s.ToolsListed(1200, 2, 2)
	s.Instructions(340)
	s.Catalog(502, map[string]int{"big": 500, "cal": 2}, 2, 500)
	s.Search("code", secretQuery, 8, true)
	s.Search("code", "second query", 3, true)
	s.Describe("code", "mcp:big:tool_0042", true, true)
	s.Call(CallRecord{ID: "mcp:big:tool_0042", Upstream: "big", Trusted: false, Mode: "code", ViaBridge: true,
		DurationMs: 12.5, Outcome: OutcomeOK, BytesIn: 60, BytesOut: 900,
		Args: json.RawMessage(`{"token": "` + secretArg + `",` + "\n" + `"n": 1}`)})
	s.CodeRun(40, true, false, 2, 1, 1)
	s.Call(CallRecord{ID: "mcp:cal:create_event", Upstream: "cal", Trusted: true, Mode: "code",
		DurationMs: 3, Outcome: OutcomeBlockedApproval, BytesIn: 25, BytesOut: 80, Args: json.RawMessage(`{"title":"x"}`)})
	s.ToolsListed(1100, 2, 2)
}

func readLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %d is not one JSON object: %v\n%s", n, err, sc.Text())
		}
		out = append(out, m)
	}
	return out
}

func TestScriptedSessionLogAndSummary(t *testing.T) {
	r, path := newTestRecorder(t, false, nil)
	s := r.StartSession(SessionInfo{ID: "sess-1", ClientName: "claude-code", ClientVersion: "2.1.0",
		Transport: "stdio", Mode: "code"})
	script(s)
	s.End()
	s.End() // idempotent
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}

	lines := readLines(t, path)
	events := map[string]int{}
	for i, l := range lines {
		if l["session"] != "sess-1" {
			t.Errorf("line %d: session = %v", i+1, l["session"])
		}
		ts, _ := l["ts"].(string)
		if _, err := time.Parse(time.RFC3339Nano, ts); err != nil {
			t.Errorf("line %d: ts %q is not RFC 3339: %v", i+1, ts, err)
		}
		events[l["event"].(string)]++
	}
	want := map[string]int{"session_start": 1, "tools_list": 2, "instructions": 1, "catalog": 1,
		"search": 2, "describe": 1, "call": 2, "code_run": 1, "session_end": 1}
	if !reflect.DeepEqual(events, want) {
		t.Fatalf("events = %v, want %v", events, want)
	}
	if first, last := lines[0]["event"], lines[len(lines)-1]["event"]; first != "session_start" || last != "session_end" {
		t.Fatalf("first/last events = %v/%v", first, last)
	}

	var end endRecord
	b, _ := json.Marshal(lines[len(lines)-1])
	if err := json.Unmarshal(b, &end); err != nil {
		t.Fatal(err)
	}
	sum := end.Summary
	checks := []struct {
		name      string
		got, want any
	}{
		{"client", sum.Client, "claude-code"},
		{"mode", sum.Mode, "code"},
		{"toolsListCount", sum.ToolsListCount, 2},
		{"toolsListBytesLast", sum.ToolsListBytesLast, 1100},
		{"toolsListBytesTotal", sum.ToolsListBytesTotal, 2300},
		{"schemasSeenFirst", sum.SchemasSeenFirst, 2},
		{"instructionsBytes", sum.InstructionsBytes, 340},
		{"catalog.total", sum.Catalog.Total, 502},
		{"catalog.byUpstream", sum.Catalog.ByUpstream, map[string]int{"big": 500, "cal": 2}},
		{"catalog.untrusted", sum.Catalog.Untrusted, 500},
		{"searchCount", sum.SearchCount, 2},
		{"searchBridgeCount", sum.SearchBridgeCount, 2},
		{"describeCount", sum.DescribeCount, 1},
		{"callCount", sum.CallCount, 2},
		{"callsByMode", sum.CallsByMode, map[string]int{"code": 2}},
		{"bridgeCallCount", sum.BridgeCallCount, 1},
		{"callsByOutcome", sum.CallsByOutcome, map[string]int{"ok": 1, "blocked_approval": 1}},
		{"codeRunCount", sum.CodeRunCount, 1},
		{"bytesIn", sum.BytesIn, 85},
		{"bytesOut", sum.BytesOut, 980},
		{"finalCalls", sum.FinalCalls, []FinalCall{
			{ID: "mcp:big:tool_0042", Upstream: "big", Trusted: false, Outcome: "ok", Mode: "code", ViaBridge: true},
			{ID: "mcp:cal:create_event", Upstream: "cal", Trusted: true, Outcome: "blocked_approval", Mode: "code"},
		}},
		// 11 clock readings after session_start's, 1 ms apart.
		{"durationMs", sum.DurationMs, 11.0},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("summary %s = %#v, want %#v", c.name, c.got, c.want)
		}
	}

	// The in-memory summary and the parsed log agree with the written one.
	mem := s.Summary()
	mem.start = time.Time{}
	if !reflect.DeepEqual(mem, sum) {
		t.Errorf("Session.Summary() = %+v\nsession_end summary = %+v", mem, sum)
	}
	f, _ := os.Open(path)
	defer f.Close()
	lg, err := ParseLog(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(lg.Sessions) != 1 || !lg.Sessions[0].Ended || lg.Sessions[0].Events != len(lines) || lg.Skipped != 0 {
		t.Fatalf("parsed log = %+v", lg)
	}
	parsed := lg.Sessions[0].Summary
	parsed.start = time.Time{}
	if !reflect.DeepEqual(parsed, sum) {
		t.Errorf("parsed summary = %+v, want %+v", parsed, sum)
	}
}

func TestStatsReport(t *testing.T) {
	r, path := newTestRecorder(t, false, nil)
	s := r.StartSession(SessionInfo{ID: "sess-A", ClientName: "cursor", Transport: "streamable-http", Endpoint: "/mcp", Mode: "code"})
	script(s)
	s.End()
	d := r.StartSession(SessionInfo{ID: "sess-B", ClientName: "inspector", Transport: "sse", Mode: "direct"})
	d.ToolsListed(250000, 502, 502)
	d.Call(CallRecord{ID: "mcp:big:tool_0042", Upstream: "big", Mode: "direct", Outcome: OutcomeToolError})
	d.End()
	r.Close()

	var out bytes.Buffer
	f, _ := os.Open(path)
	defer f.Close()
	if err := Stats(f, &out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	blocks := strings.Split(text, "session sess-B")
	if len(blocks) != 2 {
		t.Fatalf("report has no block for sess-B:\n%s", text)
	}
	a, b := blocks[0], blocks[1]
	for _, want := range []string{
		"session sess-A (ended)",
		"client: cursor  mode: code  transport: streamable-http  endpoint: /mcp",
		"tool schemas seen first: 2 (of 2 tools in the first tools/list)",
		"tools/list: 2 sent, last 1100 bytes, total 2300 bytes; instructions: 340 bytes",
		"catalog: 502 tools (trusted 2, untrusted 500); by upstream: big=500, cal=2",
		"searches: 2 (bridge 2)  describes: 1 (bridge 1)  calls: 2 (bridge 1)  code runs: 1 (errors 0, timeouts 0)",
		"1. mcp:big:tool_0042  upstream=big  untrusted  ok  (code, bridge)",
		"2. mcp:cal:create_event  upstream=cal  trusted  blocked_approval  (code)",
		"bytes: in 85, out 980",
	} {
		if !strings.Contains(a, want) {
			t.Errorf("sess-A block lacks %q:\n%s", want, a)
		}
	}
	for _, want := range []string{
		"client: inspector  mode: direct",
		"tool schemas seen first: 502 (of 502 tools",
		"last 250000 bytes",
		"searches: 0 (bridge 0)  describes: 0 (bridge 0)  calls: 1 (bridge 0)",
		"1. mcp:big:tool_0042  upstream=big  untrusted  tool_error  (direct)",
		"2 session(s), 2 with session_end, 0 without",
	} {
		if !strings.Contains(b, want) {
			t.Errorf("sess-B block lacks %q:\n%s", want, b)
		}
	}
	if strings.Contains(text, "warning") {
		t.Errorf("clean log reported a warning:\n%s", text)
	}
}

func TestCrashedSessionIsRebuiltFromEvents(t *testing.T) {
	// Two identical sessions, one ended and one not (as after a crash), plus
	// a torn last line. The rebuilt summary equals the written one.
	r, path := newTestRecorder(t, false, nil)
	ended := r.StartSession(SessionInfo{ID: "ended", ClientName: "c", Mode: "code"})
	crashed := r.StartSession(SessionInfo{ID: "crashed", ClientName: "c", Mode: "code"})
	script(ended)
	script(crashed)
	ended.End()
	// Simulate the crash: write nothing more for "crashed" and tear a line.
	r.mu.Lock()
	f := r.f
	r.f = nil
	r.mu.Unlock()
	if _, err := f.WriteString(`{"ts":"2025-03-04T05:06:07Z","session":"crashed","event":"call","id":"mcp:big:t`); err != nil {
		t.Fatal(err)
	}
	f.Close()

	in, _ := os.Open(path)
	defer in.Close()
	lg, err := ParseLog(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(lg.Sessions) != 2 {
		t.Fatalf("sessions = %d", len(lg.Sessions))
	}
	var e, c SessionStats
	for _, ss := range lg.Sessions {
		if ss.ID == "ended" {
			e = ss
		} else {
			c = ss
		}
	}
	if !e.Ended || c.Ended {
		t.Fatalf("ended flags: ended=%v crashed=%v", e.Ended, c.Ended)
	}
	if lg.Skipped != 1 || lg.FirstSkipLine != 24 || !strings.Contains(lg.FirstSkipWhy, "not a JSON record") {
		t.Errorf("skipped = %d at line %d (%s), want 1 at line 24", lg.Skipped, lg.FirstSkipLine, lg.FirstSkipWhy)
	}
	es, cs := e.Summary, c.Summary
	// Durations differ (the clock is shared); everything else must match.
	es.DurationMs, cs.DurationMs = 0, 0
	es.start, cs.start = time.Time{}, time.Time{}
	cs.normalize()
	if !reflect.DeepEqual(es, cs) {
		t.Errorf("rebuilt summary differs from written one:\nrebuilt %+v\nwritten %+v", cs, es)
	}
	if cs.CallCount != 2 || cs.SearchCount != 2 || cs.SchemasSeenFirst != 2 || len(cs.FinalCalls) != 2 {
		t.Errorf("rebuilt summary counts wrong: %+v", cs)
	}

	in.Seek(0, 0)
	var out bytes.Buffer
	if err := Stats(in, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"session crashed (no session_end: rebuilt from 11 event(s))",
		"warning: 1 bad line(s) skipped, first at line 24",
		"2 session(s), 1 with session_end, 1 without",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

func TestLogArguments(t *testing.T) {
	for _, logArgs := range []bool{false, true} {
		t.Run(fmt.Sprint("logArguments=", logArgs), func(t *testing.T) {
			r, path := newTestRecorder(t, logArgs, nil)
			s := r.StartSession(SessionInfo{ID: "x", Mode: "tools"})
			script(s)
			s.End()
			r.Close()
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range []string{secretQuery, `"args"`, `"query"`} {
				if got := bytes.Contains(b, []byte(v)); got != logArgs {
					t.Errorf("log contains %q = %v, want %v", v, got, logArgs)
				}
			}
			// The value of a secret key ("token") is never
			// kept, log_arguments or not.
			if bytes.Contains(b, []byte(secretArg)) {
				t.Errorf("log contains the secret argument %q", secretArg)
			}
			if logArgs {
				// The multi-line args were compacted onto the call's line.
				for _, l := range readLines(t, path) {
					if l["event"] == "call" && l["id"] == "mcp:big:tool_0042" {
						args, _ := l["args"].(map[string]any)
						if args["token"] != "***" || args["n"] != 1.0 {
							t.Errorf("args = %v", l["args"])
						}
					}
				}
			}
		})
	}
}

func TestArgsThatCannotBeLogged(t *testing.T) {
	r, path := newTestRecorder(t, true, nil)
	s := r.StartSession(SessionInfo{ID: "x"})
	s.Call(CallRecord{ID: "a", Outcome: "ok", Args: json.RawMessage(`{"broken":`)})
	s.Call(CallRecord{ID: "b", Outcome: "ok", Args: json.RawMessage(`"` + strings.Repeat("x", maxArgsLen) + `"`)})
	r.Close()
	lines := readLines(t, path)
	if len(lines) != 4 { // start, 2 calls, end (from Close)
		t.Fatalf("lines = %d", len(lines))
	}
	if why, _ := lines[1]["argsOmitted"].(string); !strings.Contains(why, "not valid JSON") || lines[1]["args"] != nil {
		t.Errorf("invalid args record = %v", lines[1])
	}
	if why, _ := lines[2]["argsOmitted"].(string); !strings.Contains(why, "limit") || lines[2]["args"] != nil {
		t.Errorf("oversized args record = %v", lines[2])
	}
}

func TestCloseEndsOpenSessionsAndMemoryOnly(t *testing.T) {
	m := NewMetrics()
	r, err := NewRecorder("", false, m) // memory only
	if err != nil {
		t.Fatal(err)
	}
	a := r.StartSession(SessionInfo{ClientName: "one", Mode: "directory"})
	b := r.StartSession(SessionInfo{ClientName: "two", Mode: "tools"})
	if a.ID() == "" || a.ID() == b.ID() {
		t.Fatalf("generated ids %q %q", a.ID(), b.ID())
	}
	a.Search("", "q", 1, false) // "" => the session's mode
	b.Call(CallRecord{ID: "mcp:u:t", Upstream: "u", Outcome: OutcomeOK})
	if got := gaugeValue(t, m, "mcp_toolsearch_sessions_active"); got != 2 {
		t.Fatalf("sessions_active = %v, want 2", got)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if got := gaugeValue(t, m, "mcp_toolsearch_sessions_active"); got != 0 {
		t.Fatalf("sessions_active after Close = %v, want 0", got)
	}
	sums := r.Summaries()
	if len(sums) != 2 || sums[0].Client != "one" || sums[0].SearchCount != 1 || sums[1].CallCount != 1 {
		t.Fatalf("summaries = %+v", sums)
	}
	// Events after End do not change the summary.
	b.Call(CallRecord{ID: "late", Outcome: OutcomeOK})
	if got := b.Summary().CallCount; got != 1 {
		t.Errorf("call after End changed the summary: %d", got)
	}
}

func TestSummaryBounds(t *testing.T) {
	r, _ := NewRecorder("", false, nil)
	s := r.StartSession(SessionInfo{ID: strings.Repeat("é", 300)})
	if len(s.ID()) > maxStringLen || !strings.HasPrefix(strings.Repeat("é", 300), s.ID()) {
		t.Errorf("id not cut on a rune boundary within %d bytes: %d bytes", maxStringLen, len(s.ID()))
	}
	for i := 0; i < MaxFinalCalls+5; i++ {
		s.Call(CallRecord{ID: "t", Outcome: OutcomeOK})
	}
	sum := s.Summary()
	if sum.CallCount != MaxFinalCalls+5 || len(sum.FinalCalls) != MaxFinalCalls || sum.FinalCallsDropped != 5 {
		t.Errorf("callCount=%d finalCalls=%d dropped=%d", sum.CallCount, len(sum.FinalCalls), sum.FinalCallsDropped)
	}
	var nilSession *Session // all methods are no-ops
	nilSession.Call(CallRecord{})
	nilSession.End()
	var nilRec *Recorder
	if nilRec.Close() != nil || nilRec.Err() != nil || nilRec.Summaries() != nil {
		t.Error("nil Recorder methods are not no-ops")
	}
}

func TestNewRecorderErrorsAndMode(t *testing.T) {
	dir := t.TempDir()
	// A missing folder is created; a folder that cannot be (a file is in
	// the way) is an error naming it.
	nested := filepath.Join(dir, "missing", "log.jsonl")
	r0, err := NewRecorder(nested, false, nil)
	if err != nil {
		t.Fatalf("missing folder not created: %v", err)
	}
	r0.Close()
	if err := os.WriteFile(filepath.Join(dir, "afile"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "afile", "log.jsonl")
	if _, err := NewRecorder(bad, false, nil); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "afile")) {
		t.Fatalf("err = %v, want one naming %s", err, filepath.Join(dir, "afile"))
	}
	path := filepath.Join(dir, "log.jsonl")
	r, err := NewRecorder(path, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && st.Mode().Perm() != 0o600 { // Windows has no Unix modes
		t.Errorf("mode = %v, want 0600", st.Mode().Perm())
	}
	// Appends: a second recorder adds to the same file.
	for i := 0; i < 2; i++ {
		r, _ := NewRecorder(path, false, nil)
		r.StartSession(SessionInfo{ID: "same"}).End()
		r.Close()
	}
	f, _ := os.Open(path)
	defer f.Close()
	lg, _ := ParseLog(f)
	if len(lg.Sessions) != 2 || lg.Sessions[0].Events != 2 || lg.Sessions[1].Events != 2 {
		t.Errorf("reused id: sessions = %+v", lg.Sessions)
	}
}

func TestParseLogSkipsBadLines(t *testing.T) {
	in := strings.Join([]string{
		`{"ts":"2025-01-01T00:00:00Z","session":"s","event":"session_start","client":"c","mode":"tools"}`,
		``,
		`not json`,
		`{"ts":"2025-01-01T00:00:01Z","event":"search"}`,
		`{"ts":"2025-01-01T00:00:01Z","session":"s","event":"teleport"}`,
		`{"ts":"2025-01-01T00:00:01Z","session":"s","event":"search","hits":"many"}`,
		`{"ts":"2025-01-01T00:00:02Z","session":"s","event":"search","mode":"tools","hits":2}`,
		`{"ts":"2025-01-01T00:00:03Z","session":"s"}`,
	}, "\n")
	lg, err := ParseLog(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if lg.Skipped != 5 || lg.FirstSkipLine != 3 {
		t.Errorf("skipped %d, first at %d (%s); want 5 at 3", lg.Skipped, lg.FirstSkipLine, lg.FirstSkipWhy)
	}
	if len(lg.Sessions) != 1 || lg.Sessions[0].Summary.SearchCount != 1 || lg.Sessions[0].Summary.DurationMs != 2000 {
		t.Errorf("sessions = %+v", lg.Sessions)
	}
}

func TestConcurrentSessions(t *testing.T) {
	m := NewMetrics()
	r, path := newTestRecorder(t, true, m)
	const sessions, callsEach = 8, 200
	var wg sync.WaitGroup
	for i := 0; i < sessions; i++ {
		s := r.StartSession(SessionInfo{ID: fmt.Sprintf("s%d", i), Mode: "code"})
		for g := 0; g < 2; g++ { // two goroutines per session
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := 0; j < callsEach/2; j++ {
					s.Search("code", "q", 1, true)
					s.Call(CallRecord{ID: "mcp:u:t", Upstream: "u", Mode: "code", ViaBridge: true, Outcome: OutcomeOK,
						BytesIn: 1, Args: json.RawMessage(`{"k":"` + strings.Repeat("v", 500) + `"}`)})
					_ = s.Summary()
				}
			}()
		}
		wg.Add(1)
		go func() { defer wg.Done(); _ = r.Summaries() }()
	}
	wg.Wait()
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(path)
	defer f.Close()
	lg, err := ParseLog(f)
	if err != nil {
		t.Fatal(err)
	}
	if lg.Skipped != 0 || len(lg.Sessions) != sessions {
		t.Fatalf("skipped=%d sessions=%d", lg.Skipped, len(lg.Sessions))
	}
	for _, ss := range lg.Sessions {
		if !ss.Ended || ss.Summary.CallCount != callsEach || ss.Summary.SearchCount != callsEach || ss.Summary.BytesIn != callsEach {
			t.Errorf("session %s: ended=%v calls=%d searches=%d", ss.ID, ss.Ended, ss.Summary.CallCount, ss.Summary.SearchCount)
		}
	}
	if got := counterValue(t, m, "mcp_toolsearch_tool_calls_total", map[string]string{"upstream": "u", "outcome": "ok"}); got != sessions*callsEach {
		t.Errorf("calls_total = %v, want %d", got, sessions*callsEach)
	}
}

// TestReopenAfterRename: after logrotate renames the session
// log, Reopen moves later records to a new file at the path; without it
// they went on into the renamed file.
func TestReopenAfterRename(t *testing.T) {
	r, path := newTestRecorder(t, false, nil)
	s := r.StartSession(SessionInfo{ID: "before", Transport: "stdio", Mode: "code"})
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	if err := r.Reopen(); err != nil {
		t.Fatal(err)
	}
	s.End()
	r.StartSession(SessionInfo{ID: "after", Transport: "stdio", Mode: "code"}).End()
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	events := func(p string) (out []string) {
		for _, l := range readLines(t, p) {
			out = append(out, fmt.Sprint(l["session"], ":", l["event"]))
		}
		return out
	}
	if got, want := events(path+".1"), []string{"before:session_start"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("renamed file: %v, want %v", got, want)
	}
	if got, want := events(path), []string{"before:session_end", "after:session_start", "after:session_end"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("new file: %v, want %v", got, want)
	}
	if st, err := os.Stat(path); err != nil || (runtime.GOOS != "windows" && st.Mode().Perm() != 0o600) {
		t.Fatalf("new file mode: %v %v", st, err)
	}
}
