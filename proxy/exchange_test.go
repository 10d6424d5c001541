package proxy

//lint:file-ignore SA1019 sampling, roots and logging are deprecated from protocol 2026-07-28 on; clients and servers of earlier protocols still use them

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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
	return frontURL(t, startProxyText(t, fmt.Sprintf(text, tomlQuote(askingUpstream(t)))))
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

// TestInputRequiredUpstream2026: input-required rounds of a 2026-07-28
// upstream reach a 2026-07-28 client as the upstream shaped them (MCP
// 2026-07-28, SEP-2322): every request of a round in one result, under the
// upstream's keys; each round's requestState differs from the last, and
// an earlier round's is refused; answers the client supplies with its
// first call go to the upstream's first round.
func TestInputRequiredUpstream2026(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "mrtr-upstream", Version: "1"}, nil)
	obj := json.RawMessage(`{"type":"object"}`)
	word := json.RawMessage(`{"type":"object","properties":{"word":{"type":"string"}},"required":["word"]}`)
	accepted := func(r mcp.InputResponseMap, key string) string {
		if e, ok := r[key].(*mcp.ElicitResult); ok && e.Action == "accept" {
			w, _ := e.Content["word"].(string)
			return w
		}
		return ""
	}
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	s.AddTool(&mcp.Tool{Name: "survey", InputSchema: obj}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		switch st := req.Params.RequestState; {
		case st == "":
			return &mcp.CallToolResult{RequestState: "r1", InputRequests: mcp.InputRequestMap{
				"step_name":  &mcp.ElicitParams{Message: "name?", RequestedSchema: word},
				"step_model": &mcp.CreateMessageParams{MaxTokens: 5, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "model?"}}}},
			}}, nil
		case st == "r1":
			model := "?"
			if r, ok := req.Params.InputResponses["step_model"].(*mcp.CreateMessageWithToolsResult); ok && len(r.Content) > 0 {
				if tc, ok := r.Content[0].(*mcp.TextContent); ok {
					model = tc.Text
				}
			}
			return &mcp.CallToolResult{RequestState: "r2;" + accepted(req.Params.InputResponses, "step_name") + "/" + model, InputRequests: mcp.InputRequestMap{
				"step_color": &mcp.ElicitParams{Message: "color?", RequestedSchema: word},
			}}, nil
		default:
			return text(strings.TrimPrefix(st, "r2;") + "/" + accepted(req.Params.InputResponses, "step_color")), nil
		}
	})
	s.AddTool(&mcp.Tool{Name: "greet", InputSchema: obj}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if w := accepted(req.Params.InputResponses, "user_name"); w != "" {
			return text("Hello, " + w), nil
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"user_name": &mcp.ElicitParams{Message: "name?", RequestedSchema: word}}}, nil
	})
	_, url := statelessProxyOver(t, "m", s)
	caps := map[string]any{"io.modelcontextprotocol/clientCapabilities": map[string]any{"elicitation": map[string]any{}, "sampling": map[string]any{}}}
	call := func(name, state string, answers map[string]any) map[string]any {
		params := map[string]any{"name": name, "arguments": map[string]any{}, "_meta": caps}
		if state != "" {
			params["requestState"] = state
		}
		if answers != nil {
			params["inputResponses"] = answers
		}
		_, res := rpc2026(t, url, "tools/call", params, nil)
		return res
	}
	keys := func(res map[string]any) string {
		reqs, _ := jsonPath(res, "result", "inputRequests").(map[string]any)
		var ks []string
		for k := range reqs {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		return strings.Join(ks, ",")
	}
	say := func(w string) map[string]any {
		return map[string]any{"action": "accept", "content": map[string]any{"word": w}}
	}

	r1 := call("m__survey", "", nil)
	s1, _ := jsonPath(r1, "result", "requestState").(string)
	if jsonPath(r1, "result", "resultType") != "input_required" || keys(r1) != "step_model,step_name" || s1 == "" {
		t.Fatalf("round 1: %v; want input_required with step_model and step_name at once", r1)
	}
	r2 := call("m__survey", s1, map[string]any{
		"step_name":  say("Ann"),
		"step_model": map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": "gpt"}, "model": "m"},
	})
	s2, _ := jsonPath(r2, "result", "requestState").(string)
	if keys(r2) != "step_color" || s2 == "" || s2 == s1 {
		t.Fatalf("round 2: %v; want input_required with step_color and a requestState other than %q", r2, s1)
	}
	if old := call("m__survey", s1, map[string]any{"step_color": say("red")}); jsonPath(old, "error", "code") != float64(-32602) {
		t.Errorf("retry with round 1's requestState: %v; want -32602", old)
	}
	done := call("m__survey", s2, map[string]any{"step_color": say("blue")})
	if content, _ := jsonPath(done, "result", "content").([]any); jsonPath(done, "result", "resultType") != "complete" || len(content) != 1 || content[0].(map[string]any)["text"] != "Ann/gpt/blue" {
		t.Errorf("round 3: %v; want complete with Ann/gpt/blue", done)
	}
	// Answers supplied with the first call (extra keys ignored).
	g := call("m__greet", "", map[string]any{"user_name": say("Bo"), "unknown_extra": say("x")})
	if content, _ := jsonPath(g, "result", "content").([]any); jsonPath(g, "result", "resultType") != "complete" || len(content) != 1 || content[0].(map[string]any)["text"] != "Hello, Bo" {
		t.Errorf("pre-supplied answer: %v; want complete with Hello, Bo", g)
	}
}

// TestCancel2026: a 2026-07-28 client's tools/call runs as an exchange
// (its context outlives the request, for input-required rounds);
// cancelling the request cancels the upstream call: the upstream tool's
// context ends. Over Streamable HTTP, closing the request's response stream
// is the cancellation signal (MCP 2026-07-28 Cancellation; the go-sdk
// client does it when the call's context ends), with server.stateless and
// without (2026-07-28 requests go to the stateless handler either way);
// over the stdio front's server (in-memory transports, the go-sdk's path)
// the client sends notifications/cancelled. Also for a retry with
// inputResponses: an exchange parked between rounds goes on (the retry
// answers the upstream's question), and cancelling the retry while the
// call runs cancels the upstream call and the exchange (a second retry
// with the same requestState is refused). On stdio, closing the session
// ends an exchange parked between rounds.
func TestCancel2026(t *testing.T) {
	slowURL, started, cancelled := slowUpstream(t)
	askStarted, askCancelled, askFailed := make(chan struct{}, 1), make(chan struct{}, 1), make(chan struct{}, 1)
	ask := mcp.NewServer(&mcp.Implementation{Name: "ask-slow", Version: "1"}, &mcp.ServerOptions{SupportedProtocolVersions: []string{"2025-11-25"}})
	ask.AddTool(&mcp.Tool{Name: "askslow", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if _, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "go on?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`)}); err != nil {
			askFailed <- struct{}{}
			return nil, err
		}
		askStarted <- struct{}{}
		<-ctx.Done()
		askCancelled <- struct{}{}
		return nil, ctx.Err()
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return ask }, nil))
	t.Cleanup(hs.Close)
	for _, front := range []string{"http-stateless", "http", "stdio"} {
		t.Run(front, func(t *testing.T) {
			p := startProxyText(t, fmt.Sprintf("[server]\ntransport = \"http\"\nstateless = %v\n[tool_search]\nenabled = false\n[upstreams.slowup]\nurl = %s\n[upstreams.ask]\nurl = %s\n", front == "http-stateless", tomlQuote(slowURL), tomlQuote(hs.URL)))
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			c := mcp.NewClient(&mcp.Implementation{Name: "canceller", Version: "1"}, &mcp.ClientOptions{
				MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
				Capabilities:   &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}},
			})
			var tr mcp.Transport
			if front == "stdio" {
				ct, st := mcp.NewInMemoryTransports()
				if _, err := p.Server("", "stdio").Connect(ctx, st, nil); err != nil {
					t.Fatal(err)
				}
				tr = ct
			} else {
				tr = &mcp.StreamableClientTransport{Endpoint: frontURL(t, p)}
			}
			cs, err := c.Connect(ctx, tr, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if v := cs.InitializeResult().ProtocolVersion; v != modernVersion {
				t.Fatalf("negotiated %q, want %s", v, modernVersion)
			}
			// callCancelled runs tools/call params, cancels it once signal
			// says the upstream tool runs, and returns the call's error.
			callCancelled := func(params *mcp.CallToolParams, signal chan struct{}) error {
				cctx, ccancel := context.WithCancel(ctx)
				defer ccancel()
				errc := make(chan error, 1)
				go func() {
					_, err := cs.CallTool(cctx, params)
					errc <- err
				}()
				waitSignal(t, signal, "the upstream tool did not start")
				ccancel()
				return <-errc
			}

			if err := callCancelled(&mcp.CallToolParams{Name: "slowup__slow", Arguments: map[string]any{}}, started); err == nil {
				t.Error("the cancelled call returned a result")
			}
			waitSignal(t, cancelled, "cancelling the tools/call did not reach the upstream tool")

			r1, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask__askslow", Arguments: map[string]any{}})
			if err != nil {
				t.Fatal(err)
			}
			if !r1.NeedsInput() || len(r1.InputRequests) != 1 {
				t.Fatalf("first answer: needsInput=%v inputRequests=%v; want the upstream's elicitation", r1.NeedsInput(), r1.InputRequests)
			}
			answers := mcp.InputResponseMap{}
			for k := range r1.InputRequests {
				answers[k] = &mcp.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}
			}
			retry := &mcp.CallToolParams{Name: "ask__askslow", Arguments: map[string]any{}, RequestState: r1.RequestState, InputResponses: answers}
			if err := callCancelled(retry, askStarted); err == nil {
				t.Error("the cancelled retry returned a result")
			}
			waitSignal(t, askCancelled, "cancelling the retry did not reach the upstream tool")
			if _, err := cs.CallTool(ctx, retry); err == nil || !strings.Contains(err.Error(), "requestState is unknown") {
				t.Errorf("a retry of the cancelled call: %v, want requestState refused", err)
			}
			if front == "stdio" {
				// The session's end ends an exchange parked between rounds:
				// the upstream's question fails at once (not after
				// tools.approval_timeout).
				if r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask__askslow", Arguments: map[string]any{}}); err != nil || !r.NeedsInput() {
					t.Fatalf("a new call: %v, want input_required", err)
				}
				cs.Close()
				waitSignal(t, askFailed, "closing the stdio session did not end its parked exchange")
			}
			p.exs.mu.Lock()
			n := len(p.exs.m)
			p.exs.mu.Unlock()
			if n != 0 {
				t.Errorf("%d exchanges left after the calls were cancelled", n)
			}
		})
	}
}
