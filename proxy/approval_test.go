package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// testUpstream is a real go-sdk MCP server served over Streamable HTTP in
// the test process. It counts the calls each tool received, so tests can
// prove a blocked call never reached it.
type testUpstream struct {
	URL   string
	mu    sync.Mutex
	calls map[string]int
	args  map[string][]json.RawMessage
}

func (u *testUpstream) count(tool string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.calls[tool]
}

// Output schemas of the test upstream's tools.
const (
	paidSchema    = `{"type":"object","properties":{"paid":{"type":"boolean"},"lines":{"type":"array","items":{"type":"object","properties":{"qty":{"type":"integer"}}}}},"required":["paid"]}`
	brokenSchema  = `{"type":"object","properties":{"x":{"$ref":"#/$defs/missing"}}}`
	draft04Schema = `{"$schema":"http://json-schema.org/draft-04/schema#","type":"object"}`
	writeSchema   = `{"type":"object","properties":{"path":{"type":"string","description":"file to write"},"content":{"type":"string"},"mode":{"enum":["overwrite","append"]}},"required":["path","content"],"additionalProperties":false}`
)

// inputSchemas are the test tools' inputSchemas other than {"type":"object"}.
var inputSchemas = map[string]string{
	"write":     writeSchema,
	"old_write": `{"$schema":"http://json-schema.org/draft-04/schema#","id":"urn:old","type":"object","properties":{"path":{"type":"string"},"size":{"type":"number","minimum":0,"exclusiveMinimum":true}},"required":["path"]}`,
	"draft03":   `{"$schema":"http://json-schema.org/draft-03/schema#","type":"object","properties":{"path":{"type":"string","required":true}}}`,
}

// startTestUpstream serves these tools (each records its call):
//
//	echo          structuredContent = {"echo": ARGS}; no outputSchema
//	delete_thing  like echo; the tests require approval for it
//	paid          outputSchema paidSchema; structuredContent = ARGS
//	nostruct      outputSchema paidSchema; text only, no structuredContent
//	broken        outputSchema brokenSchema (does not compile)
//	draft04       outputSchema draft04Schema (not validatable)
//	failing       outputSchema paidSchema; an isError result without structuredContent
//	write         like echo; inputSchema writeSchema (path and content required)
//	old_write     like echo; the same inputSchema in draft-04
//	draft03       like echo; a draft-03 inputSchema (does not compile)
func startTestUpstream(t testing.TB) *testUpstream {
	t.Helper()
	u := &testUpstream{calls: map[string]int{}, args: map[string][]json.RawMessage{}}
	s := mcp.NewServer(&mcp.Implementation{Name: "test-upstream", Version: "1"}, nil)
	add := func(name, outSchema string, h func(args json.RawMessage) *mcp.CallToolResult) {
		in := `{"type":"object"}`
		if s, ok := inputSchemas[name]; ok {
			in = s
		}
		tool := &mcp.Tool{Name: name, Description: "test tool " + name, InputSchema: json.RawMessage(in)}
		if outSchema != "" {
			tool.OutputSchema = json.RawMessage(outSchema)
		}
		s.AddTool(tool, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			u.mu.Lock()
			u.calls[name]++
			u.args[name] = append(u.args[name], req.Params.Arguments)
			u.mu.Unlock()
			return h(req.Params.Arguments), nil
		})
	}
	echo := func(args json.RawMessage) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo " + string(args)}}, StructuredContent: map[string]any{"echo": json.RawMessage(args)}}
	}
	asIs := func(args json.RawMessage) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(args)}}, StructuredContent: json.RawMessage(args)}
	}
	add("echo", "", echo)
	add("delete_thing", "", echo)
	add("paid", paidSchema, asIs)
	add("nostruct", paidSchema, func(json.RawMessage) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "paid: true"}}}
	})
	add("broken", brokenSchema, asIs)
	add("draft04", draft04Schema, asIs)
	add("write", "", echo)
	add("old_write", "", echo)
	add("draft03", "", echo)
	add("failing", paidSchema, func(json.RawMessage) *mcp.CallToolResult {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "upstream failure"}}}
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(hs.Close)
	u.URL = hs.URL
	return u
}

// testProxy starts a Proxy whose config is base (with %[1]s standing for
// the test upstream's URL, quoted) and returns it with the upstream.
func testProxy(t testing.TB, base string) (*Proxy, *testUpstream) {
	t.Helper()
	up := startTestUpstream(t)
	return startProxyText(t, fmt.Sprintf(base, tomlQuote(up.URL))), up
}

func tomlQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// connect connects a go-sdk client named name to the proxy's main server
// over in-memory transports (the stdio front's server) at protocol
// 2025-11-25: these tests are of sessions, where the proxy asks the client
// by a request (elicitation/create) and can time that request out; a
// 2026-07-28 client is asked by input_required results instead
// (exchange_test.go, TestStdioFront2026). A non-nil elicit handler makes
// the client declare the elicitation capability.
func connect(t *testing.T, p *Proxy, name string, elicit func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	if _, err := p.Server("", "stdio").Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, &mcp.ClientOptions{ElicitationHandler: elicit})
	cs, err := c.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: legacyVersion})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return res
}

func resultText(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// assertBlocked checks r is the approval-blocked result and the upstream
// never saw a call of tool ("" skips that check).
func assertBlocked(t *testing.T, r *mcp.CallToolResult, up *testUpstream, tool, wantReason string) {
	t.Helper()
	if !r.IsError {
		t.Fatalf("result is not isError: %s", resultText(r))
	}
	if r.Meta[MetaKeyBlocked] != "approval" {
		t.Errorf("_meta = %v, want %s = approval", r.Meta, MetaKeyBlocked)
	}
	txt := resultText(r)
	if !strings.Contains(txt, "blocked by approval") || !strings.Contains(txt, wantReason) {
		t.Errorf("text = %q, want it to say blocked by approval and %q", txt, wantReason)
	}
	if n := up.count(tool); tool != "" && n != 0 {
		t.Errorf("upstream saw %d calls of %s, want 0", n, tool)
	}
}

const approvalConfig = `
[tool_search]
enabled = false
[upstreams.up]
url = %[1]s
[tools]
require_approval = ["up__delete_*"]
approval_timeout = "5s"
`

func TestApprovalElicitation(t *testing.T) {
	p, up := testProxy(t, approvalConfig)
	cases := []struct {
		name    string
		answer  *mcp.ElicitResult
		runs    bool
		because string
	}{
		{"accept", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, true, ""},
		{"accept approve false", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": false}}, false, "approve = false"},
		{"decline", &mcp.ElicitResult{Action: "decline"}, false, "the person declined"},
		{"cancel", &mcp.ElicitResult{Action: "cancel"}, false, "the person cancelled"},
		{"accept with a non-boolean approve", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": "yes"}}, false, "approval request failed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []*mcp.ElicitParams
			cs := connect(t, p, "unit-"+c.name, func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				got = append(got, req.Params)
				return c.answer, nil
			})
			before := up.count("delete_thing")
			r := callTool(t, cs, "up__delete_thing", map[string]any{"name": "report.txt", "api_token": "s3cr3t-value"})
			if len(got) != 1 {
				t.Fatalf("elicitation requests = %d, want 1", len(got))
			}
			msg := got[0].Message
			for _, want := range []string{"mcp:up:delete_thing", `upstream "up"`, `tools.require_approval "up__delete_*"`, `name: "report.txt"`, "api_token: ***"} {
				if !strings.Contains(msg, want) {
					t.Errorf("elicitation message lacks %q:\n%s", want, msg)
				}
			}
			if strings.Contains(msg, "s3cr3t-value") {
				t.Errorf("elicitation message shows a secret value:\n%s", msg)
			}
			if got[0].Mode != "form" || got[0].RequestedSchema == nil {
				t.Errorf("mode %q schema %v, want form with a schema", got[0].Mode, got[0].RequestedSchema)
			}
			if c.runs {
				if r.IsError || up.count("delete_thing") != before+1 {
					t.Fatalf("accepted call: isError=%v upstream calls %d -> %d: %s", r.IsError, before, up.count("delete_thing"), resultText(r))
				}
				return
			}
			if up.count("delete_thing") != before {
				t.Fatalf("blocked call reached the upstream")
			}
			assertBlocked(t, r, up, "", c.because)
		})
	}
	t.Run("tool without require_approval asks nothing", func(t *testing.T) {
		asked := 0
		cs := connect(t, p, "unit-plain", func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked++
			return &mcp.ElicitResult{Action: "decline"}, nil
		})
		if r := callTool(t, cs, "up__echo", map[string]any{"x": 1}); r.IsError || asked != 0 {
			t.Fatalf("isError=%v asked=%d: %s", r.IsError, asked, resultText(r))
		}
	})
}

func TestApprovalWithoutElicitationIsBlocked(t *testing.T) {
	p, up := testProxy(t, approvalConfig)
	cs := connect(t, p, "no-elicitation", nil)
	r := callTool(t, cs, "up__delete_thing", map[string]any{"name": "x"})
	assertBlocked(t, r, up, "delete_thing", "does not support elicitation and no tools.approval_command is configured")
	// The CLI has no client to ask either.
	res, err := p.call(context.Background(), p.Env("", "").(*session), p.Catalog().ByExposed("up__delete_thing"), json.RawMessage(`{}`), "cli")
	if err != nil {
		t.Fatal(err)
	}
	assertBlocked(t, res, up, "delete_thing", "no client to ask")
}

func TestApprovalElicitationTimeout(t *testing.T) {
	p, up := testProxy(t, strings.Replace(approvalConfig, `"5s"`, `"200ms"`, 1))
	cs := connect(t, p, "slow-person", func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		<-ctx.Done() // never answers; the proxy gives up after approval_timeout
		return nil, ctx.Err()
	})
	r := callTool(t, cs, "up__delete_thing", map[string]any{})
	assertBlocked(t, r, up, "delete_thing", "no answer to the approval request within tools.approval_timeout (200ms)")
}

func TestApprovalSummary(t *testing.T) {
	cases := []struct{ args, want string }{
		{`{}`, "(none)"},
		{``, ""},
		{`{"b":2,"a":"x"}`, `a: "x", b: 2`},
		{`{"Authorization":"Bearer x","apiKey":"k","private_key":"p","keyword":"kw"}`, `Authorization: ***, apiKey: ***, keyword: "kw", private_key: ***`},
		{`{"opts":{"token":"t","n":1}}`, `opts: {"n":1,"token":"***"}`},
		{`[1,{"secret":"s"}]`, `[1,{"secret":"***"}]`},
	}
	for _, c := range cases {
		if got := approvalSummary(json.RawMessage(c.args)); got != c.want {
			t.Errorf("approvalSummary(%s) = %q, want %q", c.args, got, c.want)
		}
	}
	long := fmt.Sprintf(`{"a":%q,"b":%q,"c":%q,"d":%q,"e":%q}`, strings.Repeat("x", 500), strings.Repeat("y", 500), "z", "w", "v")
	got := approvalSummary(json.RawMessage(long))
	if n := len([]rune(got)); n > approvalSummaryMax {
		t.Errorf("summary has %d runes, over %d", n, approvalSummaryMax)
	}
	if !strings.Contains(got, `a: "xxxx`) || !strings.Contains(got, "…, b:") {
		t.Errorf("each value should be cut on its own: %q", got)
	}
}
