package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestThrownValuesNeverKillWorker: values whose description throws again
// (toString, a stack getter, a Proxy) and huge error messages end the run
// with a bounded error, never a dead worker.
func TestThrownValuesNeverKillWorker(t *testing.T) {
	p := newPool(t, nil)
	for _, body := range []string{
		`throw {toString(){throw 1}}`,
		`return Promise.reject({toString(){throw 1}})`,
		`throw new Proxy({}, {get(){throw 1}, ownKeys(){throw 2}})`,
		`const e = new Error("m"); Object.defineProperty(e, "stack", {get(){throw 7}}); throw e`,
		`throw new Error("x".repeat(3e6))`,
		`throw new Error("x".repeat(5e6))`,
	} {
		r := p.Run(context.Background(), body, 10*time.Second, nil)
		if r.OK || strings.Contains(r.Error, "worker died") || r.Error == "" {
			t.Errorf("%.50s: ok=%v error %.200q", body, r.OK, r.Error)
		}
		if len(r.Error) > maxRunErrorBytes+64 {
			t.Errorf("%.50s: error of %d bytes, want at most about %d", body, len(r.Error), maxRunErrorBytes)
		}
	}
}

// TestBridgeErrorsBounded: a bridge error echoing a huge argument reaches
// the script and Result.Calls cut to maxCallErrorBytes.
func TestBridgeErrorsBounded(t *testing.T) {
	p := newPool(t, nil)
	echo := func(ctx context.Context, op string, args json.RawMessage) (json.RawMessage, error) {
		return nil, fmt.Errorf("unknown tool %s", args)
	}
	r := p.Run(context.Background(), `const big = "y".repeat(1e6); let n = 0;
for (let i = 0; i < 4; i++) { try { await openclaw.tools.describe(big) } catch (e) { n = Math.max(n, e.message.length) } }
return n`, 20*time.Second, echo)
	if !r.OK {
		t.Fatalf("run failed: %s", r.Error)
	}
	var n int
	if err := json.Unmarshal(r.Value, &n); err != nil || n > maxCallErrorBytes+40 || n == 0 {
		t.Fatalf("error message seen by the script: %s bytes", r.Value)
	}
	for _, c := range r.Calls {
		if len(c.Error) > maxCallErrorBytes+40 {
			t.Fatalf("call record error of %d bytes", len(c.Error))
		}
	}
}

// TestNoReaderLeakAfterTimeouts: a run that floods console output until it
// times out leaves no stuck reader and no open pipe behind.
func TestNoReaderLeakAfterTimeouts(t *testing.T) {
	p := newPool(t, func(o *Options) { o.PoolSize = 1 })
	// Per OS: peros_unix_test.go, peros_windows_test.go.
	fds := func() int {
		n, err := openDescriptors()
		if err != nil {
			t.Skipf("cannot count this process's open descriptors: %v", err)
		}
		return n
	}
	p.Run(context.Background(), `return 1`, 5*time.Second, nil) // settle the pool
	time.Sleep(300 * time.Millisecond)
	before := fds()
	for i := 0; i < 6; i++ {
		r := p.Run(context.Background(), `for(;;) console.log("")`, 1000*time.Millisecond, nil)
		if !r.TimedOut {
			t.Fatalf("run %d: want a timeout, got %+v", i, r.Error)
		}
	}
	p.Run(context.Background(), `return 1`, 5*time.Second, nil)
	// The killed workers' pipes close in the background (their readers
	// drain what the flood left, the processes are reaped), and the
	// pool's refill spawns a spare worker meanwhile, whose start holds a
	// few descriptors for a moment: one reading can be high without a
	// leak. Judge by the same reading the wait ends on; a leak stays
	// high for the whole (generous, fail-safe) wait.
	settle := time.Now()
	deadline := settle.Add(30 * time.Second)
	after := fds()
	for after > before+4 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		after = fds()
	}
	if after > before+4 {
		t.Fatalf("open fds grew from %d to %d over 6 timed-out runs (still after %s)", before, after, time.Since(settle).Round(time.Millisecond))
	}
	t.Logf("open descriptors: %d before, %d after 6 timed-out runs (settled in %s)", before, after, time.Since(settle).Round(time.Millisecond))
}

// TestConcurrentRunsCapped: with MaxConcurrentRuns 1, two runs never have
// bridge calls in flight at the same time.
func TestConcurrentRunsCapped(t *testing.T) {
	p := newPool(t, func(o *Options) { o.MaxConcurrentRuns = 1 })
	var inFlight, maxSeen atomic.Int32
	bridge := func(ctx context.Context, op string, args json.RawMessage) (json.RawMessage, error) {
		n := inFlight.Add(1)
		for m := maxSeen.Load(); n > m && !maxSeen.CompareAndSwap(m, n); m = maxSeen.Load() {
		}
		time.Sleep(200 * time.Millisecond)
		inFlight.Add(-1)
		return json.RawMessage(`[]`), nil
	}
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r := p.Run(context.Background(), `return await openclaw.tools.search("x")`, 10*time.Second, bridge); !r.OK {
				t.Errorf("run failed: %s", r.Error)
			}
		}()
	}
	wg.Wait()
	if maxSeen.Load() != 1 {
		t.Fatalf("bridge calls of different runs in flight at once: %d", maxSeen.Load())
	}
}
