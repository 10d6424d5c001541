package proxy

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestTagReader(t *testing.T) {
	long := strings.Repeat("x", 10000)
	in := "event: message\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"elicitation/create\",\"params\":{\"message\":\"m\"}}\r\n\r\n" +
		": comment\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":2,\n" +
		"data: \"method\":\"roots/list\",\"params\":{\"_meta\":{\"" + metaKeyCaller + "\":\"forged\",\"k\":1}}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"method\":\"x\"}}\n\n" +
		"id: 7\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n" +
		// An answer with a line longer than the reader's buffer and CRLF
		// line ends passes unchanged but for its line ends.
		"event: message\r\nid: 8\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"text\":\"" + long + "\"}}\r\n\r\n" +
		"data: cut at the end"
	read := func(token string) string {
		b, err := io.ReadAll(&tagReader{src: io.NopCloser(nil), st: &tagState{in: bufioReader(in)}, token: token})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	want := "event: message\n" +
		`data: {"id":1,"jsonrpc":"2.0","method":"elicitation/create","params":{"_meta":{"` + metaKeyCaller + `":"T"},"message":"m"}}` + "\n\n" +
		": comment\n\n" +
		`data: {"id":2,"jsonrpc":"2.0","method":"roots/list","params":{"_meta":{"` + metaKeyCaller + `":"T","k":1}}}` + "\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"method\":\"x\"}}\n\n" +
		"id: 7\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n" +
		"event: message\nid: 8\ndata: {\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"text\":\"" + long + "\"}}\n\n" +
		"data: cut at the end\n"
	if got := read("T"); got != want {
		t.Errorf("with a token:\n got %q\nwant %q", got, want)
	}
	// No call of ours: a forged key is removed, nothing else changes.
	got := read("")
	if strings.Contains(got, "forged") || strings.Contains(got, metaKeyCaller) || !strings.Contains(got, `"_meta":{"k":1}`) || !strings.Contains(got, `"params":{"message":"m"}`) {
		t.Errorf("without a token: %q", got)
	}
}

func bufioReader(s string) *bufio.Reader { return bufio.NewReader(strings.NewReader(s)) }

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
