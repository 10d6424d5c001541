package modes

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
	"github.com/mcp-toolsearch/mcp-toolsearch/sandbox"
)

// Code is the "code" mode (SPEC §3, the default when tool search is on):
// one tool, tool_search_code, whose JavaScript body runs in the sandbox
// with openclaw.tools.search/describe/call bridged back to API, plus the
// direct-only tools.
type Code struct {
	API     API
	Pool    *sandbox.Pool
	Timeout time.Duration // code_timeout_ms, already clamped to 1..60 s
	// MaxBlocks bounds the non-text content blocks (images, audio,
	// resources) of bridged calls that are appended to the run's result.
	MaxBlocks int
	// AlwaysLoad is as in Tools: the upstreams' always_load settings.
	AlwaysLoad map[string]bool
}

// defaultMaxBlocks is Code.MaxBlocks when unset.
const defaultMaxBlocks = 8

// MaxCodeBytes bounds the `code` argument of tool_search_code, in bytes.
const MaxCodeBytes = 64 << 10

// Mode returns "code".
func (c *Code) Mode() string { return "code" }

const codeContract = `Search, describe and call the tools of the MCP servers behind this server from JavaScript. ` + "`code`" + ` is the BODY of an async function: await, and return a JSON value (this tool's result). Globals (Promises):
  openclaw.tools.search(query, {limit?}) -> Hit[]
  openclaw.tools.describe(id) -> Hit & {description (whole), inputSchema, outputSchema?}
  openclaw.tools.call(id, args?) -> {tool: Hit, result: {content, structuredContent?, isError?, details?}}
  console.log/warn/error (captured)
Hit = {id, name, description, input, ...}; search hits add match (strong|partial|weak: weak may not fit). input is a TypeScript-style signature, or "unknown": describe(id) first. result.details is the tool's JSON output. Promise.all runs calls concurrently. No filesystem, network, require or import.
Example:
  const hits = await openclaw.tools.search("create a GitHub issue");
  const t = await openclaw.tools.describe(hits[0].id);
  return await openclaw.tools.call(t.id, {owner: "o", repo: "r", title: "Crash"});`

// Tools lists tool_search_code and the direct-only tools.
func (c *Code) Tools(env Env) []*mcp.Tool {
	out := []*mcp.Tool{{
		Name:        ToolSearchCode,
		Description: codeContract + "\n" + summary(env) + fmt.Sprintf(" Runs time out after %d ms.", c.Timeout.Milliseconds()),
		InputSchema: json.RawMessage(`{"type":"object","properties":{"code":{"type":"string","description":"body of an async JavaScript function using openclaw.tools.search/describe/call"}},"required":["code"]}`),
		Annotations: &mcp.ToolAnnotations{Title: "Search and call tools with code"},
	}}
	setAlwaysLoad(out[0], true)
	for _, e := range allowedEntries(env, nil) {
		if e.DirectOnly {
			out = append(out, setAlwaysLoad(EntryTool(e), alwaysLoadOf(c.AlwaysLoad, e.Upstream, true)))
		}
	}
	return out
}

// Instructions is a short hint for code mode.
func (c *Code) Instructions(env Env) string {
	return "This server fronts a catalog of " + countTools(env) + ". Use tool_search_code to search, describe and call them from a short JavaScript body." + startingInstructions(env) + unavailableSummary(env)
}

// CodeOutput is the structuredContent of a tool_search_code result.
type CodeOutput struct {
	OK       bool            `json:"ok"`
	Value    json.RawMessage `json:"value,omitempty"`
	Error    string          `json:"error,omitempty"`
	TimedOut bool            `json:"timedOut,omitempty"`
	// Busy is set when no sandbox slot came free in time: the body never
	// ran, and the same call may be retried.
	Busy      bool              `json:"busy,omitempty"`
	Logs      []sandbox.LogLine `json:"logs"`
	Truncated bool              `json:"truncated,omitempty"`
	// Hint, when set, is a likely fix for a run that returned nothing or
	// tripped over an unawaited bridge call (codeHint).
	Hint      string               `json:"hint,omitempty"`
	Calls     []sandbox.CallRecord `json:"calls,omitempty"`
	Telemetry CodeTelemetry        `json:"telemetry"`
}

// CodeTelemetry counts the bridge operations of one run.
type CodeTelemetry struct {
	SearchCount   int     `json:"searchCount"`
	DescribeCount int     `json:"describeCount"`
	CallCount     int     `json:"callCount"`
	DurationMs    float64 `json:"durationMs"`
}

// CodeRunRecorder is implemented by Envs that record code runs (telemetry).
type CodeRunRecorder interface {
	CodeRan(out *CodeOutput)
}

// Call runs tool_search_code, or a direct-only tool.
func (c *Code) Call(ctx context.Context, env Env, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	waitStarting(ctx, env)
	if name != ToolSearchCode {
		e := resolveCallable(env, name)
		if e == nil || !e.DirectOnly {
			return nil, notExposed(env, name, ToolSearchCode, false)
		}
		return env.Call(ctx, e, args, ViaDirect)
	}
	m, err := ownArgs(name, args, "code")
	if err != nil {
		return errorResult("tool_search_code: %v", err), nil
	}
	code, err := stringArg(m, "code", true, name)
	if err != nil {
		return errorResult("tool_search_code: %v", err), nil
	}
	if len(code) > MaxCodeBytes {
		return errorResult("tool_search_code: `code` is %d bytes; the limit is %d bytes", len(code), MaxCodeBytes), nil
	}
	if strings.TrimSpace(code) == "" {
		return errorResult("tool_search_code: `code` is empty: pass the body of an async function"), nil
	}
	// A body sent as one Markdown code block runs as its JavaScript, its
	// lines where they were (fence.go).
	code, _ = unfence(code)
	run := &codeRun{c: c, env: env, maxBlocks: c.MaxBlocks}
	if run.maxBlocks == 0 {
		run.maxBlocks = defaultMaxBlocks
	}
	if o, ok := env.(SandboxOwner); ok {
		ctx = sandbox.WithOwner(ctx, o.SandboxOwner(ctx)) // fair slots between sessions
	}
	rctx, endRun := startSpan(ctx, env, spanSandboxRun)
	r := c.Pool.Run(rctx, code, c.Timeout, run.bridge)
	if r.OK {
		endRun(nil)
	} else {
		endRun(errors.New("code run failed"))
	}
	// Fences unfence left (text outside, several blocks) explain the
	// failure they cause (fence.go).
	fenced := fenceError(code, r)
	if fenced != "" {
		r.Error = fenced
	}
	runBlocks, weakNotes := run.end()
	return c.result(env, code, r, fenced, runBlocks, weakNotes), nil
}

// codeRun is one run of tool_search_code: what its bridge calls gather
// for the answer.
type codeRun struct {
	c         *Code
	env       Env
	maxBlocks int

	mu     sync.Mutex
	blocks []mcp.Content // the non-text content of the run's calls, up to maxBlocks
	weak   []string      // notes of this run's searches without a strong hit (weakSearchHint)
	done   bool          // the run ended: late bridge calls add no blocks
}

// end marks the run ended and returns what its calls gathered.
func (r *codeRun) end() (blocks []mcp.Content, weak []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done = true
	return r.blocks, r.weak
}

// bridge serves one bridge call of the run's code, in a span of its own
// (trace.go).
func (r *codeRun) bridge(ctx context.Context, op string, raw json.RawMessage) (json.RawMessage, error) {
	name, ok := bridgeSpan[op]
	if !ok {
		name = "bridge"
	}
	ctx, end := startSpan(ctx, r.env, name)
	out, err := r.op(ctx, op, raw)
	end(err)
	return out, err
}

// op is one bridge call: openclaw.tools.search, describe or call.
func (r *codeRun) op(ctx context.Context, op string, raw json.RawMessage) (json.RawMessage, error) {
	var params []json.RawMessage
	if err := json.Unmarshal(raw, &params); err != nil {
		return nil, fmt.Errorf("openclaw.tools.%s: the call's arguments did not arrive as a JSON array (the sandbox worker always writes one, whatever the code does: a fault of the worker, not of the code)", op)
	}
	str := func(i int, what string) (string, error) {
		var s string
		if i >= len(params) || json.Unmarshal(params[i], &s) != nil {
			return "", fmt.Errorf("openclaw.tools.%s: argument %d (%s) must be a string", op, i+1, what)
		}
		return s, nil
	}
	switch op {
	case "search":
		return r.search(ctx, params, str)
	case "describe":
		id, err := str(0, "id")
		if err != nil {
			return nil, err
		}
		d, err := r.c.API.Describe(r.env, id, ViaBridge)
		if err != nil {
			return nil, err
		}
		return json.Marshal(d)
	case "call":
		return r.call(ctx, params, str)
	}
	return nil, fmt.Errorf("unknown bridge operation %q", op)
}

// search is openclaw.tools.search(query, options).
func (r *codeRun) search(ctx context.Context, params []json.RawMessage, str func(int, string) (string, error)) (json.RawMessage, error) {
	q, err := str(0, "query")
	if err != nil {
		return nil, err
	}
	limit := 0
	if len(params) > 1 && string(params[1]) != "null" {
		var o map[string]json.RawMessage
		if p := bytes.TrimSpace(params[1]); len(p) > 0 && p[0] != '{' {
			o = map[string]json.RawMessage{"limit": p} // search("query", 5): the limit, as a model often writes it
		} else if err := json.Unmarshal(params[1], &o); err != nil {
			return nil, fmt.Errorf("openclaw.tools.search: options must be an object like {limit: 5}")
		}
		n, set, err := intArg(o, "limit")
		if err != nil {
			return nil, fmt.Errorf("openclaw.tools.search: %v", err)
		}
		if set {
			if n <= 0 {
				return nil, fmt.Errorf("openclaw.tools.search: limit must be at least 1, got %d", n)
			}
			limit = n
		}
	}
	_, end := startSpan(ctx, r.env, spanSearch)
	hits, err := r.c.API.Search(r.env, q, limit, ViaBridge)
	end(err)
	if err != nil {
		return nil, err
	}
	note := catalog.SearchNote(hits)
	if note != "" {
		note = searchNote(note, starting(r.env))
	}
	if note = unavailableNote(note, q, unavailable(r.env)); note != "" { // unavailable.go
		r.mu.Lock()
		r.weak = append(r.weak, fmt.Sprintf("openclaw.tools.search(%s): %s", quoteJSON(clipRef(q)), note))
		r.mu.Unlock()
	}
	return json.Marshal(hits)
}

// call is openclaw.tools.call(id, args): the one call path, the result's
// envelope back to the code and its non-text content kept for the answer.
func (r *codeRun) call(ctx context.Context, params []json.RawMessage, str func(int, string) (string, error)) (json.RawMessage, error) {
	if len(params) > 0 && len(params[0]) > 0 && params[0][0] == '{' {
		var m map[string]json.RawMessage
		_ = json.Unmarshal(params[0], &m)
		return nil, fmt.Errorf("openclaw.tools.call(id, args): the first argument is the tool id (a string), the second the tool's arguments, e.g. openclaw.tools.call(%s, %s); got an object", quoteJSON(exampleID(ToolCall, m)), exampleArgs(m))
	}
	id, err := str(0, "id")
	if err != nil {
		return nil, err
	}
	for _, extra := range params[min(len(params), 2):] {
		if string(extra) != "null" {
			return nil, fmt.Errorf("openclaw.tools.call(id, args) takes two arguments: pass the tool's arguments as one object, e.g. openclaw.tools.call(%q, {path: \"/tmp/a.txt\"})", clipRef(id))
		}
	}
	var callArgs json.RawMessage
	if len(params) > 1 {
		if callArgs, err = ToolArguments(params[1], "openclaw.tools.call's second argument (args)"); err != nil {
			return nil, fmt.Errorf("openclaw.tools.call %s: %v", clipRef(id), err)
		}
	}
	envl, res, err := r.c.API.Call(ctx, r.env, id, callArgs, ViaBridge)
	if err != nil {
		return nil, newBridgeError(err)
	}
	r.mu.Lock()
	for _, b := range res.Content {
		if _, ok := b.(*mcp.TextContent); !ok && len(r.blocks) < r.maxBlocks && !r.done {
			r.blocks = append(r.blocks, b)
		}
	}
	r.mu.Unlock()
	return json.Marshal(envl)
}

// result is tool_search_code's answer for the run r of code.
func (c *Code) result(env Env, code string, r *sandbox.Result, fenced string, runBlocks []mcp.Content, weakNotes []string) *mcp.CallToolResult {
	out := &CodeOutput{OK: r.OK, Value: r.Value, Error: r.Error, TimedOut: r.TimedOut, Busy: r.Busy, Logs: r.Logs, Truncated: r.LogsTruncated || r.OutputTruncated, Calls: r.Calls,
		Telemetry: CodeTelemetry{SearchCount: r.SearchCount, DescribeCount: r.DescribeCount, CallCount: r.CallCount, DurationMs: r.DurationMs}}
	if out.Logs == nil {
		out.Logs = []sandbox.LogLine{}
	}
	if rec, ok := env.(CodeRunRecorder); ok {
		rec.CodeRan(out)
	}
	if fenced == "" {
		out.Hint = codeHint(code, r)
	}
	if out.Hint == "" && len(weakNotes) > 0 {
		out.Hint = weakSearchHint(weakNotes)
	}
	if st := startingText(starting(env)); out.Hint == "" && r.SearchCount > 0 && st != "" {
		out.Hint = st + ": their tools are not in the catalog yet, so this run's searches did not see them; search again in a moment if no hit fits"
	}
	sc, _ := json.Marshal(out)
	var text string
	switch {
	case r.OK:
		text = string(r.Value)
		if text == "" {
			text = "null"
		}
		if r.OutputTruncated {
			text += "\n[output truncated]"
		}
	case r.TimedOut:
		var calls []string
		for _, cr := range r.Calls {
			calls = append(calls, cr.Op+"("+cr.Arg0+")")
		}
		text = fmt.Sprintf("tool_search_code timed out after %d ms; bridge calls made: %d [%s]", c.Timeout.Milliseconds(), len(r.Calls), strings.Join(calls, ", "))
	case r.Busy:
		text = "tool_search_code did not run: " + r.Error
	default:
		text = "tool_search_code failed: " + r.Error
	}
	if len(r.Logs) > 0 {
		var b strings.Builder
		for _, l := range r.Logs {
			if l.Level == "note" { // "[console output truncated at …]" (sandbox/console.go)
				b.WriteString("\n" + l.Text)
				continue
			}
			b.WriteString("\n[" + l.Level + "] " + l.Text)
		}
		text += "\n\nconsole:" + b.String()
	}
	if out.Hint != "" {
		text += "\n\n(" + out.Hint + ")"
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: json.RawMessage(sc), IsError: !r.OK}
	res.Content = append(res.Content, runBlocks...)
	return res
}

// weakSearchHint is the hint of a run whose searches found no strong match
// (catalog.SearchNote; tools mode gives the same note with tool_search's
// hits): the first such search's note, and how many more there were.
func weakSearchHint(notes []string) string {
	h := notes[0]
	if n := len(notes) - 1; n > 0 {
		h += fmt.Sprintf(" (%d more search(es) of this run had no strong match either)", n)
	}
	return h
}

// bridgeCallRE finds the bridge calls of a body.
var bridgeCallRE = regexp.MustCompile(`openclaw\.tools\.(search|describe|call)\s*\(`)

// codeHint is a hint for two common first-attempt slips of a model,
// or "":
//   - the body returned undefined (no `return`): the result is null, which
//     reads as "found nothing" unless said;
//   - a bridge call without `await` (openclaw.tools.* return Promises): the
//     run then fails with a TypeError, or returns `{}` where the Promise
//     was. A call counts as awaited when its statement has `await`,
//     `return`, `Promise.` or an arrow `=>` before it, so the hint is
//     given only when such a call exists AND the run failed with a
//     TypeError or returned a value containing `{}`.
func codeHint(code string, r *sandbox.Result) string {
	if r.OK && r.Undefined {
		return "the body returned nothing: end it with `return …`, e.g. `return await openclaw.tools.search(\"…\")`"
	}
	suspicious := (!r.OK && !r.TimedOut && strings.Contains(r.Error, "TypeError")) || (r.OK && strings.Contains(string(r.Value), "{}"))
	if !suspicious {
		return ""
	}
	if op := unawaitedCall(code); op != "" {
		return fmt.Sprintf("openclaw.tools.%s(…) returns a Promise: did you forget `await` before it?", op)
	}
	return ""
}

// unawaitedCall returns the operation of the first bridge call in code whose
// statement has no await, return, Promise. or => before it; "" when none.
// The statement starts after the last ";", "{" or "}", or after a line
// break that does not continue an expression (the line before does not end
// in one of "([,=?:&|+").
func unawaitedCall(code string) string {
	for _, m := range bridgeCallRE.FindAllStringSubmatchIndex(code, -1) {
		start := 0
		for i := m[0] - 1; i >= 0; i-- {
			c := code[i]
			if c == ';' || c == '{' || c == '}' {
				start = i + 1
				break
			}
			if c == '\n' {
				prev := strings.TrimRight(code[:i], " \t\r")
				if prev == "" || !strings.ContainsRune("([,=?:&|+", rune(prev[len(prev)-1])) {
					start = i + 1
					break
				}
			}
		}
		stmt := code[start:m[0]]
		if !strings.Contains(stmt, "await") && !strings.Contains(stmt, "return") && !strings.Contains(stmt, "Promise.") && !strings.Contains(stmt, "=>") {
			return code[m[2]:m[3]]
		}
	}
	return ""
}
