package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The test binary doubles as the worker: the pool re-executes it with
// "sandbox-worker" as its first argument (the environment is emptied, so the
// role cannot travel in a variable).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "sandbox-worker" {
		os.Exit(WorkerMain())
	}
	if len(os.Args) > 1 && os.Args[1] == "exit-at-once" { // a worker that never starts (TestNewPoolFailsForBadWorker)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func newPool(t testing.TB, mod func(*Options)) *Pool {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Exe: exe, PoolSize: 2, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if mod != nil {
		mod(&opts)
	}
	p, err := NewPool(opts)
	if err != nil {
		t.Fatalf("NewPool: %v", err)
	}
	t.Cleanup(p.Close)
	return p
}

// fakeBridge answers with fixed JSON and records what it saw.
type fakeBridge struct {
	mu       sync.Mutex
	ops      []string
	inFlight atomic.Int32
	maxSeen  atomic.Int32
	delay    time.Duration
	block    chan struct{} // when non-nil, every call waits on it or ctx
}

func (f *fakeBridge) serve(ctx context.Context, op string, args json.RawMessage) (json.RawMessage, error) {
	n := f.inFlight.Add(1)
	defer f.inFlight.Add(-1)
	for {
		m := f.maxSeen.Load()
		if n <= m || f.maxSeen.CompareAndSwap(m, n) {
			break
		}
	}
	f.mu.Lock()
	f.ops = append(f.ops, op+" "+string(args))
	f.mu.Unlock()
	if f.block != nil {
		select {
		case <-f.block:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if f.delay > 0 {
		select {
		case <-time.After(f.delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	var a []json.RawMessage
	if err := json.Unmarshal(args, &a); err != nil || len(a) == 0 {
		return nil, fmt.Errorf("bad args %s", args)
	}
	switch op {
	case "search":
		return json.RawMessage(`[{"id":"mcp:gh:create_issue","name":"create_issue","source":"gh","input":"unknown"}]`), nil
	case "describe":
		var id string
		_ = json.Unmarshal(a[0], &id)
		if id != "mcp:gh:create_issue" {
			return nil, fmt.Errorf("unknown tool id %q", id)
		}
		return json.RawMessage(`{"id":"mcp:gh:create_issue","inputSchema":{"type":"object"}}`), nil
	case "call":
		var id string
		_ = json.Unmarshal(a[0], &id)
		if id != "mcp:gh:create_issue" {
			return nil, fmt.Errorf("unknown tool id %q", id)
		}
		var callArgs map[string]any
		if len(a) > 1 {
			_ = json.Unmarshal(a[1], &callArgs)
		}
		out, _ := json.Marshal(map[string]any{"tool": id, "result": map[string]any{"details": map[string]any{"number": 42, "title": callArgs["title"]}}})
		return out, nil
	}
	return nil, fmt.Errorf("unexpected op %q", op)
}

// mustFail asserts a run failed with an error containing want, and that the
// pool then serves a normal run.
func mustFail(t *testing.T, p *Pool, res *Result, want string) {
	t.Helper()
	if res.OK {
		t.Fatalf("run succeeded with %s; want an error containing %q", res.Value, want)
	}
	if !strings.Contains(res.Error, want) {
		t.Fatalf("error = %q; want it to contain %q", res.Error, want)
	}
	next := p.Run(context.Background(), "return 6*7", 5*time.Second, (&fakeBridge{}).serve)
	if !next.OK || string(next.Value) != "42" {
		t.Fatalf("next run after failure: %+v", next)
	}
}

func TestSeedExample(t *testing.T) {
	p := newPool(t, nil)
	fb := &fakeBridge{}
	code := `const hits = await openclaw.tools.search("create a GitHub issue");
const t = await openclaw.tools.describe(hits[0].id);
return await openclaw.tools.call(t.id, {title: "Crash on start", body: "Steps..."});`
	res := p.Run(context.Background(), code, 5*time.Second, fb.serve)
	if !res.OK {
		t.Fatalf("run failed: %s", res.Error)
	}
	var got struct {
		Tool   string `json:"tool"`
		Result struct {
			Details struct {
				Number int    `json:"number"`
				Title  string `json:"title"`
			} `json:"details"`
		} `json:"result"`
	}
	if err := json.Unmarshal(res.Value, &got); err != nil {
		t.Fatalf("value %s: %v", res.Value, err)
	}
	if got.Tool != "mcp:gh:create_issue" || got.Result.Details.Number != 42 || got.Result.Details.Title != "Crash on start" {
		t.Fatalf("value = %s", res.Value)
	}
	if res.SearchCount != 1 || res.DescribeCount != 1 || res.CallCount != 1 || len(res.Calls) != 3 {
		t.Fatalf("counts = %d/%d/%d calls=%+v", res.SearchCount, res.DescribeCount, res.CallCount, res.Calls)
	}
	wantArg0 := []string{"create a GitHub issue", "mcp:gh:create_issue", "mcp:gh:create_issue"}
	for i, c := range res.Calls {
		if c.Arg0 != wantArg0[i] || c.Error != "" {
			t.Errorf("call %d = %+v; want arg0 %q, no error", i, c, wantArg0[i])
		}
	}
	if len(fb.ops) != 3 || fb.ops[0] != `search ["create a GitHub issue"]` {
		t.Fatalf("bridge saw %q", fb.ops)
	}
}

func TestBridgeErrorRejects(t *testing.T) {
	p := newPool(t, nil)
	res := p.Run(context.Background(), `try { await openclaw.tools.call("mcp:nope:x", {}); return "no error"; }
catch (e) { return {name: e.name, message: e.message, isError: e instanceof Error}; }`, 5*time.Second, (&fakeBridge{}).serve)
	if !res.OK {
		t.Fatalf("run failed: %s", res.Error)
	}
	if want := `{"name":"Error","message":"unknown tool id \"mcp:nope:x\"","isError":true}`; string(res.Value) != want {
		t.Fatalf("value = %s; want %s", res.Value, want)
	}
	if len(res.Calls) != 1 || !strings.Contains(res.Calls[0].Error, "unknown tool id") {
		t.Fatalf("calls = %+v", res.Calls)
	}
	res = p.Run(context.Background(), `return await openclaw.tools.search("x")`, 5*time.Second, nil)
	if res.OK || !strings.Contains(res.Error, "no bridge is configured") {
		t.Fatalf("nil bridge: %+v", res)
	}
}

func TestPromiseAllRunsConcurrently(t *testing.T) {
	p := newPool(t, nil)
	fb := &fakeBridge{block: make(chan struct{})}
	go func() {
		// Release the calls only once both are in flight at once; if they
		// were served one by one, this never happens and the run times out.
		for fb.inFlight.Load() < 2 {
			time.Sleep(time.Millisecond)
		}
		close(fb.block)
	}()
	res := p.Run(context.Background(), `const [a, b] = await Promise.all([
  openclaw.tools.call("mcp:gh:create_issue", {title: "a"}),
  openclaw.tools.call("mcp:gh:create_issue", {title: "b"}),
]);
return [a.result.details.title, b.result.details.title];`, 10*time.Second, fb.serve)
	if !res.OK || string(res.Value) != `["a","b"]` {
		t.Fatalf("result: %+v", res)
	}
	if fb.maxSeen.Load() != 2 {
		t.Fatalf("max calls in flight = %d; want 2", fb.maxSeen.Load())
	}
}

func TestConcurrencyCap(t *testing.T) {
	p := newPool(t, func(o *Options) { o.MaxConcurrentCalls = 2 })
	fb := &fakeBridge{delay: 20 * time.Millisecond}
	res := p.Run(context.Background(), `const ps = [];
for (let i = 0; i < 6; i++) ps.push(openclaw.tools.search("q" + i));
return (await Promise.all(ps)).length;`, 10*time.Second, fb.serve)
	if !res.OK || string(res.Value) != "6" {
		t.Fatalf("result: %+v", res)
	}
	if m := fb.maxSeen.Load(); m != 2 {
		t.Fatalf("max calls in flight = %d; want the cap 2", m)
	}
}

func TestTotalCallCap(t *testing.T) {
	p := newPool(t, func(o *Options) { o.MaxTotalCalls = 3 })
	fb := &fakeBridge{}
	res := p.Run(context.Background(), `const out = [];
for (let i = 0; i < 5; i++) {
  try { await openclaw.tools.search("q" + i); out.push("ok"); } catch (e) { out.push(e.message); }
}
// A runaway loop is refused in the worker without flooding the parent.
for (let i = 0; i < 10000; i++) openclaw.tools.call("x", {}).catch(() => {});
return out;`, 10*time.Second, fb.serve)
	if !res.OK {
		t.Fatalf("run failed: %s", res.Error)
	}
	var out []string
	if err := json.Unmarshal(res.Value, &out); err != nil || len(out) != 5 {
		t.Fatalf("value = %s", res.Value)
	}
	for i, s := range out {
		if i < 3 && s != "ok" {
			t.Errorf("call %d = %q; want ok", i, s)
		}
		if i >= 3 && !strings.Contains(s, "limit of 3 bridge calls") {
			t.Errorf("call %d = %q; want the cap error", i, s)
		}
	}
	if res.SearchCount != 3 || res.CallCount != 0 || len(res.Calls) != 3 || len(fb.ops) != 3 {
		t.Fatalf("SearchCount=%d CallCount=%d calls=%d bridge saw %d", res.SearchCount, res.CallCount, len(res.Calls), len(fb.ops))
	}
	if res.RefusedCalls != 2+10000 {
		t.Fatalf("RefusedCalls = %d; want %d", res.RefusedCalls, 2+10000)
	}
}

func TestConsoleCaptureAndBounds(t *testing.T) {
	p := newPool(t, func(o *Options) { o.MaxLogBytes = 100 })
	res := p.Run(context.Background(), `console.log("hello", 1, {a: [1, 2]}, undefined);
console.warn("careful");
console.error(new TypeError("bad"));
for (let i = 0; i < 50; i++) console.log("line " + i);
return "done";`, 5*time.Second, (&fakeBridge{}).serve)
	if !res.OK || string(res.Value) != `"done"` {
		t.Fatalf("result: %+v", res)
	}
	res2 := p.Run(context.Background(), `for (let i = 0; i < 1e5; i++) console.log(""); return 1;`, 10*time.Second, nil)
	if !res2.OK || len(res2.Logs) > 100+1 || !res2.LogsTruncated || res2.Logs[len(res2.Logs)-1].Level != "note" {
		t.Fatalf("empty lines: ok=%v %d lines truncated=%v", res2.OK, len(res2.Logs), res2.LogsTruncated)
	}
	if want := fmt.Sprintf("[console output truncated at 100 bytes: %d more lines (0 bytes) were dropped]", 100000-100); res2.Logs[100].Text != want {
		t.Errorf("empty lines: note %q; want %q", res2.Logs[100].Text, want)
	}
	want := []LogLine{{"log", `hello 1 {"a":[1,2]} undefined`}, {"warn", "careful"}, {"error", "TypeError: bad"}}
	if len(res.Logs) < 3 {
		t.Fatalf("logs = %+v", res.Logs)
	}
	for i, w := range want {
		if res.Logs[i] != w {
			t.Errorf("log %d = %+v; want %+v", i, res.Logs[i], w)
		}
	}
	total := 0
	for _, l := range res.Logs[:len(res.Logs)-1] { // the last is the note
		total += len(l.Text) + 1
	}
	if total > 100 || !res.LogsTruncated {
		t.Fatalf("log bytes = %d truncated=%v; want <= 100 and truncated", total, res.LogsTruncated)
	}
}

func TestThrownErrorLine(t *testing.T) {
	p := newPool(t, nil)
	for _, tc := range []struct{ code, want string }{
		{"const a = 1;\nconst b = 2;\nthrow new Error('boom');", "Error: boom (line 3, col 7)"},
		{"await openclaw.tools.search('x');\n\nnull.foo;", "TypeError: Cannot read property 'foo' of" /* goja says undefined */},
		{"await openclaw.tools.search('x');\n\nnull.foo;", "(line 3, col 6)"},
		{"const x = 1;\nlet = = 2;", "SyntaxError: Unexpected token = (line 2, col 7)"},
		{"if (true) {\n  return 1;", "SyntaxError"},
		{"throw 'plain';", `the script threw "plain"`},
		{"missingFn();", "ReferenceError: missingFn is not defined (line 1"},
	} {
		res := p.Run(context.Background(), tc.code, 5*time.Second, (&fakeBridge{}).serve)
		if res.OK || !strings.Contains(res.Error, tc.want) {
			t.Errorf("code %q: error = %q; want it to contain %q", tc.code, res.Error, tc.want)
		}
	}
}

func TestReturnValues(t *testing.T) {
	p := newPool(t, func(o *Options) { o.MaxOutputBytes = 1000 })
	for _, tc := range []struct{ code, want string }{
		{"return;", "null"},
		{"const x = 1;", "null"},
		{"return undefined;", "null"},
		{"return () => 1;", "null"},
		{"return {a: 1, b: 'ü', c: [true, null]};", `{"a":1,"b":"ü","c":[true,null]}`},
		{"return await Promise.resolve(5);", "5"},
	} {
		res := p.Run(context.Background(), tc.code, 5*time.Second, nil)
		if !res.OK || string(res.Value) != tc.want {
			t.Errorf("code %q: %+v; want value %s", tc.code, res, tc.want)
		}
	}
	res := p.Run(context.Background(), "const o = {}; o.self = o; return o;", 5*time.Second, nil)
	if res.OK || !strings.Contains(res.Error, "not JSON-serializable") {
		t.Errorf("cyclic value: %+v", res)
	}
	res = p.Run(context.Background(), "return 'é'.repeat(5000);", 5*time.Second, nil)
	var s string
	if !res.OK || !res.OutputTruncated || json.Unmarshal(res.Value, &s) != nil {
		t.Fatalf("big value: ok=%v truncated=%v value %.80s", res.OK, res.OutputTruncated, res.Value)
	}
	if len(res.Value) > 1000+100 || !strings.Contains(s, "output truncated: 10002 bytes total") || !strings.HasPrefix(s, `"ééé`) {
		t.Fatalf("big value cut to %d bytes: %.60q ... %q", len(res.Value), s, s[max(0, len(s)-60):])
	}
}

func TestTimeoutBusyLoop(t *testing.T) {
	p := newPool(t, nil)
	timeout := 500 * time.Millisecond
	start := time.Now()
	res := p.Run(context.Background(), "console.log('spinning'); while (true) {}", timeout, nil)
	elapsed := time.Since(start)
	t.Logf("busy loop ended %v after start (timeout %v, overshoot %v)", elapsed, timeout, elapsed-timeout)
	if !res.TimedOut {
		t.Fatalf("result: %+v; want TimedOut", res)
	}
	if elapsed > timeout+2*time.Second {
		t.Fatalf("Run returned %v after start; timeout was %v", elapsed, timeout)
	}
	if len(res.Logs) != 1 || res.Logs[0].Text != "spinning" {
		t.Errorf("logs before the timeout were lost: %+v", res.Logs)
	}
	mustFail(t, p, res, "timed out after 500 ms")
}

func TestTimeoutWithCallInFlight(t *testing.T) {
	p := newPool(t, nil)
	fb := &fakeBridge{block: make(chan struct{})} // never released
	start := time.Now()
	res := p.Run(context.Background(), `await openclaw.tools.search("first");
await openclaw.tools.call("mcp:gh:create_issue", {});`, 300*time.Millisecond, fb.serve)
	t.Logf("run with a hanging call ended after %v", time.Since(start))
	if !res.TimedOut || len(res.Calls) != 1 || res.Calls[0].Error != "still running when the run ended" || res.Calls[0].Arg0 != "first" {
		t.Fatalf("result: %+v", res)
	}
	mustFail(t, p, res, "timed out")
}

func TestNeverSettlingPromise(t *testing.T) {
	p := newPool(t, nil)
	res := p.Run(context.Background(), "await new Promise(() => {}); return 1;", 5*time.Second, nil)
	mustFail(t, p, res, "can never settle")
}

func TestCallerCancellation(t *testing.T) {
	p := newPool(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	res := p.Run(ctx, "while (true) {}", 10*time.Second, nil)
	if res.TimedOut {
		t.Errorf("cancellation reported as timeout")
	}
	mustFail(t, p, res, "cancelled")
}

func TestMemoryBombs(t *testing.T) {
	if underWine() {
		t.Skip("Wine 8 does not enforce a Job Object's process memory limit (Windows does): the bombs would only time out")
	}
	limit := int64(128 << 20)
	if raceEnabled {
		limit = 1 << 30 // the race runtime's shadow memory counts too
	}
	p := newPool(t, func(o *Options) { o.MemoryLimitBytes = limit })
	for _, code := range []string{
		"new Array(1e9).fill(0); return 1;",
		"let s = 'x'; while (true) { s += s; } return s.length;",
		"const a = []; while (true) { a.push({x: a.length, y: 'abcdefgh' + a.length}); }",
		// One allocation past the limit at once (the Go runtime
		// of the worker died of SIGSEGV in its GC, and the model read
		// "exited with status 2 without a result").
		fmt.Sprintf("return 'x'.repeat(%d).length;", 2*limit),
		fmt.Sprintf("return new ArrayBuffer(%d).byteLength;", 2*limit),
	} {
		start := time.Now()
		res := p.Run(context.Background(), code, 10*time.Second, nil)
		t.Logf("%q -> %q after %v", code, res.Error, time.Since(start))
		if res.OK {
			t.Fatalf("%q succeeded", code)
		}
		// Contained by the memory limit (worker death) or, on a slow
		// machine, by the wall clock; both are clean errors.
		if !strings.Contains(res.Error, "sandbox worker died: out of memory") && !res.TimedOut {
			t.Fatalf("%q: error %q; want out of memory or a timeout", code, res.Error)
		}
		mustFail(t, p, res, "")
	}
}

func TestUnboundedRecursion(t *testing.T) {
	p := newPool(t, nil)
	res := p.Run(context.Background(), "function f(n) { return f(n + 1) + 1; }\nreturn f(0);", 5*time.Second, nil)
	mustFail(t, p, res, "maximum call stack size exceeded")
	// A caught overflow must not let the script continue either way.
	res = p.Run(context.Background(), "function f(n) { return f(n + 1) + 1; }\ntry { f(0); } catch (e) { return 'caught'; }", 5*time.Second, nil)
	if res.OK && string(res.Value) != `"caught"` {
		t.Fatalf("result: %+v", res)
	}
}

func TestNoEscapeHatches(t *testing.T) {
	const secret = "s3cr3t-token-value-9f2c"
	t.Setenv("SANDBOX_TEST_SECRET", secret)
	p := newPool(t, nil)
	for _, tc := range []struct{ code, want string }{
		{"return this.constructor.constructor('return process')();", "process is not defined"},
		{"return require('fs');", "require is not defined"},
		{"return await import('fs');", "SyntaxError"},
		{"return process.env;", "process is not defined"},
		{"return fetch('http://example.com');", "fetch is not defined"},
		{"return new XMLHttpRequest();", "XMLHttpRequest is not defined"},
		{"return new WebSocket('ws://example.com');", "WebSocket is not defined"},
		{"return setTimeout(() => 1, 1);", "setTimeout is not defined"},
		{"return Deno.env;", "Deno is not defined"},
		{"return globalThis.process.env;", "Cannot read property 'env' of undefined"},
	} {
		res := p.Run(context.Background(), tc.code, 5*time.Second, nil)
		if res.OK || !strings.Contains(res.Error, tc.want) {
			t.Errorf("%q: ok=%v value=%s error=%q; want error containing %q", tc.code, res.OK, res.Value, res.Error, tc.want)
		}
		if strings.Contains(fmt.Sprintf("%+v %s", res, res.Value), secret) {
			t.Errorf("%q leaked the secret", tc.code)
		}
	}
	// Enumerating the global object finds only the documented globals added
	// on top of standard JavaScript, and nothing leaks the environment.
	res := p.Run(context.Background(), `const names = Object.getOwnPropertyNames(globalThis);
console.log(JSON.stringify(Object.keys(globalThis)));
return {names, env: typeof process, keys: Object.keys(globalThis)};`, 5*time.Second, nil)
	if !res.OK {
		t.Fatalf("run failed: %s", res.Error)
	}
	if strings.Contains(string(res.Value), secret) || strings.Contains(fmt.Sprint(res.Logs), secret) {
		t.Fatalf("globals leaked the secret")
	}
	var got struct {
		Names []string `json:"names"`
		Env   string   `json:"env"`
		Keys  []string `json:"keys"`
	}
	if err := json.Unmarshal(res.Value, &got); err != nil {
		t.Fatal(err)
	}
	sort.Strings(got.Keys)
	if got.Env != "undefined" || strings.Join(got.Keys, ",") != "console,openclaw" {
		t.Fatalf("typeof process=%q enumerable globals=%v", got.Env, got.Keys)
	}
	for _, n := range got.Names {
		switch n {
		case "require", "process", "fetch", "XMLHttpRequest", "WebSocket", "setTimeout", "setInterval", "Deno", "Bun", "module", "exports":
			t.Errorf("global %q exists", n)
		}
	}
}

func TestWorkerProcessIsolation(t *testing.T) {
	t.Setenv("SANDBOX_TEST_SECRET", "do-not-inherit")
	p := newPool(t, func(o *Options) { o.PoolSize = 1 })
	w := <-p.idle
	defer func() { p.idle <- w }()
	pid := w.p.Pid()
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		t.Skipf("cannot read /proc: %v", err)
	}
	if len(env) != 0 {
		t.Errorf("worker environment = %q; want empty", env)
	}
	cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
	if err != nil || cwd != w.dir {
		t.Errorf("worker cwd = %q (%v); want %q", cwd, err, w.dir)
	}
	entries, err := os.ReadDir(w.dir)
	if err != nil || len(entries) != 0 {
		t.Errorf("worker dir %s: %d entries, err %v; want empty", w.dir, len(entries), err)
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err == nil {
		// Field 5 is the process group id; Setpgid makes it the pid.
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
		if fields[2] != fmt.Sprint(pid) {
			t.Errorf("worker pgid = %s; want its own group %d", fields[2], pid)
		}
	}
}

func TestWorkerDeathIsReported(t *testing.T) {
	p := newPool(t, func(o *Options) { o.PoolSize = 1 })
	w := <-p.idle // the only idle worker: the next Run takes it
	pid := w.p.Pid()
	p.idle <- w
	fb := &fakeBridge{}
	bridge := func(ctx context.Context, op string, args json.RawMessage) (json.RawMessage, error) {
		// Kill the worker from outside while it waits for this call.
		proc, _ := os.FindProcess(pid)
		_ = proc.Kill()
		return fb.serve(ctx, op, args)
	}
	res := p.Run(context.Background(), `await openclaw.tools.search("x"); return 1;`, 5*time.Second, bridge)
	mustFail(t, p, res, "sandbox worker died: "+killedFromOutside)
}

func TestNewPoolFailsForBadWorker(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewPool(Options{Exe: exe, Args: []string{"exit-at-once"}, StartTimeout: 5 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "did not start") {
		t.Fatalf("err = %v; want a did-not-start error", err)
	}
	_, err = NewPool(Options{Exe: "/nonexistent/binary"})
	// Windows: a path without an extension fails in exec.LookPath (it tries
	// PATHEXT: "executable file not found"), not as a missing file.
	if err == nil || !errors.Is(err, os.ErrNotExist) && !errors.Is(err, exec.ErrNotFound) {
		t.Fatalf("err = %v; want a not-exist error", err)
	}
}

func TestCloseReapsEverything(t *testing.T) {
	exe, _ := os.Executable()
	p, err := NewPool(Options{Exe: exe, PoolSize: 2, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	var dirs []string
	p.mu.Lock()
	for w := range p.live {
		pids = append(pids, w.p.Pid())
		dirs = append(dirs, w.dir)
	}
	p.mu.Unlock()
	done := make(chan *Result)
	go func() { done <- p.Run(context.Background(), "while (true) {}", time.Minute, nil) }()
	time.Sleep(100 * time.Millisecond)
	p.Close()
	res := <-done
	if res.OK || !strings.Contains(res.Error, "pool was closed") {
		t.Fatalf("run during Close: %+v", res)
	}
	if len(p.live) != 0 {
		t.Fatalf("%d workers still live after Close", len(p.live))
	}
	for _, pid := range pids {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
			t.Errorf("worker %d still exists (zombie or running)", pid)
		}
	}
	for _, d := range dirs {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("worker dir %s not removed: %v", d, err)
		}
	}
	if res := p.Run(context.Background(), "return 1", time.Second, nil); res.OK || !strings.Contains(res.Error, "closed") {
		t.Fatalf("run after Close: %+v", res)
	}
}

func TestCutJSON(t *testing.T) {
	small := []byte(`{"a":1}`)
	if v, cut := cutJSON(small, 10); cut || string(v) != string(small) {
		t.Fatalf("small value changed: %s %v", v, cut)
	}
	big, _ := json.Marshal(strings.Repeat(`"q"`, 1000)) // escaping-heavy
	v, cut := cutJSON(big, 200)
	var s string
	if !cut || json.Unmarshal(v, &s) != nil || len(v) > 200+64 {
		t.Fatalf("cut = %v len=%d value=%s", cut, len(v), v)
	}
	if !strings.HasSuffix(s, fmt.Sprintf("…[output truncated: %d bytes total]", len(big))) {
		t.Fatalf("marker missing: %q", s)
	}
}

// BenchmarkRunWarm measures one run doing a search and a call against an
// in-process fake bridge with a warm pool, and reports p50/p99 of Run and of
// the same two bridge calls made directly, in milliseconds.
func BenchmarkRunWarm(b *testing.B) {
	p := newPool(b, nil)
	fb := &fakeBridge{}
	code := `const hits = await openclaw.tools.search("create issue", {limit: 3});
return await openclaw.tools.call(hits[0].id, {title: "t"});`
	ctx := context.Background()
	var runs, direct []time.Duration
	for b.Loop() {
		b.StopTimer()
		for len(p.idle) < cap(p.idle) { // warm: wait for the spares
			time.Sleep(200 * time.Microsecond)
		}
		t0 := time.Now()
		_, _ = fb.serve(ctx, "search", json.RawMessage(`["create issue",{"limit":3}]`))
		_, _ = fb.serve(ctx, "call", json.RawMessage(`["mcp:gh:create_issue",{"title":"t"}]`))
		direct = append(direct, time.Since(t0))
		b.StartTimer()
		t1 := time.Now()
		res := p.Run(ctx, code, 10*time.Second, fb.serve)
		runs = append(runs, time.Since(t1))
		if !res.OK {
			b.Fatalf("run failed: %s", res.Error)
		}
	}
	pct := func(d []time.Duration, q float64) float64 {
		s := append([]time.Duration(nil), d...)
		sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
		return float64(s[min(len(s)-1, int(q*float64(len(s))))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(runs, 0.50), "p50-ms")
	b.ReportMetric(pct(runs, 0.99), "p99-ms")
	b.ReportMetric(pct(direct, 0.50), "direct-p50-ms")
}

func TestWorkerLimitsApplied(t *testing.T) {
	p := newPool(t, func(o *Options) {
		o.PoolSize = 1
		o.MemoryLimitBytes = 700 << 20
		o.CPUSeconds = 7
	})
	w := <-p.idle // the only idle worker: the next Run takes it
	pid := w.p.Pid()
	p.idle <- w
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *Result)
	go func() { done <- p.Run(ctx, "console.log('up'); while (true) {}", time.Minute, nil) }()
	var limits string
	for i := 0; i < 500; i++ { // the worker applies its limits when the request arrives
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", pid))
		if err != nil {
			break
		}
		limits = string(b)
		if strings.Contains(limits, fmt.Sprint(700<<20)) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	if limits == "" {
		t.Skip("cannot read /proc/<pid>/limits")
	}
	want := map[string]string{
		"Max data size":      fmt.Sprint(700 << 20),
		"Max cpu time":       "7",
		"Max open files":     "16",
		"Max file size":      "0",
		"Max core file size": "0",
	}
	for _, line := range strings.Split(limits, "\n") {
		for name, v := range want {
			if strings.HasPrefix(line, name+" ") {
				if f := strings.Fields(strings.TrimPrefix(line, name)); len(f) < 2 || f[0] != v || f[1] != v {
					t.Errorf("%s: %q; want soft and hard %s", name, line, v)
				}
				delete(want, name)
			}
		}
	}
	for name := range want {
		t.Errorf("limit %q not found in /proc limits", name)
	}
}

// A bridge call the parent rejects (the reply comes later, with no frame of
// the body on the stack) names the call's (line, col) in the body when the
// rejection is not caught (rejected bridge calls
// had no position).
func TestRejectedBridgeCallLine(t *testing.T) {
	p := newPool(t, nil)
	reject := func(_ context.Context, op string, _ json.RawMessage) (json.RawMessage, error) {
		return nil, fmt.Errorf("unknown tool %q", op)
	}
	for _, tc := range []struct{ code, want string }{
		{"const a = 1;\nconst r = await openclaw.tools.call('mcp:x:y', {});", `Error: unknown tool "call" (line 2, col 36)`},
		{"const [a] = await Promise.all([\n  openclaw.tools.describe('a')]);", `Error: unknown tool "describe" (line 2, col `},
		{"async function f() {\n  return openclaw.tools.call('x');\n}\nreturn await f();", `(line 2, col 29)`},
	} {
		res := p.Run(context.Background(), tc.code, 5*time.Second, reject)
		if res.OK || !strings.Contains(res.Error, tc.want) {
			t.Errorf("code %q: error = %q; want it to contain %q", tc.code, res.Error, tc.want)
		}
	}
	// Caught: message and properties as before; the stack names the call.
	res := p.Run(context.Background(), "try { await openclaw.tools.call('x'); } catch (e) { return [e.message, e.stack]; }", 5*time.Second, reject)
	if !res.OK || string(res.Value) != `["unknown tool \"call\"","Error: unknown tool \"call\"\n    at openclaw.tools.call (sandbox.js:2:32)"]` {
		t.Errorf("caught: %+v %s", res, res.Value)
	}
}
