package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
)

// askingUpstream is a go-sdk server on the initialize-era protocol (as the
// proxy's upstream legs are) whose tools ask the client mid-call:
//
//	ask     elicitation/create, answers "you said <content.word>"
//	roots   roots/list, answers the first root's URI
//	sample  sampling/createMessage, answers the model's text
func askingUpstream(t *testing.T) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "asking", Version: "1"}, &mcp.ServerOptions{SupportedProtocolVersions: []string{"2025-11-25"}})
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	obj := json.RawMessage(`{"type":"object"}`)
	s.AddTool(&mcp.Tool{Name: "ask", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		r, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "say a word", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"word":{"type":"string"}},"required":["word"]}`)})
		if err != nil {
			return nil, err
		}
		return text(fmt.Sprintf("%s: you said %v", r.Action, r.Content["word"])), nil
	})
	s.AddTool(&mcp.Tool{Name: "roots", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		r, err := req.Session.ListRoots(ctx, nil)
		if err != nil {
			return nil, err
		}
		if len(r.Roots) == 0 {
			return text("no roots"), nil
		}
		return text("root " + r.Roots[0].URI), nil
	})
	s.AddTool(&mcp.Tool{Name: "sample", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		r, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}})
		if err != nil {
			return nil, err
		}
		tc, _ := r.Content.(*mcp.TextContent)
		if tc == nil {
			return text("model: ?"), nil
		}
		return text("model: " + tc.Text), nil
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(hs.Close)
	return hs.URL
}

// exchangeProxy starts a proxy (config text with %[1]s = the asking
// upstream's URL) and serves its HTTP front.
func exchangeProxy(t *testing.T, text string) string {
	t.Helper()
	cfg, err := config.Parse([]byte(fmt.Sprintf(text, tomlQuote(askingUpstream(t)))), "", func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(cfg, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	srv := httptest.NewServer(p.Handler(nil))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

const exchangeConfig = `
[server]
transport = "http"
stateless = true
[upstreams.a]
url = %[1]s
`

// TestInputRequiredFromUpstreamRequests: an upstream on 2025-11-25 asks
// elicitation/create, roots/list and sampling/createMessage during calls
// of a 2026-07-28 client, which cannot be sent requests: the proxy answers
// the client's tools/call with input_required naming the question, the
// client retries with inputResponses and requestState, and the upstream
// gets the client's answer. Checked by hand (the go-sdk client with its
// automatic retry switched off) and with the go-sdk's automatic handling.
func TestInputRequiredFromUpstreamRequests(t *testing.T) {
	url := exchangeProxy(t, exchangeConfig)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// By hand.
	c := mcp.NewClient(&mcp.Implementation{Name: "manual", Version: "1"}, &mcp.ClientOptions{
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		Capabilities:   &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}},
	})
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	r1, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "a__ask", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if !r1.NeedsInput() || len(r1.InputRequests) != 1 || r1.RequestState == "" {
		t.Fatalf("first answer: needsInput=%v inputRequests=%v requestState=%q; want one elicitation", r1.NeedsInput(), r1.InputRequests, r1.RequestState)
	}
	var key string
	for k, v := range r1.InputRequests {
		ep, ok := v.(*mcp.ElicitParams)
		if !ok || ep.Message != "say a word" {
			t.Fatalf("input request %s = %#v, want the upstream's elicitation", k, v)
		}
		key = k
	}
	// A retry with an unknown state is refused with the reason.
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "a__ask", Arguments: map[string]any{}, RequestState: "mts1.nope", InputResponses: mcp.InputResponseMap{key: &mcp.ElicitResult{Action: "accept"}}})
	if err == nil || !strings.Contains(err.Error(), "requestState is unknown") {
		t.Errorf("retry with a forged requestState: %v, want an error naming requestState", err)
	}
	r2, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "a__ask", Arguments: map[string]any{}, RequestState: r1.RequestState,
		InputResponses: mcp.InputResponseMap{key: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"word": "banana"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if r2.NeedsInput() || resultText(r2) != "accept: you said banana" {
		t.Fatalf("after the answer: needsInput=%v text %q", r2.NeedsInput(), resultText(r2))
	}

	// The go-sdk's own input-required handling calls the client's handlers.
	auto := mcp.NewClient(&mcp.Implementation{Name: "auto", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"word": "kiwi"}}, nil
		},
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "hello from the model"}}, nil
		},
	})
	cs2, err := auto.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs2.Close()
	auto.AddRoots(&mcp.Root{URI: "file:///work", Name: "work"})
	for tool, want := range map[string]string{"a__ask": "accept: you said kiwi", "a__sample": "model: hello from the model", "a__roots": "root file:///work"} {
		r, err := cs2.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
		if err != nil {
			t.Errorf("%s: %v", tool, err)
			continue
		}
		if got := resultText(r); got != want {
			t.Errorf("%s = %q, want %q", tool, got, want)
		}
	}
}

// TestInputRequiredApproval: the proxy's own approval question
// (tools.require_approval) reaches a 2026-07-28 client as input_required;
// "approve": false blocks the call, true runs it.
func TestInputRequiredApproval(t *testing.T) {
	url := exchangeProxy(t, exchangeConfig+"[tools]\nrequire_approval = [\"a__ask*\", \"a__roots\"]\n")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, approve := range []bool{false, true} {
		var asked []string
		c := mcp.NewClient(&mcp.Implementation{Name: "approver", Version: "1"}, &mcp.ClientOptions{
			ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				asked = append(asked, r.Params.Message)
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": approve}}, nil
			},
		})
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
		if err != nil {
			t.Fatal(err)
		}
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "a__roots", Arguments: map[string]any{}})
		cs.Close()
		if err != nil {
			t.Fatalf("approve=%v: %v", approve, err)
		}
		if len(asked) != 1 || !strings.Contains(asked[0], "Approve this tool call?") {
			t.Errorf("approve=%v: questions %q, want the approval question", approve, asked)
		}
		if blocked := r.IsError && strings.Contains(resultText(r), "blocked by approval"); blocked == approve {
			t.Errorf("approve=%v: result %q (isError %v)", approve, resultText(r), r.IsError)
		}
	}
}
