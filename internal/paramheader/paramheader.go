// Package paramheader implements the Mcp-Param-* HTTP headers of MCP
// 2026-07-28 (Streamable HTTP transport, SEP-2243): a tool's inputSchema
// may mark a property of type string, integer or boolean with
// "x-mcp-header": "Name"; a client calling the tool over Streamable HTTP
// at 2026-07-28 MUST send the argument's value as the header
// Mcp-Param-Name, and a server MUST reject a request whose header is
// missing, present for an absent or null argument, not valid Base64 in its
// =?base64?…?= form, or different from the body, with HTTP 400 and
// JSON-RPC error -32020 (HeaderMismatch).
//
// The rules follow the go-sdk v1.8.0 (mcp/streamable_headers.go), whose
// own client and server apply them only to tools of its own registry and
// its own client transport; the proxy answers tools/call itself and uses
// its own upstream transport, so it applies them here.
package paramheader

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
)

// Prefix is the name prefix of the headers.
const Prefix = "Mcp-Param-"

// CodeHeaderMismatch is the JSON-RPC error code of a header that does not
// match the body (MCP 2026-07-28, SEP-2243).
const CodeHeaderMismatch = -32020

const (
	b64Prefix = "=?base64?"
	b64Suffix = "?="
	maxSafe   = 1<<53 - 1
)

// Binding is one property of an inputSchema marked x-mcp-header.
type Binding struct {
	// Path names the property from the arguments object down (nested
	// object properties have several parts).
	Path []string
	// Header is the full header name, "Mcp-Param-" + the annotation.
	Header string
}

type schemaProp struct {
	Type       json.RawMessage       `json:"type"`
	XMCPHeader json.RawMessage       `json:"x-mcp-header"`
	Properties map[string]schemaProp `json:"properties"`
}

// Bindings returns the x-mcp-header bindings of an inputSchema, nil when
// it has none (the common case costs one bytes.Contains). Annotations that
// break the spec's rules (not a non-empty token, not on a string, integer
// or boolean property) are left out; the go-sdk client already drops a
// tool that has one from tools/list.
func Bindings(schema json.RawMessage) []Binding {
	if !bytes.Contains(schema, []byte(`"x-mcp-header"`)) {
		return nil
	}
	var s schemaProp
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	return collect(s.Properties, nil, nil)
}

func collect(props map[string]schemaProp, prefix []string, out []Binding) []Binding {
	for name, p := range props {
		path := append(append([]string(nil), prefix...), name)
		var h string
		if len(p.XMCPHeader) > 0 && json.Unmarshal(p.XMCPHeader, &h) == nil && validName(h) && primitive(p.Type) {
			out = append(out, Binding{Path: path, Header: Prefix + h})
		}
		if len(p.Properties) > 0 {
			out = collect(p.Properties, path, out)
		}
	}
	return out
}

func primitive(t json.RawMessage) bool {
	var s string
	if json.Unmarshal(t, &s) != nil {
		return false
	}
	return s == "string" || s == "integer" || s == "boolean"
}

// validName: an HTTP token (RFC 9110 tchar), non-empty.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0 {
			continue
		}
		return false
	}
	return true
}

// lookup returns the raw value at path in the arguments object.
func lookup(args map[string]json.RawMessage, path []string) (json.RawMessage, bool) {
	cur, ok := args[path[0]]
	for _, part := range path[1:] {
		if !ok {
			return nil, false
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(cur, &obj) != nil {
			return nil, false
		}
		cur, ok = obj[part]
	}
	return cur, ok
}

// value is the header form of a primitive JSON value before Base64: a
// string as is, a safe integer in decimal, a boolean as true/false; ok is
// false for anything else (objects, arrays, null, fractional or unsafe
// numbers).
func value(raw json.RawMessage) (s string, isInt bool, ok bool) {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return "", false, false
	}
	switch v := v.(type) {
	case string:
		return v, false, true
	case bool:
		return strconv.FormatBool(v), false, true
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) || v != math.Trunc(v) || math.Abs(v) > maxSafe {
			return "", false, false
		}
		return strconv.FormatInt(int64(v), 10), true, true
	}
	return "", false, false
}

// encode wraps s in =?base64?…?= when it cannot travel as a plain header
// value: non-ASCII or control characters, leading or trailing space or
// tab, or a value that itself looks wrapped.
func encode(s string) string {
	need := s != "" && (s[0] == ' ' || s[0] == '\t' || s[len(s)-1] == ' ' || s[len(s)-1] == '\t') ||
		strings.HasPrefix(s, b64Prefix) && strings.HasSuffix(s, b64Suffix)
	for i := 0; i < len(s) && !need; i++ {
		need = s[i] < 0x20 || s[i] > 0x7e
	}
	if need {
		return b64Prefix + base64.StdEncoding.EncodeToString([]byte(s)) + b64Suffix
	}
	return s
}

// decode undoes encode; ok is false for a wrapped value that is not valid
// standard Base64 (with padding).
func decode(h string) (string, bool) {
	if inner, ok := strings.CutPrefix(h, b64Prefix); ok {
		if inner, ok = strings.CutSuffix(inner, b64Suffix); ok {
			b, err := base64.StdEncoding.DecodeString(inner)
			return string(b), err == nil
		}
	}
	return h, true
}

func arguments(params json.RawMessage) map[string]json.RawMessage {
	var p struct {
		Arguments map[string]json.RawMessage `json:"arguments"`
	}
	_ = json.Unmarshal(params, &p)
	return p.Arguments
}

// Set sets on h the Mcp-Param-* headers of a tools/call whose params (the
// request's params object, with "arguments") call a tool with bindings
// bs. Absent, null and non-primitive arguments get no header.
func Set(h http.Header, bs []Binding, params json.RawMessage) {
	if len(bs) == 0 {
		return
	}
	args := arguments(params)
	for _, b := range bs {
		raw, ok := lookup(args, b.Path)
		if !ok || string(raw) == "null" {
			continue
		}
		if s, _, ok := value(raw); ok {
			h.Set(b.Header, encode(s))
		}
	}
}

// Check validates the Mcp-Param-* headers h of a tools/call (params as in
// Set) against the body. The error says which header and why; the caller
// answers it with HTTP 400 and CodeHeaderMismatch.
func Check(h http.Header, bs []Binding, params json.RawMessage) error {
	if len(bs) == 0 {
		return nil
	}
	args := arguments(params)
	for _, b := range bs {
		name := strings.Join(b.Path, ".")
		hv := strings.TrimSpace(h.Get(b.Header))
		_, present := h[http.CanonicalHeaderKey(b.Header)]
		raw, ok := lookup(args, b.Path)
		if !ok || string(raw) == "null" {
			if present {
				return fmt.Errorf("header mismatch: %s header sent for absent or null argument %q", b.Header, name)
			}
			continue
		}
		if !present {
			return fmt.Errorf("header mismatch: missing %s header for argument %q", b.Header, name)
		}
		got, ok := decode(hv)
		if !ok {
			return fmt.Errorf("header mismatch: %s header is not valid Base64 inside =?base64?…?=", b.Header)
		}
		want, isInt, ok := value(raw)
		if !ok {
			return fmt.Errorf("header mismatch: %s header sent but argument %q is not a string, integer or boolean", b.Header, name)
		}
		if isInt {
			if n, err := strconv.ParseFloat(got, 64); err == nil && n == math.Trunc(n) && strconv.FormatInt(int64(n), 10) == want {
				continue
			}
		} else if got == want {
			continue
		}
		return fmt.Errorf("header mismatch: %s header value %q does not match argument %q", b.Header, hv, name)
	}
	return nil
}
