//go:build unix

package integration

// The bridge cannot inflate the proxy: four clients each
// run a tool_search_code body that fires 64 bridge calls with 3.9 MB of
// arguments at once (the attack under test), then 64 calls of 250 KB
// (under the per-call limit, over the limit of a run), against the real
// binary. Every call over a cap fails with an error naming the cap, and
// the proxy's RSS stays within +100 MB of where it was and comes back.
// Figures are logged; run with -v:
//
//	go test ./integration -run TestBridgeCannotInflateProxy -v

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// hostileBridgeBody fires 64 bridge calls with size bytes of arguments each.
func hostileBridgeBody(size int) string {
	return fmt.Sprintf(`const big = "x".repeat(%d);
const rs = await Promise.allSettled(Array.from({length: 64}, () => openclaw.tools.call("mcp:gh:create_issue", {owner: "o", repo: "r", title: big})));
return rs.map(r => r.status === "fulfilled" ? "ok" : String((r.reason && r.reason.message) || r.reason).slice(0, 160));`, size)
}

func TestBridgeCannotInflateProxy(t *testing.T) {
	// Four clients on one address with no token are one owner of
	// sessionless (2026-07-28) runs (proxy/sandboxowner.go:
	// never the client-declared name), so the owner's allowance is raised
	// to the four runs of the attack.
	url, proc := startCodeProxy(t, "code_timeout_ms = 60000\ncode_max_call_bytes = 262000\ncode_max_run_bytes = 2000000\ncode_max_runs_per_session = 4")
	pid := proc.PID()
	var clients []*gosdk.ClientSession
	for i := 0; i < 4; i++ { // four clients (2026-07-28: no session; one owner, see above)
		clients = append(clients, gosdkClientNamed(t, url, fmt.Sprintf("hostile-%d", i+1), ""))
	}
	codeRunOK(t, clients[0], `return (await openclaw.tools.search("issue")).length`)

	for _, size := range []int{3900000, 250000} {
		before := rssKB(pid)
		during, after, seconds, outcomes := hostileRuns(t, pid, clients, hostileBridgeBody(size))
		t.Logf("4 concurrent runs x 64 bridge calls of %.1f MB in %.1f s; outcomes of the 256 calls: %v", float64(size)/1e6, seconds, outcomes)
		t.Logf("proxy RSS: before %d MB, peak during %d MB (+%d MB), after %d MB", before/1024, during/1024, (during-before)/1024, after/1024)
		if grown := (during - before) / 1024; grown > 100 {
			t.Errorf("the proxy grew by %d MB under four hostile runs, want at most 100 MB", grown)
		}
		if (after-before)/1024 > 30 {
			t.Errorf("the proxy did not come back: %d MB after, %d MB before", after/1024, before/1024)
		}
		for k := range outcomes {
			if k != "ok" && !strings.Contains(k, "limit") {
				t.Errorf("a call failed without naming the cap: %q", k)
			}
		}
		if size < 256<<10 && (outcomes["ok"] == 0 || outcomes["openclaw.tools.call refused: this run already sent N bytes of bridge-call arguments, and the limit of a run is N bytes"] == 0) {
			t.Errorf("calls of %d bytes: want some through and the rest refused by the limit of a run: %v", size, outcomes)
		}
	}
	// The limits are the config's (code_max_call_bytes, code_max_run_bytes).
	ctx, cancel := context.WithTimeout(context.Background(), goClientTimeout)
	defer cancel()
	res, err := clients[1].CallTool(ctx, &gosdk.CallToolParams{Name: "tool_search_code", Arguments: map[string]any{"code": `
const big = "x".repeat(270000), mid = "y".repeat(200000), out = [];
out.push(await openclaw.tools.call("mcp:gh:create_issue", {owner: "o", repo: "r", title: big}).then(() => "ok", e => e.message));
for (let i = 0; i < 11; i++) out.push(await openclaw.tools.call("mcp:gh:create_issue", {owner: "o", repo: "r", title: mid}).then(() => "ok", e => e.message));
return out;`}})
	if err != nil {
		t.Fatal(err)
	}
	if txt := contentText(res); !strings.Contains(txt, "over the 262000-byte limit") || !strings.Contains(txt, "the limit of a run is 2000000 bytes") {
		t.Errorf("the configured limits are not the ones applied: %.600s", txt)
	}
}

// hostileRuns runs body in each client at once and returns the peak RSS
// (KiB) while they ran, the RSS once they were over, the time taken and
// the outcomes of their bridge calls (digits replaced by N).
func hostileRuns(t *testing.T, pid int, clients []*gosdk.ClientSession, body string) (during, after int, seconds float64, outcomes map[string]int) {
	t.Helper()
	before := rssKB(pid)
	var peak atomic.Int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			if r := int64(rssKB(pid)); r > peak.Load() {
				peak.Store(r)
			}
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	var wg sync.WaitGroup
	var mu sync.Mutex
	outcomes = map[string]int{}
	digits := regexp.MustCompile(`[0-9]+`)
	start := time.Now()
	for _, cs := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			res, err := cs.CallTool(ctx, &gosdk.CallToolParams{Name: "tool_search_code", Arguments: map[string]any{"code": body}})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				outcomes["client error: "+err.Error()]++
				return
			}
			sc, _ := res.StructuredContent.(map[string]any)
			got, _ := sc["value"].([]any)
			if got == nil {
				outcomes[fmt.Sprintf("run error: %.160v", sc["error"])]++
			}
			for _, g := range got {
				outcomes[digits.ReplaceAllString(fmt.Sprint(g), "N")]++
			}
		}()
	}
	wg.Wait()
	seconds = time.Since(start).Seconds()
	close(stop)
	<-sampled
	// The runs are over; give the proxy a moment to give memory back (it
	// does so 200 ms after a run with big bridge calls; fail-safe bound,
	// the figure is what is asserted). "after" is the first reading within
	// 10 MB of "before", or the last one.
	deadline := time.Now().Add(20 * time.Second)
	after = rssKB(pid)
	for after > before+10*1024 && time.Now().Before(deadline) {
		time.Sleep(500 * time.Millisecond)
		after = rssKB(pid)
	}
	return int(peak.Load()), after, seconds, outcomes
}
