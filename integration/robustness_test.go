//go:build unix

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// upstreamPID finds the proxy's child whose command line contains marker.
func upstreamPID(t *testing.T, proxyPID int, marker string) int {
	t.Helper()
	for _, pid := range childPIDs(proxyPID) {
		if strings.Contains(procArgs(pid), marker) {
			return pid
		}
	}
	return 0
}

// TestHungUpstreamAndPing: a hung upstream (SIGSTOPped)
// never blocks calls to another upstream, its health pings fail and it is
// reconnected with a new process; an upstream that answers ping with
// -32601 counts as alive and is never reconnected.
func TestHungUpstreamAndPing(t *testing.T) {
	srv, file := catalogServer(t), catalogFile(t, "github-like.jsonl")
	cfg := writeConfig(t, fmt.Sprintf(`
[server]
shutdown_grace = "500ms"

[upstreams.hung]
command = %s
args = ["-tools", %s, "-name", "hung-server"]
ping_interval = "300ms"
call_timeout = "20s"

[upstreams.noping]
command = %s
args = ["-tools", %s, "-name", "noping-server", "-no-ping"]
ping_interval = "300ms"
`, tomlString(srv), tomlString(file), tomlString(srv), tomlString(file)))
	cmd := exec.Command(proxyCmd(t, cfg)[0], proxyCmd(t, cfg)[1:]...)
	c := gosdkConnect(t, &gosdk.CommandTransport{Command: cmd})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	call := func(ctx context.Context, name string) error {
		res, err := c.CallTool(ctx, &gosdk.CallToolParams{Name: name, Arguments: map[string]any{}})
		if err == nil && res.IsError {
			err = fmt.Errorf("isError: %v", res.Content)
		}
		return err
	}
	for _, n := range []string{"hung__list_issues", "noping__list_issues"} {
		if err := call(ctx, n); err != nil {
			t.Fatalf("%s before the hang: %v", n, err)
		}
	}
	hung := upstreamPID(t, cmd.Process.Pid, "hung-server")
	noping := upstreamPID(t, cmd.Process.Pid, "noping-server")
	if hung == 0 || noping == 0 {
		t.Fatalf("upstream processes not found: hung=%d noping=%d", hung, noping)
	}
	if err := syscall.Kill(hung, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(hung, syscall.SIGCONT)

	// A call into the hung upstream is pending; calls to the other one
	// still answer while it is.
	pending := make(chan error, 1)
	go func() { pending <- call(ctx, "hung__list_issues") }()
	for i := 0; i < 5; i++ {
		if err := call(ctx, "noping__search_issues"); err != nil {
			t.Fatalf("call to the healthy upstream while another hangs: %v", err)
		}
		select {
		case err := <-pending:
			t.Fatalf("the call into the stopped upstream returned too early (%v): the test did not hang it", err)
		default:
		}
	}
	// The pings find the hang; the upstream is torn down (the pending call
	// fails naming it) and a new process serves its tools.
	select {
	case err := <-pending:
		if err == nil || !strings.Contains(err.Error(), "hung") {
			t.Fatalf("the call into the hung upstream: want an error naming it, got %v", err)
		}
	case <-ctx.Done():
		t.Fatal("the call into the hung upstream never ended")
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if np := upstreamPID(t, cmd.Process.Pid, "hung-server"); np != 0 && np != hung && call(ctx, "hung__list_issues") == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the hung upstream was not replaced by a working process within 60 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if alive(hung) {
		t.Errorf("the stopped upstream process %d was not killed", hung)
	}
	if now := upstreamPID(t, cmd.Process.Pid, "noping-server"); now != noping {
		t.Errorf("the upstream answering ping with -32601 was restarted (pid %d -> %d); it counts as alive", noping, now)
	}
}

// TestTenMegabyteMessages: a 10 MB argument and a 10 MB
// result pass through the proxy unchanged.
func TestTenMegabyteMessages(t *testing.T) {
	cfg := writeConfig(t, fmt.Sprintf(`
[upstreams.big]
command = %s
args = ["-tools", %s]
`, tomlString(catalogServer(t)), tomlString(catalogFile(t, "github-like.jsonl"))))
	// The client reads with a 64 MiB line limit: the echo repeats the
	// argument twice (text and structuredContent), about 20 MiB.
	pc := proxyCmd(t, cfg)
	cmd := exec.Command(pc[0], pc[1:]...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); _ = cmd.Wait() })
	c := gosdkConnect(t, &gosdk.IOTransport{Reader: stdout, Writer: stdin, MaxLineLength: 64 << 20})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	body := strings.Repeat("0123456789abcdef", 10<<20/16) // 10 MiB
	res, err := c.CallTool(ctx, &gosdk.CallToolParams{Name: "big__create_issue", Arguments: map[string]any{"body": body}})
	if err != nil {
		t.Fatal(err)
	}
	txt := res.Content[0].(*gosdk.TextContent).Text
	if len(txt) < len(body) || !strings.Contains(txt, body) {
		t.Fatalf("the 10 MiB echo came back with %d bytes", len(txt))
	}
}

// TestDeadHTTPUpstreamNoSecret: an HTTP upstream whose URL carries a
// ${VAR} secret goes away: the call fails as unavailable (-32603, not the
// transport's -32005), the upstream is marked down (hits say why), and the
// secret appears in no answer a client gets.
func TestDeadHTTPUpstreamNoSecret(t *testing.T) {
	const secret = "SuperSecret-4711-key"
	port := freePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	srv := startProcess(t, []string{catalogServer(t), "-tools", catalogFile(t, "github-like.jsonl"), "-http", addr}, nil)
	deadline := time.Now().Add(20 * time.Second)
	for !tcpOpen(addr) {
		if time.Now().After(deadline) {
			t.Fatal("catalogserver -http did not start")
		}
		time.Sleep(50 * time.Millisecond)
	}
	cfg := writeConfig(t, fmt.Sprintf(`
[tool_search]
enabled = true
mode = "tools"

[upstreams.remote]
url = "http://%s/mcp?apikey=${MCPTS_TEST_KEY}"
ping_interval = "300ms"
`, addr))
	pc := proxyCmd(t, cfg)
	cmd := exec.Command(pc[0], pc[1:]...)
	cmd.Env = append(os.Environ(), "MCPTS_TEST_KEY="+secret)
	c := gosdkConnect(t, &gosdk.CommandTransport{Command: cmd})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	call := func(name string, args map[string]any) string {
		res, err := c.CallTool(ctx, &gosdk.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			return "error: " + err.Error()
		}
		b, _ := json.Marshal(res)
		return string(b)
	}
	if out := call("tool_call", map[string]any{"id": "mcp:remote:list_issues", "args": map[string]any{"owner": "o", "repo": "r"}}); strings.Contains(out, `"isError":true`) {
		t.Fatalf("call while up: %s", out)
	}
	srv.Stop()
	out := call("tool_call", map[string]any{"id": "mcp:remote:list_issues", "args": map[string]any{"owner": "o", "repo": "r"}})
	if !strings.Contains(out, `upstream \"remote\" is unavailable`) {
		t.Errorf("call after the upstream died: want it reported unavailable, got %s", out)
	}
	var hits string
	for time.Now().Before(deadline.Add(20 * time.Second)) {
		hits = call("tool_search", map[string]any{"query": "list issues"})
		if strings.Contains(hits, `"unavailable"`) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if !strings.Contains(hits, `"unavailable"`) {
		t.Errorf("hits of the dead upstream do not say it is unavailable: %s", hits)
	}
	for _, s := range []string{out, hits} {
		if strings.Contains(s, secret) {
			t.Fatalf("a client got the secret: %s", s)
		}
	}
}

func tcpOpen(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err == nil {
		c.Close()
	}
	return err == nil
}
