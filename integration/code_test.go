//go:build unix

package integration

// End-to-end tests of the "code" mode (SPEC §3-§5): tool_search_code
// through the real binary, with its sandbox workers, real upstreams and real
// clients.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// seedBody is the example body of SPEC §3 (the seed's own example).
const seedBody = `const hits = await openclaw.tools.search("create a GitHub issue");
const t = await openclaw.tools.describe(hits[0].id);
return await openclaw.tools.call(t.id, {title: "Crash on start", body: "Steps..."});`

func codeStep(body string) map[string]any {
	return callStep("tool_search_code", map[string]any{"code": body})
}

// countLines counts the JSON Lines records of file whose field key equals
// value ("" value: every record).
func countLines(t testing.TB, file, key, value string) int {
	t.Helper()
	n := 0
	for _, l := range lines(string(must(os.ReadFile(file)))) {
		if value == "" || decodeJSON(t, l).(map[string]any)[key] == value {
			n++
		}
	}
	return n
}

// seedBodyFixed is the seed's example body with the arguments the github
// catalog's create_issue requires (owner and repo), as a model writes it
// after the first attempt's validation error.
const seedBodyFixed = `const hits = await openclaw.tools.search("create a GitHub issue");
const t = await openclaw.tools.describe(hits[0].id);
return await openclaw.tools.call(t.id, {owner: "octo", repo: "hello", title: "Crash on start", body: "Steps..."});`

// TestCodeModeSeedExample: with the default config.toml (code mode is its
// mode), the official TypeScript SDK client sees tool_search_code and the
// direct-only memory__read_graph. The seed's example body (search, then
// describe, then call) leaves out arguments the github catalog's
// create_issue requires: the run fails with the validation error naming them
// and the upstream is not called; the corrected body
// returns the github upstream's real result: the same content and
// structuredContent as a call straight to that upstream.
func TestCodeModeSeedExample(t *testing.T) {
	waitsMostly(t)
	cfg := defaultConfig(t)
	// The runs first: the proxy answers tools/list at once, and the first
	// run waits for the upstreams still starting; listed after it, the
	// tools hold the direct-only tool and the whole catalog's summary.
	doc := nodeClient(t, append([]string{"--quiet", "--script", scriptArg(t, codeStep(seedBodyFixed), codeStep(seedBody), map[string]any{"op": "list"}), "--"}, proxyCmd(t, cfg)...)...)
	if msg := errorText(t, doc, 1); !strings.Contains(msg, `arguments of mcp:github:create_issue do not match its inputSchema, so the call was not made: 2 mismatches: [1] /owner: missing required property "owner"; [2] /repo: missing required property "repo". Schema of [1] and [2]: {"properties":{`) {
		t.Errorf("the seed body as written: %q, want the validation error naming owner and repo", msg)
	}

	tools := jpath(t, doc, "steps", 2, "result", "tools").([]any)
	names := toolNames(t, tools)
	sort.Strings(names)
	if want := []string{"memory__read_graph", "tool_search_code"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("tools/list = %v, want %v", names, want)
	}
	desc := toolByName(t, tools, "tool_search_code")["description"].(string)
	for _, want := range []string{
		"openclaw.tools.search(", "openclaw.tools.describe(", "openclaw.tools.call(", // the bridge contract
		"Hit = {id, name, description, input, ...}; search hits add match (strong|partial|weak: weak may not fit)", "{tool: Hit, result:",
		"from 6 MCP servers",
		fmt.Sprintf("github (%d)", countLines(t, catalogFile(t, "github-like.jsonl"), "server", "github")),
		fmt.Sprintf("registry (%d)", countLines(t, catalogFile(t, "toolsdk-1000.jsonl"), "", "")),
		"everything (", "filesystem (", "gitlab (", "memory (",
	} {
		if !strings.Contains(desc, want) {
			t.Errorf("tool_search_code description lacks %q:\n%s", want, desc)
		}
	}

	sc := okStructured(t, doc, 0)
	if sc["ok"] != true {
		t.Fatalf("seed body failed: %v", sc)
	}
	if tel := sc["telemetry"].(map[string]any); tel["searchCount"] != 1.0 || tel["describeCount"] != 1.0 || tel["callCount"] != 1.0 {
		t.Errorf("telemetry = %v, want one search, one describe, one call", tel)
	}
	value := sc["value"].(map[string]any)
	id := jpath(t, value, "tool", "id").(string)
	if id != "mcp:github:create_issue" {
		t.Errorf("the seed body called %s, want mcp:github:create_issue (the first hit for its query)", id)
	}
	// The reference: the same call straight to the upstream.
	up := gosdkClientStdio(t, []string{catalogServer(t), "-tools", catalogFile(t, "github-like.jsonl"), "-server", "github", "-demo"})
	r, err := up.CallTool(t.Context(), &gosdk.CallToolParams{Name: "create_issue", Arguments: map[string]any{"owner": "octo", "repo": "hello", "title": "Crash on start", "body": "Steps..."}})
	if err != nil {
		t.Fatal(err)
	}
	want := decodeJSON(t, string(mustJSON(t, r))).(map[string]any)
	res := value["result"].(map[string]any)
	if !reflect.DeepEqual(res["content"], want["content"]) || !reflect.DeepEqual(res["structuredContent"], want["structuredContent"]) || !reflect.DeepEqual(res["details"], want["structuredContent"]) {
		t.Errorf("result = %v\nwant the upstream's %v (details = structuredContent)", res, want)
	}
	// The demo catalogs of config.toml say that their tools are stubs
	// (catalogserver -demo): the echo is not work done.
	if blocks, _ := res["content"].([]any); len(blocks) != 2 || !strings.Contains(fmt.Sprint(blocks[1]), "Demo stub: this tool belongs to a demo catalog") {
		t.Errorf("result content = %v, want the echo and the demo-stub note", res["content"])
	}
	// The text block is the returned value as JSON.
	if txt := jpath(t, stepResult(t, doc, 0), "content", 0, "text").(string); !reflect.DeepEqual(decodeJSON(t, txt), any(value)) {
		t.Errorf("text block %s differs from structuredContent.value", tail(txt, 300))
	}
}

// hostileCase is one body that must be contained: errRE must match the
// run's error; timedOut says whether the parent's timeout is what ends it
// ("" errRE: the run must succeed, e.g. reading the environment, which only
// has to show nothing).
type hostileCase struct {
	name     string
	body     string
	errRE    string
	timedOut bool
}

// TestCodeModeContainment: in one client session, each hostile body ends
// with a clear error (or, for environment reads, shows nothing of the
// proxy's environment) and the next run of the same session works. The
// proxy runs with a secret in its environment: it is in no result, and the
// sandbox workers' own environment (/proc/PID/environ) is empty. Network
// attempts never reach a listener the test opens. The while(true) overshoot
// past the timeout is measured and logged (the figure is in docs/modes.md).
func TestCodeModeContainment(t *testing.T) {
	secret := fmt.Sprintf("s3cret-%d-value", time.Now().UnixNano())
	var conns atomic.Int32
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			c.Close()
		}
	}()
	target := "http://" + ln.Addr().String() + "/"

	const timeoutMS = 1000
	cfg := writeConfig(t, fmt.Sprintf(`
[tool_search]
enabled = true
mode = "code"
code_timeout_ms = %d

[upstreams.github]
command = %s
args = ["-tools", %s, "-server", "github", "-slow-tool", "list_issues=60s"]
trusted = true
`, timeoutMS, tomlString(catalogServer(t)), tomlString(catalogFile(t, "github-like.jsonl"))))

	cases := []hostileCase{
		{"busy loop", `while(true){}`, `^timed out after 1000 ms$`, true},
		{"never-settling await", `await new Promise(()=>{})`, `never settle|timed out`, false},
		{"timeout while a bridge call is pending", `await openclaw.tools.call("mcp:github:list_issues", {owner: "o", repo: "r"}); return 1`, `^timed out after 1000 ms$`, true},
		{"array bomb", `new Array(1e9).fill(0)`, `out of memory|timed out|RangeError`, false},
		{"string doubling", `let s = "x"; while (true) s += s;`, `out of memory|timed out|RangeError`, false},
		{"unbounded recursion", `function f(){ return f() } return f()`, `maximum call stack size exceeded`, false},
		// An error naming the limit, not a dead worker (past 10,000 levels:
		// Go's encoder refuses them). 100,000 levels: sandbox TestDeepValues.
		{"deeply nested value", `let a = []; for (let i = 0; i < 20000; i++) a = [a]; return a`, `^the returned value is nested deeper than 1000 levels`, false},
		{"deeply nested call arguments", `let a = []; for (let i = 0; i < 20000; i++) a = [a]; return await openclaw.tools.call("mcp:github:create_issue", {owner: "o", repo: "r", title: "t", a})`, `^Error: the arguments of openclaw.tools.call are nested deeper than 1000 levels`, false},
		// One fenced block runs; a fence with text around it is named.
		{"fenced body", "```js\nreturn (await openclaw.tools.search(\"create an issue\", {limit: 1}))[0].id\n```", ``, false},
		{"fence and text", "Here it is:\n```js\nreturn 1\n```", "^the body holds Markdown code fences \\(``` on lines 2 and 4\\), so it is not JavaScript: send only the JavaScript body", false},
		{"constructor escape", `return this.constructor.constructor('return process')()`, `process is not defined`, false},
		{"constructor escape to env", `return Function('return process.env')()`, `process is not defined`, false},
		{"require", `return require('fs').readFileSync('/etc/passwd', 'utf8')`, `require is not defined`, false},
		{"dynamic import", `return await import('fs')`, `SyntaxError`, false},
		{"fetch", `return await fetch(` + jsString(target) + `)`, `fetch is not defined`, false},
		{"XMLHttpRequest", `const x = new XMLHttpRequest(); x.open("GET", ` + jsString(target) + `); x.send(); return 1`, `XMLHttpRequest is not defined`, false},
		{"WebSocket", `return new WebSocket(` + jsString("ws://"+ln.Addr().String()+"/") + `)`, `WebSocket is not defined`, false},
		{"environment", `return {process: typeof process, Deno: typeof Deno, Bun: typeof Bun, env: typeof env,
			globals: Object.getOwnPropertyNames(globalThis), self: Object.getOwnPropertyNames(Function('return this')())}`, ``, false},
	}
	const next = `return (await openclaw.tools.search("create an issue", {limit: 1}))[0].id`
	var steps []map[string]any
	for _, c := range cases {
		steps = append(steps, codeStep(c.body), codeStep(next))
	}

	port := freePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	proxy := startHTTPServer(t, proxyCmd(t, cfg, "--transport", "http", "--listen", addr), []string{"MTS_TEST_SECRET=" + secret}, "http://"+addr+"/healthz")
	doc := nodeClient(t, "--script", scriptArg(t, steps...), "--http", "http://"+addr+"/mcp")

	for i, c := range cases {
		r := stepResult(t, doc, 2*i)
		sc := r["structuredContent"].(map[string]any)
		if c.errRE == "" {
			if sc["ok"] != true {
				t.Errorf("%s: %v", c.name, sc)
			}
			t.Logf("%s: %s", c.name, tail(fmt.Sprint(sc["value"]), 400))
		} else {
			msg, _ := sc["error"].(string)
			if r["isError"] != true || sc["ok"] != false || !regexp.MustCompile(c.errRE).MatchString(msg) {
				t.Errorf("%s: isError %v, ok %v, error %q; want an error matching %q", c.name, r["isError"], sc["ok"], msg, c.errRE)
			}
			if c.timedOut && sc["timedOut"] != true {
				t.Errorf("%s: timedOut not set: %v", c.name, sc)
			}
			t.Logf("%s: %q after %.1f ms", c.name, msg, jpath(t, sc, "telemetry", "durationMs"))
		}
		if v := okStructured(t, doc, 2*i+1)["value"]; v != "mcp:github:create_issue" {
			t.Errorf("the run after %q returned %v, want mcp:github:create_issue", c.name, v)
		}
	}
	// The timeout ends the busy loop near code_timeout_ms (generous bound;
	// the overshoot is reported, not asserted).
	busy := jpath(t, doc, "steps", 0, "result", "structuredContent", "telemetry", "durationMs").(float64)
	t.Logf("while(true){}: ended %.1f ms after the %d ms timeout (proxy-side wall time)", busy-timeoutMS, timeoutMS)
	if busy < timeoutMS || busy > timeoutMS+10000 {
		t.Errorf("while(true){} ran %.1f ms with a %d ms timeout", busy, timeoutMS)
	}
	// A timeout during a pending bridge call names the calls made so far.
	pending := stepResult(t, doc, 4)
	if txt := jpath(t, pending, "content", 0, "text").(string); !strings.Contains(txt, "call(mcp:github:list_issues)") {
		t.Errorf("timeout text does not list the pending call: %q", txt)
	}
	if a := jpath(t, pending, "structuredContent", "calls", 0, "arg0"); a != "mcp:github:list_issues" {
		t.Errorf("calls[0].arg0 = %v", a)
	}
	// The environment read shows only the sandbox's own globals.
	envVal := jpath(t, doc, "steps", 2*(len(cases)-1), "result", "structuredContent", "value").(map[string]any)
	for _, k := range []string{"process", "Deno", "Bun", "env"} {
		if envVal[k] != "undefined" {
			t.Errorf("typeof %s = %v in the sandbox", k, envVal[k])
		}
	}
	raw := mustJSON(t, doc)
	if bytes.Contains(raw, []byte(secret)) {
		t.Errorf("the proxy's secret environment value appears in a result")
	}
	if n := conns.Load(); n != 0 {
		t.Errorf("the sandbox reached the network: %d connections to %s", n, target)
	}
	// The workers themselves run with an empty environment.
	workers := 0
	for _, pid := range childPIDs(proxy.PID()) {
		if !strings.Contains(procArgs(pid), "sandbox-worker") {
			continue
		}
		workers++
		env, err := procEnviron(pid)
		if err != nil {
			if !os.IsNotExist(err) {
				t.Logf("sandbox worker %d: environment not checked: %v", pid, err)
			}
			continue // or exited in between
		}
		if len(bytes.TrimRight(env, "\x00")) != 0 {
			t.Errorf("sandbox worker %d has environment %q", pid, tail(strings.ReplaceAll(string(env), "\x00", " "), 300))
		}
	}
	if workers == 0 {
		t.Errorf("no sandbox worker found under the proxy (pid %d): %s", proxy.PID(), describeProcs(childPIDs(proxy.PID())))
	}
	if ok, err := proxy.Exited(); ok {
		t.Fatalf("the proxy exited: %v\n%s", err, tail(proxy.Output(), 3000))
	}

	// The overshoot as a client sees it (go-sdk client, same proxy).
	cs := gosdkClientHTTP(t, "http://"+addr+"/mcp", nil)
	for i := 0; i < 3; i++ {
		start := time.Now()
		r, err := cs.CallTool(t.Context(), &gosdk.CallToolParams{Name: "tool_search_code", Arguments: map[string]any{"code": "while(true){}"}})
		el := time.Since(start)
		if err != nil || !r.IsError {
			t.Fatalf("go-sdk while(true): %v %v", r, err)
		}
		t.Logf("go-sdk client: while(true){} answered %v after the call, %v past the timeout", el.Round(time.Millisecond), (el - timeoutMS*time.Millisecond).Round(time.Millisecond))
	}
}

func jsString(s string) string { return string(must(json.Marshal(s))) }

// TestCodeModeFallsBackToTools: when the sandbox worker cannot start on the
// deployment (here: TMPDIR names a directory that does not exist, so the
// worker's private directory cannot be created), code mode falls back to
// tools mode before any client sees the surface, and the log says why.
func TestCodeModeFallsBackToTools(t *testing.T) {
	missing := t.TempDir() + "/no-such-dir"
	cfg := writeConfig(t, fmt.Sprintf(`
[tool_search]
enabled = true
mode = "code"

[upstreams.github]
command = %s
args = ["-tools", %s, "-server", "github"]
trusted = true
`, tomlString(catalogServer(t)), tomlString(catalogFile(t, "github-like.jsonl"))))
	steps := []map[string]any{{"op": "list"}, callStep("tool_call", map[string]any{"id": "mcp:github:create_issue", "args": map[string]any{"owner": "o", "repo": "r", "title": "t"}})}
	doc, code, stderr := nodeClientRun(t, append([]string{"--env", "TMPDIR=" + missing, "--script", scriptArg(t, steps...), "--"}, proxyCmd(t, cfg)...)...)
	if code != 0 {
		t.Fatalf("client exit %d: %v\n%s", code, doc["error"], tail(stderr, 3000))
	}
	names := toolNames(t, jpath(t, doc, "steps", 0, "result", "tools").([]any))
	sort.Strings(names)
	if want := []string{"tool_call", "tool_describe", "tool_search"}; !reflect.DeepEqual(names, want) {
		t.Errorf("tools/list after the fallback = %v, want %v", names, want)
	}
	if a := jpath(t, okStructured(t, doc, 1), "result", "details", "arguments"); !reflect.DeepEqual(a, map[string]any{"owner": "o", "repo": "r", "title": "t"}) {
		t.Errorf("tool_call after the fallback: upstream got %v", a)
	}
	var why string
	for _, l := range lines(stderr) {
		if strings.Contains(l, "code mode unavailable") {
			why = l
		}
	}
	if why == "" || !strings.Contains(why, "falling back to tools mode") || !strings.Contains(why, missing) {
		t.Errorf("the log does not say why code mode fell back (want the missing %s named):\n%s", missing, tail(stderr, 3000))
	}
	if slices.Contains(names, "tool_search_code") {
		t.Errorf("tool_search_code listed although the sandbox cannot start")
	}
}
