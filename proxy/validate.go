package proxy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
)

// Output validation (SPEC §4 "Where a trusted tool declares an
// outputSchema, the schema is compiled before execution and the final
// details are validated ... before the result is returned"; issue 5 item 6).
//
// Only entries of trusted upstreams (upstreams.NAME.trusted = true) that
// declare an outputSchema are checked; untrusted output schemas are passed
// through to clients and never enforced.
//
//   - Before the call: the schema is compiled with github.com/google/jsonschema-go
//     (unmarshal + Resolve, no remote $ref loading). A schema that does not
//     compile, or is larger than maxOutputSchemaBytes, makes the call an
//     isError result and the upstream is never called.
//   - After the call, for a result that is not isError: structuredContent
//     must be present (MCP spec 2025-06-18, "Tools" / "Structured Content":
//     a tool with an outputSchema MUST return structured results conforming
//     to it) and must validate. Otherwise the result is replaced by an
//     isError result naming the failing field, e.g.
//     `output of mcp:billing:get_invoice does not match its outputSchema: /paid: type: yes has type "string", want "boolean"`.
//   - isError results and JSON-RPC errors pass through unchanged.

// maxOutputSchemaBytes bounds the cost of compiling: a trusted tool's
// outputSchema larger than this is treated as not compiling (fail closed).
const maxOutputSchemaBytes = 512 << 10

// maxSchemaCache bounds the compiled-schema cache; it is emptied when full.
const maxSchemaCache = 4096

// compiled is the outcome of compiling one output schema.
type compiled struct {
	rs  *jsonschema.Resolved
	err error
}

// schemaCache holds compiled output schemas keyed by entry id and the
// SHA-256 of the schema bytes, so a changed schema is compiled afresh.
var schemaCache = struct {
	sync.Mutex
	m map[string]compiled
}{m: map[string]compiled{}}

// compileOutputSchema compiles (or returns from the cache) an entry's output
// schema. The error says why it does not compile.
func compileOutputSchema(id string, raw json.RawMessage) (*jsonschema.Resolved, error) {
	sum := sha256.Sum256(raw)
	key := id + "\x00" + hex.EncodeToString(sum[:])
	schemaCache.Lock()
	c, ok := schemaCache.m[key]
	schemaCache.Unlock()
	if ok {
		return c.rs, c.err
	}
	c.rs, c.err = compileSchema(raw)
	schemaCache.Lock()
	if len(schemaCache.m) >= maxSchemaCache {
		clear(schemaCache.m)
	}
	schemaCache.m[key] = c
	schemaCache.Unlock()
	return c.rs, c.err
}

func compileSchema(raw json.RawMessage) (*jsonschema.Resolved, error) {
	if len(raw) > maxOutputSchemaBytes {
		return nil, fmt.Errorf("it is %d bytes, over the %d-byte limit for validated output schemas", len(raw), maxOutputSchemaBytes)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("it is not a JSON Schema: %v", err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return nil, err
	}
	// jsonschema-go accepts any $schema at Resolve but validates only
	// draft-07 and 2020-12; find out now, before the call, not after.
	if err := rs.Validate(map[string]any{}); err != nil && strings.HasPrefix(err.Error(), "cannot validate version") {
		return nil, err
	}
	return rs, nil
}

// outputCheck prepares output validation for a trusted tool that declares
// an outputSchema (SPEC §4): the schema is compiled before the call runs.
// It returns the check to apply to the upstream's result (nil when there
// is nothing to check), or, when the schema does not compile, the isError
// result to return instead of calling the upstream.
func (p *Proxy) outputCheck(e *catalog.Entry) (check func(*mcp.CallToolResult) *mcp.CallToolResult, stop *mcp.CallToolResult) {
	if !e.Trusted || len(e.OutputSchema) == 0 || string(e.OutputSchema) == "null" {
		return nil, nil
	}
	rs, err := compileOutputSchema(e.ID, e.OutputSchema)
	if err != nil {
		msg := fmt.Sprintf("the outputSchema of %s does not compile, so the call was not made (upstream %q is trusted, so its output is validated): %s", e.ID, e.Upstream, bounded(err.Error(), 500))
		p.log.Warn("output schema does not compile; call refused", "id", e.ID, "err", err)
		return nil, errorText(msg)
	}
	return func(res *mcp.CallToolResult) *mcp.CallToolResult {
		if res == nil || res.IsError {
			return res
		}
		if msg := validateOutput(e.ID, rs, res); msg != "" {
			p.log.Warn("output does not match its outputSchema", "id", e.ID, "err", msg)
			return errorText(msg)
		}
		return res
	}, nil
}

// validateOutput checks a result's structuredContent against rs and
// returns "" when it conforms, else the message for the caller.
func validateOutput(id string, rs *jsonschema.Resolved, res *mcp.CallToolResult) string {
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
	if err := rs.Validate(v); err != nil {
		return fmt.Sprintf("output of %s does not match its outputSchema: %s", id, bounded(describeValidation(err), 500))
	}
	return ""
}

func errorText(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

// validatingRE matches one "validating <schema location>: " step of a
// jsonschema-go validation error.
var validatingRE = regexp.MustCompile(`^validating (root|/.*?): `)

// describeValidation turns a jsonschema-go validation error, whose text is
// a chain of schema locations ("validating root: validating
// /properties/a: validating /properties/a/properties/paid: type: ..."),
// into "<field path>: <reason>", e.g. "/a/paid: type: yes has type
// "string", want "boolean"". The field path follows the instance:
// properties become their names, array items and additional properties
// "*" (the index is not known), prefixItems their index; schema-only steps
// ($defs after a $ref, allOf/anyOf/oneOf branches, if/then/else) add
// nothing. The root is "/". Multi-line reasons (anyOf) are joined with "; ".
func describeValidation(err error) string {
	rest := err.Error()
	var field []string
	prev := ""
	for {
		m := validatingRE.FindStringSubmatch(rest)
		if m == nil {
			break
		}
		rest = rest[len(m[0]):]
		loc := m[1]
		if loc == "root" {
			prev = ""
			continue
		}
		rel := loc
		if prev != "" && strings.HasPrefix(loc, prev+"/") {
			rel = loc[len(prev):]
		}
		field = append(field, schemaSteps(rel)...)
		prev = loc
	}
	reason := strings.Join(strings.Fields(strings.ReplaceAll(rest, "\n", " ; ")), " ")
	reason = strings.ReplaceAll(reason, ": ;", ";")
	return "/" + strings.Join(field, "/") + ": " + reason
}

// schemaSteps converts a relative schema JSON Pointer into field path
// elements (see describeValidation).
func schemaSteps(ptr string) []string {
	segs := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	unesc := strings.NewReplacer("~1", "/", "~0", "~")
	var out []string
	for i := 0; i < len(segs); i++ {
		switch segs[i] {
		case "properties":
			if i+1 < len(segs) {
				out = append(out, unesc.Replace(segs[i+1]))
				i++
			}
		case "prefixItems":
			if i+1 < len(segs) {
				out = append(out, segs[i+1])
				i++
			}
		case "items", "additionalItems", "additionalProperties", "unevaluatedProperties", "unevaluatedItems", "contains":
			out = append(out, "*")
		case "patternProperties", "$defs", "definitions", "dependentSchemas", "allOf", "anyOf", "oneOf":
			i++ // the name or index that follows is the schema's, not the instance's
		}
	}
	return out
}
