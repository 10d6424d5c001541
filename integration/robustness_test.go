//go:build unix

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// upstreamPIDs lists, sorted, the proxy's live (not zombie) children whose
// command line contains marker: at protocol "auto" an upstream may run
// two, its shared session's and, for 2026-07-28 clients, its 2026-07-28
// session's.
func upstreamPIDs(t *testing.T, proxyPID int, marker string) []int {
	t.Helper()
	var out []int
	for _, pid := range childPIDs(proxyPID) {
		if alive(pid) && strings.Contains(procArgs(pid), marker) {
			out = append(out, pid)
		}
	}
	slices.Sort(out)
	return out
}

// TestHungUpstreamAndPing: a hung upstream (SIGSTOPped) never
// blocks calls to another upstream, its health pings fail and it is
// reconnected with new processes, the stopped ones killed; an upstream
// that answers ping with -32601 counts as alive and is never reconnected.
// For a 2026-07-28 client the calls go over the upstreams' 2026-07-28
// sessions (a second process each beside the shared session's), which
// are pinged too: first that process alone hangs (the shared one is kept),
// then both; for a 2025-11-25 client the shared session's process hangs.
func TestHungUpstreamAndPing(t *testing.T) {
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(version, func(t *testing.T) { testHungUpstreamAndPing(t, version) })
	}
}

func testHungUpstreamAndPing(t *testing.T, version string) {
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
	c := gosdkConnectWith(t, &gosdk.CommandTransport{Command: cmd}, &gosdk.ClientSessionOptions{ProtocolVersion: version})
	if v := c.InitializeResult().ProtocolVersion; v != version {
		t.Fatalf("the client speaks %s with the proxy, want %s", v, version)
	}
	modern := version == "2026-07-28"
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	call := func(ctx context.Context, name string) error {
		res, err := c.CallTool(ctx, &gosdk.CallToolParams{Name: name, Arguments: map[string]any{}})
		if err == nil && res.IsError {
			err = fmt.Errorf("isError: %v", res.Content)
		}
		return err
	}
	// Before any call into it, the hung upstream runs its shared
	// session's process alone.
	var shared []int
	for deadline := time.Now().Add(30 * time.Second); len(shared) != 1; time.Sleep(20 * time.Millisecond) {
		if shared = upstreamPIDs(t, cmd.Process.Pid, "hung-server"); time.Now().After(deadline) {
			t.Fatalf("the hung upstream's shared session process: %v", shared)
		}
	}
	for _, n := range []string{"hung__list_issues", "noping__list_issues"} {
		if err := call(ctx, n); err != nil {
			t.Fatalf("%s before the hang: %v", n, err)
		}
	}
	procs := 1
	if modern {
		procs = 2
	}
	hung := upstreamPIDs(t, cmd.Process.Pid, "hung-server")
	noping := upstreamPIDs(t, cmd.Process.Pid, "noping-server")
	if len(hung) != procs || len(noping) != procs || !slices.Contains(hung, shared[0]) {
		t.Fatalf("upstream processes: hung=%v (shared %d) noping=%v, want %d each for a %s client", hung, shared[0], noping, procs, version)
	}

	// hang stops the processes stop of the hung upstream; a call into it
	// is pending, calls to the other upstream still answer while it is;
	// the pings find the hang, the hung session is torn down (the pending
	// call fails naming the upstream, the stopped processes are killed)
	// and new processes serve its tools.
	hang := func(stop []int) {
		t.Helper()
		for _, pid := range stop {
			if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			defer syscall.Kill(pid, syscall.SIGCONT)
		}
		// kill returns before the stop: wait until it shows (state T).
		for deadline := time.Now().Add(10 * time.Second); slices.ContainsFunc(stop, func(pid int) bool { st, _, _ := procStat(pid); return st != 'T' }); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the upstream processes %v did not stop", stop)
			}
		}
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
		select {
		case err := <-pending:
			if err == nil || !strings.Contains(err.Error(), "hung") || strings.Contains(err.Error(), "call_timeout") {
				t.Fatalf("the call into the hung upstream: want an error naming it once the pings found the hang (before call_timeout), got %v", err)
			}
		case <-ctx.Done():
			t.Fatal("the call into the hung upstream never ended")
		}
		stopped := func(pid int) bool { return slices.Contains(stop, pid) }
		deadline := time.Now().Add(60 * time.Second)
		for {
			now := upstreamPIDs(t, cmd.Process.Pid, "hung-server")
			if len(now) > 0 && !slices.ContainsFunc(now, stopped) && call(ctx, "hung__list_issues") == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the hung upstream was not replaced by working processes within 60 s (now %v, stopped %v)", now, stop)
			}
			time.Sleep(100 * time.Millisecond)
		}
		if now := upstreamPIDs(t, cmd.Process.Pid, "hung-server"); len(now) != procs || slices.ContainsFunc(now, stopped) {
			t.Errorf("hung upstream processes after the hang %v (stopped %v), want %d new ones", now, stop, procs)
		}
		if left := waitGone(stop, 10*time.Second); len(left) > 0 {
			t.Errorf("the stopped upstream processes %v were not killed", left)
		}
		if now := upstreamPIDs(t, cmd.Process.Pid, "noping-server"); !slices.Equal(now, noping) {
			t.Errorf("the upstream answering ping with -32601 was restarted (pids %v -> %v); it counts as alive", noping, now)
		}
	}
	if modern {
		// The 2026-07-28 session's process alone: it is replaced, the
		// shared session's process is kept.
		hang(slices.DeleteFunc(slices.Clone(hung), func(pid int) bool { return pid == shared[0] }))
		if now := upstreamPIDs(t, cmd.Process.Pid, "hung-server"); !slices.Contains(now, shared[0]) {
			t.Errorf("the shared session's process %d was replaced for a hang of the 2026-07-28 session's (now %v)", shared[0], now)
		}
	}
	hang(upstreamPIDs(t, cmd.Process.Pid, "hung-server"))
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
