//go:build unix

package integration

// The end-to-end check of SPEC §8: a temporary fake upstream with a
// large catalog and a scripted client, run once in direct mode and once in
// each Tool Search mode, comparing what the client received and the session
// log.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/mcp-toolsearch/mcp-toolsearch/telemetry"
)

// Values that must never reach the session log, the proxy's log or
// /metrics unless log_arguments = true (SPEC §7).
const (
	secretArgValue = "s3cr3t-arg-value"        // an argument value of a tool call
	secretToken    = "tok-9f3c1e-not-for-logs" // substituted for ${SCENARIO_TOKEN} in an upstream header
)

// scenarioTool is the fake tool every mode calls: unique in
// toolsdk-1000.jsonl and easy to find by a natural-language query.
const (
	scenarioTool   = "stop_music"
	scenarioID     = "mcp:big:stop_music"
	scenarioQuery  = "stop the Sonic Pi music that is playing"
	directOnlyID   = "mcp:chat:list_channels"
	directOnlyName = "chat__list_channels"
)

// bigCatalog returns examples/catalogs/toolsdk-1000.jsonl (1,000 real tool
// names and descriptions, kept in the repo so CI does not need
// ../shared/bench), skipping the test when it is absent.
func bigCatalog(t testing.TB) string {
	t.Helper()
	p := filepath.Join(repoRoot(t), "examples", "catalogs", "toolsdk-1000.jsonl")
	if _, err := os.Stat(p); err != nil {
		missingDep(t, fmt.Sprintf("the 1,000-tool catalog %s is missing (%v); it ships with the repository", p, err))
	}
	return p
}

// scenarioConfig writes the scenario's config: upstream "big" (the 1,000
// tools, stdio, untrusted: a plain MCP upstream) and upstream "chat" (two
// Slack-like tools over Streamable HTTP at chatURL, trusted, with
// list_channels direct-only and an Authorization header holding
// ${SCENARIO_TOKEN}). The session log goes to logPath.
func scenarioConfig(t *testing.T, chatURL, logPath string, logArguments bool) string {
	return writeConfig(t, fmt.Sprintf(`
[tool_search]
enabled = true
mode = "code"

[telemetry]
session_log = %s
log_arguments = %t

[upstreams.big]
command = %s
args = ["-tools", %s]

[upstreams.chat]
url = %s
headers = { Authorization = "Bearer ${SCENARIO_TOKEN}" }
trusted = true
direct_only = ["list_channels"]
`, tomlString(logPath), logArguments, tomlString(catalogServer(t)), tomlString(bigCatalog(t)), tomlString(chatURL)))
}

// startChatUpstream serves the two "slack" tools of github-like.jsonl over
// Streamable HTTP and returns the URL of its /mcp endpoint.
func startChatUpstream(t *testing.T) string {
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	startHTTPServer(t, []string{catalogServer(t), "-tools", catalogFile(t, "github-like.jsonl"), "-server", "slack", "-http", addr}, nil, "http://"+addr+"/mcp")
	return "http://" + addr + "/mcp"
}

// scenarioRun is one client session against the proxy in one mode.
type scenarioRun struct {
	mode   string // --mode value: off, tools, directory, code
	doc    map[string]any
	stderr string // client.mjs stderr, which carries the proxy's (at debug level)
	list   int    // the step of the run's tools/list
}

// tools returns the tools of the run's tools/list step (a full list).
func (r *scenarioRun) tools(t *testing.T) []any {
	return jpath(t, r.doc, "steps", r.list, "result", "tools").([]any)
}

// surfaceBytes is what the model sees first, as the client received it:
// the serialized tools/list result(s) plus the instructions (UTF-8 bytes).
func (r *scenarioRun) surfaceBytes(t *testing.T) (list, instructions int) {
	list = int(jpath(t, r.doc, "steps", r.list, "bytes").(float64))
	if s, ok := jpath(t, r.doc, "initialize").(map[string]any)["instructions"].(string); ok {
		instructions = len(s)
	}
	return list, instructions
}

// step returns step i's outcome, failing on a JSON-RPC error.
func (r *scenarioRun) step(t *testing.T, i int) map[string]any {
	t.Helper()
	s := jpath(t, r.doc, "steps", i).(map[string]any)
	if e, ok := s["error"]; ok {
		t.Fatalf("mode %s: step %d (%v %v): JSON-RPC error %v", r.mode, i, s["op"], s["name"], e)
	}
	return s
}

// runScenario runs client.mjs over stdio against `serve --mode mode` with
// steps, with SCENARIO_TOKEN in the proxy's environment.
func runScenario(t *testing.T, cfg, mode string, steps ...map[string]any) *scenarioRun {
	t.Helper()
	args := []string{"--env", "SCENARIO_TOKEN=" + secretToken, "--script", scriptArg(t, steps...), "--",
		buildProxy(t), "serve", "--config", cfg, "--mode", mode, "--log-level", "debug"}
	doc, code, stderr := nodeClientRun(t, args...)
	if code != 0 {
		t.Fatalf("mode %s: client.mjs exit %d, error %v\nstderr: %s", mode, code, doc["error"], tail(stderr, 4000))
	}
	list := slices.IndexFunc(steps, func(s map[string]any) bool { return s["op"] == "list" })
	return &scenarioRun{mode: mode, doc: doc, stderr: stderr, list: list}
}

// echoOf is what catalogserver answers for tool called with args (its
// EchoResult structuredContent), decoded as JSON.
func echoOf(tool string, args map[string]any) map[string]any {
	return map[string]any{"arguments": args, "tool": tool}
}

// TestScenarioDirectVersusToolSearch is SPEC §8: the same fake tool (one of
// 1,000 in a temporary upstream) is called by a scripted client (the
// official TypeScript SDK) in direct mode and in the tools, directory and
// code modes of Tool Search; the six points are checked from what the
// client received and from the session log, and `stats` prints the counts.
// It also checks that no argument value and no secret reaches the session
// log or the proxy's log (debug level) with log_arguments = false.
func TestScenarioDirectVersusToolSearch(t *testing.T) {
	waitsMostly(t)
	requireNode(t)
	chatURL := startChatUpstream(t)
	logPath := filepath.Join(t.TempDir(), "sessions.jsonl")
	cfg := scenarioConfig(t, chatURL, logPath, false)

	callArgs := map[string]any{"note": secretArgValue}
	wantEcho := echoOf(scenarioTool, callArgs)
	list := map[string]any{"op": "list"}
	callDirectOnly := map[string]any{"op": "call", "name": directOnlyName, "args": map[string]any{}}
	code := fmt.Sprintf(`const hits = await openclaw.tools.search(%q);
const hit = hits.find(h => h.id === %q);
if (!hit) throw new Error("not found: " + JSON.stringify(hits.map(h => h.id)));
const t = await openclaw.tools.describe(hit.id);
return await openclaw.tools.call(t.id, {note: %q});`, scenarioQuery, scenarioID, secretArgValue)

	runs := map[string]*scenarioRun{
		"direct": runScenario(t, cfg, "off", list,
			map[string]any{"op": "call", "name": "big__" + scenarioTool, "args": callArgs}, callDirectOnly),
		// The search modes answer initialize and tools/list at once, and
		// their first call waits for the upstreams still starting: each
		// lists after its first call, so the list has the direct-only tool.
		"tools": runScenario(t, cfg, "tools",
			map[string]any{"op": "call", "name": "tool_search", "args": map[string]any{"query": scenarioQuery}},
			map[string]any{"op": "call", "name": "tool_describe", "args": map[string]any{"id": scenarioID}},
			map[string]any{"op": "call", "name": "tool_call", "args": map[string]any{"id": scenarioID, "args": callArgs}},
			list, callDirectOnly),
		// Directory mode: the model calls a hidden directory name directly;
		// the proxy hydrates it from the same authorized catalog (SPEC §3).
		"directory": runScenario(t, cfg, "directory",
			map[string]any{"op": "call", "name": "big__" + scenarioTool, "args": callArgs}, list, callDirectOnly),
		"code": runScenario(t, cfg, "code",
			map[string]any{"op": "call", "name": "tool_search_code", "args": map[string]any{"code": code}}, list, callDirectOnly),
	}
	direct := runs["direct"]

	// (1) Direct mode calls the fake tool and gets its echo.
	if got := direct.step(t, 1)["result"].(map[string]any)["structuredContent"]; !reflect.DeepEqual(got, wantEcho) {
		t.Errorf("(1) direct call of big__%s: structuredContent = %v, want %v", scenarioTool, got, wantEcho)
	}

	// (2) Each Tool Search mode calls the same tool and gets the same echo.
	toolsRes := runs["tools"].step(t, 2)["result"].(map[string]any)
	if toolsRes["isError"] == true {
		t.Fatalf("(2) tools: tool_call returned isError: %v", toolsRes["content"])
	}
	if got := jpath(t, toolsRes, "structuredContent", "result", "structuredContent"); !reflect.DeepEqual(got, wantEcho) {
		t.Errorf("(2) tools: tool_call result.structuredContent = %v, want %v", got, wantEcho)
	}
	if got := jpath(t, toolsRes, "structuredContent", "tool", "id"); got != scenarioID {
		t.Errorf("(2) tools: tool_call envelope tool.id = %v, want %s", got, scenarioID)
	}
	hits := jpath(t, runs["tools"].step(t, 0)["result"], "structuredContent", "hits").([]any)
	if !slices.ContainsFunc(hits, func(h any) bool { return h.(map[string]any)["id"] == scenarioID }) {
		t.Errorf("(2) tools: tool_search %q did not return %s: %v", scenarioQuery, scenarioID, hits)
	}
	if got := runs["directory"].step(t, 0)["result"].(map[string]any)["structuredContent"]; !reflect.DeepEqual(got, wantEcho) {
		t.Errorf("(2) directory: hydrated call of big__%s: structuredContent = %v, want %v", scenarioTool, got, wantEcho)
	}
	codeRes := runs["code"].step(t, 0)["result"].(map[string]any)
	if ok := jpath(t, codeRes, "structuredContent", "ok"); ok != true {
		t.Fatalf("(2) code: tool_search_code failed: %v", codeRes["structuredContent"])
	}
	if got := jpath(t, codeRes, "structuredContent", "value", "result", "structuredContent"); !reflect.DeepEqual(got, wantEcho) {
		t.Errorf("(2) code: openclaw.tools.call result.structuredContent = %v, want %v", got, wantEcho)
	}

	// (3) Direct mode exposes the fake upstream's schemas: every tool the
	// upstream lists (asked directly, without the proxy) is in the proxy's
	// list under its prefixed name, with the same description and schema.
	upstreamDoc := nodeClient(t, "--quiet", "--script", scriptArg(t, list), "--", catalogServer(t), "-tools", bigCatalog(t))
	upTools := jpath(t, upstreamDoc, "steps", 0, "result", "tools").([]any)
	if len(upTools) != 1000 {
		t.Fatalf("the fake upstream lists %d tools, want 1000", len(upTools))
	}
	byName := map[string]map[string]any{}
	for _, x := range direct.tools(t) {
		tool := x.(map[string]any)
		byName[tool["name"].(string)] = tool
	}
	if n := len(byName); n != 1002 {
		t.Errorf("(3) direct tools/list has %d tools, want 1002 (1,000 fake + 2 chat)", n)
	}
	folded := map[string]int{} // names that clash case-insensitively get a hash suffix (README "Names")
	for _, x := range upTools {
		folded[strings.ToLower(x.(map[string]any)["name"].(string))]++
	}
	checked := 0
	for _, x := range upTools {
		ut := x.(map[string]any)
		name := "big__" + ut["name"].(string)
		if !exposedNameRE.MatchString(name) || folded[strings.ToLower(ut["name"].(string))] > 1 {
			continue // renamed with a hash suffix; counted below
		}
		pt, ok := byName[name]
		if !ok {
			t.Errorf("(3) direct tools/list lacks %s", name)
			continue
		}
		if !reflect.DeepEqual(pt["inputSchema"], ut["inputSchema"]) || pt["description"] != ut["description"] {
			t.Errorf("(3) %s: proxy gives schema %v / description %q, upstream %v / %q", name, pt["inputSchema"], pt["description"], ut["inputSchema"], ut["description"])
		}
		checked++
	}
	if checked < 990 {
		t.Errorf("(3) only %d of 1000 upstream tools kept their plain prefixed name; want nearly all", checked)
	}

	// (4) Tool Search exposes only the compact bridge and the direct-only tool.
	wantSurface := map[string][]string{
		"tools":     {"tool_search", "tool_describe", "tool_call", directOnlyName},
		"directory": {"tool_search", "tool_describe", "tool_call", directOnlyName},
		"code":      {"tool_search_code", directOnlyName},
	}
	for mode, want := range wantSurface {
		got := toolNames(t, runs[mode].tools(t))
		if !slices.Equal(sorted(got), sorted(want)) {
			t.Errorf("(4) %s mode tools/list = %v, want %v", mode, got, want)
		}
		for _, x := range runs[mode].tools(t) {
			tool := x.(map[string]any)
			// Every tool a search mode lists is always loaded; the
			// direct-only tool is otherwise direct mode's.
			if meta, _ := tool["_meta"].(map[string]any); meta["anthropic/alwaysLoad"] != true {
				t.Errorf("(4) %s mode: %s has _meta %v, want anthropic/alwaysLoad true", mode, tool["name"], meta)
			}
			if tool["name"] == directOnlyName && !reflect.DeepEqual(withoutProxyMeta(tool), withoutProxyMeta(byName[directOnlyName])) {
				t.Errorf("(4) %s mode: direct-only tool %v differs from direct mode's %v", mode, tool, byName[directOnlyName])
			}
		}
		if got := runs[mode].step(t, len(runs[mode].doc["steps"].([]any))-1)["result"].(map[string]any)["structuredContent"]; !reflect.DeepEqual(got, echoOf("list_channels", map[string]any{})) {
			t.Errorf("(4) %s mode: call of direct-only %s = %v", mode, directOnlyName, got)
		}
	}

	// (5) The Tool Search payload is smaller; code mode is at least 100x
	// smaller than direct with 1,000 tools.
	dl, di := direct.surfaceBytes(t)
	directTotal := dl + di
	t.Logf("surface as the client received it (tools/list + instructions bytes): direct %d + %d = %d", dl, di, directTotal)
	for _, mode := range []string{"tools", "directory", "code"} {
		l, i := runs[mode].surfaceBytes(t)
		t.Logf("  %-9s %6d + %5d = %6d  (%.4f of direct, %.0fx smaller)", mode, l, i, l+i, float64(l+i)/float64(directTotal), float64(directTotal)/float64(l+i))
		if l+i >= directTotal {
			t.Errorf("(5) %s mode surface %d bytes is not smaller than direct %d", mode, l+i, directTotal)
		}
		if mode == "code" && directTotal < 100*(l+i) {
			t.Errorf("(5) code mode surface %d bytes is not 100x smaller than direct %d (ratio %.1f)", l+i, directTotal, float64(directTotal)/float64(l+i))
		}
	}

	// (6) The session log: one ended session per run with the expected
	// counts and bridge telemetry.
	raw, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatalf("session log: %v", err)
	}
	lg, err := telemetry.ParseLog(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if lg.Skipped != 0 {
		t.Errorf("(6) session log: %d bad lines, first at %d: %s", lg.Skipped, lg.FirstSkipLine, lg.FirstSkipWhy)
	}
	sessions := map[string]telemetry.SessionStats{}
	for _, s := range lg.Sessions {
		if _, dup := sessions[s.Summary.Mode]; dup {
			t.Errorf("(6) two sessions in mode %s", s.Summary.Mode)
		}
		sessions[s.Summary.Mode] = s
	}
	type counts struct{ search, searchBridge, describe, describeBridge, calls, bridgeCalls, codeRuns, schemasFirst int }
	want := map[string]counts{
		"direct":    {calls: 2, schemasFirst: 1002},
		"tools":     {search: 1, describe: 1, calls: 2, schemasFirst: 4},
		"directory": {calls: 2, schemasFirst: 4},
		"code":      {search: 1, searchBridge: 1, describe: 1, describeBridge: 1, calls: 2, bridgeCalls: 1, codeRuns: 1, schemasFirst: 2},
	}
	for mode, w := range want {
		ss, ok := sessions[mode]
		if !ok {
			t.Errorf("(6) no session in mode %s in the log (sessions: %d)", mode, len(lg.Sessions))
			continue
		}
		s := ss.Summary
		if !ss.Ended {
			t.Errorf("(6) %s: session has no session_end", mode)
		}
		got := counts{s.SearchCount, s.SearchBridgeCount, s.DescribeCount, s.DescribeBridgeCount, s.CallCount, s.BridgeCallCount, s.CodeRunCount, s.SchemasSeenFirst}
		if got != w {
			t.Errorf("(6) %s: counts %+v, want %+v", mode, got, w)
		}
		if c := s.Catalog; c == nil || c.Total != 1002 || c.ByUpstream["big"] != 1000 || c.ByUpstream["chat"] != 2 || c.Trusted != 2 || c.Untrusted != 1000 {
			t.Errorf("(6) %s: catalog %+v, want 1002 tools (big 1000 untrusted, chat 2 trusted)", mode, c)
		}
		wantFinal := []telemetry.FinalCall{
			{ID: scenarioID, Upstream: "big", Trusted: false, Outcome: telemetry.OutcomeOK, Mode: mode, ViaBridge: mode == "code"},
			{ID: directOnlyID, Upstream: "chat", Trusted: true, Outcome: telemetry.OutcomeOK, Mode: mode},
		}
		if !reflect.DeepEqual(s.FinalCalls, wantFinal) {
			t.Errorf("(6) %s: finalCalls %+v, want %+v", mode, s.FinalCalls, wantFinal)
		}
		// The log's own record of the surface agrees with (5).
		if d := sessions["direct"].Summary; mode != "direct" && s.ToolsListBytesLast+s.InstructionsBytes >= d.ToolsListBytesLast+d.InstructionsBytes {
			t.Errorf("(6) %s: logged surface %d+%d bytes is not below direct's", mode, s.ToolsListBytesLast, s.InstructionsBytes)
		}
	}
	if c, d := sessions["code"].Summary, sessions["direct"].Summary; 100*(c.ToolsListBytesLast+c.InstructionsBytes) > d.ToolsListBytesLast+d.InstructionsBytes {
		t.Errorf("(6) logged code surface %d bytes is not 100x below logged direct %d", c.ToolsListBytesLast+c.InstructionsBytes, d.ToolsListBytesLast+d.InstructionsBytes)
	}
	// The code_run record carries the bridge counts of the run.
	var codeRuns int
	for _, l := range lines(string(raw)) {
		var rec struct {
			Event                                 string
			SearchCount, DescribeCount, CallCount int
			OK                                    bool
		}
		if json.Unmarshal([]byte(l), &rec) == nil && rec.Event == telemetry.EventCodeRun {
			codeRuns++
			if !rec.OK || rec.SearchCount != 1 || rec.DescribeCount != 1 || rec.CallCount != 1 {
				t.Errorf("(6) code_run record %s: want ok with 1 search, 1 describe, 1 call", l)
			}
		}
	}
	if codeRuns != 1 {
		t.Errorf("(6) %d code_run records, want 1", codeRuns)
	}

	// `mcp-toolsearch stats LOG` (the real binary) prints the counts.
	out, err := exec.Command(buildProxy(t), "stats", logPath).CombinedOutput()
	if err != nil {
		t.Fatalf("stats %s: %v\n%s", logPath, err, out)
	}
	stats := string(out)
	for _, want := range []string{
		"4 session(s), 4 with session_end, 0 without",
		"mode: direct", "mode: tools", "mode: directory", "mode: code",
		"tool schemas seen first: 1002 (of 1002 tools in the first tools/list)",
		"tool schemas seen first: 4 (of 4 tools in the first tools/list)",
		"tool schemas seen first: 2 (of 2 tools in the first tools/list)",
		"catalog: 1002 tools (trusted 2, untrusted 1000); by upstream: big=1000, chat=2",
		"searches: 1 (bridge 0)  describes: 1 (bridge 0)  calls: 2 (bridge 0)  code runs: 0",
		"searches: 1 (bridge 1)  describes: 1 (bridge 1)  calls: 2 (bridge 1)  code runs: 1 (errors 0, timeouts 0)",
		"1. " + scenarioID + "  upstream=big  untrusted  ok  (code, bridge)",
		"2. " + directOnlyID + "  upstream=chat  trusted  ok  (code)",
		"1. " + scenarioID + "  upstream=big  untrusted  ok  (direct)",
	} {
		if !strings.Contains(stats, want) {
			t.Errorf("stats output lacks %q\n%s", want, stats)
		}
	}

	// No argument values and no secrets in the session log or the proxy's
	// log (debug level), with log_arguments = false. The client did get the
	// argument back in the echo, so it did pass through the proxy.
	if !strings.Contains(fmt.Sprint(direct.step(t, 1)), secretArgValue) {
		t.Fatalf("the direct call's echo lacks %q: the privacy check below would prove nothing", secretArgValue)
	}
	for _, s := range []string{secretArgValue, secretToken} {
		if bytes.Contains(raw, []byte(s)) {
			t.Errorf("session log holds %q with log_arguments = false", s)
		}
		for mode, r := range runs {
			if strings.Contains(r.stderr, s) {
				t.Errorf("proxy stderr (mode %s, --log-level debug) holds %q:\n%s", mode, s, tail(r.stderr, 3000))
			}
		}
	}
	if !strings.Contains(runs["code"].stderr, "level=DEBUG") {
		t.Errorf("the proxy's stderr has no debug lines; the log check above saw nothing:\n%s", tail(runs["code"].stderr, 2000))
	}
}

// TestScenarioLogArgumentsTrue is the other side of the privacy rule: with
// log_arguments = true the call's argument values are in the session log
// (so the absence checked above is a real absence), and the ${VAR} secret
// of the upstream header still is not.
func TestScenarioLogArgumentsTrue(t *testing.T) {
	requireNode(t)
	chatURL := startChatUpstream(t)
	logPath := filepath.Join(t.TempDir(), "sessions.jsonl")
	cfg := scenarioConfig(t, chatURL, logPath, true)
	r := runScenario(t, cfg, "tools", map[string]any{"op": "list"},
		map[string]any{"op": "call", "name": "tool_search", "args": map[string]any{"query": scenarioQuery}},
		map[string]any{"op": "call", "name": "tool_call", "args": map[string]any{"id": scenarioID, "args": map[string]any{"note": secretArgValue}}})
	r.step(t, 2)
	raw, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	var sawArgs, sawQuery bool
	for _, l := range lines(string(raw)) {
		var rec struct {
			Event, Query string
			Args         map[string]any
		}
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("session log line %q: %v", l, err)
		}
		switch rec.Event {
		case telemetry.EventCall:
			sawArgs = rec.Args["note"] == secretArgValue
		case telemetry.EventSearch:
			sawQuery = rec.Query == scenarioQuery
		}
	}
	if !sawArgs || !sawQuery {
		t.Errorf("log_arguments = true: call args logged %t, search query logged %t; want both\n%s", sawArgs, sawQuery, raw)
	}
	if bytes.Contains(raw, []byte(secretToken)) {
		t.Errorf("session log holds the ${SCENARIO_TOKEN} secret even though only arguments may be logged")
	}
	if strings.Contains(r.stderr, secretToken) {
		t.Errorf("proxy stderr holds the ${SCENARIO_TOKEN} secret:\n%s", tail(r.stderr, 3000))
	}
}

func sorted(s []string) []string {
	c := slices.Clone(s)
	sort.Strings(c)
	return c
}

// withoutProxyMeta returns tool without the _meta keys the proxy adds for
// clients that defer and search tools themselves (a search hint in direct
// mode, "always load" on the surface of the search modes): what is left
// is the tool as its upstream defined it.
func withoutProxyMeta(tool map[string]any) map[string]any {
	out := maps.Clone(tool)
	meta, _ := tool["_meta"].(map[string]any)
	if meta == nil {
		return out
	}
	meta = maps.Clone(meta)
	delete(meta, "anthropic/searchHint")
	delete(meta, "anthropic/alwaysLoad")
	if len(meta) == 0 {
		delete(out, "_meta")
	} else {
		out["_meta"] = meta
	}
	return out
}
