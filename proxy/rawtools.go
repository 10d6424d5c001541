package proxy

// Every tool member an upstream sent reaches the client (issue 12 item 6,
// issue 17 "Tasks"). The go-sdk v1.8.0 mcp.Tool type decodes only the
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
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/modes"
)

// rawToolsList is a tools/list answer whose tools carry extra members.
// It embeds the go-sdk result, so the SDK still stamps it for 2026-07-28
// clients (resultType, server identity in _meta) and cacheMiddleware sets
// its cache hints.
type rawToolsList struct {
	mcp.ListToolsResult
	// extra[i] is a JSON object whose members are added to Tools[i] (nil:
	// none). The object's keys never name a member mcp.Tool decodes
	// (ingest drops those, case-insensitively), so no member is repeated.
	extra []json.RawMessage
}

// toolsListResult is the tools/list answer for tools listed to env: a
// plain *mcp.ListToolsResult when no tool has extra members, a
// *rawToolsList otherwise. extras is modes.ToolExtras(env, tools).
func toolsListResult(tools []*mcp.Tool, extras []json.RawMessage) mcp.Result {
	if extras == nil {
		return &mcp.ListToolsResult{Tools: tools}
	}
	return &rawToolsList{ListToolsResult: mcp.ListToolsResult{Tools: tools}, extra: extras}
}

// listTail is how the go-sdk result ends when its tools are an empty list:
// Tools is the last field of mcp.ListToolsResult.
var listTail = []byte(`"tools":[]}`)

// MarshalJSON writes the result as the go-sdk would, with each tool's
// extra members appended to its object.
func (r *rawToolsList) MarshalJSON() ([]byte, error) {
	base := r.ListToolsResult
	base.Tools = []*mcp.Tool{}
	head, err := json.Marshal(&base)
	if err != nil {
		return nil, err
	}
	if !bytes.HasSuffix(head, listTail) {
		return nil, fmt.Errorf("tools/list: unexpected encoding of the result (%d bytes, not ending in %s)", len(head), listTail)
	}
	var b bytes.Buffer
	b.Write(head[:len(head)-3]) // up to "tools":
	b.WriteByte('[')
	for i, t := range r.Tools {
		if i > 0 {
			b.WriteByte(',')
		}
		tb, err := json.Marshal(t)
		if err != nil {
			return nil, fmt.Errorf("tools/list: tool %q: %w", t.Name, err)
		}
		b.Write(withMembers(tb, extraAt(r.extra, i)))
	}
	b.WriteString("]}")
	return b.Bytes(), nil
}

func extraAt(extra []json.RawMessage, i int) json.RawMessage {
	if i < len(extra) {
		return extra[i]
	}
	return nil
}

// withMembers appends the members of the JSON object extra to the JSON
// object obj (both encoded; extra nil or {} adds nothing).
func withMembers(obj, extra json.RawMessage) []byte {
	inner := bytes.TrimSpace(extra)
	if len(inner) < 2 || inner[0] != '{' {
		return obj
	}
	inner = bytes.TrimSpace(inner[1 : len(inner)-1])
	if len(inner) == 0 {
		return obj
	}
	out := make([]byte, 0, len(obj)+len(inner)+1)
	out = append(out, obj[:len(obj)-1]...)
	if len(obj) > 2 {
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
