//go:build unix

package integration

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Scale-out: three proxy processes with
// `[server] stateless = true` behind HAProxy (Debian's haproxy 2.6,
// installed by scripts/install-test-deps.sh), round robin per request, no
// stickiness. Every request of a client may land on another replica.
//
// The test prints its figures (calls/s for 1 and 3 replicas, the ratio,
// and the calls that failed when a replica was killed mid-run); it asserts
// only correctness: 0 errors with every replica up, every replica served,
// and every client still working after the kill.

const (
	scaleClients = 100 // concurrent clients
	scaleCalls   = 50  // tools/call per client
)

// replica is one running proxy process.
type replica struct {
	name string
	port int
	proc *Proc
}

func (r replica) base() string { return fmt.Sprintf("http://127.0.0.1:%d", r.port) }

// haproxyDefaults is the start of the tests' HAProxy configs: round robin
// per request (set in each backend), health checks on /healthz, and a
// request whose connection failed (it never reached a replica, so it ran
// nowhere) retried on another server.
const haproxyDefaults = `global
    maxconn 4096
defaults
    mode http
    timeout connect 2s
    timeout client 60s
    timeout server 60s
    timeout check 5s
    retries 3
    option redispatch
    retry-on conn-failure
    option httpchk
    http-check send meth GET uri /healthz ver HTTP/1.1 hdr Host 127.0.0.1
`

func TestScaleOutHAProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("scale-out run (-short)")
	}
	haproxy, err := exec.LookPath("haproxy")
	if err != nil {
		missingDep(t, "haproxy not found in PATH (scripts/install-test-deps.sh installs Debian's haproxy with apt-get)")
	}
	bin := buildProxy(t)
	cfg := writeConfig(t, fmt.Sprintf(`
[server]
transport = "http"
stateless = true

[tool_search]
enabled = true
mode = "tools"

[upstreams.gh]
command = %s
args = ["-tools", %s]
`, tomlString(catalogServer(t)), tomlString(catalogFile(t, "github-like.jsonl"))))

	var reps []replica
	for i := range 3 {
		r := replica{name: fmt.Sprintf("r%d", i+1), port: freePort(t)}
		r.proc = startHTTPServer(t, []string{bin, "serve", "--config", cfg, "--listen", fmt.Sprintf("127.0.0.1:%d", r.port)}, nil, r.base()+"/mcp")
		waitHealthy(t, r)
		reps = append(reps, r)
	}

	// One HAProxy, two frontends: "one" balances over r1 only, "three"
	// over all three. Health checks on /healthz every 100 ms; a connection
	// that fails (the replica is gone) is retried on another server
	// (retry-on conn-failure + redispatch: the request never reached a
	// replica, so retrying it cannot run a tool twice).
	onePort, threePort, statsPort := freePort(t), freePort(t), freePort(t)
	var servers strings.Builder
	for _, r := range reps {
		fmt.Fprintf(&servers, "    server %s 127.0.0.1:%d check inter 100ms fall 1 rise 2\n", r.name, r.port)
	}
	hcfg := filepath.Join(t.TempDir(), "haproxy.cfg")
	if err := os.WriteFile(hcfg, []byte(haproxyDefaults+fmt.Sprintf(`frontend one
    bind 127.0.0.1:%d
    default_backend one
frontend three
    bind 127.0.0.1:%d
    default_backend three
frontend stats
    bind 127.0.0.1:%d
    stats enable
    stats uri /stats
backend one
    balance roundrobin
    server r1 127.0.0.1:%d check inter 100ms fall 1 rise 2
backend three
    balance roundrobin
%s`, onePort, threePort, statsPort, reps[0].port, servers.String())), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(haproxy, "-c", "-f", hcfg).CombinedOutput(); err != nil {
		t.Fatalf("haproxy -c: %v\n%s", err, out)
	}
	startHTTPServer(t, []string{haproxy, "-db", "-f", hcfg}, nil, fmt.Sprintf("http://127.0.0.1:%d/mcp", threePort))
	oneURL := fmt.Sprintf("http://127.0.0.1:%d/mcp", onePort)
	threeURL := fmt.Sprintf("http://127.0.0.1:%d/mcp", threePort)
	waitBackendUp(t, statsPort, "three", 3)

	// Warm up (first Go/HTTP connections, index build) on both paths.
	runLoad(t, oneURL, 10, 5, nil)
	runLoad(t, threeURL, 10, 5, nil)

	one := runLoad(t, oneURL, scaleClients, scaleCalls, nil)
	before := callCounts(t, reps)
	three := runLoad(t, threeURL, scaleClients, scaleCalls, nil)
	after := callCounts(t, reps)
	for _, res := range []loadResult{one, three} {
		if res.failed > 0 || res.connectErrs > 0 {
			t.Errorf("%s: %d of %d calls failed, %d connects failed; first error: %v; first connect error: %v", res.url, res.failed, res.calls, res.connectErrs, res.firstErr, res.firstConnectErr)
		}
	}
	t.Logf("1 replica:  %d clients x %d calls = %d calls in %v: %.0f calls/s", scaleClients, scaleCalls, one.calls, one.elapsed.Round(time.Millisecond), one.rate())
	t.Logf("3 replicas: %d clients x %d calls = %d calls in %v: %.0f calls/s", scaleClients, scaleCalls, three.calls, three.elapsed.Round(time.Millisecond), three.rate())
	t.Logf("throughput ratio 3 replicas / 1 replica: %.2f (this machine: %d CPUs shared by HAProxy, the proxies, their upstreams and the clients)", three.rate()/one.rate(), runtime.NumCPU())
	// Every replica answered part of the 3-replica run (round robin).
	var per []string
	total := 0.0
	for i := range reps {
		total += after[i] - before[i]
	}
	for i, r := range reps {
		d := after[i] - before[i]
		per = append(per, fmt.Sprintf("%s=%.0f", r.name, d))
		if d < total/5 {
			t.Errorf("replica %s made %.0f of the %.0f upstream calls of the 3-replica run; round robin should give each about a third", r.name, d, total)
		}
	}
	t.Logf("upstream calls (tool_call) per replica in the 3-replica run: %s", strings.Join(per, " "))
	t.Logf("clients per protocol in each run: %v", three.protocolGenerations)

	// A replica killed mid-run: r2 gets SIGKILL once a third of the calls
	// are done (100 clients x killCalls calls, to keep the test short). Calls in flight on it fail; HAProxy's health check takes
	// it out within about 100 ms, and connections refused before that are
	// retried on another replica.
	var killedAt time.Time
	var killOnce sync.Once
	const killCalls = 20
	kill := func(done int64) {
		if done >= scaleClients*killCalls/3 {
			killOnce.Do(func() {
				killedAt = time.Now()
				_ = reps[1].proc.Cmd.Process.Kill()
			})
		}
	}
	k := runLoad(t, threeURL, scaleClients, killCalls, kill)
	if killedAt.IsZero() {
		t.Fatal("the replica was never killed")
	}
	window := time.Duration(0)
	if k.failed > 0 {
		window = k.lastFail.Sub(killedAt)
	}
	t.Logf("replica r2 killed after %d calls: %d of %d calls failed (%.2f%%), %d connects failed; failures from the kill until %v after it; %.0f calls/s over the run",
		scaleClients*killCalls/3, k.failed, k.calls, 100*float64(k.failed)/float64(k.calls), k.connectErrs, window.Round(time.Millisecond), k.rate())
	if k.failed > 0 {
		t.Logf("first failure: %v", k.firstErr)
	}
	if k.connectErrs > 0 {
		t.Errorf("%d clients could not connect while a replica was down: %v", k.connectErrs, k.firstConnectErr)
	}
	// Every failure happened because of the kill: in flight at the moment
	// r2 died (at most one call per client), not later.
	if k.failed > scaleClients {
		t.Errorf("%d calls failed after the kill; at most %d (one in flight per client) should", k.failed, scaleClients)
	}
	// After the kill, the two survivors serve everything.
	if res := runLoad(t, threeURL, 20, 10, nil); res.failed > 0 || res.connectErrs > 0 {
		t.Errorf("after the kill: %d calls failed, %d connects: %v %v", res.failed, res.connectErrs, res.firstErr, res.firstConnectErr)
	}
}

// loadResult is what one load run measured.
type loadResult struct {
	url                 string
	calls, failed       int
	connectErrs         int
	elapsed             time.Duration
	firstErr            error
	firstConnectErr     error
	lastFail            time.Time
	protocolGenerations map[string]int
}

func (r *loadResult) rate() float64 { return float64(r.calls) / r.elapsed.Seconds() }

// runLoad runs clients concurrent clients, each connecting once and making
// calls tools/call requests (tool_search, tool_describe and tool_call in
// turn), and returns the counts. Clients alternate between the go-sdk at
// 2026-07-28 (server/discover, no initialize), the go-sdk at 2025-11-25
// (initialize; stateless replicas answer it and forget it) and mcp-go
// (every fifth client, 2026-07-28). onDone, if non-nil, is called with the
// number of calls finished so far after each call.
func runLoad(t *testing.T, url string, clients, calls int, onDone func(done int64)) loadResult {
	t.Helper()
	res := loadResult{url: url, protocolGenerations: map[string]int{}}
	var mu sync.Mutex // guards res
	var done atomic.Int64
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		res.failed++
		res.lastFail = time.Now()
		if res.firstErr == nil {
			res.firstErr = err
		}
	}
	start := time.Now()
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			call, version, closeFn, err := loadClient(url, c)
			if err != nil {
				mu.Lock()
				res.connectErrs++
				if res.firstConnectErr == nil {
					res.firstConnectErr = fmt.Errorf("client %d: %w", c, err)
				}
				mu.Unlock()
				return
			}
			defer closeFn()
			mu.Lock()
			res.protocolGenerations[version]++
			mu.Unlock()
			for i := range calls {
				var name string
				var args map[string]any
				switch i % 3 {
				case 0:
					name, args = "tool_search", map[string]any{"query": "create issue"}
				case 1:
					name, args = "tool_describe", map[string]any{"id": "mcp:gh:create_issue"}
				default:
					name, args = "tool_call", map[string]any{"id": "mcp:gh:list_issues", "args": map[string]any{"owner": "o", "repo": fmt.Sprintf("r%d-%d", c, i)}}
				}
				if err := call(name, args); err != nil {
					fail(fmt.Errorf("client %d (%s) call %d %s: %w", c, version, i, name, err))
				}
				n := done.Add(1)
				if onDone != nil {
					onDone(n)
				}
			}
		}()
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	res.calls = int(done.Load())
	return res
}

// loadClient connects client number c to url and returns a function that
// makes one tools/call (an isError result counts as a failure), the
// negotiated protocol version and a close function.
func loadClient(url string, c int) (call func(string, map[string]any) error, version string, closeFn func(), err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if c%5 == 4 {
		mc, err := mcpgoclient.NewStreamableHttpClient(url)
		if err != nil {
			return nil, "", nil, err
		}
		if err := mc.Start(ctx); err != nil {
			return nil, "", nil, err
		}
		if _, err := mc.Initialize(ctx, mcpgo.InitializeRequest{Params: mcpgo.InitializeParams{ClientInfo: mcpgo.Implementation{Name: "mcpgo-load", Version: "1"}}}); err != nil {
			mc.Close()
			return nil, "", nil, err
		}
		if _, err := mc.ListTools(ctx, mcpgo.ListToolsRequest{}); err != nil {
			mc.Close()
			return nil, "", nil, err
		}
		return func(name string, args map[string]any) error {
			cctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			r, err := mc.CallTool(cctx, mcpgo.CallToolRequest{Params: mcpgo.CallToolParams{Name: name, Arguments: args}})
			if err == nil && r.IsError {
				err = fmt.Errorf("isError result: %v", r.Content)
			}
			return err
		}, "mcp-go " + mc.ProtocolVersion(), func() { mc.Close() }, nil
	}
	pv := ""
	if c%2 == 1 {
		pv = "2025-11-25"
	}
	cl := gosdk.NewClient(&gosdk.Implementation{Name: "gosdk-load", Version: "1"}, nil)
	cs, err := cl.Connect(ctx, &gosdk.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, &gosdk.ClientSessionOptions{ProtocolVersion: pv})
	if err != nil {
		return nil, "", nil, err
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		cs.Close()
		return nil, "", nil, err
	}
	return func(name string, args map[string]any) error {
		cctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		r, err := cs.CallTool(cctx, &gosdk.CallToolParams{Name: name, Arguments: args})
		if err == nil && r.IsError {
			err = fmt.Errorf("isError result: %v", r.Content)
		}
		return err
	}, "go-sdk " + cs.InitializeResult().ProtocolVersion, func() { cs.Close() }, nil
}

// waitHealthy waits until the replica's /healthz says its upstream is up.
func waitHealthy(t *testing.T, r replica) {
	t.Helper()
	deadline := time.Now().Add(readyTimeout)
	for {
		resp, err := http.Get(r.base() + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica %s not healthy after %v: %v\n%s", r.name, readyTimeout, err, tail(r.proc.Output(), 2000))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitBackendUp waits until HAProxy's stats (CSV) show n servers UP in
// backend.
func waitBackendUp(t *testing.T, statsPort int, backend string, n int) {
	t.Helper()
	deadline := time.Now().Add(readyTimeout)
	for {
		up := 0
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/stats;csv", statsPort))
		if err == nil {
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				f := strings.Split(sc.Text(), ",")
				if len(f) > 17 && f[0] == backend && f[1] != "BACKEND" && f[1] != "FRONTEND" && strings.HasPrefix(f[17], "UP") {
					up++
				}
			}
			resp.Body.Close()
		}
		if up >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("haproxy backend %s: %d servers up after %v, want %d (%v)", backend, up, readyTimeout, n, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// callCounts returns each replica's mcp_toolsearch_tool_calls_total (all
// labels summed), from its /metrics.
func callCounts(t *testing.T, reps []replica) []float64 {
	t.Helper()
	out := make([]float64, len(reps))
	for i, r := range reps {
		resp, err := http.Get(r.base() + "/metrics")
		if err != nil {
			t.Fatalf("%s /metrics: %v", r.name, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "mcp_toolsearch_tool_calls_total{") {
				f := strings.Fields(line)
				v, _ := strconv.ParseFloat(f[len(f)-1], 64)
				out[i] += v
			}
		}
	}
	return out
}
