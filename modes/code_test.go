package modes

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestCodeModeTools(t *testing.T) {
	env := newTestEnv(t)
	c := &Code{API: testAPI(), Timeout: 10 * time.Second} // listing needs no pool
	tools := c.Tools(env)
	if got := toolNamesOf(tools); !reflect.DeepEqual(got, []string{ToolSearchCode, "memory__read_graph"}) {
		t.Fatalf("tools = %v", got)
	}
	for _, want := range []string{"openclaw.tools.search(query, {limit?}) -> Hit[]", "openclaw.tools.describe(id)", "openclaw.tools.call(id, args?)", "Hit = {id, name, description, input, ...}; search hits add match (strong|partial|weak: weak may not fit)", "tools from 4 MCP servers", "github (6)", "Runs time out after 10000 ms"} {
		if !strings.Contains(tools[0].Description, want) {
			t.Errorf("description lacks %q", want)
		}
	}
}

func runCode(t *testing.T, c *Code, env *testEnv, body string) (*mcp.CallToolResult, CodeOutput) {
	t.Helper()
	r, err := c.Call(context.Background(), env, ToolSearchCode, args(t, map[string]any{"code": body}))
	if err != nil {
		t.Fatal(err)
	}
	var out CodeOutput
	structured(t, r, &out)
	return r, out
}

func TestCodeModeRuns(t *testing.T) {
	env := newTestEnv(t)
	img := &mcp.ImageContent{Data: []byte{9, 9}, MIMEType: "image/png"}
	env.special = map[string]func(json.RawMessage) (*mcp.CallToolResult, error){
		"mcp:gitlab:create_issue": func(json.RawMessage) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "picture"}, img}}, nil
		},
	}
	c := newTestCode(t, 2)

	// The seed's example body: search, describe, call, through env.Call.
	r, out := runCode(t, c, env, `const hits = await openclaw.tools.search("create a GitHub issue");
const t = await openclaw.tools.describe(hits[0].id);
console.log("calling", t.id);
return await openclaw.tools.call(t.id, {title: "Crash on start", body: "Steps..."});`)
	if !out.OK || r.IsError {
		t.Fatalf("seed body: %s", resultText(t, r))
	}
	var v Envelope
	if err := json.Unmarshal(out.Value, &v); err != nil {
		t.Fatal(err)
	}
	if v.Tool.ID != env.calls[0] || !reflect.DeepEqual(v.Result["details"], map[string]any{"tool": "create_issue", "arguments": map[string]any{"title": "Crash on start", "body": "Steps..."}}) {
		t.Errorf("value = %+v, calls %v", v, env.calls)
	}
	if out.Telemetry.SearchCount != 1 || out.Telemetry.DescribeCount != 1 || out.Telemetry.CallCount != 1 {
		t.Errorf("telemetry %+v", out.Telemetry)
	}
	if len(out.Logs) != 1 || out.Logs[0].Text != "calling "+v.Tool.ID || !strings.Contains(resultText(t, r), "[log] calling") {
		t.Errorf("logs %v, text %q", out.Logs, resultText(t, r))
	}
	if env.searched[0] != ViaBridge+":create a GitHub issue" || env.described[0] != ViaBridge+":"+v.Tool.ID {
		t.Errorf("telemetry via: %v %v", env.searched, env.described)
	}

	// Bridge errors reject the Promise with the API's message; limits as in tools mode.
	_, out = runCode(t, c, env, `const errs = [];
for (const f of [() => openclaw.tools.describe("create_issue"), () => openclaw.tools.search("x", {limit: 0}),
                 () => openclaw.tools.call("mcp:nowhere:x", {}), () => openclaw.tools.describe(42)]) {
  try { await f(); errs.push("no error"); } catch (e) { errs.push(e.message); }
}
const many = await openclaw.tools.search("list", {limit: 500});
return {errs, many: many.length, dflt: (await openclaw.tools.search("list")).length};`)
	var got struct {
		Errs       []string
		Many, Dflt int
	}
	if err := json.Unmarshal(out.Value, &got); err != nil || !out.OK {
		t.Fatalf("%s %v", out.Error, err)
	}
	for i, want := range []string{"ambiguous", "limit must be at least 1", "unknown tool", "must be a string"} {
		if !strings.Contains(got.Errs[i], want) {
			t.Errorf("error %d = %q, want %q", i, got.Errs[i], want)
		}
	}
	if got.Many != 20 || got.Dflt != 8 {
		t.Errorf("limits: %d and %d hits, want 20 and 8", got.Many, got.Dflt)
	}

	// Non-text blocks of bridged calls follow the text block.
	r, out = runCode(t, c, env, `const r = await openclaw.tools.call("mcp:gitlab:create_issue"); return r.result.content.map(b => b.type)`)
	if !out.OK || len(r.Content) != 2 || !reflect.DeepEqual(r.Content[1], mcp.Content(img)) || string(out.Value) != `["text","image"]` {
		t.Errorf("image block: %v %s", r.Content, out.Value)
	}
	// Denied tools are unknown to the bridge too.
	env.deny["mcp:github:update_issue"] = true
	_, out = runCode(t, c, env, `return await openclaw.tools.call("mcp:github:update_issue", {})`)
	if out.OK || !strings.Contains(out.Error, "unknown tool") {
		t.Errorf("denied call: %+v", out)
	}
}

func TestCodeModeErrors(t *testing.T) {
	env := newTestEnv(t)
	c := newTestCode(t, 1)
	c.Timeout = time.Second
	ctx := context.Background()
	for _, tc := range []struct{ code, want string }{
		{"", "empty"},
		{strings.Repeat("x", MaxCodeBytes+1), "limit"},
	} {
		r, err := c.Call(ctx, env, ToolSearchCode, args(t, map[string]any{"code": tc.code}))
		if err != nil || !r.IsError || !strings.Contains(resultText(t, r), tc.want) {
			t.Errorf("code %.10q: %v %v", tc.code, r, err)
		}
	}
	// A timeout lists the calls made so far.
	r, out := runCode(t, c, env, `await openclaw.tools.search("issue"); while (true) {}`)
	if !out.TimedOut || !strings.Contains(resultText(t, r), "timed out after 1000 ms") || !strings.Contains(resultText(t, r), "search(issue)") {
		t.Errorf("timeout: %q %+v", resultText(t, r), out)
	}
	// A thrown error: message and line. The timeout above killed the only
	// worker and this run's time counts from before its replacement starts
	// (a few hundred ms under Wine): a timeout no start can exceed.
	c.Timeout = 30 * time.Second
	_, out = runCode(t, c, env, "const a = 1;\nthrow new Error('bad thing')")
	if out.OK || !strings.Contains(out.Error, "bad thing") || !strings.Contains(out.Error, "line 2") {
		t.Errorf("throw: %q", out.Error)
	}
	// Direct-only tools stay callable; catalog names are not.
	if r, err := c.Call(ctx, env, "memory__read_graph", nil); err != nil || r.IsError {
		t.Errorf("direct-only: %v %v", r, err)
	}
	if _, err := c.Call(ctx, env, "github__create_issue", nil); err == nil {
		t.Errorf("catalog name callable in code mode")
	}
}

// TestCodeRunOutputBounded: 16 describe calls with a 200 KB reference each
// (every error would echo it) give a small result: errors are cut.
func TestCodeRunOutputBounded(t *testing.T) {
	env := newTestEnv(t)
	c := newTestCode(t, 1)
	// 16 × 200 KB through the bridge is slow under -race on a loaded machine;
	// this test is about the size of what comes back, not about time.
	c.Timeout = time.Minute
	body := `const big = "y".repeat(2e5); const ps = [];
for (let i = 0; i < 16; i++) ps.push(openclaw.tools.describe(big).catch(e => e.message.length));
return Math.max(...(await Promise.all(ps)))`
	r, err := c.Call(context.Background(), env, ToolSearchCode, args(t, map[string]any{"code": body}))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(r.StructuredContent.(json.RawMessage)); n > 64<<10 {
		t.Fatalf("structuredContent is %d bytes", n)
	}
	if txt := resultText(t, r); len(txt) > 16 {
		t.Fatalf("the longest error message the script saw: %s bytes", txt)
	}
}

// TestCodeRunLateBlocksNoRace: bridge calls still running after the
// script returned do not touch the result being built (run with -race).
func TestCodeRunLateBlocksNoRace(t *testing.T) {
	env := newTestEnv(t)
	img := &mcp.ImageContent{Data: []byte{9, 9}, MIMEType: "image/png"}
	env.special = map[string]func(json.RawMessage) (*mcp.CallToolResult, error){
		"mcp:gitlab:create_issue": func(json.RawMessage) (*mcp.CallToolResult, error) {
			time.Sleep(30 * time.Millisecond)
			return &mcp.CallToolResult{Content: []mcp.Content{img}}, nil
		},
	}
	c := newTestCode(t, 2)
	for i := 0; i < 5; i++ {
		r, err := c.Call(context.Background(), env, ToolSearchCode, args(t, map[string]any{"code": `for (let i=0;i<4;i++) openclaw.tools.call("mcp:gitlab:create_issue", {}); return 1`}))
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Content) > 1+8 {
			t.Fatalf("%d content blocks", len(r.Content))
		}
		time.Sleep(60 * time.Millisecond)
	}
}

// A run whose search had no strong first hit says so in its hint, as
// tools mode's tool_search note does (code mode had no such
// signal); the hits themselves carry match, matched and score, which the
// tool description explains. A strong search adds no hint.
func TestCodeWeakSearchHint(t *testing.T) {
	env := newTestEnv(t)
	c := newTestCode(t, 1)
	r, out := runCode(t, c, env, `const a = await openclaw.tools.search("xqzvv wklpt");
const b = await openclaw.tools.search("zebra quantum teleportation");
return a.length + b.length`)
	if !out.OK {
		t.Fatalf("run: %s", out.Error)
	}
	want := `openclaw.tools.search("xqzvv wklpt"): no match: nothing in the catalog matches this query.`
	if !strings.HasPrefix(out.Hint, want) || !strings.HasSuffix(out.Hint, "(1 more search(es) of this run had no strong match either)") {
		t.Errorf("hint = %q, want it to start with %q and count the second search", out.Hint, want)
	}
	if !strings.Contains(resultText(t, r), "\n\n("+out.Hint+")") {
		t.Errorf("the hint is not in the text block: %q", resultText(t, r))
	}
	_, out = runCode(t, c, env, `const h = await openclaw.tools.search("create a GitHub issue");
return {match: h[0].match, matched: h[0].matched, scored: h[0].score > 0}`)
	if !out.OK || out.Hint != "" {
		t.Fatalf("strong search: ok=%v hint %q err %s", out.OK, out.Hint, out.Error)
	}
	var h struct {
		Match, Matched string
		Scored         bool
	}
	if err := json.Unmarshal(out.Value, &h); err != nil || h.Match != "strong" || h.Matched == "" || !h.Scored {
		t.Errorf("hit fields = %s (%v), want match strong, matched words and a score", out.Value, err)
	}
	// A partial first hit: the note names the words it matched.
	_, out = runCode(t, c, env, `await openclaw.tools.search("create a GitHub issue with a quantum spectrometer zebra"); return 1`)
	if !strings.Contains(out.Hint, "no strong match: the best hit matches only") {
		t.Errorf("partial search hint = %q", out.Hint)
	}
}

// A bridge call the API rejects names its position in the body (sandbox
// TestRejectedBridgeCallLine covers the worker side).
func TestCodeRejectedCallNamesLine(t *testing.T) {
	env := newTestEnv(t)
	c := newTestCode(t, 1)
	_, out := runCode(t, c, env, "const a = 1;\nreturn await openclaw.tools.call(\"mcp:github:create_isue\", {});")
	t.Logf("error: %s", out.Error)
	if out.OK || !strings.Contains(out.Error, "unknown tool") || !strings.HasSuffix(out.Error, "(line 2, col 33)") {
		t.Errorf("error = %q, want unknown tool … (line 2, col 33)", out.Error)
	}
}

// TestCodeConsoleTruncationNoted: console output past
// the sandbox's 16 KiB ends at a line boundary, and the text and
// structuredContent.logs end with a note saying what was dropped.
func TestCodeConsoleTruncationNoted(t *testing.T) {
	env := newTestEnv(t)
	c := newTestCode(t, 1)
	r, out := runCode(t, c, env, `for (let i = 0; i < 3000; i++) console.log("line " + i); return 1`)
	if !out.OK || !out.Truncated || len(out.Logs) < 2 {
		t.Fatalf("ok=%v truncated=%v %d logs", out.OK, out.Truncated, len(out.Logs))
	}
	note := out.Logs[len(out.Logs)-1]
	last := out.Logs[len(out.Logs)-2]
	if note.Level != "note" || !strings.HasPrefix(note.Text, "[console output truncated at 16384 bytes: ") || !strings.HasSuffix(note.Text, " were dropped]") ||
		!strings.HasPrefix(last.Text, "line ") || len(last.Text) < len("line 1000") {
		t.Errorf("logs end %+v, %+v", last, note)
	}
	if txt := resultText(t, r); !strings.HasSuffix(txt, "\n[log] "+last.Text+"\n"+note.Text) {
		t.Errorf("text ends %q; want the last line and the note %q", txt[max(0, len(txt)-120):], note.Text)
	}
}
