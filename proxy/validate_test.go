package proxy

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/schemacheck"
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
			`output of mcp:up:paid does not match its outputSchema: /paid: expected a boolean, got "yes"; schema: {"type":"boolean"}`, true},
		{"nested field in an array", "up__paid", map[string]any{"paid": false, "lines": []any{map[string]any{"qty": 1}, map[string]any{"qty": "two"}}}, false,
			`/lines/1/qty: expected an integer, got "two"; schema: {"type":"integer"}`, true},
		{"missing required", "up__paid", map[string]any{"lines": []any{}}, false, `/paid: missing required property "paid"`, true},
		{"no structuredContent", "up__nostruct", map[string]any{}, false, "output of mcp:up:nostruct has no structuredContent, but the tool declares an outputSchema", true},
		// A schema that does not compile is not enforced
		// (warning logged), and draft-04 output schemas are validated.
		{"schema does not compile: called, not validated", "up__broken", map[string]any{"x": 1}, true, "", true},
		{"draft-04 output schema: validated", "up__draft04", map[string]any{"a": 1}, true, "", true},
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

// A bare result check without a session: conforming output passes.
func TestValidateOutputDirect(t *testing.T) {
	sc, err := schemacheck.Compile(json.RawMessage(paidSchema))
	if err != nil {
		t.Fatal(err)
	}
	if msg := validateOutput("mcp:t:paid", sc, &mcp.CallToolResult{StructuredContent: map[string]any{"paid": true}}); msg != "" {
		t.Errorf("conforming output rejected: %s", msg)
	}
	if msg := validateOutput("mcp:t:paid", sc, &mcp.CallToolResult{}); !strings.Contains(msg, "no structuredContent") {
		t.Errorf("missing structuredContent: %q", msg)
	}
}
