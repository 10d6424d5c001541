package proxy

// Every tool member an upstream sent reaches the client. The go-sdk v1.8.0 mcp.Tool type decodes only the
// members it knows, so "execution" (MCP 2025-11-25 server/tools "Tool":
// whether a call may or must run as a task) and any later or extension
// member would be lost between the upstream and the client. The ingest
// point keeps them (ingest.Tool.Extra → catalog.Entry.Extra) and the
// tools/list answer writes them back into each tool object
// (rawToolsList), after the members the proxy sets itself: "name" is the
// exposed name, title, description, schemas and annotations are the
// catalog's (hidden characters stripped, schema normalised).

import (
	"bytes"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/modes"
)

// rawToolsList is a tools/list answer whose tools carry extra members.
// It embeds the go-sdk result, so the SDK still stamps it for 2026-07-28
// clients (resultType, server identity in _meta) and cacheMiddleware sets
// its cache hints; its own Tools field shadows the embedded one in JSON
// (encoding/json: the shallower field wins). A tool without extra
// members is encoded by encoding/json as usual; one with them is a
// toolWithExtra, so only those few objects go through a MarshalJSON (whose
// output encoding/json validates again: doing that for the whole list
// doubled its encoding time).
type rawToolsList struct {
	mcp.ListToolsResult
	Tools []any `json:"tools"`
}

// toolWithExtra is a tool with the members of extra (a JSON object whose
// keys never name a member mcp.Tool decodes: ingest drops those,
// case-insensitively) appended.
type toolWithExtra struct {
	t     *mcp.Tool
	extra json.RawMessage
}

func (x toolWithExtra) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(x.t)
	if err != nil {
		return nil, err
	}
	return withMembers(b, x.extra), nil
}

// toolsListResult is the tools/list answer for tools listed to env: a
// plain *mcp.ListToolsResult when no tool has extra members, a
// *rawToolsList otherwise. extras is modes.ToolExtras(env, tools).
func toolsListResult(tools []*mcp.Tool, extras []json.RawMessage) mcp.Result {
	if extras == nil {
		return &mcp.ListToolsResult{Tools: tools}
	}
	out := &rawToolsList{ListToolsResult: mcp.ListToolsResult{Tools: tools}, Tools: make([]any, len(tools))}
	for i, t := range tools {
		if x := extraAt(extras, i); len(innerMembers(x)) > 0 {
			out.Tools[i] = toolWithExtra{t: t, extra: x}
		} else {
			out.Tools[i] = t
		}
	}
	return out
}

func extraAt(extra []json.RawMessage, i int) json.RawMessage {
	if i < len(extra) {
		return extra[i]
	}
	return nil
}

// innerMembers is the members of the JSON object extra without its
// braces (nil for nil, {} or anything that is not an object).
func innerMembers(extra json.RawMessage) []byte {
	x := bytes.TrimSpace(extra)
	if len(x) < 2 || x[0] != '{' {
		return nil
	}
	return bytes.TrimSpace(x[1 : len(x)-1])
}

// withMembers appends the members of the JSON object extra to the JSON
// object obj (both encoded; extra nil or {} adds nothing).
func withMembers(obj, extra json.RawMessage) []byte {
	inner := innerMembers(extra)
	if len(inner) == 0 {
		return obj
	}
	out := make([]byte, 0, len(obj)+len(inner)+1)
	out = append(out, obj[:len(obj)-1]...)
	if len(bytes.TrimSpace(obj)) > 2 {
		out = append(out, ',')
	}
	out = append(out, inner...)
	return append(out, '}')
}

// listedTools is what the session's tools/list answer holds: the
// surface's tools and their extra members (modes.ToolExtras).
func (p *Proxy) listedTools(s *session) ([]*mcp.Tool, []json.RawMessage) {
	tools := p.surf().Tools(s)
	if tools == nil {
		tools = []*mcp.Tool{}
	}
	return tools, modes.ToolExtras(s, tools)
}
