package modes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Argument shapes of the modes' own tools. A model's
// first call often has the right intent and the wrong shape: `args` as a
// JSON string or an array, the tool's arguments flat next to `id`,
// `arguments` instead of `args`, no `id` at all. These mistakes are caught
// here, before anything reaches an upstream, with an error that names the
// fix; the one unambiguous mistake, a JSON string holding an object, is
// repaired (the string is parsed).
//
// The text checked comes from the model (untrusted); errors echo at most
// a few key names, each bounded by clipRef.

// aliases maps keys models write by mistake to the key they meant, per tool.
var aliases = map[string]map[string]string{
	ToolCall: {
		"arguments": "args", "argument": "args", "params": "args", "parameters": "args", "input": "args", "arg": "args",
		"name": "id", "tool": "id", "tool_id": "id", "toolId": "id", "tool_name": "id", "toolName": "id",
	},
	ToolDescribe:   {"name": "id", "tool": "id", "tool_id": "id", "toolId": "id", "tool_name": "id", "toolName": "id"},
	ToolSearchCode: {"script": "code", "js": "code", "javascript": "code", "body": "code", "source": "code", "program": "code"},
	ToolSearch:     {"q": "query", "text": "query", "search": "query", "k": "limit", "max": "limit", "top_k": "limit", "n": "limit"},
}

// ownArgs decodes the arguments of one of the modes' own tools (tool) into
// its known keys. Missing or null arguments are {}. Errors:
//   - not an object: "arguments must be an object, e.g. {…}";
//   - a key the tool does not take: "unknown key `arguments`: did you mean
//     `args`?" for a known slip, and for tool_call without `args`, a hint
//     to put the tool's own arguments inside `args`.
func ownArgs(tool string, raw json.RawMessage, known ...string) (map[string]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return map[string]json.RawMessage{}, nil
	}
	var m map[string]json.RawMessage
	if raw[0] != '{' || json.Unmarshal(raw, &m) != nil {
		return nil, fmt.Errorf("arguments must be an object, e.g. %s", exampleFor(tool, nil))
	}
	var unknown []string
	for k := range m {
		if !slices.Contains(known, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return m, nil
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		if want, ok := aliases[tool][k]; ok {
			if _, both := m[want]; !both {
				return nil, fmt.Errorf("unknown key `%s`: did you mean `%s`? e.g. %s", clipRef(k), want, exampleFor(tool, m))
			}
		}
	}
	names := make([]string, 0, len(unknown))
	for i, k := range unknown {
		if i == 5 {
			names = append(names, fmt.Sprintf("and %d more", len(unknown)-5))
			break
		}
		names = append(names, "`"+clipRef(k)+"`")
	}
	keys := "`" + strings.Join(known, "` and `") + "`"
	if tool == ToolCall {
		if _, ok := m["args"]; !ok {
			return nil, fmt.Errorf("%s %s not a key of tool_call, which takes only %s: put the tool's own arguments inside `args`, e.g. %s", strings.Join(names, ", "), isAre(len(unknown)), keys, exampleFor(tool, m))
		}
	}
	return nil, fmt.Errorf("%s %s not a key of %s, which takes only %s", strings.Join(names, ", "), isAre(len(unknown)), tool, keys)
}

// stringArg reads key of m as a string; required says whether it must be there.
func stringArg(m map[string]json.RawMessage, key string, required bool, tool string) (string, error) {
	v, ok := m[key]
	if !ok || string(v) == "null" {
		if required {
			return "", fmt.Errorf("`%s` is required, e.g. %s", key, exampleFor(tool, m))
		}
		return "", nil
	}
	if len(v) >= 2 && v[0] == '"' && bytes.IndexByte(v, '\\') < 0 && utf8.Valid(v) && json.Valid(v) {
		return string(v[1 : len(v)-1]), nil // a string without escapes: its bytes
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", fmt.Errorf("`%s` must be a string, got %s", key, jsonKind(v))
	}
	return s, nil
}

// ToolArguments checks the shape of a catalog tool's arguments as a model
// passed them (tool_call's `args`, the second argument of
// openclaw.tools.call) and returns them as a JSON object, or nil when they
// are missing or null (the call path makes that {}). A JSON string holding
// an object is parsed (repaired); any other string, an array, a number or a
// boolean is an error naming the fix. what names the argument in errors,
// e.g. "`args`".
func ToolArguments(raw json.RawMessage, what string) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	switch raw[0] {
	case '{':
		return raw, nil
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err == nil {
			in := bytes.TrimSpace([]byte(s))
			var obj map[string]json.RawMessage
			if len(in) > 0 && in[0] == '{' && json.Unmarshal(in, &obj) == nil {
				return in, nil // a JSON string holding an object: parsed
			}
		}
	}
	kind := jsonKind(raw)
	if raw[0] == '"' {
		kind += " (not holding a JSON object)"
	}
	return nil, fmt.Errorf("%s must be an object with the tool's arguments by name, e.g. {\"path\": \"/tmp/a.txt\"}; got %s", what, kind)
}

// intArg reads key of m as an integer; ok is false when it is missing or
// null. A string holding a decimal integer ("5") is taken as that integer:
// the same repair rule as for `args` (a string holding exactly the JSON
// value wanted is parsed), and as unambiguous. Anything else is an error
// naming what was sent, e.g. "`limit` must be an integer, got a string".
// Only for the modes' own tools: a catalog tool's arguments are never
// converted (its inputSchema is the upstream's contract).
func intArg(m map[string]json.RawMessage, key string) (n int, ok bool, err error) {
	v, has := m[key]
	if !has || string(v) == "null" {
		return 0, false, nil
	}
	if json.Unmarshal(v, &n) == nil {
		return n, true, nil
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		if i, perr := strconv.Atoi(strings.TrimSpace(s)); perr == nil {
			return i, true, nil
		}
	}
	return 0, false, fmt.Errorf("`%s` must be an integer, got %s", key, jsonKind(v))
}

// jsonKind names the JSON type of v for an error message.
func jsonKind(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// placeholderID stands for a tool id in an example when the model sent none.
const placeholderID = "<id of a tool_search hit>"

// exampleFor is the corrected call shown with an argument-shape error of
// tool: for tool_call and tool_describe it is built from what the model
// sent (m, nil when not an object), so it can be copied: the id it gave (under `id` or a slip such as `name`),
// and for tool_call the arguments it gave (under `args`, a slip such as
// `arguments`, or flat next to `id`). Missing parts are placeholders. The
// echoed values come from the model (untrusted) and are bounded: an id by
// clipRef, arguments over maxExampleArgs bytes shown by key only.
func exampleFor(tool string, m map[string]json.RawMessage) string {
	switch tool {
	case ToolCall:
		return fmt.Sprintf(`{"id": %s, "args": %s}`, quoteJSON(exampleID(tool, m)), exampleArgs(m))
	case ToolDescribe:
		return fmt.Sprintf(`{"id": %s}`, quoteJSON(exampleID(tool, m)))
	}
	return example(tool)
}

// maxExampleArgs bounds the arguments echoed in an example, in bytes.
const maxExampleArgs = 240

// exampleID is the tool id the model sent in m, or placeholderID.
func exampleID(tool string, m map[string]json.RawMessage) string {
	keys := []string{"id"}
	for k, want := range aliases[tool] {
		if want == "id" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys[1:])
	for _, k := range keys {
		var s string
		if json.Unmarshal(m[k], &s) == nil && strings.TrimSpace(s) != "" {
			return clipRef(s)
		}
	}
	return placeholderID
}

// exampleArgs is the tool's arguments the model sent in m (see
// exampleFor), as a JSON object.
func exampleArgs(m map[string]json.RawMessage) string {
	var obj map[string]json.RawMessage
	cands := []string{"args"}
	for k, want := range aliases[ToolCall] {
		if want == "args" {
			cands = append(cands, k)
		}
	}
	sort.Strings(cands[1:])
	for _, k := range cands {
		if a, err := ToolArguments(m[k], ""); err == nil && a != nil && json.Unmarshal(a, &obj) == nil {
			break
		}
	}
	if obj == nil { // flat: the keys tool_call does not take and no slip explains
		for k, v := range m {
			if _, slip := aliases[ToolCall][k]; !slip && k != "id" && k != "args" {
				if obj == nil {
					obj = map[string]json.RawMessage{}
				}
				obj[k] = v
			}
		}
	}
	if len(obj) == 0 {
		return `{"<argument>": "<value>"}`
	}
	b, err := marshalPlain(obj)
	if err != nil || len(b) > maxExampleArgs {
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var parts []string
		for i, k := range keys {
			if i == 8 {
				break
			}
			parts = append(parts, quoteJSON(clipRef(k))+": …")
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return string(b)
}

func quoteJSON(s string) string {
	b, _ := marshalPlain(s)
	return string(b)
}

// marshalPlain is json.Marshal without HTML escaping (`<` stays `<`), for
// text a model reads.
func marshalPlain(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(buf.Bytes()), nil
}

// example is the example call of tool_search or tool_search_code.
func example(tool string) string {
	switch tool {
	case ToolSearch:
		return `{"query": "create a GitHub issue", "limit": 5}`
	case ToolSearchCode:
		return `{"code": "return await openclaw.tools.search(\"create a GitHub issue\");"}`
	}
	return "{}"
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}
