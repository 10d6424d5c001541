//go:build unix

package integration

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestShutdownDrainsCallsInFlight: a team's proxy behind a load balancer
// gets SIGTERM (a rolling restart, a stop) while a client's tools/call is
// waiting on the upstream (server-everything's
// trigger-long-running-operation, 3 s in 3 steps). The call must still get
// its upstream's result: the front stops accepting connections and waits,
// up to server.drain_timeout, for the requests in flight before it ends
// the sessions. Before, the call was cut the moment the signal
// arrived: the client read an empty response to its POST
// ("HTTP 200", no JSON-RPC answer) and the go-sdk client failed the call.
// The signal is sent on the call's first progress notification, so the
// call is in flight at the upstream whatever the machine's speed.
func TestShutdownDrainsCallsInFlight(t *testing.T) {
	requireNode(t)
	ev := npmServer(t, "everything")
	cfg := writeConfig(t, fmt.Sprintf(`
[server]
drain_timeout = "120s"

[tool_search]
enabled = false

[upstreams.everything]
command = %s
args = [%s]
prefix = ""
`, tomlString(ev[0]), quoteArgs(ev[1:])))
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	p := startHTTPServer(t, proxyCmd(t, cfg, "--transport", "http", "--listen", addr, "--log-level", "info"), []string{"MCP_TOOLSEARCH_STARTUP_WAIT=60s"}, "http://"+addr+"/mcp")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	progressed := make(chan struct{}, 16)
	c := gosdk.NewClient(&gosdk.Implementation{Name: "drain-test", Version: "1"}, &gosdk.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *gosdk.ProgressNotificationClientRequest) {
			select {
			case progressed <- struct{}{}:
			default:
			}
		},
	})
	cs, err := c.Connect(ctx, &gosdk.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp"}, &gosdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	type outcome struct {
		res *gosdk.CallToolResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		params := &gosdk.CallToolParams{Name: "trigger-long-running-operation", Arguments: map[string]any{"duration": 3, "steps": 3}}
		params.SetProgressToken("drain")
		res, err := cs.CallTool(ctx, params)
		done <- outcome{res, err}
	}()
	select {
	case <-progressed:
	case o := <-done:
		t.Fatalf("the call ended before its first progress notification: %+v", o)
	case <-ctx.Done():
		t.Fatal("no progress notification from the long-running call")
	}
	if err := syscall.Kill(p.PID(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	o := <-done
	if o.err != nil {
		t.Fatalf("the call in flight at SIGTERM failed: %v\nproxy log:\n%s", o.err, tail(p.Output(), 3000))
	}
	if o.res.IsError || len(o.res.Content) == 0 {
		t.Fatalf("the call in flight at SIGTERM got %+v", o.res)
	}
	text := o.res.Content[0].(*gosdk.TextContent).Text
	if !strings.Contains(text, "Long running operation completed") {
		t.Fatalf("the call in flight at SIGTERM got %q, want the upstream's result", text)
	}
	select {
	case <-p.done:
	case <-ctx.Done():
		t.Fatal("the proxy did not exit after its call in flight was answered")
	}
	log := p.Output()
	if !strings.Contains(log, "waiting for the client requests in flight") || !strings.Contains(log, "every client request in flight was answered") {
		t.Fatalf("the log does not say the shutdown drained the call:\n%s", tail(log, 3000))
	}
}
