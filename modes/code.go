package modes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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
}

// defaultMaxBlocks is Code.MaxBlocks when unset.
const defaultMaxBlocks = 8

// MaxCodeBytes bounds the `code` argument of tool_search_code, in bytes.
const MaxCodeBytes = 64 << 10

// Mode returns "code".
func (c *Code) Mode() string { return "code" }

const codeContract = `Run a short JavaScript program against a catalog of MCP tools. ` + "`code`" + ` is the BODY of an async function: use await, and return a JSON-serializable value (it becomes this tool's result). Globals (all return Promises):
  openclaw.tools.search(query: string, opts?: {limit?: number}) -> Hit[]
  openclaw.tools.describe(id: string) -> Hit & {description (whole), inputSchema: object, outputSchema?, title?, annotations?}
  openclaw.tools.call(id: string, args?: object) -> {tool: Hit, result: {content, structuredContent?, isError?, details?}}
  console.log / console.warn / console.error (captured)
Hit = {id, name, description, source, upstream, input, output?}. input is a TypeScript-style signature, or "unknown" for untrusted servers: describe(id) first to read the exact schema. result.details holds the tool's JSON output. Promise.all runs calls concurrently. No filesystem, network, require or import.
Example:
  const hits = await openclaw.tools.search("create a GitHub issue");
  const t = await openclaw.tools.describe(hits[0].id);
  return await openclaw.tools.call(t.id, {title: "Crash on start", body: "Steps..."});`

// Tools lists tool_search_code and the direct-only tools.
func (c *Code) Tools(env Env) []*mcp.Tool {
	out := []*mcp.Tool{{
		Name:        ToolSearchCode,
		Description: codeContract + "\n" + summary(env) + fmt.Sprintf(" Runs time out after %d ms.", c.Timeout.Milliseconds()),
		InputSchema: json.RawMessage(`{"type":"object","properties":{"code":{"type":"string","description":"body of an async JavaScript function using openclaw.tools.search/describe/call"}},"required":["code"]}`),
		Annotations: &mcp.ToolAnnotations{Title: "Search and call tools with code"},
	}}
	for _, e := range allowedEntries(env, nil) {
		if e.DirectOnly {
			out = append(out, EntryTool(e))
		}
	}
	return out
}

// Instructions is a short hint for code mode.
func (c *Code) Instructions(env Env) string {
	return "This server fronts a catalog of " + countTools(env) + ". Use tool_search_code to search, describe and call them from a short JavaScript body."
}

type codeArgs struct {
	Code string `json:"code"`
}

// CodeOutput is the structuredContent of a tool_search_code result.
type CodeOutput struct {
	OK        bool                 `json:"ok"`
	Value     json.RawMessage      `json:"value,omitempty"`
	Error     string               `json:"error,omitempty"`
	TimedOut  bool                 `json:"timedOut,omitempty"`
	Logs      []sandbox.LogLine    `json:"logs"`
	Truncated bool                 `json:"truncated,omitempty"`
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
	if name != ToolSearchCode {
		e := resolveCallable(env, name)
		if e == nil || !e.DirectOnly {
			return nil, ErrUnknownTool(name)
		}
		return env.Call(ctx, e, args, ViaDirect)
	}
	var a codeArgs
	if err := decodeArgs(args, &a); err != nil {
		return errorResult("tool_search_code: %v", err), nil
	}
	if len(a.Code) > MaxCodeBytes {
		return errorResult("tool_search_code: `code` is %d bytes; the limit is %d bytes", len(a.Code), MaxCodeBytes), nil
	}
	if strings.TrimSpace(a.Code) == "" {
		return errorResult("tool_search_code: `code` is empty: pass the body of an async function"), nil
	}
	var mu sync.Mutex
	var blocks []mcp.Content
	runDone := false // set when the run ended: late bridge calls add no blocks
	maxBlocks := c.MaxBlocks
	if maxBlocks == 0 {
		maxBlocks = defaultMaxBlocks
	}
	bridge := func(ctx context.Context, op string, raw json.RawMessage) (json.RawMessage, error) {
		var params []json.RawMessage
		if err := json.Unmarshal(raw, &params); err != nil {
			return nil, fmt.Errorf("%s: arguments are not a JSON array", op)
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
			q, err := str(0, "query")
			if err != nil {
				return nil, err
			}
			limit := 0
			if len(params) > 1 && string(params[1]) != "null" {
				var o struct {
					Limit *int `json:"limit"`
				}
				if err := json.Unmarshal(params[1], &o); err != nil {
					return nil, fmt.Errorf("openclaw.tools.search: options must be an object like {limit: 5}")
				}
				if o.Limit != nil {
					if *o.Limit <= 0 {
						return nil, fmt.Errorf("openclaw.tools.search: limit must be at least 1, got %d", *o.Limit)
					}
					limit = *o.Limit
				}
			}
			hits, err := c.API.Search(env, q, limit, ViaBridge)
			if err != nil {
				return nil, err
			}
			return json.Marshal(hits)
		case "describe":
			id, err := str(0, "id")
			if err != nil {
				return nil, err
			}
			d, err := c.API.Describe(env, id, ViaBridge)
			if err != nil {
				return nil, err
			}
			return json.Marshal(d)
		case "call":
			id, err := str(0, "id")
			if err != nil {
				return nil, err
			}
			var callArgs json.RawMessage
			if len(params) > 1 {
				callArgs = params[1]
			}
			envl, res, err := c.API.Call(ctx, env, id, callArgs, ViaBridge)
			if err != nil {
				return nil, errors.New(ErrorText(err))
			}
			mu.Lock()
			for _, b := range res.Content {
				if _, ok := b.(*mcp.TextContent); !ok && len(blocks) < maxBlocks && !runDone {
					blocks = append(blocks, b)
				}
			}
			mu.Unlock()
			return json.Marshal(envl)
		}
		return nil, fmt.Errorf("unknown bridge operation %q", op)
	}
	r := c.Pool.Run(ctx, a.Code, c.Timeout, bridge)
	mu.Lock()
	runDone = true
	runBlocks := blocks
	mu.Unlock()
	out := &CodeOutput{OK: r.OK, Value: r.Value, Error: r.Error, TimedOut: r.TimedOut, Logs: r.Logs, Truncated: r.LogsTruncated || r.OutputTruncated, Calls: r.Calls,
		Telemetry: CodeTelemetry{SearchCount: r.SearchCount, DescribeCount: r.DescribeCount, CallCount: r.CallCount, DurationMs: r.DurationMs}}
	if out.Logs == nil {
		out.Logs = []sandbox.LogLine{}
	}
	if rec, ok := env.(CodeRunRecorder); ok {
		rec.CodeRan(out)
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
	default:
		text = "tool_search_code failed: " + r.Error
	}
	if len(r.Logs) > 0 {
		var b strings.Builder
		for _, l := range r.Logs {
			b.WriteString("\n[" + l.Level + "] " + l.Text)
		}
		text += "\n\nconsole:" + b.String()
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: json.RawMessage(sc), IsError: !r.OK}
	res.Content = append(res.Content, runBlocks...)
	return res, nil
}
