//go:build unix

package integration

// End-to-end tests of the "tools" and "directory" modes (SPEC §3-§4):
// the real binary, the default deployment's real upstreams (config.toml at
// the repo root) and real clients (client.mjs on the official TypeScript SDK,
// the official go-sdk client).

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// defaultConfig returns the repo's default deployment, config.toml. Its
// upstreams need examples/servers/node_modules and examples/servers/bin
// (scripts/install-servers.sh, which scripts/install-test-deps.sh runs).
func defaultConfig(t testing.TB) string {
	t.Helper()
	requireNode(t)
	root := repoRoot(t)
	for _, p := range []string{"examples/servers/bin/catalogserver", "examples/servers/node_modules/@modelcontextprotocol/server-memory/dist/index.js"} {
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(p))); err != nil {
			missingDep(t, p+" is not installed; run scripts/install-servers.sh")
		}
	}
	return filepath.Join(root, "config.toml")
}

// callStep is a client.mjs tools/call step.
func callStep(name string, args map[string]any) map[string]any {
	return map[string]any{"op": "call", "name": name, "args": args}
}

// stepResult returns step i's JSON-RPC result, failing when it is an error.
func stepResult(t testing.TB, doc map[string]any, i int) map[string]any {
	t.Helper()
	s := jpath(t, doc, "steps", i).(map[string]any)
	if e, ok := s["error"]; ok {
		t.Fatalf("step %d (%v %v): JSON-RPC error %v", i, s["op"], s["name"], e)
	}
	return s["result"].(map[string]any)
}

// okStructured returns the structuredContent of step i, failing when the
// result is an isError result.
func okStructured(t testing.TB, doc map[string]any, i int) map[string]any {
	t.Helper()
	r := stepResult(t, doc, i)
	if r["isError"] == true {
		t.Fatalf("step %d: isError result: %s", i, tail(fmt.Sprint(r["content"]), 600))
	}
	sc, ok := r["structuredContent"].(map[string]any)
	if !ok {
		t.Fatalf("step %d: no structuredContent object in %s", i, tail(fmt.Sprint(r), 600))
	}
	return sc
}

// errorText returns the text of step i's isError result, failing when the
// step succeeded or is a JSON-RPC error.
func errorText(t testing.TB, doc map[string]any, i int) string {
	t.Helper()
	r := stepResult(t, doc, i)
	if r["isError"] != true {
		t.Fatalf("step %d: want an isError result, got %s", i, tail(fmt.Sprint(r), 600))
	}
	return jpath(t, r, "content", 0, "text").(string)
}

// hitsOf returns the hits of a tool_search structuredContent.
func hitsOf(t testing.TB, sc map[string]any) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, h := range jpath(t, sc, "hits").([]any) {
		out = append(out, h.(map[string]any))
	}
	return out
}

// checkHitShape fails unless h is a SPEC §4 hit: id, name, description,
// source, upstream, input; untrusted upstreams get input "unknown" and no
// output hint, trusted ones a TypeScript-style object signature.
func checkHitShape(t testing.TB, h map[string]any, trusted map[string]bool) {
	t.Helper()
	for _, k := range []string{"id", "name", "description", "source", "upstream", "input"} {
		if _, ok := h[k].(string); !ok {
			t.Errorf("hit %v: field %q missing or not a string", h["id"], k)
		}
	}
	up, _ := h["upstream"].(string)
	id, _ := h["id"].(string)
	if want := "mcp:" + up + ":"; !strings.HasPrefix(id, want) {
		t.Errorf("hit id %q does not start with %q", id, want)
	}
	if trusted[up] {
		if h["source"] != "mcp/trusted" || !strings.HasPrefix(h["input"].(string), "{") {
			t.Errorf("trusted hit %s: source %v, input %q; want mcp/trusted and a signature", id, h["source"], h["input"])
		}
	} else {
		if h["source"] != "mcp/untrusted" || h["input"] != "unknown" {
			t.Errorf("untrusted hit %s: source %v, input %q; want mcp/untrusted and \"unknown\"", id, h["source"], h["input"])
		}
		if _, ok := h["output"]; ok {
			t.Errorf("untrusted hit %s carries an output hint %v", id, h["output"])
		}
	}
}

func hitIDs(hits []map[string]any) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h["id"].(string))
	}
	return out
}

// toolByName finds a tool of a tools/list result by name.
func toolByName(t testing.TB, tools []any, name string) map[string]any {
	t.Helper()
	for _, tl := range tools {
		if m := tl.(map[string]any); m["name"] == name {
			return m
		}
	}
	t.Fatalf("tools/list has no tool %q", name)
	return nil
}

// upstreamCounts counts direct-mode tools per exposed-name prefix (the part
// before "__"), leaving out the direct-only ones.
func upstreamCounts(names []string, directOnly ...string) map[string]int {
	out := map[string]int{}
	for _, n := range names {
		if slices.Contains(directOnly, n) {
			continue
		}
		p, _, _ := strings.Cut(n, "__")
		out[p]++
	}
	return out
}

// summaryOf is the sentence the search surfaces use to say what is behind
// them (modes.summary), computed from independent per-upstream counts.
func summaryOf(counts map[string]int) string {
	ups := make([]string, 0, len(counts))
	total := 0
	for u, n := range counts {
		ups = append(ups, u)
		total += n
	}
	sort.Strings(ups)
	parts := make([]string, len(ups))
	for i, u := range ups {
		parts[i] = fmt.Sprintf("%s (%d)", u, counts[u])
	}
	tools, servers := "tools", "MCP servers"
	if total == 1 {
		tools = "tool"
	}
	if len(ups) == 1 {
		servers = "MCP server"
	}
	return fmt.Sprintf("%d %s from %d %s: %s.", total, tools, len(ups), servers, strings.Join(parts, ", "))
}

func decodeJSON(t testing.TB, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("not JSON: %v: %s", err, tail(s, 300))
	}
	return v
}

var createIssueCallArgs = map[string]any{"owner": "octo", "repo": "hello", "title": "Crash on start", "body": "Steps..."}

// TestToolsModeDefaultConfig: with the default config.toml in tools mode, the
// official TypeScript SDK client sees exactly tool_search, tool_describe,
// tool_call and the direct-only memory__read_graph; runs search -> describe
// -> call and gets the upstream's real result; and every rule of SPEC §4
// holds (hit shapes by trust, exact schemas, ambiguous and unknown ids,
// the envelope, missing/null args, images as blocks, limit clamps). The
// reference is the same deployment in direct mode (`--mode off`), driven by
// the go-sdk client: direct mode passes upstream schemas and results through
// unchanged (TestDirectModeMatchesUpstreams).
func TestToolsModeDefaultConfig(t *testing.T) {
	waitsMostly(t)
	cfg := defaultConfig(t)
	scratch := filepath.Join(repoRoot(t), "scratch", fmt.Sprintf("model-test-%d.txt", os.Getpid()))
	t.Cleanup(func() { os.Remove(scratch) })
	steps := []map[string]any{
		{"op": "list"}, // 0
		callStep("tool_search", map[string]any{"query": "create a GitHub issue"}),                                                            // 1
		callStep("tool_describe", map[string]any{"id": "mcp:github:create_issue"}),                                                           // 2
		callStep("tool_call", map[string]any{"id": "mcp:github:create_issue", "args": createIssueCallArgs}),                                  // 3
		callStep("tool_search", map[string]any{"query": "echo a message back"}),                                                              // 4
		callStep("tool_search", map[string]any{"query": "create_issue", "limit": 20}),                                                        // 5
		callStep("tool_describe", map[string]any{"id": "create_issue"}),                                                                      // 6 ambiguous
		callStep("tool_describe", map[string]any{"id": "mcp:github:create_isue"}),                                                            // 7 unknown
		callStep("tool_describe", map[string]any{"id": "mcp:everything:get-structured-content"}),                                             // 8 outputSchema
		callStep("tool_call", map[string]any{"id": "mcp:registry:list_issues"}),                                                              // 9 args missing
		callStep("tool_call", map[string]any{"id": "mcp:registry:list_issues", "args": nil}),                                                 // 10 args null
		callStep("tool_call", map[string]any{"id": "mcp:everything:get-tiny-image"}),                                                         // 11 image
		callStep("tool_call", map[string]any{"id": "mcp:everything:get-structured-content", "args": map[string]any{"location": "New York"}}), // 12
		callStep("tool_search", map[string]any{"query": "list", "limit": 500}),                                                               // 13 clamp
		callStep("tool_search", map[string]any{"query": "list", "limit": 0}),                                                                 // 14
		callStep("tool_search", map[string]any{"query": "list", "limit": -2}),                                                                // 15
		callStep("tool_search", map[string]any{"query": "list"}),                                                                             // 16 default
		callStep("github__create_issue", createIssueCallArgs),                                                                                // 17 not exposed in tools mode
		callStep("memory__read_graph", map[string]any{}),                                                                                     // 18 direct-only
		callStep("tool_call", map[string]any{"id": "mcp:registry:no_such_tool_anywhere"}),                                                    // 19
		callStep("tool_describe", map[string]any{"id": "mcp:filesystem:write_file"}),                                                         // 20 whole description
		callStep("tool_call", map[string]any{"id": "mcp:filesystem:write_file", "args": map[string]any{"path": scratch, "content": "x"}}),    // 21 scratch folder
	}
	// A first search waits for the upstreams still starting (the proxy
	// answers initialize and tools/list at once); its outcome is dropped,
	// so the steps above keep their numbers and see the whole catalog.
	doc := nodeClient(t, append([]string{"--quiet", "--script", scriptArg(t, append([]map[string]any{callStep("tool_search", map[string]any{"query": "start"})}, steps...)...), "--"}, proxyCmd(t, cfg, "--mode", "tools")...)...)
	doc["steps"] = doc["steps"].([]any)[1:]

	// The reference: the same deployment in direct mode, through the go-sdk client.
	ref := gosdkClientStdio(t, proxyCmd(t, cfg, "--mode", "off"))
	refList, err := ref.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatalf("direct-mode tools/list: %v", err)
	}
	refTools := map[string]*gosdk.Tool{}
	for _, tl := range refList.Tools {
		refTools[tl.Name] = tl
	}
	refCall := func(name string, args any) map[string]any {
		t.Helper()
		r, err := ref.CallTool(t.Context(), &gosdk.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("direct-mode call %s: %v", name, err)
		}
		b, _ := json.Marshal(r)
		return decodeJSON(t, string(b)).(map[string]any)
	}
	trusted := map[string]bool{"github": true} // config.toml: only github is trusted

	// tools/list: exactly the three tools plus the direct-only tool.
	tools := jpath(t, doc, "steps", 0, "result", "tools").([]any)
	names := toolNames(t, tools)
	sort.Strings(names)
	if want := []string{"memory__read_graph", "tool_call", "tool_describe", "tool_search"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("tools/list = %v, want %v", names, want)
	}
	// tool_search's description says how many tools and which upstreams;
	// the summary is said once: the instructions give the count.
	counts := upstreamCounts(toolNamesGo(refList.Tools), "memory__read_graph")
	if len(counts) != 6 {
		t.Fatalf("direct mode shows %d upstreams (%v), want the 6 of config.toml", len(counts), counts)
	}
	sum := summaryOf(counts)
	for _, n := range []string{"tool_search", "tool_describe", "tool_call"} {
		if d := toolByName(t, tools, n)["description"].(string); strings.Contains(d, sum) != (n == "tool_search") {
			t.Errorf("%s description: summary %q present = %v:\n%s", n, sum, !(n == "tool_search"), d)
		}
	}
	total, _, _ := strings.Cut(sum, " ")
	if ins, _ := jpath(t, doc, "initialize").(map[string]any)["instructions"].(string); strings.Contains(ins, sum) || !strings.Contains(ins, total+" MCP tools") && !strings.Contains(ins, "still starting") {
		t.Errorf("instructions should give the count %s, not the summary: %q", total, ins)
	}

	// search -> describe -> call.
	hits := hitsOf(t, okStructured(t, doc, 1))
	if !slices.Contains(hitIDs(hits), "mcp:github:create_issue") {
		t.Fatalf("search %q: no mcp:github:create_issue among %v", "create a GitHub issue", hitIDs(hits))
	}
	for _, h := range hits {
		checkHitShape(t, h, trusted)
	}
	d := okStructured(t, doc, 2)
	if d["id"] != "mcp:github:create_issue" || d["upstream"] != "github" || d["source"] != "mcp/trusted" {
		t.Errorf("describe: hit fields %v", d)
	}
	var wantIn any
	json.Unmarshal(mustJSON(t, refTools["github__create_issue"].InputSchema), &wantIn)
	if !reflect.DeepEqual(d["inputSchema"], wantIn) {
		t.Errorf("describe inputSchema = %v\nwant the upstream's %v", d["inputSchema"], wantIn)
	}
	env := okStructured(t, doc, 3)
	if jpath(t, env, "tool", "id") != "mcp:github:create_issue" {
		t.Errorf("envelope tool = %v", env["tool"])
	}
	want := refCall("github__create_issue", createIssueCallArgs)
	res := env["result"].(map[string]any)
	if !reflect.DeepEqual(res["content"], want["content"]) || !reflect.DeepEqual(res["structuredContent"], want["structuredContent"]) {
		t.Errorf("tool_call result = %v\nwant the upstream's %v", res, want)
	}
	if !reflect.DeepEqual(res["details"], want["structuredContent"]) {
		t.Errorf("result.details = %v, want structuredContent %v", res["details"], want["structuredContent"])
	}
	// The envelope is also the text block.
	if txt := jpath(t, stepResult(t, doc, 3), "content", 0, "text").(string); !reflect.DeepEqual(decodeJSON(t, txt), any(env)) {
		t.Errorf("envelope text and structuredContent differ: %s", tail(txt, 300))
	}

	// Untrusted upstreams: input "unknown" (everything, gitlab, registry).
	echoHits := hitsOf(t, okStructured(t, doc, 4))
	if !slices.Contains(hitIDs(echoHits), "mcp:everything:echo") {
		t.Errorf("search echo: no mcp:everything:echo among %v", hitIDs(echoHits))
	}
	ciHits := hitsOf(t, okStructured(t, doc, 5))
	for _, id := range []string{"mcp:github:create_issue", "mcp:gitlab:create_issue", "mcp:registry:create_issue"} {
		if !slices.Contains(hitIDs(ciHits), id) {
			t.Errorf("search create_issue: no %s among %v", id, hitIDs(ciHits))
		}
	}
	seen := map[string]bool{}
	for _, h := range append(echoHits, ciHits...) {
		checkHitShape(t, h, trusted)
		seen[h["upstream"].(string)] = true
	}
	for _, up := range []string{"everything", "gitlab", "registry", "github"} {
		if !seen[up] {
			t.Errorf("no hit of upstream %s was checked", up)
		}
	}

	// Ambiguous name: the candidate ids.
	if msg := errorText(t, doc, 6); !strings.Contains(msg, "ambiguous") || !strings.Contains(msg, "mcp:github:create_issue") || !strings.Contains(msg, "mcp:gitlab:create_issue") {
		t.Errorf("describe create_issue: %q, want ambiguous with the github and gitlab ids", msg)
	}
	// Unknown id: up to three suggestions.
	msg := errorText(t, doc, 7)
	sugg := regexp.MustCompile(`mcp:[a-z]+:[A-Za-z0-9_.-]+`).FindAllString(strings.SplitN(msg, "did you mean", 2)[len(strings.SplitN(msg, "did you mean", 2))-1], -1)
	if !strings.Contains(msg, "unknown tool") || len(sugg) == 0 || len(sugg) > 3 || !slices.Contains(sugg, "mcp:github:create_issue") {
		t.Errorf("describe mcp:github:create_isue: %q; want unknown tool with 1..3 suggestions including mcp:github:create_issue (got %v)", msg, sugg)
	}
	// Exact outputSchema.
	var wantOut any
	json.Unmarshal(mustJSON(t, refTools["everything__get-structured-content"].OutputSchema), &wantOut)
	if d := okStructured(t, doc, 8); wantOut == nil || !reflect.DeepEqual(d["outputSchema"], wantOut) {
		t.Errorf("describe outputSchema = %v\nwant the upstream's %v", d["outputSchema"], wantOut)
	}
	// Missing and null args mean {}.
	for _, i := range []int{9, 10} {
		if a := jpath(t, okStructured(t, doc, i), "result", "details", "arguments"); !reflect.DeepEqual(a, map[string]any{}) {
			t.Errorf("step %d: the upstream received %v, want {}", i, a)
		}
	}
	// Images stay blocks: the envelope, then the upstream's image block.
	img := stepResult(t, doc, 11)
	wantImg := refCall("everything__get-tiny-image", map[string]any{})
	var wantBlocks []any
	for _, b := range wantImg["content"].([]any) {
		if b.(map[string]any)["type"] != "text" {
			wantBlocks = append(wantBlocks, b)
		}
	}
	gotBlocks := img["content"].([]any)[1:]
	if len(wantBlocks) == 0 || !reflect.DeepEqual(gotBlocks, wantBlocks) {
		t.Errorf("tool_call get-tiny-image blocks after the envelope = %s\nwant the upstream's %s", tail(fmt.Sprint(gotBlocks), 300), tail(fmt.Sprint(wantBlocks), 300))
	}
	if jpath(t, img, "structuredContent", "result", "content", 1, "type") != "image" {
		t.Errorf("the envelope does not name the image block: %s", tail(fmt.Sprint(img["structuredContent"]), 400))
	}
	// details = structuredContent.
	sc12 := okStructured(t, doc, 12)
	if want := refCall("everything__get-structured-content", map[string]any{"location": "New York"})["structuredContent"]; want == nil || !reflect.DeepEqual(jpath(t, sc12, "result", "details"), want) {
		t.Errorf("get-structured-content details = %v, want %v", jpath(t, sc12, "result", "details"), want)
	}
	// Limits: above max_search_limit (20) clamped; 0 and negative are errors; default 8.
	if n := len(hitsOf(t, okStructured(t, doc, 13))); n != 20 {
		t.Errorf("limit 500: %d hits, want 20 (max_search_limit)", n)
	}
	for _, i := range []int{14, 15} {
		if msg := errorText(t, doc, i); !strings.Contains(msg, "limit") {
			t.Errorf("step %d: %q does not name the limit", i, msg)
		}
	}
	if n := len(hitsOf(t, okStructured(t, doc, 16))); n != 8 {
		t.Errorf("default limit: %d hits, want 8 (search_default_limit)", n)
	}
	// Catalog tools are not callable by name in tools mode; direct-only ones are.
	// The error points to tool_call.
	if e, ok := jpath(t, doc, "steps", 17).(map[string]any)["error"].(map[string]any); !ok || e["code"] != float64(-32602) || !strings.Contains(e["message"].(string), `call it with tool_call: {"id": "mcp:github:create_issue"`) {
		t.Errorf("tools/call github__create_issue in tools mode: %v, want JSON-RPC -32602 pointing to tool_call", jpath(t, doc, "steps", 17))
	}
	if r := stepResult(t, doc, 18); r["isError"] == true {
		t.Errorf("memory__read_graph: %v", r)
	}
	if msg := errorText(t, doc, 19); !strings.Contains(msg, "unknown tool") {
		t.Errorf("tool_call of an unknown id: %q", msg)
	}
	// describe gives the whole description, the same text direct mode lists,
	// and the annotations.
	wf := okStructured(t, doc, 20)
	if want := refTools["filesystem__write_file"].Description; wf["description"] != want || !strings.Contains(want, "Only works within allowed directories") {
		t.Errorf("describe write_file description = %q\nwant the upstream's whole %q", wf["description"], want)
	}
	var wantAnn any
	json.Unmarshal(mustJSON(t, refTools["filesystem__write_file"].Annotations), &wantAnn)
	if wantAnn == nil || !reflect.DeepEqual(wf["annotations"], wantAnn) {
		t.Errorf("describe write_file annotations = %v, want %v", wf["annotations"], wantAnn)
	}
	// The default filesystem upstream writes into scratch/, which git
	// ignores.
	okStructured(t, doc, 21)
	if b, err := os.ReadFile(scratch); err != nil || string(b) != "x" {
		t.Errorf("file written through the default filesystem upstream: %q %v", b, err)
	}
	if _, err := exec.LookPath("git"); err == nil {
		if out, err := exec.Command("git", "-C", repoRoot(t), "check-ignore", "-q", scratch).CombinedOutput(); err != nil {
			t.Errorf("git does not ignore %s: %v %s", scratch, err, out)
		}
	}
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// directoryConfig is a deployment for directory mode: a trusted and an
// untrusted catalog server, the 1,000-tool registry and server-everything,
// with a pinned tool and a small directory bound.
func directoryConfig(t *testing.T, maxChars int) string {
	requireNode(t)
	cs := tomlString(catalogServer(t))
	return writeConfig(t, fmt.Sprintf(`
[tool_search]
enabled = true
mode = "directory"
directory_max_chars = %d
pinned = ["github__create_issue", "mcp:everything:get-sum"]

[upstreams.everything]
command = %s
args = [%s]

[upstreams.github]
command = %s
args = ["-tools", %s, "-server", "github"]
trusted = true

[upstreams.gitlab]
command = %s
args = ["-tools", %s, "-server", "gitlab"]

[upstreams.registry]
command = %s
args = ["-tools", %s]
`, maxChars, tomlString(npmServer(t, "everything")[0]), quoteArgs(npmServer(t, "everything")[1:]),
		cs, tomlString(catalogFile(t, "github-like.jsonl")), cs, tomlString(catalogFile(t, "github-like.jsonl")),
		cs, tomlString(catalogFile(t, "toolsdk-1000.jsonl"))))
}

// directoryOf returns the directory part of a text (from its header line on).
func directoryOf(t testing.TB, text string) string {
	t.Helper()
	i := strings.Index(text, "Tool directory")
	if i < 0 {
		t.Fatalf("no directory in %q", tail(text, 400))
	}
	return text[i:]
}

// TestDirectoryMode: the directory sits in the tool_search description,
// sorted, within directory_max_chars, and byte-identical across three
// runs of the proxy with three different clients (TypeScript SDK, go-sdk,
// mcp-go); pinned tools are listed with their full schemas; a hidden
// directory name called directly is hydrated and returns the upstream's
// result. The proxy answers initialize and tools/list at once, so each
// client calls first (the call waits for the upstreams still starting)
// and lists after: the instructions, given at initialize, hold the
// directory only of the upstreams ready by then.
func TestDirectoryMode(t *testing.T) {
	waitsMostly(t)
	const maxChars = 1500
	cfg := directoryConfig(t, maxChars)
	steps := []map[string]any{
		callStep("everything__echo", map[string]any{"message": "hydrated"}),
		callStep("registry__no_such_tool", map[string]any{}),
		callStep("tool_search", map[string]any{"query": "create a GitHub issue", "limit": 3}),
		{"op": "list"},
	}
	doc := nodeClient(t, append([]string{"--quiet", "--script", scriptArg(t, steps...), "--"}, proxyCmd(t, cfg)...)...)
	tools := jpath(t, doc, "steps", 3, "result", "tools").([]any)
	dir := directoryOf(t, toolByName(t, tools, "tool_search")["description"].(string))
	if ins := jpath(t, doc, "initialize", "instructions").(string); strings.Contains(ins, "Tool directory") && len([]rune(directoryOf(t, ins))) > maxChars {
		t.Errorf("the instructions' directory is past directory_max_chars: %s", ins)
	}

	// Bounded, sorted, and every line names a real catalog tool.
	if n := len([]rune(dir)); n > maxChars {
		t.Errorf("directory is %d characters, directory_max_chars is %d", n, maxChars)
	}
	ls := strings.Split(strings.TrimRight(dir, "\n"), "\n")
	if !strings.Contains(ls[len(ls)-1], "more tools") {
		t.Errorf("a cut directory must end by saying how many tools are left out; last line %q", ls[len(ls)-1])
	}
	var dnames []string
	for _, l := range ls[1 : len(ls)-1] {
		name, _, _ := strings.Cut(strings.TrimPrefix(l, "- "), ":")
		dnames = append(dnames, strings.TrimSpace(name))
	}
	if len(dnames) < 5 || !slices.IsSorted(dnames) {
		t.Errorf("directory names not sorted or too few: %v", dnames)
	}
	if !slices.Contains(dnames, "everything__echo") {
		t.Fatalf("everything__echo is not in the directory: %v", dnames)
	}

	// Pinned tools with full schemas; the hidden ones are not in tools/list.
	names := toolNames(t, tools)
	for _, want := range []string{"tool_search", "tool_describe", "tool_call", "github__create_issue", "everything__get-sum"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list %v lacks %s", names, want)
		}
	}
	if len(names) != 5 {
		t.Errorf("tools/list = %v, want the three tools and the two pinned ones", names)
	}
	var file map[string]any
	for _, l := range lines(string(must(os.ReadFile(catalogFile(t, "github-like.jsonl"))))) {
		if m := decodeJSON(t, l).(map[string]any); m["server"] == "github" && m["name"] == "create_issue" {
			file = m
		}
	}
	if got := toolByName(t, tools, "github__create_issue")["inputSchema"]; !reflect.DeepEqual(got, file["inputSchema"]) {
		t.Errorf("pinned github__create_issue inputSchema = %v\nwant the catalog's %v", got, file["inputSchema"])
	}
	if props := jpath(t, toolByName(t, tools, "everything__get-sum"), "inputSchema", "properties").(map[string]any); len(props) < 2 {
		t.Errorf("pinned everything__get-sum has no full schema: %v", props)
	}

	// A hidden directory name is hydrated and runs on the upstream.
	if txt := jpath(t, stepResult(t, doc, 0), "content", 0, "text"); txt != "Echo: hydrated" {
		t.Errorf("everything__echo through the directory = %v, want the upstream's \"Echo: hydrated\"", txt)
	}
	if e, ok := jpath(t, doc, "steps", 1).(map[string]any)["error"].(map[string]any); !ok || e["code"] != float64(-32602) {
		t.Errorf("unknown directory name: %v, want JSON-RPC -32602", jpath(t, doc, "steps", 1))
	}
	if hits := hitsOf(t, okStructured(t, doc, 2)); len(hits) != 3 {
		t.Errorf("tool_search in directory mode: %d hits, want 3", len(hits))
	}
	want := toolByName(t, tools, "tool_search")["description"]

	// A second run of the same catalog, another client: the same bytes.
	cs := gosdkClientStdio(t, proxyCmd(t, cfg))
	r, err := cs.CallTool(t.Context(), &gosdk.CallToolParams{Name: "everything__echo", Arguments: map[string]any{"message": "again"}})
	if err != nil || r.IsError || r.Content[0].(*gosdk.TextContent).Text != "Echo: again" {
		t.Errorf("go-sdk: hidden everything__echo = %v, %v", r, err)
	}
	l2, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range l2.Tools {
		if tl.Name == "tool_search" && tl.Description != want {
			t.Errorf("tool_search description differs between two runs:\n%s\n---\n%s", tl.Description, want)
		}
	}

	// A third run, a third client SDK (mark3labs/mcp-go): the same bytes.
	mc := mcpgoStartStdio(t, proxyCmd(t, cfg))
	mcpgoInitialize(t, mc, "")
	req := mcpgo.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = "everything__echo", map[string]any{"message": "third"}
	if _, err := mc.CallTool(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	l3, err := mc.ListTools(t.Context(), mcpgo.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range l3.Tools {
		if tl.Name == "tool_search" && tl.Description != want {
			t.Errorf("tool_search description differs for the mcp-go client:\n%s\n---\n%s", tl.Description, want)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// hostileCatalog writes a tools.jsonl with a 1 MB input schema (many
// described properties) and a depth-200 nested schema, and returns its path
// and the two schemas.
func hostileCatalog(t testing.TB) (string, map[string]any, map[string]any) {
	t.Helper()
	props := map[string]any{}
	for i, size := 0, 0; size < 1<<20; i++ {
		p := map[string]any{"type": "string", "description": strings.Repeat("padding text ", 6) + fmt.Sprint(i)}
		props[fmt.Sprintf("field_%05d", i)] = p
		size += len(mustJSON(t, p)) + 15
	}
	huge := map[string]any{"type": "object", "properties": props, "required": []any{"field_00000"}}
	var deep any = map[string]any{"type": "string"}
	for i := 0; i < 200; i++ {
		deep = map[string]any{"type": "object", "properties": map[string]any{fmt.Sprintf("level%d", 199-i): deep}}
	}
	deepM := deep.(map[string]any)
	var b strings.Builder
	for _, rec := range []map[string]any{
		{"id": "hostile::huge_schema_tool", "server": "hostile", "name": "huge_schema_tool", "description": "A tool whose input schema is one megabyte", "inputSchema": huge},
		{"id": "hostile::deep_schema_tool", "server": "hostile", "name": "deep_schema_tool", "description": "A tool whose input schema nests two hundred levels deep", "inputSchema": deepM},
		{"id": "hostile::plain_tool", "server": "hostile", "name": "plain_tool", "description": "An ordinary tool", "inputSchema": map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}},
	} {
		b.Write(mustJSON(t, rec))
		b.WriteByte('\n')
	}
	p := filepath.Join(t.TempDir(), "hostile.jsonl")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p, huge, deepM
}

// TestTrustedHostileSchemas: a TRUSTED upstream serving a 1 MB schema and a
// depth-200 schema, with security.max_tool_bytes raised past the 1 MB tool
// (the default, 128 KiB, quarantines it: TestBulkyToolTextIsBounded; an
// operator who trusts such a server raises the bound): the proxy starts, search and describe answer (each
// request is bounded by the client's per-request timeout, 60 s, a generous
// fail-safe; the speed figure is BenchmarkHostileSchemas in modes), the hits'
// signatures stay within bounds, and describe returns the exact schemas.
func TestTrustedHostileSchemas(t *testing.T) {
	file, huge, deep := hostileCatalog(t)
	cfg := writeConfig(t, fmt.Sprintf(`
[tool_search]
enabled = true
mode = "tools"

[security]
max_tool_bytes = 4194304

[upstreams.hostile]
command = %s
args = ["-tools", %s]
trusted = true
`, tomlString(catalogServer(t)), tomlString(file)))
	steps := []map[string]any{
		callStep("tool_search", map[string]any{"query": "one megabyte schema"}),
		callStep("tool_search", map[string]any{"query": "nests two hundred levels deep"}),
		callStep("tool_describe", map[string]any{"id": "mcp:hostile:huge_schema_tool"}),
		callStep("tool_describe", map[string]any{"id": "mcp:hostile:deep_schema_tool"}),
		callStep("tool_call", map[string]any{"id": "mcp:hostile:deep_schema_tool", "args": map[string]any{"level0": map[string]any{}}}),
		callStep("tool_search", map[string]any{"query": "ordinary tool"}),
	}
	doc := nodeClient(t, append([]string{"--quiet", "--timeout", "60000", "--script", scriptArg(t, steps...), "--"}, proxyCmd(t, cfg)...)...)
	for i, id := range []string{"mcp:hostile:huge_schema_tool", "mcp:hostile:deep_schema_tool"} {
		hits := hitsOf(t, okStructured(t, doc, i))
		if len(hits) == 0 || hits[0]["id"] != id {
			t.Fatalf("search %d: hits %v, want %s first", i, hitIDs(hits), id)
		}
		in := hits[0]["input"].(string)
		if len(in) > 400+8 || hits[0]["source"] != "mcp/trusted" {
			t.Errorf("%s: input hint of %d bytes (bound 400), source %v: %q", id, len(in), hits[0]["source"], tail(in, 200))
		}
		t.Logf("%s: input hint %q", id, tail(in, 120))
	}
	if got := okStructured(t, doc, 2)["inputSchema"]; !reflect.DeepEqual(got, any(huge)) {
		t.Errorf("describe huge_schema_tool: the 1 MB schema did not come back exactly")
	}
	if got := okStructured(t, doc, 3)["inputSchema"]; !reflect.DeepEqual(got, any(deep)) {
		t.Errorf("describe deep_schema_tool: the depth-200 schema did not come back exactly")
	}
	if a := jpath(t, okStructured(t, doc, 4), "result", "details", "arguments"); !reflect.DeepEqual(a, map[string]any{"level0": map[string]any{}}) {
		t.Errorf("tool_call deep_schema_tool: upstream got %v", a)
	}
	if h := hitsOf(t, okStructured(t, doc, 5)); len(h) == 0 || h[0]["input"] != "{ q?: string }" {
		t.Errorf("the plain tool next to the hostile ones: %v", h)
	}
}
