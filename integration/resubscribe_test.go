//go:build unix

package integration

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSubscriptionRemadeAfterUpstreamRestart: a client subscribed
// to a resource of server-everything through the proxy keeps getting
// notifications/resources/updated after the upstream is killed and the
// proxy has restarted it. Subscriptions are per session (MCP
// server/resources "Subscriptions"), so the proxy subscribes the upstream's
// new session again; before, the client silently got no more updates.
func TestSubscriptionRemadeAfterUpstreamRestart(t *testing.T) {
	waitsMostly(t)
	ev := npmServer(t, "everything")
	cfg := writeConfig(t, fmt.Sprintf(`
[tool_search]
enabled = false

[upstreams.everything]
command = %s
args = [%s]
`, tomlString(ev[0]), quoteArgs(ev[1:])))
	const uri = "demo://resource/static/document/features.md"
	updated := make(chan string, 64)
	c := gosdk.NewClient(&gosdk.Implementation{Name: "subscriber", Version: "1"}, &gosdk.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *gosdk.ResourceUpdatedNotificationRequest) {
			select {
			case updated <- r.Params.URI:
			default:
			}
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.Command(proxyCmd(t, cfg)[0], proxyCmd(t, cfg)[1:]...)
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	cs, err := c.Connect(ctx, &gosdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call := func(name string, args map[string]any) error {
		res, err := cs.CallTool(ctx, &gosdk.CallToolParams{Name: name, Arguments: args})
		if err == nil && res.IsError {
			err = fmt.Errorf("isError: %s", contentText(res))
		}
		return err
	}
	waitUpdate := func(when string) {
		t.Helper()
		select {
		case u := <-updated:
			if u != uri {
				t.Fatalf("%s: notifications/resources/updated for %q, want %q", when, u, uri)
			}
		case <-time.After(20 * time.Second): // server-everything sends one every 5 s
			t.Fatalf("%s: no notifications/resources/updated for the subscribed resource within 20 s", when)
		}
	}

	if err := cs.Subscribe(ctx, &gosdk.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	if err := call("everything__toggle-subscriber-updates", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	waitUpdate("before the kill")

	killChild(t, cmd.Process.Pid, "server-everything")
	// Down, then back (the proxy restarts it with backoff).
	sawDown := false
	var last error
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("server-everything did not come back within 60 s (saw it down: %v; last error: %v)\nproxy log:\n%s", sawDown, last, tail(stderr.String(), 3000))
		}
		if last = call("everything__echo", map[string]any{"message": "back?"}); last != nil {
			sawDown = true
		} else if sawDown {
			break
		}
	}
	// The old instance is gone: what arrives from now on comes from the new one.
	for len(updated) > 0 {
		<-updated
	}
	// The new instance sends updates only for subscriptions of its own session.
	if err := call("everything__toggle-subscriber-updates", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	waitUpdate("after the upstream was restarted")
}

// killChild sends SIGKILL to the process below pid whose command line
// contains marker (an upstream child of the proxy).
func killChild(t *testing.T, pid int, marker string) {
	t.Helper()
	for _, kid := range childPIDs(pid) {
		if strings.Contains(procArgs(kid), marker) {
			if err := syscall.Kill(kid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("no process with %q in its command line among the proxy's children", marker)
}
