package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxToolNameLen is the longest tool name the go-sdk accepts without a
// warning (mcp/tool.go validateToolName: 1..128 characters of [A-Za-z0-9_.-]).
const maxToolNameLen = 128

// maxLineBytes bounds one JSON Lines record (16 MiB).
const maxLineBytes = 16 << 20

// record is one line of a tools.jsonl file in the format of the benchmark
// data (shared/bench/README.md): {"id", "server", "name", "description",
// "inputSchema", ...}. Unknown fields are ignored.
type record struct {
	ID          string          `json:"id"`
	Server      string          `json:"server"`
	Name        string          `json:"name"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Annotations json.RawMessage `json:"annotations"`
}

// LoadOptions selects which records of a tools.jsonl file are served.
type LoadOptions struct {
	// Server keeps only records whose "server" field equals it exactly
	// ("" keeps all). Applied before Limit.
	Server string
	// Limit keeps the first Limit records left after the Server filter
	// (0 or negative: all).
	Limit int
	// KeepNames serves names exactly as in the file (only made unique),
	// even when they break the go-sdk name rule; the SDK then only logs a
	// warning. Useful to test a client's or proxy's own name sanitizing.
	KeepNames bool
}

// Tool is one tool as served: Name is unique within the served set.
// Source is the 1-based line number of the record in the input.
type Tool struct {
	Tool   *mcp.Tool
	ID     string // the record's "id" ("" when absent)
	Server string // the record's "server"
	Source int
}

// LoadTools reads JSON Lines records from r and returns the tools to serve,
// in file order.
//
// Each non-blank line must be a JSON object with a non-empty string "name";
// otherwise LoadTools returns an error naming the line. The tool's input
// schema is the record's "inputSchema" when that is a JSON object whose
// "type" is "object"; otherwise (absent, null, not an object, another type)
// it is {"type":"object"}, because the go-sdk (Server.AddTool) and the MCP
// spec (2025-11-25, "Tool": inputSchema must be an object schema) require
// one. "outputSchema" is deliberately dropped: every tool answers with the
// same echo object, which would not match a record's declared output.
//
// Names: unless opts.KeepNames, characters outside [A-Za-z0-9_.-] become
// '_' and names are cut to 128 bytes (go-sdk rule). Duplicates (after that
// step) are made unique deterministically: the first occurrence keeps the
// name, later ones get the first free suffix _2, _3, ... where "free" means
// not used by any other tool of the served set, original or generated.
func LoadTools(r io.Reader, opts LoadOptions) ([]Tool, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLineBytes)
	var out []Tool
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var rec record
		if err := json.Unmarshal(b, &rec); err != nil {
			return nil, fmt.Errorf("line %d: not a JSON object with string fields id/server/name/description: %v", line, err)
		}
		if rec.Name == "" {
			return nil, fmt.Errorf("line %d: missing or empty \"name\"", line)
		}
		if opts.Server != "" && rec.Server != opts.Server {
			continue
		}
		t := &mcp.Tool{
			Name:        rec.Name,
			Title:       rec.Title,
			Description: rec.Description,
			InputSchema: objectSchema(rec.InputSchema),
		}
		if len(rec.Annotations) > 0 && string(rec.Annotations) != "null" {
			var a mcp.ToolAnnotations
			if err := json.Unmarshal(rec.Annotations, &a); err == nil {
				t.Annotations = &a
			}
		}
		out = append(out, Tool{Tool: t, ID: rec.ID, Server: rec.Server, Source: line})
		if opts.Limit > 0 && len(out) >= opts.Limit {
			break
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", line+1, err)
	}
	uniqueNames(out, !opts.KeepNames)
	return out, nil
}

// emptyObjectSchema is served when a record has no usable input schema.
var emptyObjectSchema = json.RawMessage(`{"type":"object"}`)

// objectSchema returns raw when it is a JSON object with "type": "object",
// else {"type":"object"}.
func objectSchema(raw json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil || m == nil {
		return emptyObjectSchema
	}
	if typ, ok := m["type"]; !ok || string(bytes.TrimSpace(typ)) != `"object"` {
		return emptyObjectSchema
	}
	return raw
}

// SanitizeName maps name onto the go-sdk tool name rule: runes outside
// [A-Za-z0-9_.-] become '_', and the result is cut to at most 128 bytes.
func SanitizeName(name string) string {
	b := make([]byte, 0, len(name))
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-', r == '.':
			b = append(b, byte(r))
		default:
			b = append(b, '_')
		}
	}
	if len(b) > maxToolNameLen {
		b = b[:maxToolNameLen]
	}
	return string(b)
}

// uniqueNames sanitizes (when sanitize) and de-duplicates the tool names in
// place; see LoadTools for the rule.
func uniqueNames(tools []Tool, sanitize bool) {
	taken := make(map[string]bool, len(tools)) // every base name present
	for i := range tools {
		if sanitize {
			tools[i].Tool.Name = SanitizeName(tools[i].Tool.Name)
		}
		taken[tools[i].Tool.Name] = true
	}
	assigned := make(map[string]bool, len(tools))
	for i := range tools {
		name := tools[i].Tool.Name
		if !assigned[name] {
			assigned[name] = true
			continue
		}
		for n := 2; ; n++ {
			suffix := "_" + strconv.Itoa(n)
			base := name
			if len(base)+len(suffix) > maxToolNameLen {
				base = truncateUTF8(base, maxToolNameLen-len(suffix))
			}
			cand := base + suffix
			if !taken[cand] && !assigned[cand] {
				assigned[cand] = true
				tools[i].Tool.Name = cand
				break
			}
		}
	}
}

// truncateUTF8 cuts s to at most n bytes without splitting a rune.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Options tunes NewServer. The zero value is the go-sdk's defaults.
type Options struct {
	// PageSize is the most tools one tools/list page holds (MCP spec
	// 2025-11-25, "Pagination": the rest follow via nextCursor); 0 means
	// the go-sdk default of 1000, negative values are treated as 0. The SDK
	// lists tools sorted by name.
	PageSize int
	// ProtocolVersions restricts the MCP protocol versions the server
	// accepts (go-sdk ServerOptions.SupportedProtocolVersions); nil means
	// all the SDK supports. NewServer panics on a version the SDK does not
	// know; check against mcp.SupportedProtocolVersions first.
	ProtocolVersions []string
	// Logger receives the SDK's and the server's logs; nil discards them.
	Logger *slog.Logger
	// RPCErrorTools answer every call with the JSON-RPC error -32603
	// (internal error) instead of the echo: a misbehaving upstream for tests.
	RPCErrorTools []string
	// RPCErrors answer every call of the named tools with the given JSON-RPC
	// error (code, message and data as written), e.g. the TypeScript SDK's
	// `{"code": -32042, "message": "MCP error -32042: …", "data": …}`.
	RPCErrors map[string]*jsonrpc.Error
	// IsErrorTools answer every call with the echo marked isError: true.
	IsErrorTools []string
	// NoPing answers ping with -32601 (method not found), like servers
	// that do not implement it (the MCP spec says SHOULD).
	NoPing bool
	// ListGate, when set, is a file path: tools/list is answered only once
	// that file exists (checked every 20 ms; the request's end stops the
	// wait). Tests use it for an upstream slow to list, without a timed
	// assertion: it stays "starting" until the test creates the file.
	ListGate string
	// SlowTools answer after the given time, or earlier with an isError
	// result when the call is cancelled (MCP notifications/cancelled).
	SlowTools map[string]time.Duration
	// Interactive adds the tools confirm (asks the client a question) and
	// toggle (changes the tool list): see addInteractive.
	Interactive bool
	// OutputSchemas declares an outputSchema (JSON) for the named tools; the
	// echo is not changed to match it, so tests can serve output that
	// breaks its schema.
	OutputSchemas map[string]json.RawMessage
	// Demo adds DemoNote as a last text block to every echo result, so
	// that a model calling a tool of a demo catalog (the default
	// config.toml's registry, github and gitlab upstreams) does not take
	// the echo for work done. content[0] and
	// structuredContent stay EchoResult's.
	Demo bool
}

// DemoNote is the text block Options.Demo adds to every result.
const DemoNote = "Demo stub: this tool belongs to a demo catalog (examples/catalogserver) that only echoes the arguments it got (above); nothing was done and nothing was looked up."

// NewServer returns an MCP server (go-sdk) that serves tools, each answering
// with EchoResult. name is the serverInfo.name.
//
// A record whose schema the go-sdk still refuses (Server.AddTool panics, e.g.
// an invalid "x-mcp-header" annotation) is served with {"type":"object"}
// instead, and the fallback is logged.
func NewServer(name string, tools []Tool, opts Options) *mcp.Server {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: name, Version: "0.1.0"}, &mcp.ServerOptions{
		Logger:                    logger,
		PageSize:                  max(opts.PageSize, 0),
		SupportedProtocolVersions: opts.ProtocolVersions,
	})
	if opts.NoPing {
		s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if method == "ping" {
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: ping"}
				}
				return next(ctx, method, req)
			}
		})
	}
	if opts.ListGate != "" {
		s.AddReceivingMiddleware(listGate(opts.ListGate))
	}
	for _, t := range tools {
		addTool(s, t, logger, opts)
	}
	if opts.Interactive {
		addInteractive(s)
	}
	return s
}

// listGate holds tools/list until the file gate exists (Options.ListGate).
func listGate(gate string) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" {
				t := time.NewTicker(20 * time.Millisecond)
				defer t.Stop()
				for {
					if _, err := os.Stat(gate); err == nil {
						break
					}
					select {
					case <-ctx.Done():
						return nil, ctx.Err()
					case <-t.C:
					}
				}
			}
			return next(ctx, method, req)
		}
	}
}

// addInteractive adds the tools of Options.Interactive:
//
//	confirm  asks the client one question (input-required on 2026-07-28,
//	         which the go-sdk turns into elicitation/create for older
//	         clients) and answers "confirmed: <answer>" or "declined"
//	toggle   adds the tool "extra" when it is missing and removes it when
//	         present, so the server sends notifications/tools/list_changed
func addInteractive(s *mcp.Server) {
	obj := json.RawMessage(`{"type":"object"}`)
	text := func(t string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: t}}}
	}
	s.AddTool(&mcp.Tool{Name: "confirm", Description: "Ask the user one question and echo the answer", InputSchema: obj}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if r, ok := req.Params.InputResponses["answer"].(*mcp.ElicitResult); ok {
			if r.Action != "accept" {
				return text(r.Action), nil
			}
			return text(fmt.Sprintf("confirmed: %v", r.Content["answer"])), nil
		}
		return &mcp.CallToolResult{
			InputRequests: mcp.InputRequestMap{"answer": &mcp.ElicitParams{Message: "Your answer?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"]}`)}},
			RequestState:  "confirm",
		}, nil
	})
	var mu sync.Mutex
	on := false
	s.AddTool(&mcp.Tool{Name: "toggle", Description: "Add or remove the tool extra (tools/list_changed)", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		mu.Lock()
		defer mu.Unlock()
		on = !on
		if on {
			s.AddTool(&mcp.Tool{Name: "extra", Description: "Appears after toggle", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return text("extra"), nil
			})
			return text("extra added"), nil
		}
		s.RemoveTools("extra")
		return text("extra removed"), nil
	})
}

func addTool(s *mcp.Server, t Tool, logger *slog.Logger, opts Options) {
	name := t.Tool.Name
	rpcErr, isErr := slices.Contains(opts.RPCErrorTools, name), slices.Contains(opts.IsErrorTools, name)
	slow := opts.SlowTools[name]
	h := func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if e := opts.RPCErrors[name]; e != nil {
			return nil, &jsonrpc.Error{Code: e.Code, Message: e.Message, Data: e.Data}
		}
		if rpcErr {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "simulated internal error in " + name}
		}
		if slow > 0 {
			logger.Debug("slow call started", "tool", name) // -v; tests cancel it after this line
			select {
			case <-time.After(slow):
			case <-ctx.Done():
				logger.Warn("call cancelled", "tool", name)
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "cancelled"}}}, nil
			}
		}
		res, err := EchoResult(name, req.Params.Arguments)
		if res != nil && isErr {
			res.IsError = true
		}
		if res != nil && opts.Demo {
			res.Content = append(res.Content, &mcp.TextContent{Text: DemoNote})
		}
		return res, err
	}
	if schema, ok := opts.OutputSchemas[name]; ok {
		tt := *t.Tool
		tt.OutputSchema = schema
		t.Tool = &tt
	}
	defer func() {
		if p := recover(); p != nil {
			logger.Warn("schema refused by the SDK; serving an empty object schema", "tool", name, "line", t.Source, "error", fmt.Sprint(p))
			tt := *t.Tool
			tt.InputSchema = emptyObjectSchema
			s.AddTool(&tt, h)
		}
	}()
	s.AddTool(t.Tool, h)
}

// EchoResult is every tool's answer: one text block holding the JSON
// {"arguments": ARGS, "tool": NAME} (keys sorted at every level, numbers
// kept exactly as sent) and the same object as structuredContent. Absent or
// null arguments echo as {}. It fails only when args is not valid JSON.
func EchoResult(tool string, args json.RawMessage) (*mcp.CallToolResult, error) {
	var a any = map[string]any{}
	if len(bytes.TrimSpace(args)) > 0 && string(bytes.TrimSpace(args)) != "null" {
		dec := json.NewDecoder(bytes.NewReader(args))
		dec.UseNumber()
		if err := dec.Decode(&a); err != nil {
			return nil, fmt.Errorf("arguments of %q are not JSON: %w", tool, err)
		}
	}
	obj := map[string]any{"tool": tool, "arguments": a}
	text, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: string(text)}},
		StructuredContent: obj,
	}, nil
}
