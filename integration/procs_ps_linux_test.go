//go:build unix

package integration

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// TestProcessTableViaPS checks the ps(1) process table (what macOS and the
// BSDs use, procs_other_test.go) against /proc on a tree it starts: a
// shell that leads its own group (Setpgid, as startProcess does), two live
// sleeps below it and a zombie (a child of a process that never reaps).
func TestProcessTableViaPS(t *testing.T) {
	if procsViaPS {
		t.Skip("MCPTS_ITEST_PROCS=ps: /proc is not the reference in this run")
	}
	marker := fmt.Sprintf("itest-ps-marker-%d", time.Now().UnixNano())
	// sh forks "sleep 1000" and a subshell that forks "true" and then execs
	// a sleep that never waits: "true" stays a zombie under it.
	p := startProcess(t, []string{"sh", "-c", "sleep 1000 & (true & exec sleep 1000) & wait", marker}, nil)
	var kids []int
	var zombie int
	for range 250 { // until the tree is complete (fail-safe ~5 s)
		kids, zombie = childPIDs(p.PID()), 0
		for _, k := range kids {
			if st, _, _ := procStat(k); st == 'Z' {
				zombie = k
			}
		}
		if len(kids) == 3 && zombie != 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(kids) != 3 || zombie == 0 {
		t.Fatalf("want sh's 2 sleeps and a zombie below %d, got %v\n%s", p.PID(), kids, describeProcs(kids))
	}
	rows, err := psTable("-A")
	if err != nil {
		t.Fatal(err)
	}
	byPID := map[int]procInfo{}
	for _, r := range rows {
		byPID[r.pid] = r
	}
	for _, pid := range append([]int{p.PID()}, kids...) {
		want, ok := procLookup(pid)
		got, ok2 := byPID[pid]
		if !ok || !ok2 {
			t.Fatalf("pid %d: in /proc %v, in ps -A %v", pid, ok, ok2)
		}
		if got.ppid != want.ppid || got.pgid != want.pgid || got.state != want.state {
			t.Errorf("pid %d: ps says ppid %d pgid %d state %c, /proc says %d %d %c", pid, got.ppid, got.pgid, got.state, want.ppid, want.pgid, want.state)
		}
		if joined := strings.Join(want.args, " "); got.args == nil && joined != "" || got.args != nil && got.args[0] != joined {
			t.Errorf("pid %d: ps command %q, /proc cmdline %q", pid, got.args, joined)
		}
		if one, ok := psLookup(pid); !ok || one.ppid != got.ppid || one.state != got.state {
			t.Errorf("ps -p %d: %+v %v, want the ps -A row %+v", pid, one, ok, got)
		}
	}
	if g := byPID[p.PID()].pgid; g != p.PID() {
		t.Errorf("the shell leads group %d, want its own pid %d", g, p.PID())
	}
	if z := byPID[zombie]; z.state != 'Z' || z.args != nil {
		t.Errorf("zombie %d: ps row %+v, want state Z and no command", zombie, z)
	}
	if sh := byPID[p.PID()].args; len(sh) != 1 || !strings.Contains(sh[0], marker) {
		t.Errorf("the shell's ps command %q lacks the marker %q", byPID[p.PID()].args, marker)
	}
	if self, ok := byPID[os.Getpid()]; !ok || self.state == 'Z' {
		t.Errorf("ps -A lacks this test process %d: %+v", os.Getpid(), self)
	}
	// A pid that is not there: no row and no error.
	p.Stop()
	if left := waitGone([]int{p.PID()}, 5*time.Second); len(left) > 0 {
		t.Fatalf("the shell did not stop:\n%s", describeProcs(left))
	}
	if _, ok := psLookup(p.PID()); ok {
		if st, _, _ := procStat(p.PID()); st != 'Z' {
			t.Errorf("ps -p %d still finds the stopped shell", p.PID())
		}
	}
}
