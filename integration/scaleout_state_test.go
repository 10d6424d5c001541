//go:build unix

package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/testauth"
	"github.com/mcp-toolsearch/mcp-toolsearch/internal/testredis"
)

// Scale-out on a shared state store: three replicas of the real binary
// (`[server] stateless = true`, `state_store` on a redis-server the test
// starts) behind HAProxy, round robin, no stickiness; an OAuth
// authorization server (internal/testauth), an upstream that wants each
// user's own token (credential source "oauth") and a counting upstream
// whose "inc" needs approval. The test prints its figures; it asserts:
//
//   - a user connects the upstream once, through one replica's link, and
//     calls it through the other replicas;
//   - a per-subject limit of 3 holds across replicas: 10 concurrent calls
//     through the balancer, 3 pass;
//   - an approval answered by a retry that lands on another replica runs
//     the call there, once;
//   - the store killed under load and started again: calls that need it
//     are refused with a clear error while it is down (never passed
//     unchecked), and succeed again once it is back, without a restart;
//   - a replica killed between an approval question and its retry: the
//     retry completes on another replica, and a second retry with the same
//     state is refused (nothing runs twice).
func TestScaleOutSharedState(t *testing.T) {
	if testing.Short() {
		t.Skip("scale-out run (-short)")
	}
	haproxy, err := exec.LookPath("haproxy")
	if err != nil {
		missingDep(t, "haproxy not found in PATH (scripts/install-test-deps.sh installs Debian's haproxy with apt-get)")
	}
	store := testredis.Start(t, testredis.Options{Password: "store-pw-7f3a", Persist: true})
	bin := buildProxy(t)

	as := testauth.New()
	t.Cleanup(as.Close)
	gh := testauth.NewUpstream(as, "service-token-gh")
	t.Cleanup(gh.Close)
	var incs, pings atomic.Int32
	counter := countingServer(t, &incs, &pings)

	front, statsPort := freePort(t), freePort(t)
	public := fmt.Sprintf("http://127.0.0.1:%d", front)
	as.AddClient(testauth.Client{ID: "proxy", Secret: "proxy-secret", RedirectURIs: []string{public + "/oauth/callback"}})
	env := []string{
		"REDIS_PASSWORD=store-pw-7f3a",
		"STATE_KEY=c3RhdGUta2V5LWZvci1zY2FsZS1vdXQtdGVzdHMtMzI=",
		"TOKEN_KEY=dG9rZW4ta2V5LWZvci1zY2FsZS1vdXQtdGVzdHMtMzI=",
		"GH_SECRET=proxy-secret",
	}
	reps := make([]replica, 3)
	audits := make([]string, 3)
	for i := range reps {
		reps[i] = replica{name: fmt.Sprintf("r%d", i+1), port: freePort(t)}
		dir := t.TempDir()
		audits[i] = filepath.Join(dir, "audit.jsonl")
		cfg := filepath.Join(dir, "config.toml")
		if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`
[server]
transport = "http"
stateless = true
state_store = "redis://:${REDIS_PASSWORD}@127.0.0.1:%[1]d/0"
state_store_key = "${STATE_KEY}"

[auth]
public_url = %[2]q
issuer = %[3]q
token_store_key = "${TOKEN_KEY}"

[audit]
file = "audit.jsonl"
arguments = true

[rate_limits]
per_subject = { rate = 0.02, burst = 3 }

[tools]
require_approval = ["c__inc"]

[upstreams.gh]
url = %[4]q
headers = { Authorization = "Bearer service-token-gh" }
[upstreams.gh.credential]
source = "oauth"
audience = %[4]q
authorize_url = "%[3]s/authorize"
token_url = "%[3]s/token"
client_id = "proxy"
client_secret = "${GH_SECRET}"

[upstreams.c]
url = %[5]q
`, store.Port, public, as.URL, gh.URL, counter)), 0o600); err != nil {
			t.Fatal(err)
		}
		reps[i].proc = startHTTPServer(t, []string{bin, "serve", "--config", cfg, "--listen", fmt.Sprintf("127.0.0.1:%d", reps[i].port)}, env, reps[i].base()+"/mcp")
	}
	for _, r := range reps {
		waitHealthy(t, r)
	}
	var servers strings.Builder
	for _, r := range reps {
		fmt.Fprintf(&servers, "    server %s 127.0.0.1:%d check inter 100ms fall 1 rise 2\n", r.name, r.port)
	}
	hcfg := filepath.Join(t.TempDir(), "haproxy.cfg")
	if err := os.WriteFile(hcfg, []byte(haproxyDefaults+fmt.Sprintf(`frontend three
    bind 127.0.0.1:%d
    default_backend three
frontend stats
    bind 127.0.0.1:%d
    stats enable
    stats uri /stats
backend three
    balance roundrobin
%s`, front, statsPort, servers.String())), 0o644); err != nil {
		t.Fatal(err)
	}
	startHTTPServer(t, []string{haproxy, "-db", "-f", hcfg}, nil, public+"/mcp")
	waitBackendUp(t, statsPort, "three", 3)
	lbURL := public + "/mcp"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	// The clients: go-sdk at 2026-07-28, one bearer token per user.
	token := func(user string) string { return as.Mint(user, []string{public + "/mcp"}, "", time.Hour) }
	// /metrics wants a token like /mcp.
	metrics := func(series string) []float64 { return metricByReplica(t, reps, token("metrics-reader"), series) }
	client := func(user, url string, opts *gosdk.ClientOptions) *gosdk.ClientSession {
		t.Helper()
		hc := &http.Client{Transport: headerRoundTripper{map[string]string{"Authorization": "Bearer " + token(user)}}}
		cs, err := gosdk.NewClient(&gosdk.Implementation{Name: "scale-" + user, Version: "1"}, opts).Connect(ctx, &gosdk.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, nil)
		if err != nil {
			t.Fatalf("%s connects to %s: %v", user, url, err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	var calls atomic.Int64 // tools/call requests the test made, retries included
	call := func(cs *gosdk.ClientSession, tool string, args map[string]any) *gosdk.CallToolResult {
		t.Helper()
		calls.Add(1)
		r, err := cs.CallTool(ctx, &gosdk.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		return r
	}

	// 1. Connect once, call through every replica.
	connects := map[string]int{}
	for _, user := range []string{"alice", "bob"} {
		first := client(user, reps[0].base()+"/mcp", nil) // the link comes from r1
		r := call(first, "gh__whoami", nil)
		link, _ := r.Meta["io.github.mcp-toolsearch/connectUrl"].(string)
		if !r.IsError || link == "" {
			t.Fatalf("%s's first call: %q; want the connect prompt with its link", user, text(r))
		}
		browseLink(t, link, user) // the callback goes through the balancer
		connects[user]++
		for _, rep := range reps[1:] {
			if got := text(call(client(user, rep.base()+"/mcp", nil), "gh__whoami", nil)); got != "you are "+user {
				t.Fatalf("%s on %s after connecting through r1's link: %q", user, rep.name, got)
			}
		}
	}
	codes := 0
	for _, req := range as.TokenRequests() {
		if strings.HasPrefix(req, "authorization_code") {
			codes++
		}
	}
	if codes != 2 {
		t.Fatalf("authorization code grants: %d, want 2 (one connect per user)", codes)
	}
	t.Logf("connect: alice and bob each connected once (%d code grants), through r1's link; each then called gh on r2 and r3 as themselves", codes)

	// A client that takes URL elicitation is shown the link by the replica
	// its call reaches; the user signs in; the client's retry reaches
	// another replica, which waits for the token in the store and calls.
	var shown string
	henry := client("henry", lbURL, &gosdk.ClientOptions{
		Capabilities: &gosdk.ClientCapabilities{Elicitation: &gosdk.ElicitationCapabilities{URL: &gosdk.URLElicitationCapabilities{}}},
		ElicitationHandler: func(_ context.Context, req *gosdk.ElicitRequest) (*gosdk.ElicitResult, error) {
			shown = req.Params.Mode + " " + req.Params.URL
			browseLink(t, req.Params.URL, "henry")
			return &gosdk.ElicitResult{Action: "accept"}, nil
		},
	})
	if got := text(call(henry, "gh__whoami", nil)); got != "you are henry" || !strings.HasPrefix(shown, "url "+as.URL+"/authorize?") {
		t.Fatalf("henry, connecting by URL elicitation through the balancer: %q (shown %q)", got, shown)
	}
	connects["henry"]++
	t.Logf("connect by URL elicitation: henry was shown the link by one replica, signed in once, and his retry's replica made the call")
	t.Logf("per-user connects needed: %v (3 replicas)", connects)

	// 2. One limit across replicas: 10 concurrent calls, burst 3.
	beforeOK, beforeLimited := metrics(`mcp_toolsearch_tool_calls_total{outcome="ok",upstream="c"}`), metrics(`mcp_toolsearch_rate_limited_total{kind="subject"}`)
	carol := client("carol", lbURL, nil)
	var passed, refused atomic.Int32
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			calls.Add(1)
			r, err := carol.CallTool(ctx, &gosdk.CallToolParams{Name: "c__ping"})
			switch {
			case err != nil:
				t.Errorf("carol: %v", err)
			case r.IsError && r.Meta["io.github.mcp-toolsearch/blocked"] == "rate_limit" && strings.Contains(text(r), `rate limit exceeded for subject "user:carol"`):
				refused.Add(1)
			case !r.IsError:
				passed.Add(1)
			default:
				t.Errorf("carol: %q", text(r))
			}
		}()
	}
	wg.Wait()
	afterOK, afterLimited := metrics(`mcp_toolsearch_tool_calls_total{outcome="ok",upstream="c"}`), metrics(`mcp_toolsearch_rate_limited_total{kind="subject"}`)
	var decisions []string
	served := 0
	for i, r := range reps {
		ok, lim := afterOK[i]-beforeOK[i], afterLimited[i]-beforeLimited[i]
		decisions = append(decisions, fmt.Sprintf("%s %g passed %g refused", r.name, ok, lim))
		if ok+lim > 0 {
			served++
		}
	}
	t.Logf("limit: per_subject burst 3, 10 concurrent calls through the balancer: %d passed, %d refused; by replica: %s", passed.Load(), refused.Load(), strings.Join(decisions, ", "))
	if passed.Load() != 3 || refused.Load() != 7 || served != 3 {
		t.Fatalf("limit across replicas: %d passed, %d refused, %d replicas decided; want 3, 7, 3", passed.Load(), refused.Load(), served)
	}

	// 3. Approvals answered on another replica: the go-sdk client's own
	// retry through the balancer (strict round robin: the retry reaches
	// the next replica), three users, two approvals each.
	yes := &gosdk.ClientOptions{ElicitationHandler: func(context.Context, *gosdk.ElicitRequest) (*gosdk.ElicitResult, error) {
		return &gosdk.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
	}}
	before := incs.Load()
	approvals := 0
	for _, user := range []string{"dave", "erin", "frank"} {
		cs := client(user, lbURL, yes)
		for i := range 2 {
			r := call(cs, "c__inc", map[string]any{"n": i})
			if r.IsError || !strings.HasPrefix(text(r), "inc ") {
				t.Fatalf("%s's approved call %d: %q", user, i, text(r))
			}
			approvals++
		}
	}
	if got := incs.Load() - before; int(got) != approvals {
		t.Fatalf("upstream ran %d approved calls, want %d", got, approvals)
	}
	asked, ran := auditCalls(t, audits, "input_required"), auditCalls(t, audits, "ok")
	moved := 0
	for k, at := range asked {
		if r, ok := ran[k]; ok && r != at {
			moved++
		}
	}
	t.Logf("approvals: %d asked, %d run; %d of them run on another replica than the one that asked", len(asked), approvals, moved)
	if len(asked) != approvals || moved != approvals {
		t.Fatalf("approvals: %d asked, %d resumed on another replica; want %d and %d", len(asked), moved, approvals, approvals)
	}

	// 4. The store killed under load, and started again.
	type tally struct{ ok, refused, other int }
	var mu sync.Mutex
	phases := map[string]*tally{"before": {}, "switching": {}, "down": {}, "back": {}} // every phase before the callers start: they read the map
	var phase atomic.Value
	phase.Store("before")
	var seq atomic.Int64
	stop := make(chan struct{})
	var lw sync.WaitGroup
	var otherText string
	for g := range 12 {
		lw.Add(1)
		go func() {
			defer lw.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				// A fresh subject per call: the per-subject limit never
				// decides here, the store's state does.
				user := fmt.Sprintf("load-%d-%d", g, seq.Add(1))
				hc := &http.Client{Transport: headerRoundTripper{map[string]string{"Authorization": "Bearer " + token(user)}}}
				p := phase.Load().(string)
				calls.Add(1)
				r, err := callOnce(ctx, lbURL, hc, "c__ping")
				if p != phase.Load().(string) {
					continue // straddled a change: counted nowhere
				}
				mu.Lock()
				switch {
				case err == nil && !r.IsError:
					phases[p].ok++
				case err == nil && strings.Contains(text(r), "rate limits could not be checked") && strings.Contains(text(r), "state store unavailable"):
					phases[p].refused++
				default:
					phases[p].other++
					if err != nil {
						otherText = err.Error()
					} else {
						otherText = text(r)
					}
				}
				mu.Unlock()
			}
		}()
	}
	time.Sleep(2 * time.Second)
	phase.Store("switching")
	store.Stop()
	time.Sleep(300 * time.Millisecond)
	phase.Store("down")
	time.Sleep(2 * time.Second)
	phase.Store("switching")
	store.Start()
	time.Sleep(1 * time.Second)
	phase.Store("back")
	time.Sleep(2 * time.Second)
	close(stop)
	lw.Wait()
	for _, p := range []string{"before", "down", "back"} {
		x := phases[p]
		t.Logf("store %s: %d calls ok, %d refused (store unavailable), %d other", map[string]string{"before": "up", "down": "down (SIGKILL)", "back": "back (same data, no proxy restart)"}[p], x.ok, x.refused, x.other)
	}
	if b, d, k := phases["before"], phases["down"], phases["back"]; b.ok == 0 || b.refused+b.other > 0 || d.ok > 0 || d.refused == 0 || d.other > 0 || k.ok == 0 || k.refused+k.other > 0 {
		t.Fatalf("store restart under load: before %+v, down %+v, back %+v (last other: %q); want all ok, all refused, all ok", *b, *d, *k, otherText)
	}
	// Tokens and buckets survived (the store's append-only file): alice
	// still has her token, carol her empty bucket.
	if r := call(client("carol", reps[1].base()+"/mcp", nil), "c__ping", nil); !r.IsError || r.Meta["io.github.mcp-toolsearch/blocked"] != "rate_limit" {
		t.Fatalf("carol after the store restart: %q; want still limited", text(r))
	}

	// 5. A replica killed between the approval question and the retry.
	manual := &gosdk.ClientOptions{MultiRoundTrip: &gosdk.MultiRoundTripOptions{Disabled: true},
		Capabilities: &gosdk.ClientCapabilities{Elicitation: &gosdk.ElicitationCapabilities{Form: &gosdk.FormElicitationCapabilities{}}}}
	grace := client("grace", reps[0].base()+"/mcp", manual)
	r1 := call(grace, "c__inc", map[string]any{"n": 99})
	if !r1.NeedsInput() {
		t.Fatalf("grace's first round: %q; want input_required", text(r1))
	}
	before = incs.Load()
	_ = reps[0].proc.Cmd.Process.Kill()
	waitServerDown(t, statsPort, "three", "r1") // requests in flight on r1 are not retried by HAProxy (they may have run)
	viaLB := client("grace", lbURL, manual)
	answer := gosdk.InputResponseMap{"approval": &gosdk.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}}
	calls.Add(2)
	r2, err := viaLB.CallTool(ctx, &gosdk.CallToolParams{Name: "c__inc", Arguments: map[string]any{"n": 99}, RequestState: r1.RequestState, InputResponses: answer})
	if err != nil || r2.IsError || !strings.HasPrefix(text(r2), "inc ") {
		t.Fatalf("retry after r1 was killed: %v %q", err, text(r2))
	}
	_, err = viaLB.CallTool(ctx, &gosdk.CallToolParams{Name: "c__inc", Arguments: map[string]any{"n": 99}, RequestState: r1.RequestState, InputResponses: answer})
	if err == nil || !strings.Contains(err.Error(), "already used") {
		t.Fatalf("the same retry again: %v; want already used", err)
	}
	if got := incs.Load() - before; got != 1 {
		t.Fatalf("the upstream ran the killed replica's approved call %d times, want 1", got)
	}
	t.Logf("replica killed mid-exchange: r1 asked, was killed, the retry ran the call once on another replica; the same retry again: %v", err)
	t.Logf("total: %d tools/call requests by the test's clients (the go-sdk's own retries not counted), 0 unexpected errors", calls.Load())
}

// countingServer is an MCP server (go-sdk, Streamable HTTP) with "inc"
// and "ping", counting their calls.
func countingServer(t *testing.T, incs, pings *atomic.Int32) string {
	t.Helper()
	s := gosdk.NewServer(&gosdk.Implementation{Name: "counting", Version: "1"}, nil)
	obj := json.RawMessage(`{"type":"object"}`)
	s.AddTool(&gosdk.Tool{Name: "inc", Description: "Adds one.", InputSchema: obj}, func(context.Context, *gosdk.CallToolRequest) (*gosdk.CallToolResult, error) {
		return &gosdk.CallToolResult{Content: []gosdk.Content{&gosdk.TextContent{Text: fmt.Sprintf("inc %d", incs.Add(1))}}}, nil
	})
	s.AddTool(&gosdk.Tool{Name: "ping", Description: "Answers pong.", InputSchema: obj}, func(context.Context, *gosdk.CallToolRequest) (*gosdk.CallToolResult, error) {
		pings.Add(1)
		return &gosdk.CallToolResult{Content: []gosdk.Content{&gosdk.TextContent{Text: "pong"}}}, nil
	})
	hs := httptest.NewServer(gosdk.NewStreamableHTTPHandler(func(*http.Request) *gosdk.Server { return s }, nil))
	t.Cleanup(hs.Close)
	return hs.URL
}

// callOnce connects a stateless go-sdk client with hc and makes one call.
func callOnce(ctx context.Context, url string, hc *http.Client, tool string) (*gosdk.CallToolResult, error) {
	cs, err := gosdk.NewClient(&gosdk.Implementation{Name: "load", Version: "1"}, nil).Connect(ctx, &gosdk.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, nil)
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	return cs.CallTool(ctx, &gosdk.CallToolParams{Name: tool})
}

func text(r *gosdk.CallToolResult) string {
	if r == nil {
		return "<nil>"
	}
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*gosdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// browseLink plays the user's browser on a connect link.
func browseLink(t *testing.T, link, user string) {
	t.Helper()
	resp, err := http.Get(link + "&login=" + user)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(b), "Connected gh") {
		t.Fatalf("callback: %d %s", resp.StatusCode, b)
	}
}

// metricByReplica reads one series (exact name and labels) from each
// replica's /metrics.
func metricByReplica(t *testing.T, reps []replica, token, series string) []float64 {
	t.Helper()
	out := make([]float64, len(reps))
	for i, r := range reps {
		req, _ := http.NewRequest(http.MethodGet, r.base()+"/metrics", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s /metrics: %v %v", r.name, resp, err)
		}
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), series+" "); ok {
				fmt.Sscan(v, &out[i])
			}
		}
		resp.Body.Close()
	}
	return out
}

// auditCalls maps "subject args" of the c:inc call lines with outcome in
// the replicas' audit logs to the replica (index) that wrote them.
func auditCalls(t *testing.T, files []string, outcome string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for i, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			var ev struct {
				Kind, Subject, Upstream, Outcome string
				Args                             json.RawMessage
			}
			if json.Unmarshal([]byte(line), &ev) != nil || ev.Kind != "call" || ev.Upstream != "c" || ev.Outcome != outcome || len(ev.Args) == 0 || string(ev.Args) == "{}" {
				continue
			}
			out[ev.Subject+" "+string(ev.Args)] = i
		}
	}
	return out
}

// waitServerDown waits until HAProxy's stats show server down in backend.
func waitServerDown(t *testing.T, statsPort int, backend, server string) {
	t.Helper()
	deadline := time.Now().Add(readyTimeout)
	for {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/stats;csv", statsPort))
		if err == nil {
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				f := strings.Split(sc.Text(), ",")
				if len(f) > 17 && f[0] == backend && f[1] == server && strings.HasPrefix(f[17], "DOWN") {
					resp.Body.Close()
					return
				}
			}
			resp.Body.Close()
		}
		if time.Now().After(deadline) {
			t.Fatalf("haproxy: %s/%s not down after %v", backend, server, readyTimeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
