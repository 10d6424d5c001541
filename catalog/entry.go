// Package catalog holds the merged tool catalog of all upstream MCP servers:
// entries, ids, exposed names, trust, the search index and
// ranking, and the rendering of JSON Schemas to TypeScript-style signatures.
//
// It does no I/O and knows nothing of transports: callers hand it tool
// descriptions as JSON and get back entries, names and hits.
package catalog

import "encoding/json"

// Entry is one upstream tool in the catalog.
//
// ID is "mcp:<upstream>:<tool>" (SPEC §2, seed "Tool Search": source kind,
// upstream name, original tool name). Exposed is the name shown to a model
// in direct mode; it matches ^[a-zA-Z0-9_-]{1,64}$ and is unique within a
// catalog snapshot. Name is the tool's exact original name, which is what the
// upstream always receives.
type Entry struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Exposed string `json:"exposed"`
	// Base is the exposed name before any clash or length suffix
	// (BaseName). Policy patterns match it too, so a rule written for
	// "gh__delete_repo" keeps holding when a clash renames the tool.
	Base        string `json:"base,omitempty"`
	Upstream    string `json:"upstream"`
	Trusted     bool   `json:"trusted"`
	DirectOnly  bool   `json:"directOnly,omitempty"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// InputSchema, OutputSchema, Annotations and Meta are the upstream's
	// JSON exactly as received (nil when absent).
	InputSchema  json.RawMessage `json:"inputSchema,omitempty"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
	Meta         json.RawMessage `json:"_meta,omitempty"`
	Icons        json.RawMessage `json:"icons,omitempty"`
	// Extra is the tool's members that mcp.Tool does not carry
	// ("execution" of MCP 2025-11-25, later or extension members), one
	// JSON object as received (ingest.Tool.Extra); nil when none. Direct
	// mode lists them, describe shows them.
	Extra json.RawMessage `json:"extra,omitempty"`
	// OriginalInputSchema is the inputSchema as the upstream sent it when
	// the ingest pipeline normalised it (InputSchema is then the
	// normalised one; "null" when it was absent); nil otherwise.
	OriginalInputSchema json.RawMessage `json:"originalInputSchema,omitempty"`
}

// Source is the hit's source field: "mcp/trusted" or "mcp/untrusted".
func (e *Entry) Source() string {
	if e.Trusted {
		return "mcp/trusted"
	}
	return "mcp/untrusted"
}

// Hit is the compact, prompt-safe descriptor of one catalog entry returned by
// search (SPEC §4). Input is a bounded TypeScript-style signature for trusted
// upstreams, or the string "unknown" for untrusted ones or when the schema
// could not be rendered completely within bounds. Output is set only for
// trusted tools whose output schema renders completely within bounds.
type Hit struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	Description string  `json:"description"`
	Source      string  `json:"source"`
	Upstream    string  `json:"upstream"`
	Input       string  `json:"input"`
	Output      string  `json:"output,omitempty"`
	Score       float64 `json:"score,omitempty"`
	// Match is how much of the query the tool matches (MatchLevel):
	// "strong", "partial" or "weak"; empty outside search results.
	Match string `json:"match,omitempty"`
	// Matched lists the query words the tool matched, as written,
	// separated by ", " (a string, so Hit stays comparable).
	Matched string `json:"matched,omitempty"`
	// Related lists the query words the tool matched only through a
	// related word (Scored.Related), separated by ", ".
	Related string `json:"related,omitempty"`
	// Unavailable, when set, is why the tool's upstream is down right now:
	// the tool stays listed (never silently gone) but calls fail until the
	// upstream is back.
	Unavailable string `json:"unavailable,omitempty"`
}
