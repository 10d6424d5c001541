package ingest

import (
	"bytes"
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
	var extra []member
	depth, err := jsonscan.Object(t.Raw, func(key, value []byte) bool {
		if string(key) == "name" {
			nameRaw = value
		}
		if k, ok := memberKey(key); ok && !knownMembers[strings.ToLower(k)] {
			extra = addMember(extra, k, key, value)
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
	t.Extra = joinMembers(extra)
	return nil
}

// knownMembers are the members of a tool object that mcp.Tool (go-sdk
// v1.8.0) decodes, lower-cased: encoding/json matches keys without regard
// to case, so "Name" or "\u006eame" set the name as well and must never
// come back as an extra member beside the proxy's own "name". Every other
// member (e.g. "execution", MCP 2025-11-25 server/tools "Tool", and any
// later or extension member) is kept raw in Tool.Extra.
var knownMembers = map[string]bool{
	"name": true, "title": true, "description": true, "inputschema": true,
	"outputschema": true, "annotations": true, "_meta": true, "icons": true,
}

// memberKey decodes a key's raw bytes (escapes included); ok is false for
// a key that does not decode (the decode step then fails the tool anyway).
func memberKey(raw []byte) (string, bool) {
	if !bytes.ContainsRune(raw, '\\') {
		return string(raw), true
	}
	var k string
	err := json.Unmarshal(append(append([]byte{'"'}, raw...), '"'), &k)
	return k, err == nil
}

// member is one object member: the decoded key, the key's raw bytes
// between the quotes and the value's raw bytes.
type member struct {
	name       string
	key, value []byte
}

// addMember appends a member, replacing an earlier one of the same key (a
// repeated key means its last value, as encoding/json decodes it).
func addMember(ms []member, name string, key, value []byte) []member {
	for i := range ms {
		if ms[i].name == name {
			ms[i].key, ms[i].value = key, value
			return ms
		}
	}
	return append(ms, member{name, key, value})
}

// joinMembers is ms as one JSON object, in order (nil when ms is empty).
// The bytes are copied: the object does not keep the listing alive.
func joinMembers(ms []member) json.RawMessage {
	if len(ms) == 0 {
		return nil
	}
	n := 2
	for _, m := range ms {
		n += len(m.key) + len(m.value) + 4
	}
	b := make([]byte, 0, n)
	b = append(b, '{')
	for i, m := range ms {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, m.key...)
		b = append(b, '"', ':')
		b = append(b, m.value...)
	}
	return append(b, '}')
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
