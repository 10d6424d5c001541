package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// featureUpstream is a go-sdk server with one tool, two resources (one URI
// shared by every featureUpstream, one of its own), a template, a prompt
// and completions, each naming the upstream in what it returns.
func featureUpstream(t *testing.T, name string) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"}, &mcp.ServerOptions{
		CompletionHandler: func(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{name + "-value"}}}, nil
		},
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
	read := func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: name}}}, nil
	}
	s.AddResource(&mcp.Resource{URI: "shared://readme", Name: "readme"}, read)
	s.AddResource(&mcp.Resource{URI: name + "://own", Name: "own"}, read)
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: name + "://items/{id}", Name: "items"}, read)
	s.AddPrompt(&mcp.Prompt{Name: "greet", Arguments: []*mcp.PromptArgument{{Name: "who"}}}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello from " + name}}}}, nil
	})
	s.AddTool(&mcp.Tool{Name: "ping", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name}}}, nil
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(hs.Close)
	return hs.URL
}

// featureAnswers runs every route of resources, templates, prompts and
// completions that names upstream "secret" (or would, were it visible) and
// returns each answer as JSON (result or JSON-RPC error).
func featureAnswers(t *testing.T, cs *mcp.ClientSession) map[string]string {
	ctx := context.Background()
	out := map[string]string{}
	put := func(k string, v any, err error) {
		if err != nil {
			out[k] = "error: " + err.Error()
			return
		}
		b, _ := json.Marshal(v)
		out[k] = string(b)
	}
	caps := cs.InitializeResult().Capabilities
	put("capabilities", caps, nil)
	r1, err := cs.ListResources(ctx, nil)
	put("resources/list", r1, err)
	r2, err := cs.ListResourceTemplates(ctx, nil)
	put("resources/templates/list", r2, err)
	for _, uri := range []string{"secret://own", "secret://items/7", "mcp-toolsearch://secret/shared://readme", "shared://readme"} {
		r, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		put("resources/read "+uri, r, err)
		put("resources/subscribe "+uri, nil, cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}))
	}
	p1, err := cs.ListPrompts(ctx, nil)
	put("prompts/list", p1, err)
	for _, name := range []string{"secret__greet", "greet"} {
		r, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: name})
		put("prompts/get "+name, r, err)
		c, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: name}, Argument: mcp.CompleteParamsArgument{Name: "who", Value: "a"}})
		put("completion/complete prompt "+name, c, err)
	}
	for _, uri := range []string{"secret://items/{id}", "mcp-toolsearch://secret/secret://items/{id}"} {
		c, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: uri}, Argument: mcp.CompleteParamsArgument{Name: "id", Value: "1"}})
		put("completion/complete resource "+uri, c, err)
	}
	return out
}

// TestFeaturesDeniedAsUnknown: a client whose policy denies upstream
// "secret" gets, by every route of resources, templates, prompts and
// completions, exactly the answers of a deployment without that upstream;
// a client without the deny sees secret's features.
func TestFeaturesDeniedAsUnknown(t *testing.T) {
	open, secret := featureUpstream(t, "open"), featureUpstream(t, "secret")
	const head = "[tool_search]\nenabled = false\n"
	with := startProxyText(t, head+fmt.Sprintf("[upstreams.open]\nurl = %s\n[upstreams.secret]\nurl = %s\n[tools.by_client.\"restricted*\"]\ndeny = [\"group:secret\"]\n", tomlQuote(open), tomlQuote(secret)))
	// The reference has a by_client rule too (denying nothing it has: a
	// glob, as a literal deny entry matching nothing refuses the config):
	// with any by_client rule, list answers say cacheScope "private"
	// (cache.go).
	without := startProxyText(t, head+fmt.Sprintf("[upstreams.open]\nurl = %s\n[tools.by_client.\"restricted*\"]\ndeny = [\"open__no_such_tool*\"]\n", tomlQuote(open)))

	got := featureAnswers(t, connect(t, with, "restricted-bot", nil))
	want := featureAnswers(t, connect(t, without, "restricted-bot", nil))
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s:\n got  %s\n want %s (as if secret did not exist)", k, got[k], w)
		}
	}
	// The same proxy shows secret's features to another client.
	other := featureAnswers(t, connect(t, with, "writer", nil))
	for _, k := range []string{"resources/read secret://own", "prompts/get secret__greet", "completion/complete prompt secret__greet", "completion/complete resource secret://items/{id}"} {
		if other[k] == want[k] || !json.Valid([]byte(other[k])) {
			t.Errorf("writer %s = %s: want secret's answer", k, other[k])
		}
	}
}
