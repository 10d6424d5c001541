//go:build unix

package integration

// Server-to-client requests reach the right client or nobody: two
// clients call server-everything's trigger-elicitation-request
// on ONE shared upstream session at the same time, each answering the
// elicitation with its own name, 100 rounds.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// elicitationRounds runs the rounds against the proxy at url and counts
// calls answered by the caller's own client, calls refused cleanly (the
// upstream got the proxy's error and reports it), and calls that got the
// other client's answer.
func elicitationRounds(t *testing.T, url string, rounds int) (own, refused, other int) {
	t.Helper()
	clients := map[string]*gosdk.ClientSession{}
	for _, name := range []string{"alice", "bob"} {
		c := gosdk.NewClient(&gosdk.Implementation{Name: name, Version: "1"}, &gosdk.ClientOptions{
			ElicitationHandler: func(context.Context, *gosdk.ElicitRequest) (*gosdk.ElicitResult, error) {
				return &gosdk.ElicitResult{Action: "accept", Content: map[string]any{"name": name}}, nil
			},
		})
		cs, err := c.Connect(context.Background(), &gosdk.StreamableClientTransport{Endpoint: url}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		clients[name] = cs
	}
	var mu sync.Mutex
	for r := 0; r < rounds; r++ {
		var wg sync.WaitGroup
		for name, cs := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := cs.CallTool(context.Background(), &gosdk.CallToolParams{Name: "everything__trigger-elicitation-request", Arguments: map[string]any{}})
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					t.Errorf("%s: %v", name, err)
					return
				}
				var text strings.Builder
				for _, c := range res.Content {
					if tc, ok := c.(*gosdk.TextContent); ok {
						text.WriteString(tc.Text)
					}
				}
				switch s := text.String(); {
				case strings.Contains(s, "- Name: "+name+"\n") || strings.HasSuffix(strings.Split(s, "\n\nRaw")[0], "- Name: "+name):
					own++
				case res.IsError && strings.Contains(s, "elicitation/create") && strings.Contains(s, "not relayed"):
					refused++
				default:
					other++
					t.Errorf("%s got: %s", name, s)
				}
			}()
		}
		wg.Wait()
	}
	return own, refused, other
}

// TestElicitationRoutedPerCall: with server-everything over Streamable
// HTTP the proxy knows each request's call (request identity): all 200
// calls get their own client's answer. Over stdio it cannot know when both
// clients have a call in flight: such requests are refused (the tool
// reports an error), and no call ever gets the other client's answer.
func TestElicitationRoutedPerCall(t *testing.T) {
	waitsMostly(t)
	const rounds = 100
	for _, tc := range []struct {
		name string
		up   func(t *testing.T) string // t: the subtest's (a skip must end the subtest, not its parent)
	}{
		{"http", func(t *testing.T) string {
			port := freePort(t)
			startHTTPServer(t, append(npmServer(t, "everything"), "streamableHttp"), []string{fmt.Sprintf("PORT=%d", port)}, fmt.Sprintf("http://127.0.0.1:%d/mcp", port))
			return fmt.Sprintf("url = %q", fmt.Sprintf("http://127.0.0.1:%d/mcp", port))
		}},
		{"stdio", func(t *testing.T) string {
			cmd := npmServer(t, "everything")
			return fmt.Sprintf("command = %s\nargs = [%s]", tomlString(cmd[0]), tomlString(cmd[1]))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := writeConfig(t, fmt.Sprintf("[tool_search]\nenabled = false\n[upstreams.everything]\n%s\n", tc.up(t)))
			addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
			startHTTPServer(t, proxyCmd(t, cfg, "--transport", "http", "--listen", addr), nil, "http://"+addr+"/mcp")
			own, refused, other := elicitationRounds(t, "http://"+addr+"/mcp", rounds)
			t.Logf("%s upstream, %d rounds of 2 concurrent calls: %d answered by their own client, %d refused, %d by the other client", tc.name, rounds, own, refused, other)
			if other != 0 || own+refused != 2*rounds {
				t.Fatalf("own %d refused %d other %d", own, refused, other)
			}
			if tc.name == "http" && own != 2*rounds {
				t.Fatalf("over Streamable HTTP every call should get its own answer: own %d refused %d", own, refused)
			}
		})
	}
}
