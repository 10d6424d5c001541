package proxy

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// validateConfig has the same upstream twice: trusted ("up", output
// validated) and untrusted ("raw", output passed through).
const validateConfig = `
[tool_search]
enabled = false
[upstreams.up]
url = %[1]s
trusted = true
[upstreams.raw]
url = %[1]s
`

func TestOutputValidationTrusted(t *testing.T) {
	p, up := testProxy(t, validateConfig)
	cs := connect(t, p, "unit-validate", nil)
	cases := []struct {
		name, tool string
		args       any
		ok         bool
		want       string // substring of the error text
		reached    bool   // the upstream got the call
	}{
		{"conforming", "up__paid", map[string]any{"paid": true, "lines": []any{map[string]any{"qty": 2}}}, true, "", true},
		{"wrong type names the field", "up__paid", map[string]any{"paid": "yes"}, false,
			`output of mcp:up:paid does not match its outputSchema: /paid: type: yes has type "string", want "boolean"`, true},
		{"nested field in an array", "up__paid", map[string]any{"paid": false, "lines": []any{map[string]any{"qty": 1}, map[string]any{"qty": "two"}}}, false,
			`/lines/*/qty: type: two has type "string", want "integer"`, true},
		{"missing required", "up__paid", map[string]any{"lines": []any{}}, false, `/: required: missing properties: ["paid"]`, true},
		{"no structuredContent", "up__nostruct", map[string]any{}, false, "output of mcp:up:nostruct has no structuredContent, but the tool declares an outputSchema", true},
		{"schema does not compile: upstream never called", "up__broken", map[string]any{"x": 1}, false,
			`the outputSchema of mcp:up:broken does not compile, so the call was not made`, false},
		{"unsupported draft: upstream never called", "up__draft04", map[string]any{}, false, "cannot validate version http://json-schema.org/draft-04/schema#", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tool := strings.TrimPrefix(c.tool, "up__")
			before := up.count(tool)
			r := callTool(t, cs, c.tool, c.args)
			if got := up.count(tool) - before; (got == 1) != c.reached {
				t.Errorf("upstream calls of %s: %d, want reached=%v", tool, got, c.reached)
			}
			if c.ok {
				if r.IsError || r.StructuredContent == nil {
					t.Fatalf("want the upstream's result, got isError=%v: %s", r.IsError, resultText(r))
				}
				return
			}
			if !r.IsError || !strings.Contains(resultText(r), c.want) {
				t.Fatalf("want an isError result containing\n  %s\ngot isError=%v:\n  %s", c.want, r.IsError, resultText(r))
			}
			if r.StructuredContent != nil {
				t.Errorf("the failing output must not reach the client: %v", r.StructuredContent)
			}
		})
	}
	t.Run("isError results pass through", func(t *testing.T) {
		r := callTool(t, cs, "up__failing", map[string]any{})
		if !r.IsError || resultText(r) != "upstream failure" {
			t.Fatalf("got isError=%v %q, want the upstream's own isError result", r.IsError, resultText(r))
		}
	})
}

func TestOutputValidationUntrustedPassesThrough(t *testing.T) {
	p, up := testProxy(t, validateConfig)
	cs := connect(t, p, "unit-untrusted", nil)
	for _, c := range []struct {
		tool string
		args any
	}{
		{"raw__paid", map[string]any{"paid": "yes"}},
		{"raw__nostruct", map[string]any{}},
		{"raw__broken", map[string]any{"x": 1}},
	} {
		before := up.count(strings.TrimPrefix(c.tool, "raw__"))
		r := callTool(t, cs, c.tool, c.args)
		if r.IsError {
			t.Errorf("%s: untrusted output must not be enforced, got isError: %s", c.tool, resultText(r))
		}
		if up.count(strings.TrimPrefix(c.tool, "raw__")) != before+1 {
			t.Errorf("%s: the upstream was not called", c.tool)
		}
	}
	// The untrusted tool keeps its declared outputSchema in tools/list.
	lt, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range lt.Tools {
		if tool.Name == "raw__broken" {
			b, _ := json.Marshal(tool.OutputSchema)
			var got, want any
			_ = json.Unmarshal(b, &got)
			_ = json.Unmarshal([]byte(brokenSchema), &want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("outputSchema = %s, want %s", b, brokenSchema)
			}
		}
	}
}

func TestCompileOutputSchemaLimitsAndCache(t *testing.T) {
	big := fmt.Sprintf(`{"type":"object","description":%q}`, strings.Repeat("d", maxOutputSchemaBytes))
	if _, err := compileOutputSchema("mcp:t:big", json.RawMessage(big)); err == nil || !strings.Contains(err.Error(), "over the 524288-byte limit") {
		t.Errorf("oversized schema: err = %v", err)
	}
	if _, err := compileOutputSchema("mcp:t:notjson", json.RawMessage(`{"type":3}`)); err == nil {
		t.Error("a schema whose type is a number compiled")
	}
	raw := json.RawMessage(paidSchema)
	a, err := compileOutputSchema("mcp:t:paid", raw)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := compileOutputSchema("mcp:t:paid", raw)
	if a != b {
		t.Error("the same id and schema were compiled twice")
	}
	c, _ := compileOutputSchema("mcp:t:paid", json.RawMessage(`{"type":"object"}`))
	if c == a {
		t.Error("a changed schema reused the old compilation")
	}
}

func TestDescribeValidation(t *testing.T) {
	cases := []struct{ schema, value, want string }{
		{`{"type":"object","properties":{"a b/c":{"type":"string"}}}`, `{"a b/c":1}`, `/a b/c: type: 1 has type "integer", want "string"`},
		{`{"type":"object","properties":{"it":{"type":"array","items":{"$ref":"#/$defs/I"}}},"$defs":{"I":{"type":"object","properties":{"id":{"type":"integer"}}}}}`, `{"it":[{"id":"x"}]}`, `/it/*/id: type: x has type "string", want "integer"`},
		{`{"type":"object","additionalProperties":{"type":"string"}}`, `{"k":1}`, `/*: type: 1 has type "integer", want "string"`},
		{`{"type":"object","properties":{"x":{"anyOf":[{"type":"string"},{"type":"integer"}]}}}`, `{"x":true}`, `/x: anyOf: did not validate against any of`},
		{`{"type":"array","prefixItems":[{"type":"string"}]}`, `[1]`, `/0: type: 1 has type "integer", want "string"`},
	}
	for _, c := range cases {
		var s jsonschema.Schema
		if err := json.Unmarshal([]byte(c.schema), &s); err != nil {
			t.Fatal(err)
		}
		rs, err := s.Resolve(nil)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		_ = json.Unmarshal([]byte(c.value), &v)
		err = rs.Validate(v)
		if err == nil {
			t.Fatalf("%s validated against %s", c.value, c.schema)
		}
		if got := describeValidation(err); !strings.HasPrefix(got, c.want) {
			t.Errorf("describeValidation(%s vs %s) =\n  %s\nwant prefix\n  %s", c.value, c.schema, got, c.want)
		}
	}
	if got := describeValidation(errors.New("plain")); got != "/: plain" {
		t.Errorf("plain error: %q", got)
	}
	// A bare result check without a session: nil structuredContent.
	rs, _ := compileOutputSchema("mcp:t:paid", json.RawMessage(paidSchema))
	if msg := validateOutput("mcp:t:paid", rs, &mcp.CallToolResult{StructuredContent: map[string]any{"paid": true}}); msg != "" {
		t.Errorf("conforming output rejected: %s", msg)
	}
}
