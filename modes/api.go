package modes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
)

// API is search, describe and call with the same semantics for the
// structured tools and the code bridge (SPEC §4).
type API struct {
	Limits Limits
	Bounds catalog.Bounds
}

// Description is describe's answer (SPEC §4 describe): the hit, with the tool's WHOLE description in place of the hit's
// short one, plus what a host needs to use the tool: the exact input and
// output schemas, title, annotations (readOnlyHint, destructiveHint,
// idempotentHint, openWorldHint), icons and _meta, each as the upstream
// sent it (absent fields are left out).
type Description struct {
	catalog.Hit
	// Description is the upstream's description text unchanged (line
	// breaks kept), at most MaxDescribeDescription runes; it shadows the
	// hit's short description.
	Description  string          `json:"description"`
	Title        string          `json:"title,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
	Icons        json.RawMessage `json:"icons,omitempty"`
	Meta         json.RawMessage `json:"_meta,omitempty"`
	// Execution is the tool's "execution" as received (MCP 2025-11-25
	// server/tools "Tool": taskSupport "forbidden", "optional" or
	// "required" says whether a call may or must run as a task).
	Execution json.RawMessage `json:"execution,omitempty"`
	// Extra holds the tool's other members that the MCP Tool type of this
	// build does not know (a later revision's or an extension's), as
	// received; absent when there are none.
	Extra map[string]json.RawMessage `json:"extra,omitempty"`
	// OriginalInputSchema is the inputSchema as the upstream sent it, when
	// the proxy normalised it at ingest (package ingest); absent otherwise.
	OriginalInputSchema json.RawMessage `json:"originalInputSchema,omitempty"`
}

// MaxDescribeDescription bounds the description describe returns, in runes
// (a guard against an untrusted upstream's runaway text, DESIGN "Trust";
// real descriptions are far shorter: the longest in examples/catalogs has
// 4,237 characters). A longer one is cut and ends with "…". Upstream tools
// reach describe already bounded at the ingest point (ingest.SizeBound: every
// text string at most as long, the whole tool at most
// security.max_tool_bytes); this guard covers entries made elsewhere.
const MaxDescribeDescription = 16384

// Envelope is call's answer (SPEC §4): the tool's hit and the upstream's
// CallToolResult, with result.details holding structuredContent, or the
// parsed JSON of a lone text block.
type Envelope struct {
	Tool   catalog.Hit    `json:"tool"`
	Result map[string]any `json:"result"`
}

// Search returns up to limit hits for query from the entries the session
// may see (direct-only tools are outside the catalog and never hits).
// limit 0 means Limits.Default; a limit above Limits.Max is clamped; a
// negative limit is an error (SPEC §4).
func (a API) Search(env Env, query string, limit int, via string) ([]catalog.Hit, error) {
	if limit < 0 {
		return nil, fmt.Errorf("limit must be at least 1, got %d", limit)
	}
	if limit == 0 {
		limit = a.Limits.Default
	}
	if limit > a.Limits.Max {
		limit = a.Limits.Max
	}
	if strings.TrimSpace(query) == "" {
		return nil, errors.New("query is empty: describe the task, e.g. \"create a GitHub issue\"")
	}
	snap := env.Snapshot()
	ix := snap.Index
	if si, ok := env.(SearchIndexer); ok {
		ix = si.SearchIndex(snap)
	}
	scored := ix.Search(query, limit, func(e *catalog.Entry) bool { return !e.DirectOnly && env.Allowed(e) })
	hits := make([]catalog.Hit, 0, len(scored))
	for _, s := range scored {
		// A view's index may be one catalog change behind the snapshot
		// (proxy viewIndexes): show the snapshot's entry; a tool gone
		// since is dropped.
		e := snap.ByID(s.Entry.ID)
		if e == nil {
			continue
		}
		h := a.hit(snap, e, s.Score)
		h.Match, h.Matched, h.Related = catalog.MatchLevel(s.Strength), strings.Join(s.Matched, ", "), strings.Join(s.Related, ", ")
		hits = append(hits, h)
	}
	env.Searched(query, len(hits), via)
	return hits, nil
}

// hit is the entry's hit, marked unavailable while its upstream is down.
func (a API) hit(snap *catalog.Snapshot, e *catalog.Entry, score float64) catalog.Hit {
	h := snap.Hit(e, score, a.Bounds)
	h.Unavailable = snap.Unavailable[e.Upstream]
	return h
}

// Resolve finds the entry ref names among the catalog entries the session
// may see: an id, an exposed name or a unique original name (via ViaCLI:
// among the direct-only tools too). Errors list the candidate ids of an
// ambiguous name, or up to three suggestions. A ref naming a denied tool is
// unknown, and recorded (DeniedRecorder).
func (a API) Resolve(env Env, ref, via string) (*catalog.Entry, error) {
	snap := env.Snapshot()
	keep := func(e *catalog.Entry) bool { return (via == ViaCLI || !e.DirectOnly) && env.Allowed(e) }
	e, cands := snap.Resolve(ref, keep)
	if e != nil {
		return e, nil
	}
	noteDenied(env, ref, via)
	if len(cands) > 1 {
		ids := make([]string, len(cands))
		for i, c := range cands {
			ids[i] = c.ID
		}
		return nil, fmt.Errorf("tool name %q is ambiguous: use one of the ids %s", clipRef(ref), strings.Join(ids, ", "))
	}
	if d, _ := snap.Resolve(ref, func(e *catalog.Entry) bool { return e.DirectOnly && env.Allowed(e) }); d != nil {
		// Direct-only tools stay outside the catalog (SPEC §2) and are
		// listed to the client: say so rather than "unknown" with a
		// neighbour from another server.
		return nil, fmt.Errorf("%q is listed directly (direct-only), not in the catalog: call it with tools/call by the name %q", clipRef(ref), d.Exposed)
	}
	if slices.Contains(Reserved, ref) {
		return nil, fmt.Errorf("%q is one of this server's own tools, not a catalog tool: call it with tools/call", ref)
	}
	msg := fmt.Sprintf("unknown tool %q", clipRef(ref))
	if st := absentRef(env, ref); st != "" { // removed.go
		return nil, errors.New(msg + ": " + st)
	}
	if sug := suggest(snap, ref, keep, func(e *catalog.Entry) string { return e.ID }); sug != "" {
		msg += "; " + sug
	} else {
		msg += "; use search to find tool ids"
	}
	return nil, errors.New(msg)
}

// suggest is the one "did you mean" of every unknown-tool answer
// (describe, tool_call, the bridge, a direct tools/call): "did you mean A,
// B, C?" with at most three tools closest to ref (catalog.Snapshot.Suggest),
// each shown by label (its id where it is called through the catalog, its
// exposed name where it is called directly), or "" when none is close.
// keep must hold only tools the session may see (policy): a denied tool is
// never suggested, so a denied name gets the answer an absent one would
// (SPEC §6). No suggestions for a reference longer than any tool id could
// be (maxSuggestRef): matching it costs time in proportion to its length
// and finds nothing.
func suggest(snap *catalog.Snapshot, ref string, keep func(*catalog.Entry) bool, label func(*catalog.Entry) string) string {
	if len(ref) > maxSuggestRef {
		return ""
	}
	sug := snap.Suggest(ref, 3, keep)
	if len(sug) == 0 {
		return ""
	}
	names := make([]string, len(sug))
	for i, s := range sug {
		names[i] = label(s)
	}
	return "did you mean " + strings.Join(names, ", ") + "?"
}

// maxSuggestRef is the longest reference Resolve looks for suggestions for,
// in bytes.
const maxSuggestRef = 512

// Describe returns the hit and exact schemas of the tool ref names.
func (a API) Describe(env Env, ref string, via string) (*Description, error) {
	e, err := a.Resolve(env, ref, via)
	if err != nil {
		env.Described(ref, false, via)
		return nil, err
	}
	env.Described(e.ID, true, via)
	d := &Description{Hit: a.hit(env.Snapshot(), e, 0), Description: fullDescription(e.Description), Title: e.Title,
		InputSchema: e.InputSchema, OutputSchema: e.OutputSchema, Annotations: e.Annotations, Icons: e.Icons, Meta: e.Meta,
		OriginalInputSchema: e.OriginalInputSchema}
	if len(e.Extra) > 0 {
		var m map[string]json.RawMessage
		if json.Unmarshal(e.Extra, &m) == nil {
			d.Execution = m["execution"]
			delete(m, "execution")
			if len(m) > 0 {
				d.Extra = m
			}
		}
	}
	if len(d.InputSchema) == 0 {
		d.InputSchema = json.RawMessage(`{"type":"object"}`)
	}
	return d, nil
}

// fullDescription is s unchanged, or cut to MaxDescribeDescription runes
// with a trailing "…".
func fullDescription(s string) string {
	if utf8.RuneCountInString(s) <= MaxDescribeDescription {
		return s
	}
	n := 0
	for i := range s {
		if n == MaxDescribeDescription-1 {
			return s[:i] + "…"
		}
		n++
	}
	return s
}

// EnvelopeCaller is implemented by Envs that can build tool_call's answer
// from an upstream's result as it came, without decoding it (the proxy:
// its front writes the envelope from the upstream's JSON bytes).
type EnvelopeCaller interface {
	// CallEnveloped is Env.Call for tool_call's one call of e (via
	// ViaTool). With done, res is tool_call's whole answer: the envelope
	// {tool: hit, result} as EnvelopeResult shapes it. Otherwise res is
	// the upstream's result, which the caller envelopes (MakeEnvelope).
	CallEnveloped(ctx context.Context, e *catalog.Entry, args json.RawMessage, hit catalog.Hit) (res *mcp.CallToolResult, done bool, err error)
}

// Call runs the tool ref names through env.Call and builds the envelope.
// A resolution error or an upstream JSON-RPC error comes back as err; the
// upstream's isError results come back as envelopes.
func (a API) Call(ctx context.Context, env Env, ref string, args json.RawMessage, via string) (*Envelope, *mcp.CallToolResult, error) {
	e, err := a.Resolve(env, ref, via)
	if err != nil {
		return nil, nil, err
	}
	res, err := env.Call(ctx, e, args, via)
	if err != nil {
		return nil, nil, err
	}
	envl, err := MakeEnvelope(env.Snapshot().Hit(e, 0, a.Bounds), res, via)
	return envl, res, err
}

// callEnveloped is tool_call's call of ref: Call, with the answer built
// by env when it is an EnvelopeCaller.
func (a API) callEnveloped(ctx context.Context, env Env, ref string, args json.RawMessage) (*mcp.CallToolResult, error) {
	ec, ok := env.(EnvelopeCaller)
	if !ok {
		envl, res, err := a.Call(ctx, env, ref, args, ViaTool)
		if err != nil {
			return nil, err
		}
		return EnvelopeResult(envl, res), nil
	}
	e, err := a.Resolve(env, ref, ViaTool)
	if err != nil {
		return nil, err
	}
	hit := env.Snapshot().Hit(e, 0, a.Bounds)
	res, done, err := ec.CallEnveloped(ctx, e, args, hit)
	if err != nil || done {
		return res, err
	}
	envl, err := MakeEnvelope(hit, res, ViaTool)
	if err != nil {
		return nil, err
	}
	return EnvelopeResult(envl, res), nil
}

// invalidResult is the error for an upstream's tools/call result that
// does not decode as an MCP CallToolResult (schema.ts CallToolResult):
// it names the upstream and the member in JSON terms ("content" is a JSON
// string, MCP wants an array), not the Go types the decoder saw. Trust:
// the upstream is not trusted; only the member path and JSON kinds reach
// the model, and the path is clipped.
// maxJSONDepth is encoding/json's nesting limit (maxNestingDepth in
// encoding/json/scanner.go), which a tool result must stay within.
const maxJSONDepth = 10000

func invalidResult(up string, err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			field = "the result"
		} else {
			field = strconv.Quote(clipRef(field))
		}
		got := "a " + te.Value // "string", "number", … (encoding/json), or the value's own text
		switch te.Value {
		case "string", "number", "bool", "object", "array":
			if te.Value == "object" || te.Value == "array" {
				got = "an " + te.Value
			}
		default:
			// The go-sdk's decoder puts the rest of the input here,
			// quoted: its first character is the kind.
			v := te.Value
			if u, err := strconv.Unquote(v); err == nil {
				v = u
			}
			got = jsonKind(json.RawMessage(v)) // args.go
		}
		return fmt.Errorf("upstream %q sent an invalid tool result: %s is %s where MCP wants %s", clipRef(up), field, got, goKindAsJSON(te.Type))
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		if strings.Contains(se.Error(), "exceeded max depth") {
			// encoding/json's own limit (maxNestingDepth): the result is
			// JSON, nested too deep to decode.
			return fmt.Errorf("upstream %q sent an invalid tool result: nested deeper than %d levels (the JSON decoder's limit) at byte %d", clipRef(up), maxJSONDepth, se.Offset)
		}
		return fmt.Errorf("upstream %q sent an invalid tool result: not JSON at byte %d", clipRef(up), se.Offset)
	}
	return fmt.Errorf("upstream %q sent an invalid tool result: %v", clipRef(up), err)
}

// AsInvalidResult reports whether err, the error of a tools/call to
// upstream up, says that the upstream's result did not decode as an MCP
// CallToolResult (an encoding/json type or syntax error anywhere in its
// chain: the go-sdk's decoder and the proxy's own upstream leg both wrap
// it), and if so returns it worded by invalidResult: the member and the
// JSON kinds, not the decoder's Go types (`cannot
// unmarshal "\"notanobject\"" into Go value of type struct { mcp.res; …
// mcp.wireContent … }`). The returned error unwraps to err.
func AsInvalidResult(up string, err error) (error, bool) {
	if err == nil {
		return nil, false // every call: errors.As's targets escaped (two allocations)
	}
	if _, te := errors.AsType[*json.UnmarshalTypeError](err); !te {
		if _, se := errors.AsType[*json.SyntaxError](err); !se {
			return nil, false
		}
	}
	return wrappedError{msg: invalidResult(up, err).Error(), err: err}, true
}

// wrappedError is an error with its own text that unwraps to err.
type wrappedError struct {
	msg string
	err error
}

func (w wrappedError) Error() string { return w.msg }
func (w wrappedError) Unwrap() error { return w.err }

// goKindAsJSON names the JSON kind that decodes into the Go type t ("an array", "an
// object", …).
func goKindAsJSON(t reflect.Type) string {
	if t == nil {
		return "another kind of value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "another kind of value"
}

// MakeEnvelope builds {tool, result} from an upstream result. Non-text
// content blocks (images, audio, resources) are replaced in the envelope by
// a stub naming their type and where the block itself is: via ViaBridge,
// appended to the tool_search_code result after its text; otherwise as a
// numbered block of the tool_call result (EnvelopeResult).
func MakeEnvelope(hit catalog.Hit, res *mcp.CallToolResult, via string) (*Envelope, error) {
	raw, err := json.Marshal(res)
	if err != nil {
		return nil, fmt.Errorf("encoding the upstream result: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("decoding the upstream result: %w", err)
	}
	delete(m, "resultType") // protocol bookkeeping of 2026-07-28, not the tool's result
	if content, ok := m["content"].([]any); ok {
		k := 0 // k-th non-text block: block k+2 of a tool_call result (EnvelopeResult)
		for i, c := range content {
			if b, ok := c.(map[string]any); ok && b["type"] != "text" {
				k++
				where := fmt.Sprintf("returned as content block %d of this tool_call result", k+1)
				if via == ViaBridge {
					where = fmt.Sprintf("appended to the tool_search_code result after its text (at most %d blocks per run)", defaultMaxBlocks)
				}
				stub := map[string]any{"type": b["type"], "omitted": where}
				if mt, ok := b["mimeType"]; ok {
					stub["mimeType"] = mt
				}
				content[i] = stub
			}
		}
	}
	switch {
	case res.StructuredContent != nil:
		m["details"] = m["structuredContent"]
	case len(res.Content) == 1:
		if t, ok := res.Content[0].(*mcp.TextContent); ok {
			var v any
			if json.Unmarshal([]byte(t.Text), &v) == nil {
				m["details"] = v
			}
		}
	}
	return &Envelope{Tool: hit, Result: m}, nil
}

// EnvelopeResult is the tools/call result carrying an envelope: the
// envelope as JSON text and as structuredContent, followed by the
// upstream's non-text blocks, which stay blocks.
func EnvelopeResult(env *Envelope, upstream *mcp.CallToolResult) *mcp.CallToolResult {
	b, _ := json.Marshal(env)
	r := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: json.RawMessage(b)}
	for _, c := range upstream.Content {
		if _, ok := c.(*mcp.TextContent); !ok {
			r.Content = append(r.Content, c)
		}
	}
	r.IsError = upstream.IsError
	return r
}

// clipRef bounds a tool reference echoed in an error (it comes from the
// model or a script and may be huge): at most 200 bytes, UTF-8 safe.
func clipRef(ref string) string {
	if len(ref) <= 200 {
		return ref
	}
	n := 200
	for n > 0 && ref[n]&0xC0 == 0x80 {
		n--
	}
	return ref[:n] + "…"
}
