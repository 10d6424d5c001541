//go:build unix

package integration

// A front that cannot be exhausted: while 20,500 slow,
// unauthenticated connections are held open against the real binary
// (integration/slowloris: 10,000 spread over 40 addresses trickling headers
// that never end, and 10,500 from one address with a wrong token trickling
// a body — the attack under test), a client with the token connects, lists tools
// and runs code (a bridge call that outlasts read_timeout included), and
// every call succeeds. Figures (connections held, evicted, refused; RSS of
// the proxy before, during and after) are logged; run with -v to see them:
//
//	go test ./integration -run TestFrontNotExhausted -v

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// attacker is one running slowloris process.
type attacker struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *bufio.Reader
	opened int
}

func startAttacker(t *testing.T, bin, addr, src, mode string, n int) *attacker {
	t.Helper()
	cmd := exec.Command(bin, "-addr", addr, "-src", src, "-mode", mode, "-n", strconv.Itoa(n))
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	a := &attacker{cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout)}
	t.Cleanup(func() { _ = a.cmd.Process.Kill(); _ = a.cmd.Wait() })
	return a
}

// waitOpened reads "opened N failed F".
func (a *attacker) waitOpened(t *testing.T) {
	t.Helper()
	line, err := a.out.ReadString('\n')
	var failed int
	if _, serr := fmt.Sscanf(line, "opened %d failed %d", &a.opened, &failed); err != nil || serr != nil {
		t.Fatalf("slowloris: %q %v", line, err)
	}
}

// stop closes stdin and returns the final counts.
func (a *attacker) stop(t *testing.T) (open, closed, got401 int) {
	t.Helper()
	_ = a.stdin.Close()
	line, _ := a.out.ReadString('\n')
	if _, err := fmt.Sscanf(line, "open %d closed %d status401 %d", &open, &closed, &got401); err != nil {
		t.Fatalf("slowloris final line %q: %v", line, err)
	}
	_ = a.cmd.Wait()
	return
}

// metricValue reads an unlabelled (or exactly labelled) sample from a
// /metrics body; -1 when absent.
func metricValue(body, series string) float64 {
	for _, l := range strings.Split(body, "\n") {
		if rest, ok := strings.CutPrefix(l, series+" "); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			if err == nil {
				return v
			}
		}
	}
	return -1
}

func TestFrontNotExhausted(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs source addresses across 127.0.0.0/8 and /proc (Linux)")
	}
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		t.Fatal(err)
	}
	// Each attacker process holds at most perProc connections, within its
	// open-file limit (Go raises the soft limit to the hard one at start).
	perProc := min(5000, int(rl.Max)-200)
	if perProc < 500 {
		t.Skipf("the open-file hard limit is %d; this test needs at least 700 per process", rl.Max)
	}
	const token = "front-test-token-4821"
	cfg := writeConfig(t, fmt.Sprintf(`
[server]
bearer_token = %q
# The slow connections are held by the connection caps, not cut by the
# header timeout, for the whole test.
read_header_timeout = "300s"
read_timeout = "1s"

[tool_search]
enabled = true
mode = "code"

[upstreams.gh]
command = %s
args = ["-tools", %s, "-slow-tool", "list_issues=2s"]
`, token, tomlString(catalogServer(t)), tomlString(catalogFile(t, "github-like.jsonl"))))
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	proc := startHTTPServer(t, proxyCmd(t, cfg, "--transport", "http", "--listen", addr), nil, "http://"+addr+"/mcp")
	pid := proc.PID()
	slow := goBinary(t, "slowloris", "./integration/slowloris")
	metrics := func() string { return scrapeMetricsAuth(t, "http://"+addr+"/metrics", token) }

	// Warm the proxy (one client, one code run) so that "before" is a
	// serving proxy's memory.
	warm := gosdkClientHTTP(t, "http://"+addr+"/mcp", map[string]string{"Authorization": "Bearer " + token})
	codeRunOK(t, warm, `return (await openclaw.tools.search("issue")).length`)
	warm.Close()
	rssBefore, fdBefore := rssKB(pid), fdCount(pid)

	// The attack: 20,500 connections.
	var many []string
	for i := 10; i < 50; i++ {
		many = append(many, fmt.Sprintf("127.0.0.%d", i))
	}
	type job struct {
		src, mode string
		n         int
	}
	jobs := []job{{strings.Join(many, ","), "headers", 10000}, {"127.0.0.2", "wrongtoken", 10500}}
	var attackers []*attacker
	var wrongToken []*attacker
	for _, j := range jobs {
		for left := j.n; left > 0; left -= perProc {
			a := startAttacker(t, slow, addr, j.src, j.mode, min(left, perProc))
			attackers = append(attackers, a)
			if j.mode == "wrongtoken" {
				wrongToken = append(wrongToken, a)
			}
		}
	}
	attackStart := time.Now()
	opened := 0
	for _, a := range attackers {
		a.waitOpened(t)
		opened += a.opened
	}
	openSeconds := time.Since(attackStart).Seconds()
	m := metrics()
	held := metricValue(m, "mcp_toolsearch_http_connections")
	rssDuring, fdDuring := rssKB(pid), fdCount(pid)

	// The authenticated client: a new connection at a full cap, 10
	// tools/list, 10 code runs with a bridge call, one of them to a tool
	// that answers after 2 s (longer than read_timeout).
	start := time.Now()
	cs := gosdkClientHTTP(t, "http://"+addr+"/mcp", map[string]string{"Authorization": "Bearer " + token})
	calls, ok := 0, 0
	for i := 0; i < 10; i++ {
		calls++
		ctx, cancel := context.WithTimeout(context.Background(), goClientTimeout)
		res, err := cs.ListTools(ctx, nil)
		cancel()
		if err != nil || len(res.Tools) == 0 {
			t.Errorf("tools/list %d during the attack: %v", i, err)
			continue
		}
		ok++
	}
	for i := 0; i < 10; i++ {
		calls++
		tool, args := "mcp:gh:create_issue", fmt.Sprintf(`{owner: "o", repo: "r", title: "t%d"}`, i)
		if i == 9 {
			tool, args = "mcp:gh:list_issues", `{owner: "o", repo: "r"}` // slow: 2 s
		}
		if codeRunOK(t, cs, fmt.Sprintf(`const r = await openclaw.tools.call(%q, %s); return r.isError ? "error" : "ok"`, tool, args)) {
			ok++
		}
	}
	clientSeconds := time.Since(start).Seconds()
	m2 := metrics()
	cs.Close()

	// The wrong-token connections were answered and closed, none held.
	wtOpen, wtClosed, wt401 := 0, 0, 0
	for _, a := range wrongToken {
		o, c, s := a.stop(t)
		wtOpen, wtClosed, wt401 = wtOpen+o, wtClosed+c, wt401+s
	}
	for _, a := range attackers {
		if !slicesContains(wrongToken, a) {
			a.stop(t)
		}
	}
	// After: the attack is gone; wait until the front holds (almost)
	// nothing (fail-safe bound, not a speed check).
	drainStart := time.Now()
	deadline := time.Now().Add(60 * time.Second)
	for metricValue(metrics(), "mcp_toolsearch_http_connections") > 2 && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	drainSeconds := time.Since(drainStart).Seconds()
	rssAfter, fdAfter := rssKB(pid), fdCount(pid)

	t.Logf("open-file limit of the test (and the attackers, %d processes of at most %d connections): soft %d, hard %d; the proxy's max_connections: auto (half its limit, at most 10000)", len(attackers), perProc, rl.Cur, rl.Max)
	t.Logf("attack: %d connections opened (of 20,500) in %.1f s; the proxy's connections were back to at most 2 %.1f s after the attack ended", opened, openSeconds, drainSeconds)
	t.Logf("attack: %d connections opened (of 20,500), proxy holding %v while the client ran (%v after); evicted %v, refused total/address %v/%v",
		opened, held, metricValue(m2, "mcp_toolsearch_http_connections"), metricValue(m2, "mcp_toolsearch_http_connections_evicted_total"),
		metricValue(m2, `mcp_toolsearch_http_connections_refused_total{cap="total"}`), metricValue(m2, `mcp_toolsearch_http_connections_refused_total{cap="address"}`))
	t.Logf("authenticated client: %d of %d calls succeeded (10 tools/list, 10 code runs with a bridge call, one of 2 s) in %.1f s", ok, calls, clientSeconds)
	t.Logf("wrong token + trickled body: %d connections, %d closed by the proxy (%d after a 401), %d still open", wtOpen+wtClosed, wtClosed, wt401, wtOpen)
	t.Logf("proxy RSS: before %d MB, during %d MB, after %d MB; open files: before %d, during %d, after %d",
		rssBefore/1024, rssDuring/1024, rssAfter/1024, fdBefore, fdDuring, fdAfter)

	if ok != calls {
		t.Errorf("%d of %d calls of the authenticated client failed during the attack", calls-ok, calls)
	}
	if opened < 20000 {
		t.Errorf("only %d attack connections could be opened; the test did not run at its size", opened)
	}
	if held > 10000 {
		t.Errorf("the proxy held %v connections, over max_connections", held)
	}
	if wtOpen != 0 {
		t.Errorf("%d wrong-token connections are still held", wtOpen)
	}
}

func slicesContains(as []*attacker, a *attacker) bool {
	for _, x := range as {
		if x == a {
			return true
		}
	}
	return false
}

// codeRunOK runs body with tool_search_code; it reports (and logs) whether
// the run succeeded with a result that is not "error".
func codeRunOK(t *testing.T, cs *gosdk.ClientSession, body string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), goClientTimeout)
	defer cancel()
	res, err := cs.CallTool(ctx, &gosdk.CallToolParams{Name: "tool_search_code", Arguments: map[string]any{"code": body}})
	if err != nil {
		t.Errorf("code run: %v", err)
		return false
	}
	if res.IsError {
		t.Errorf("code run failed: %s", contentText(res))
		return false
	}
	if txt := contentText(res); strings.Contains(txt, `"error"`) {
		t.Errorf("code run: the bridge call failed: %s", txt)
		return false
	}
	return true
}

func contentText(res *gosdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*gosdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
