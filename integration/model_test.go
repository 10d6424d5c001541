//go:build unix

package integration

// End-to-end tests of what a model trips over: the mistakes a
// model makes on its first attempt, made through real clients against the
// real binary and real upstreams, must come back with an answer that names
// the fix, and never reach the upstream.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// modelConfig is a deployment with the reference filesystem server confined
// to dir and the trusted github-like catalog, in the given mode.
func modelConfig(t *testing.T, mode, dir string) string {
	fs := npmServer(t, "filesystem")
	return writeConfig(t, fmt.Sprintf(`
[tool_search]
enabled = true
mode = %q

[upstreams.filesystem]
command = %s
args = [%s, %s]

[upstreams.github]
command = %s
args = ["-tools", %s, "-server", "github", "-rpc-error", %s, "-rpc-error", %s]
trusted = true
direct_only = ["search_issues"]
`, mode, tomlString(fs[0]), quoteArgs(fs[1:]), tomlString(dir),
		tomlString(catalogServer(t)), tomlString(catalogFile(t, "github-like.jsonl")),
		tomlString("get_file_contents="+upstreamRPCError), tomlString("search_issues="+upstreamRPCError)))
}

// upstreamRPCError is the JSON-RPC error the github upstream of modelConfig
// answers get_file_contents and search_issues with, worded as the
// TypeScript SDK words its errors (the code repeated in the message).
const upstreamRPCError = `{"code":-32042,"message":"MCP error -32042: URL elicitation required","data":{"url":"https://example.com/auth"}}`

// wantUpstreamError is the one clean line a client gets for it.
const wantUpstreamError = `upstream "github": URL elicitation required`

// TestModelFirstAttemptsToolsMode, with the
// official TypeScript SDK client: each slip gets an isError answer naming
// the fix and writes nothing; the corrected calls work.
func TestModelFirstAttemptsToolsMode(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a.txt")
	cfg := modelConfig(t, "tools", dir)
	wf := "mcp:filesystem:write_file"
	steps := []map[string]any{
		{"op": "list"}, // 0
		callStep("tool_call", map[string]any{"id": wf, "path": file, "content": "flat"}),                                                                    // 1 flat arguments
		callStep("tool_call", map[string]any{"id": wf, "arguments": map[string]any{"path": file, "content": "x"}}),                                          // 2 arguments
		callStep("tool_call", map[string]any{"args": map[string]any{"path": file, "content": "x"}}),                                                         // 3 no id
		callStep("tool_call", map[string]any{"id": wf, "args": []any{file, "x"}}),                                                                           // 4 array args
		callStep("tool_call", map[string]any{"id": wf, "args": map[string]any{"path": file, "contents": "x"}}),                                              // 5 misnamed content
		callStep("tool_call", map[string]any{"id": wf, "args": map[string]any{"path": file, "content": 42}}),                                                // 6 wrong type
		callStep("filesystem__write_file", map[string]any{"path": file, "content": "x"}),                                                                    // 7 hidden name
		callStep("tool_call", map[string]any{"id": wf, "args": fmt.Sprintf(`{"path": %q, "content": "hello"}`, file)}),                                      // 8 args as a JSON string: repaired
		callStep("tool_call", map[string]any{"id": "mcp:filesystem:read_text_file", "args": map[string]any{"path": file}}),                                  // 9
		callStep("tool_describe", map[string]any{"id": wf}),                                                                                                 // 10
		callStep("tool_call", map[string]any{"id": "mcp:github:get_file_contents", "args": map[string]any{"owner": "o", "repo": "r", "path": "README.md"}}), // 11 upstream JSON-RPC error
		callStep("github__search_issues", map[string]any{"q": "crash"}),                                                                                     // 12 the same, direct tools/call
		callStep("tool_call", map[string]any{"id": wf, "args": map[string]any{}}),                                                                           // 13 two missing: both at once
	}
	doc, code, stderr := nodeClientRun(t, append([]string{"--script", scriptArg(t, steps...), "--"}, proxyCmd(t, cfg)...)...)
	if code != 0 {
		t.Fatalf("client exit %d: %v\n%s", code, doc["error"], tail(stderr, 3000))
	}
	for i, want := range map[int]string{
		1:  "`content`, `path` are not a key of tool_call, which takes only `id` and `args`: put the tool's own arguments inside `args`, e.g. " + fmt.Sprintf(`{"id": "mcp:filesystem:write_file", "args": {"content":"flat","path":%q}}`, file),
		2:  "unknown key `arguments`: did you mean `args`? e.g. " + fmt.Sprintf(`{"id": "mcp:filesystem:write_file", "args": {"content":"x","path":%q}}`, file),
		3:  "`id` is required",
		4:  "`args` must be an object with the tool's arguments by name",
		5:  `arguments of mcp:filesystem:write_file do not match its inputSchema, so the call was not made: /content: missing required property "content"; you sent "contents", which is not a property: did you mean "content"?; schema: {"properties":{"content":{"type":"string"},"path":{"type":"string"}},"required":["path","content"]}`,
		6:  `/content: expected a string, got 42; schema: {"type":"string"}`,
		13: `so the call was not made: 2 mismatches: [1] /path: missing required property "path"; [2] /content: missing required property "content". Schema of [1] and [2]: {"properties":{"content":{"type":"string"},"path":{"type":"string"}},"required":["path","content"]}`,
	} {
		if msg := errorText(t, doc, i); !strings.Contains(msg, want) {
			t.Errorf("step %d: %q\nwant it to contain %q", i, msg, want)
		}
	}
	if e, ok := jpath(t, doc, "steps", 7).(map[string]any)["error"].(map[string]any); !ok || e["code"] != float64(-32602) ||
		!strings.Contains(e["message"].(string), `call it with tool_call: {"id": "mcp:filesystem:write_file"`) {
		t.Errorf("tools/call of the hidden name: %v", jpath(t, doc, "steps", 7))
	}
	if r := stepResult(t, doc, 8); r["isError"] == true {
		t.Fatalf("args as a JSON string: %v", r)
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "hello" {
		t.Errorf("file after the repaired call: %q %v (no failed attempt may have written it)", b, err)
	}
	if got := jpath(t, okStructured(t, doc, 9), "result", "content", 0, "text"); got != "hello" {
		t.Errorf("read back: %v", got)
	}
	if d := okStructured(t, doc, 10)["description"].(string); !strings.Contains(d, "Only works within allowed directories") {
		t.Errorf("describe lacks the whole description: %q", d)
	}
	// An upstream's JSON-RPC error: one clean line; the code and data as data.
	if msg := errorText(t, doc, 11); msg != "tool_call mcp:github:get_file_contents: "+wantUpstreamError {
		t.Errorf("tool_call of a failing tool: %q", msg)
	}
	wantDetails := map[string]any{"upstream": "github", "code": -32042.0, "data": map[string]any{"url": "https://example.com/auth"}, "message": "tool_call mcp:github:get_file_contents: " + wantUpstreamError}
	if got := jpath(t, stepResult(t, doc, 11), "structuredContent", "error"); !reflect.DeepEqual(got, any(wantDetails)) {
		t.Errorf("tool_call error details = %v\nwant %v", got, wantDetails)
	}
	wantWire := map[string]any{"code": -32042.0, "message": wantUpstreamError, "data": map[string]any{"url": "https://example.com/auth"}}
	if got := jpath(t, doc, "steps", 12).(map[string]any)["error"]; !reflect.DeepEqual(got, any(wantWire)) {
		t.Errorf("direct tools/call of a failing tool: JSON-RPC error %v\nwant %v", got, wantWire)
	}
}

// TestModelFirstAttemptsCodeMode with
// mark3labs/mcp-go as the client: the same slips through the code bridge,
// and the hints for a body that returns nothing and a missing await.
func TestModelFirstAttemptsCodeMode(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "b.txt")
	c := mcpgoClientStdio(t, proxyCmd(t, modelConfig(t, "code", dir)))
	run := func(body string) (string, map[string]any) {
		t.Helper()
		req := mcpgo.CallToolRequest{}
		req.Params.Name = "tool_search_code"
		req.Params.Arguments = map[string]any{"code": body}
		r, err := c.CallTool(context.Background(), req)
		if err != nil {
			t.Fatalf("tool_search_code: %v", err)
		}
		var sc map[string]any
		b, _ := json.Marshal(r.StructuredContent)
		_ = json.Unmarshal(b, &sc)
		return r.Content[0].(mcpgo.TextContent).Text, sc
	}
	// The bridge's answers to a wrong first call, caught in the body.
	text, sc := run(fmt.Sprintf(`const out = [];
for (const f of [
  () => openclaw.tools.call("mcp:filesystem:write_file", {path: %[1]q}),
  () => openclaw.tools.call("mcp:filesystem:write_file", [%[1]q, "x"]),
  () => openclaw.tools.call({id: "mcp:filesystem:write_file", args: {path: %[1]q, content: "x"}}),
]) { try { await f(); out.push("no error"); } catch (e) { out.push(e.message); } }
await openclaw.tools.call("mcp:filesystem:write_file", '{"path": %[1]q, "content": "from code"}');
return out;`, file))
	if sc["ok"] != true {
		t.Fatalf("run failed: %s", text)
	}
	var errs []string
	_ = json.Unmarshal([]byte(text), &errs)
	for i, want := range []string{
		`/content: missing required property "content"; schema: {"properties":{"content":{"type":"string"},"path":{"type":"string"}},"required":["path","content"]}`,
		"openclaw.tools.call's second argument (args) must be an object",
		"openclaw.tools.call(id, args): the first argument is the tool id (a string)",
	} {
		if i >= len(errs) || !strings.Contains(errs[i], want) {
			t.Errorf("bridge error %d: %v\nwant %q", i, errs, want)
		}
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "from code" {
		t.Errorf("file: %q %v, want only the repaired call's content", b, err)
	}
	// An upstream's JSON-RPC error in the bridge: the clean message, the
	// code and data as properties of the Error.
	text, _ = run(`try { await openclaw.tools.call("mcp:github:get_file_contents", {owner: "o", repo: "r", path: "README.md"}); return "no error"; }
catch (e) { return {message: e.message, upstream: e.upstream, code: e.code, data: e.data}; }`)
	want := map[string]any{"message": wantUpstreamError, "upstream": "github", "code": -32042.0, "data": map[string]any{"url": "https://example.com/auth"}}
	if got := decodeJSON(t, text); !reflect.DeepEqual(got, any(want)) {
		t.Errorf("bridge error: %v\nwant %v", got, want)
	}
	// Hints.
	for body, want := range map[string]string{
		`const r = await openclaw.tools.search("write a file"); r.length;`:       "the body returned nothing: end it with `return …`",
		`const hits = openclaw.tools.search("write a file"); return hits[0].id;`: "openclaw.tools.search(…) returns a Promise: did you forget `await` before it?",
	} {
		if text, sc := run(body); !strings.Contains(text, want) || !strings.Contains(fmt.Sprint(sc["hint"]), want) {
			t.Errorf("body %q: text %q, hint %v; want %q", body, text, sc["hint"], want)
		}
	}
	// A catalog tool's name called directly points into the code.
	req := mcpgo.CallToolRequest{}
	req.Params.Name = "filesystem__read_text_file"
	req.Params.Arguments = map[string]any{"path": file}
	if _, err := c.CallTool(context.Background(), req); err == nil || !strings.Contains(err.Error(), `return await openclaw.tools.call("mcp:filesystem:read_text_file"`) {
		t.Errorf("hidden name in code mode: %v", err)
	}
}

// TestCodeRunKilledCancelsUpstreamCall: a run that times
// out while a bridge call waits on a slow upstream tool cancels that call
// upstream (catalogserver -slow-tool logs "call cancelled"), and the proxy
// warned at start that a run cannot outlive one call of that upstream.
func TestCodeRunKilledCancelsUpstreamCall(t *testing.T) {
	errLog := filepath.Join(t.TempDir(), "upstream.stderr")
	cfg := writeConfig(t, fmt.Sprintf(`
[tool_search]
mode = "code"
code_timeout_ms = 1000

[upstreams.github]
command = "sh"
args = ["-c", %s]
trusted = true
`, tomlString(fmt.Sprintf("exec %s -tools %s -server github -slow-tool list_issues=60s 2>>%s", catalogServer(t), catalogFile(t, "github-like.jsonl"), errLog))))
	body := `return await openclaw.tools.call("mcp:github:list_issues", {owner: "o", repo: "r"})`
	// The session stays open 3 s after the run: a cancel caused by the
	// proxy shutting down would come after that.
	doc, code, stderr := nodeClientRun(t, append([]string{"--script", scriptArg(t, codeStep(body), map[string]any{"op": "sleep", "ms": 3000}, map[string]any{"op": "ping"}), "--"}, proxyCmd(t, cfg)...)...)
	end := time.Now()
	if code != 0 {
		t.Fatalf("client exit %d: %v", code, doc["error"])
	}
	if msg := errorText(t, doc, 0); !strings.Contains(msg, "timed out after 1000 ms") {
		t.Errorf("run: %q, want a timeout", msg)
	}
	if !strings.Contains(stderr, "a tool_search_code run ends after tool_search.code_timeout_ms (1s), before one call of these upstreams may end (call_timeout): github (55s)") {
		t.Errorf("no start-up warning about the run budget in the proxy's stderr:\n%s", tail(stderr, 2000))
	}
	// The client has exited; the upstream saw the cancel when the run was
	// killed (the proxy and its children are gone by now).
	b, _ := os.ReadFile(errLog)
	m := regexp.MustCompile(`time=(\S+) level=WARN msg="call cancelled"`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("the upstream call was not cancelled; upstream stderr:\n%s", tail(string(b), 2000))
	}
	at, err := time.Parse(time.RFC3339Nano, string(m[1]))
	if err != nil {
		t.Fatal(err)
	}
	if end.Sub(at) < 2*time.Second {
		t.Errorf("the upstream saw the cancel %v before the client ended, want it when the run was killed (3 s before)", end.Sub(at))
	}
}

// TestHTTPUpstreamWrongTransportHint: server-everything
// serving legacy SSE, configured as Streamable HTTP in so many words (its
// /sse answers the initialize POST with 404; without transport the proxy
// would try SSE next, TestBareURLLegacySSE), and serving Streamable HTTP, configured as SSE
// (its /mcp answers the SSE GET with 400): `check` names the other
// transport as the likely fix.
func TestHTTPUpstreamWrongTransportHint(t *testing.T) {
	ssePort, mcpPort := freePort(t), freePort(t)
	sseURL := fmt.Sprintf("http://127.0.0.1:%d/sse", ssePort)
	mcpURL := fmt.Sprintf("http://127.0.0.1:%d/mcp", mcpPort)
	startHTTPServer(t, append(npmServer(t, "everything"), "sse"), []string{fmt.Sprintf("PORT=%d", ssePort)}, sseURL)
	startHTTPServer(t, append(npmServer(t, "everything"), "streamableHttp"), []string{fmt.Sprintf("PORT=%d", mcpPort)}, mcpURL)
	cfg := writeConfig(t, fmt.Sprintf(`
[upstreams.legacy]
url = %q
transport = "streamable-http"
startup_timeout = "10s"

[upstreams.modern]
url = %q
transport = "sse"
startup_timeout = "10s"
`, sseURL, mcpURL))
	out, err := exec.Command(buildProxy(t), "check", cfg).CombinedOutput()
	if err == nil {
		t.Fatalf("check passed with both transports wrong:\n%s", out)
	}
	for _, want := range []string{
		`upstream legacy               FAILED`, `try transport = "sse"`,
		`upstream modern               FAILED`, `try transport = "streamable-http"`,
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("check output lacks %q:\n%s", want, out)
		}
	}
}

// TestUnknownToolSuggestion, with the
// official TypeScript SDK client: a misspelled name in a direct tools/call
// gets the "did you mean" that tool_describe gives, by exposed name, in
// directory mode and with search off (direct mode); a tool the policy
// denies is never suggested.
func TestUnknownToolSuggestion(t *testing.T) {
	waitsMostly(t)
	requireNode(t)
	conf := func(enabled bool, mode, deny string) string {
		return writeConfig(t, fmt.Sprintf(`
[tool_search]
enabled = %t
mode = %q

[upstreams.github]
command = %s
args = ["-tools", %s, "-server", "github"]
trusted = true

[tools]
deny = [%s]
`, enabled, mode, tomlString(catalogServer(t)), tomlString(catalogFile(t, "github-like.jsonl")), deny))
	}
	script := scriptArg(t, callStep("github__create_isue", map[string]any{"title": "x"}))
	for _, tc := range []struct {
		name, cfg, want, not string
	}{
		{"directory", conf(true, "directory", ""), `unknown tool \"github__create_isue\"; did you mean github__create_issue`, ""},
		{"off", conf(false, "tools", ""), `unknown tool \"github__create_isue\"; did you mean github__create_issue`, ""},
		{"directory, denied", conf(true, "directory", `"github__create_issue"`), `unknown tool \"github__create_isue\"; did you mean`, `github__create_issue[,?]`},
		{"off, denied", conf(false, "tools", `"github__create_issue"`), `unknown tool \"github__create_isue\"; did you mean`, `github__create_issue[,?]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := nodeClient(t, append([]string{"--quiet", "--script", script, "--"}, proxyCmd(t, tc.cfg)...)...)
			got := stepOutcome(t, doc, 0)
			if !strings.Contains(got, tc.want) || (tc.not != "" && regexp.MustCompile(tc.not).MatchString(got)) {
				t.Errorf("got %s\nwant it to contain %s and not match %s", got, tc.want, tc.not)
			}
		})
	}
}

// TestSearchWhileUpstreamsStart, with the
// official TypeScript SDK client: while an upstream is still starting
// (here one that never answers initialize), the instructions, the catalog
// summary in tool_search's description and the search notes name it and
// say to search again, instead of "tell the user that no available tool
// fits". The searches waited for the start-up window (2 s) first.
func TestSearchWhileUpstreamsStart(t *testing.T) {
	requireNode(t)
	cfg := writeConfig(t, fmt.Sprintf(`
[tool_search]
enabled = true
mode = "tools"

[upstreams.github]
command = %s
args = ["-tools", %s, "-server", "github"]
trusted = true

[upstreams.hung]
command = %s
args = ["-init-delay", "1h"]
startup_timeout = "10m"
`, tomlString(catalogServer(t)), tomlString(catalogFile(t, "github-like.jsonl")), tomlString(fakeUpstreamBin(t))))
	doc := nodeClient(t, append([]string{"--quiet", "--script", scriptArg(t,
		map[string]any{"op": "list"},
		callStep("tool_search", map[string]any{"query": "zzqx blorf"}),
		callStep("tool_search", map[string]any{"query": "create an issue"}),
	), "--"}, proxyCmd(t, cfg, "--startup-wait", "2s")...)...)
	// initialize and tools/list are answered at once, so github (which
	// starts in milliseconds) may be named as starting there too; the
	// searches wait up to startup_wait, and github is ready by then.
	const st = "1 MCP server still starting: hung"
	startingRE := regexp.MustCompile(`[12] MCP servers? still starting: (github, )?hung; a search finds their tools once they are ready\.`)
	if instr, _ := jpath(t, doc, "initialize", "instructions").(string); !startingRE.MatchString(instr) {
		t.Errorf("instructions: %q", instr)
	}
	var desc string
	for _, tl := range jpath(t, doc, "steps", 0, "result", "tools").([]any) {
		if tl.(map[string]any)["name"] == "tool_search" {
			desc, _ = tl.(map[string]any)["description"].(string)
		}
	}
	if !startingRE.MatchString(desc) {
		t.Errorf("tool_search description: %q", desc)
	}
	note := func(i int) string {
		n, _ := jpath(t, stepResult(t, doc, i), "structuredContent", "note").(string)
		return n
	}
	if n := note(1); !strings.HasPrefix(n, "no match yet: nothing in the catalog matches this query, but "+st+", and their tools are not in the catalog yet. Search again in a moment") || strings.Contains(n, "tell the user") {
		t.Errorf("no-match note: %q", n)
	}
	if n := note(2); !strings.Contains(n, st) || strings.Contains(n, "tell the user") {
		t.Errorf("note with hits: %q", n)
	}
}
