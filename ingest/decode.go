package ingest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/jsonscan"
)

// StepDecode is the name of the built-in first step.
const StepDecode = "decode"

// MaxDepth is the deepest nesting of JSON objects and arrays accepted in
// one tool definition (the tool object itself is level 1). Real schemas
// nest a few dozen levels; clients decode whole messages with a depth
// limit (the go-sdk refuses a message past 1,000 levels, and tools/list
// wraps each tool in 3 more), so one deeper tool would fail a client's
// whole listing. A deeper tool is quarantined, not decoded.
const MaxDepth = 512

// wireTool decodes a tool keeping its schemas as raw JSON (the embedded
// mcp.Tool's `any` fields would become maps).
type wireTool struct {
	mcp.Tool
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
}

// decode is the built-in first step: the tool must be a JSON object no
// deeper than MaxDepth that decodes as an MCP Tool with a non-empty name.
// Its name is read before anything else, so every diagnostic can name the
// tool.
func decode(t *Tool) error {
	var nameRaw []byte
	depth, err := jsonscan.Object(t.Raw, func(key, value []byte) bool {
		if string(key) == "name" {
			nameRaw = value
		}
		return true
	})
	if nameRaw != nil {
		var name string
		if json.Unmarshal(nameRaw, &name) == nil && name != "" {
			t.Tool = &mcp.Tool{Name: name} // names the diagnostics below
		}
	}
	switch {
	case errors.Is(err, jsonscan.ErrNotObject):
		return fmt.Errorf("the tool is not a JSON object (%s)", preview(t.Raw))
	case err != nil:
		return fmt.Errorf("the tool is not valid JSON: %v", err)
	case depth > MaxDepth:
		return fmt.Errorf("JSON nesting deeper than %d levels (%d)", MaxDepth, depth)
	}
	var w wireTool
	if err := json.Unmarshal(t.Raw, &w); err != nil {
		msg := strings.TrimPrefix(err.Error(), "json: ")
		msg = strings.NewReplacer("wireTool.Tool.", "Tool.", "wireTool.", "Tool.").Replace(msg)
		return fmt.Errorf("the tool does not decode as an MCP Tool: %s", msg)
	}
	if w.Name == "" {
		return errors.New(`the tool has no "name"`)
	}
	tool := w.Tool
	tool.InputSchema, tool.OutputSchema = nil, nil
	if !isNull(w.InputSchema) {
		tool.InputSchema = w.InputSchema
	}
	if !isNull(w.OutputSchema) {
		tool.OutputSchema = w.OutputSchema
	}
	t.Tool = &tool
	return nil
}

func isNull(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s == "" || s == "null"
}

// preview is the start of raw for a diagnostic (at most 60 bytes).
func preview(raw []byte) string {
	s := strings.TrimSpace(string(raw))
	if len(s) > 60 {
		return s[:60] + "…"
	}
	if s == "" {
		return "empty"
	}
	return s
}
