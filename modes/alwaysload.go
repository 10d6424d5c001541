package modes

import "github.com/modelcontextprotocol/go-sdk/mcp"

// AlwaysLoadKey is the tool _meta member with which Claude Code keeps a
// tool loaded when its own tool search defers MCP tools (Claude Code
// v2.1.121 and later): a deferred tool reaches the model as a name only,
// and must be found with the client's search before it can be called. The
// search modes set it on every tool they list (the surface's own tools,
// the direct-only tools and directory mode's pinned tools): a deferred
// tool_search would have to be searched for before it could search. Other
// clients ignore the member.
const AlwaysLoadKey = "anthropic/alwaysLoad"

// setAlwaysLoad sets (on) or removes (!on) AlwaysLoadKey in t's _meta,
// keeping its other members, and returns t. t.Meta is replaced, never
// written in place (it may be shared with the catalog).
func setAlwaysLoad(t *mcp.Tool, on bool) *mcp.Tool {
	if !on && t.Meta[AlwaysLoadKey] == nil {
		return t
	}
	m := make(mcp.Meta, len(t.Meta)+1)
	for k, v := range t.Meta {
		m[k] = v
	}
	if on {
		m[AlwaysLoadKey] = true
	} else {
		delete(m, AlwaysLoadKey)
	}
	if len(m) == 0 {
		m = nil
	}
	t.Meta = m
	return t
}

// alwaysLoadOf says whether an upstream's tools are listed with
// AlwaysLoadKey: the operator's per-upstream setting (always_load) when
// set, else dflt (true in the search modes; in direct mode the member is
// left as the upstream sent it, see Direct).
func alwaysLoadOf(settings map[string]bool, upstream string, dflt bool) bool {
	if v, ok := settings[upstream]; ok {
		return v
	}
	return dflt
}
