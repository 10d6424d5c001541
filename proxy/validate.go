package proxy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
	"github.com/mcp-toolsearch/mcp-toolsearch/schemacheck"
)

// Output validation (SPEC §4 "Where a trusted tool declares an
// outputSchema, the schema is compiled before execution and the final
// details are validated ... before the result is returned").
//
// Only entries of trusted upstreams (upstreams.NAME.trusted = true) that
// declare an outputSchema are checked; untrusted output schemas are passed
// through to clients and never enforced.
//
//   - Before the call: the schema is compiled (package schemacheck:
//     github.com/google/jsonschema-go, with draft-04, draft-06 and 2019-09
//     schemas rewritten into draft-07 or 2020-12; no remote $ref loading).
//     A schema that does not compile (a draft-03 or custom $schema, an
//     unresolvable $ref, a $ref loop, over schemacheck.MaxSchemaBytes) means the output
//     is not validated: the call is made, and a warning is logged once per
//     tool and schema (never a refused call).
//   - After the call, for a result that is not isError: structuredContent
//     must be present (MCP spec 2025-06-18, "Tools" / "Structured Content":
//     a tool with an outputSchema MUST return structured results conforming
//     to it) and must validate. Otherwise the result is replaced by an
//     isError result naming the failing field, e.g.
//     `output of mcp:billing:get_invoice does not match its outputSchema: /paid: expected a boolean, got "yes"; schema: {"type":"boolean"}`.
//   - isError results and JSON-RPC errors pass through unchanged.

// outputCheck prepares output validation for a trusted tool that declares
// an outputSchema (SPEC §4): the schema is compiled before the call runs.
// It returns the check to apply to the upstream's result, or nil when there
// is nothing to check (no schema, untrusted, or a schema that does not
// compile: then a warning is logged).
func (p *Proxy) outputCheck(e *catalog.Entry) func(*mcp.CallToolResult) *mcp.CallToolResult {
	if !e.Trusted || len(e.OutputSchema) == 0 || string(e.OutputSchema) == "null" {
		return nil
	}
	sc, err := schemacheck.Compile(e.OutputSchema)
	if err != nil {
		p.warnSchemaOnce(e, "output", err)
		return nil
	}
	return func(res *mcp.CallToolResult) *mcp.CallToolResult {
		if res == nil || res.IsError {
			return res
		}
		if msg := validateOutput(e.ID, sc, res); msg != "" {
			p.log.Warn("output does not match its outputSchema", "id", e.ID, "err", msg)
			return errorText(msg)
		}
		return res
	}
}

// validateOutput checks a result's structuredContent against sc and
// returns "" when it conforms, else the message for the caller.
func validateOutput(id string, sc *schemacheck.Schema, res *mcp.CallToolResult) string {
	if res.StructuredContent == nil {
		return fmt.Sprintf("output of %s has no structuredContent, but the tool declares an outputSchema (MCP spec 2025-06-18, Structured Content: the result must conform to it)", id)
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return fmt.Sprintf("output of %s: structuredContent cannot be encoded: %v", id, err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil || v == nil {
		return fmt.Sprintf("output of %s has no structuredContent, but the tool declares an outputSchema (MCP spec 2025-06-18, Structured Content: the result must conform to it)", id)
	}
	if err := sc.Validate(v); err != nil {
		return fmt.Sprintf("output of %s does not match its outputSchema: %s", id, bounded(err.Error(), 1200))
	}
	return ""
}

func errorText(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

// schemaWarnings remembers the (kind, id, schema hash) triples a proxy
// has warned about, so a schema that does not compile is logged once per
// proxy, not per call. Bounded: emptied when full.
type schemaWarnings struct {
	mu sync.Mutex
	m  map[string]bool
}

// first reports whether key is new, remembering it.
func (w *schemaWarnings) first(key string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m[key] {
		return false
	}
	if w.m == nil || len(w.m) >= 4096 {
		w.m = map[string]bool{}
	}
	w.m[key] = true
	return true
}

// warnSchemaOnce logs that e's input or output schema (kind) does not
// compile and is therefore not validated.
func (p *Proxy) warnSchemaOnce(e *catalog.Entry, kind string, err error) {
	raw := e.OutputSchema
	if kind == "input" {
		raw = e.InputSchema
	}
	sum := sha256.Sum256(raw)
	key := kind + "\x00" + e.ID + "\x00" + hex.EncodeToString(sum[:8])
	if p.schemaWarned.first(key) {
		p.log.Warn(kind+"Schema does not compile; calls are made without validating their "+kind, "id", e.ID, "err", bounded(err.Error(), 500))
	}
}
