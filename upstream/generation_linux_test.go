package upstream

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
)

// TestModernLegHealthPing: the 2026-07-28 session beside the shared one
// is watched as the shared one is. A stopped (SIGSTOP) companion fails its
// health pings and is torn down at once: the call pending on it fails as
// unavailable naming the upstream (not at call_timeout), its process is
// killed, the shared session is left alone, and the next 2026-07-28 call
// opens a new companion. A companion answering ping with -32601 counts as
// alive and is kept. When the shared session fails, the companion ends
// with it: its process exits and its watch ends.
func TestModernLegHealthPing(t *testing.T) {
	a, np := stdioUpstream("a", "plain"), stdioUpstream("np", "noping")
	for _, u := range []*config.Upstream{a, np} {
		u.PingInterval.Duration = 100 * time.Millisecond
		u.CallTimeout.Duration = time.Minute
	}
	m, rec := startManager(t, []*config.Upstream{a, np}, Options{Grace: 100 * time.Millisecond})
	waitFor(t, "upstreams ready", func() bool {
		sa, _ := m.Status("a")
		sn, _ := m.Status("np")
		return sa.State == StateReady && sn.State == StateReady
	})
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	echo := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}
	// modern makes a call for a 2026-07-28 client and returns the shared
	// leg and its companion.
	modern := func(up string) (main, ml *live) {
		t.Helper()
		res, err := m.CallToolWith(ctx, up, echo, CallOptions{Modern: true})
		if err != nil || textOf(t, res) != "x" {
			t.Fatalf("%s: call for a 2026-07-28 client: %v %v", up, res, err)
		}
		main, err = m.conns[up].ready()
		if err != nil {
			t.Fatal(err)
		}
		main.modMu.Lock()
		ml = main.modern
		main.modMu.Unlock()
		if ml == nil || ml.child == nil || !modernLeg(ml.session) {
			t.Fatalf("%s: no 2026-07-28 companion: %+v", up, ml)
		}
		return main, ml
	}
	main, ml := modern("a")
	_, npl := modern("np")

	if err := syscall.Kill(ml.child.pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		select {
		case <-ml.child.exited:
		default:
			_ = syscall.Kill(ml.child.pid, syscall.SIGCONT)
		}
	})
	waitFor(t, "every thread of the companion stopped", func() bool { return stopped(t, ml.child.pid) })
	hctx, hcancel := context.WithTimeout(ctx, 20*time.Second)
	_, err := m.CallToolWith(hctx, "a", echo, CallOptions{Modern: true})
	hcancel()
	if err == nil || !errors.Is(err, ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), `upstream "a"`) {
		t.Fatalf("the call pending on the stopped companion: %v; want it unavailable, naming the upstream, once its pings failed; log:\n%s", err, rec.log.String())
	}
	waitFor(t, "the stopped companion's process killed", func() bool {
		select {
		case <-ml.child.exited:
			return true
		default:
			return false
		}
	})
	if log := rec.log.String(); !strings.Contains(log, "2026-07-28 session: upstream did not answer ping") || !strings.Contains(log, "2026-07-28 session down") {
		t.Errorf("the log does not say the companion failed its pings:\n%s", log)
	}
	if cur, err := m.conns["a"].ready(); err != nil || cur != main {
		t.Fatalf("the shared session was not left alone: %v", err)
	}
	if st, _ := m.Status("a"); st.Restarts != 0 {
		t.Fatalf("the upstream was restarted (%d) for its companion's hang", st.Restarts)
	}
	_, ml2 := modern("a")
	if ml2 == ml || ml2.child.pid == ml.child.pid {
		t.Fatal("the next 2026-07-28 call did not open a new companion")
	}

	// The hang above took several ping intervals: the -32601 companion
	// answered each of them and is kept.
	if _, cur := modern("np"); cur != npl || npl.torn.Load() {
		t.Fatal("the companion answering ping with -32601 was torn down; it counts as alive")
	}

	// The shared session fails: its companion ends with it.
	if err := syscall.Kill(main.child.pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	watched := make(chan struct{})
	go func() {
		ml2.wg.Wait() // the companion's watch
		close(watched)
	}()
	select {
	case <-watched:
	case <-ctx.Done():
		t.Fatal("the companion's watch outlived the shared session")
	}
	select {
	case <-ml2.child.exited:
	case <-ctx.Done():
		t.Fatal("the companion's process outlived the shared session")
	}
}

// stopped reports whether every thread of pid is stopped (state T in
// /proc): kill returns before a SIGSTOP has stopped them all, and a
// thread still running may answer a request sent right after it.
func stopped(t *testing.T, pid int) bool {
	t.Helper()
	stats, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
	if err != nil || len(stats) == 0 {
		t.Fatalf("threads of %d: %v", pid, err)
	}
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			return false
		}
		// pid (comm) state ...: comm may hold spaces and parentheses.
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 || i+2 >= len(b) || b[i+2] != 'T' {
			return false
		}
	}
	return true
}
