package proxy

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// askUpstream serves one tool, "ask", that elicits from the client and
// returns the answer's "who", over Streamable HTTP (sse false) or the
// legacy HTTP+SSE transport.
func askUpstream(t *testing.T, sse bool) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "ask", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "ask", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "who are you?", RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"who": map[string]any{"type": "string"}}}})
		if err != nil {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "elicitation failed: " + err.Error()}}}, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint("answer=", res.Content["who"])}}}, nil
	})
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	if sse {
		h = mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil)
	}
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	return hs.URL
}

// elicitRounds has clients A and B call ask at the same time, rounds
// times, each answering with its own name; it counts answers that are the
// caller's own, clean refusals, and answers of the other client.
func elicitRounds(t *testing.T, p *Proxy, rounds int) (own, refused, other int) {
	clients := map[string]*mcp.ClientSession{}
	for _, name := range []string{"A", "B"} {
		clients[name] = connect(t, p, name, func(_ context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"who": name}}, nil
		})
	}
	var mu sync.Mutex
	for r := 0; r < rounds; r++ {
		var wg sync.WaitGroup
		for name, cs := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "up__ask", Arguments: map[string]any{}})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err != nil:
					t.Errorf("%s: %v", name, err)
				case resultText(res) == "answer="+name:
					own++
				case res.IsError && strings.Contains(resultText(res), "not relayed: calls of 2 client sessions are in flight"):
					refused++
				default:
					other++
					t.Errorf("%s got %q", name, resultText(res))
				}
			}()
		}
		wg.Wait()
	}
	return own, refused, other
}

// TestElicitationByRequestIdentity: over Streamable HTTP every call gets
// its own client's answer, 100 concurrent rounds of two clients.
func TestElicitationByRequestIdentity(t *testing.T) {
	p := startProxyText(t, "[tool_search]\nenabled = false\n[upstreams.up]\nurl = "+tomlQuote(askUpstream(t, false))+"\n")
	own, refused, other := elicitRounds(t, p, 100)
	if own != 200 || refused != 0 || other != 0 {
		t.Fatalf("own %d refused %d other %d: want every call answered by its own client", own, refused, other)
	}
}

// TestElicitationAmbiguousFailsClosed: over the legacy SSE transport there
// is no request identity; with both clients' calls in flight the request
// is refused, never sent to the other client.
func TestElicitationAmbiguousFailsClosed(t *testing.T) {
	p := startProxyText(t, "[tool_search]\nenabled = false\n[upstreams.up]\nurl = "+tomlQuote(askUpstream(t, true))+"\ntransport = \"sse\"\n")
	own, refused, other := elicitRounds(t, p, 100)
	t.Logf("own %d, refused %d", own, refused)
	if other != 0 || own+refused != 200 {
		t.Fatalf("own %d refused %d other %d", own, refused, other)
	}
	// One client alone is always served.
	a := connect(t, p, "solo", func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"who": "solo"}}, nil
	})
	if got := resultText(callTool(t, a, "up__ask", map[string]any{})); got != "answer=solo" {
		t.Fatalf("single client: %q", got)
	}
}
