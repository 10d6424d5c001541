package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
)

// TestWireDeadlineAsContext: a call past the go-sdk on a stdio upstream is
// ended at call_timeout by the wire's clock (wiredue.go), not a context of
// its own, with what the context gave before: the same error as the go-sdk
// path's, not before call_timeout, notifications/cancelled for its id with
// the reason "context deadline exceeded"; calls started at different
// times each end at their own deadline (the clock is armed again), and the
// connection keeps working with nothing left on the clock.
func TestWireDeadlineAsContext(t *testing.T) {
	const timeout = 300 * time.Millisecond
	sdk, own, _, ownLog := startPathsWith(t, "stdio", "plain", func(u *config.Upstream) { u.CallTimeout.Duration = timeout })
	sleep := func(m *Manager) (time.Duration, error) {
		start := time.Now()
		_, err := m.CallToolWith(context.Background(), "u", &mcp.CallToolParams{Name: "sleep", Arguments: json.RawMessage(`{"ms":60000}`)}, CallOptions{Raw: &RawResult{}})
		return time.Since(start), err
	}
	var errs [2]error
	for i, m := range []*Manager{sdk, own} {
		took, err := sleep(m)
		if !errors.Is(err, context.DeadlineExceeded) || took < timeout {
			t.Fatalf("manager %d: %v after %v, want context.DeadlineExceeded after at least %v", i, err, took, timeout)
		}
		errs[i] = err
	}
	if errs[0].Error() != errs[1].Error() || !strings.Contains(errs[1].Error(), "call_timeout 300ms exceeded") {
		t.Fatalf("timeout errors differ:\n  go-sdk: %v\n  own:    %v", errs[0], errs[1])
	}
	calls := ownLog.method(t, "tools/call")
	if len(calls) != 1 || !strings.HasPrefix(string(calls[0]["id"]), "-") {
		t.Fatalf("the call did not go past the go-sdk: %v", calls)
	}
	cancelled := func(id string) bool {
		for _, c := range ownLog.method(t, "notifications/cancelled") {
			if string(c["params"]) == `{"reason":"context deadline exceeded","requestId":`+id+`}` {
				return true
			}
		}
		return false
	}
	waitFor(t, "notifications/cancelled", func() bool { return cancelled(string(calls[0]["id"])) })

	// Two calls, the second started half a timeout later: each ends at its
	// own deadline.
	var wg sync.WaitGroup
	var took [2]time.Duration
	var errs2 [2]error
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			took[i], errs2[i] = sleep(own)
		}()
		if i == 0 {
			waitFor(t, "the first call upstream", func() bool { return len(ownLog.method(t, "tools/call")) == 2 })
			time.Sleep(timeout / 2)
		}
	}
	wg.Wait()
	for i := range 2 {
		if errs2[i] == nil || errs2[i].Error() != errs[1].Error() || took[i] < timeout {
			t.Errorf("overlapping call %d: %v after %v, want %q after at least %v", i, errs2[i], took[i], errs[1], timeout)
		}
	}
	calls = ownLog.method(t, "tools/call")
	for _, c := range calls[1:] {
		waitFor(t, "notifications/cancelled", func() bool { return cancelled(string(c["id"])) })
	}
	res, err := own.CallToolWith(context.Background(), "u", &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"text":"still"}`)}, CallOptions{})
	if err != nil || textOf(t, res) != "still" {
		t.Fatalf("echo after the timeouts = %v, %v", res, err)
	}
	w := own.conns["u"].cur.ownToolWire()
	w.mu.Lock()
	left := len(w.due)
	w.mu.Unlock()
	if left != 0 {
		t.Errorf("%d deadlines left on the wire's clock", left)
	}
}
