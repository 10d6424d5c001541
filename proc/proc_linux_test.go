package proc

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain gives the test binary the two roles the real binary has: the
// reaper, and "proc-test-parent", a stand-in proxy that enables the reaper,
// starts `sh -c $PROC_TEST_SCRIPT` through Start, prints the child's pid and
// waits to be killed.
func TestMain(m *testing.M) {
	if len(os.Args) == 2 && os.Args[1] == ReaperArg {
		os.Exit(ReaperMain())
	}
	if len(os.Args) == 2 && os.Args[1] == "proc-test-parent" {
		if os.Getenv("PROC_TEST_REAPER") == "1" {
			EnableReaper()
		}
		p, err := Start(Spec{Path: "/bin/sh", Args: []string{"-c", os.Getenv("PROC_TEST_SCRIPT")}, Env: []string{"PATH=/usr/bin:/bin"}})
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println(p.Pid())
		select {}
	}
	os.Exit(m.Run())
}

// procInfo reads /proc/PID/stat: state, parent pid and process group.
func procInfo(pid int) (state byte, ppid, pgrp int, ok bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, 0, 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0, 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 3 {
		return 0, 0, 0, false
	}
	ppid, _ = strconv.Atoi(f[1])
	pgrp, _ = strconv.Atoi(f[2])
	return f[0][0], ppid, pgrp, true
}

// groupMembers lists the live (not zombie) processes whose process group is
// pgid.
func groupMembers(pgid int) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, _, pg, ok := procInfo(pid); ok && pg == pgid && st != 'Z' && st != 'X' {
			out = append(out, pid)
		}
	}
	return out
}

// alive reports whether pid is a live (not zombie) process.
func alive(pid int) bool {
	st, _, _, ok := procInfo(pid)
	return ok && st != 'Z' && st != 'X'
}

// waitFor polls cond every 20 ms until it holds or the fail-safe bound
// (not an assertion on speed) passes.
func waitFor(cond func() bool) bool {
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return cond()
}

func shell(script string) Spec {
	return Spec{Path: "/bin/sh", Args: []string{"-c", script}, Env: []string{"PATH=/usr/bin:/bin"}}
}

func TestPipesAndStopByEOF(t *testing.T) {
	p, err := Start(shell(`echo hello >&2; while read l; do echo "got $l"; done`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Stdin().Write([]byte("one\n")); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(p.Stdout()).ReadString('\n')
	if err != nil || line != "got one\n" {
		t.Fatalf("stdout: %q, %v", line, err)
	}
	if step := p.Stop(10 * time.Second); step != StoppedByEOF {
		t.Fatalf("stop step %d, want StoppedByEOF", step)
	}
	if r := p.ExitReason(); r != "exited with status 0" {
		t.Fatalf("exit reason %q", r)
	}
	if err := p.Stdin().Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	_ = p.Stdout().Close()
}

func TestEnvAndDirPassedAsIs(t *testing.T) {
	dir := t.TempDir()
	var out strings.Builder
	p, err := Start(Spec{Path: "/bin/sh", Args: []string{"-c", `echo "$A|$HOME|$(pwd)"`}, Env: []string{"A=1", "PATH=/bin"}, Dir: dir, Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	<-p.Done()
	if want := "1||" + dir + "\n"; out.String() != want {
		t.Fatalf("got %q, want %q", out.String(), want)
	}
}

func TestStartErrorUnchanged(t *testing.T) {
	_, err := Start(Spec{Path: "no-such-program-xyz"})
	if err == nil || !strings.Contains(err.Error(), `exec: "no-such-program-xyz": executable file not found`) {
		t.Fatalf("err = %v", err)
	}
}

func TestStderrLinesBoundedAndKept(t *testing.T) {
	var lines []string
	p, err := Start(Spec{
		Path: "/bin/sh", Args: []string{"-c", `exec >&2; printf 'ab\r\n\nc\n'; head -c 10000 /dev/zero | tr '\0' x; printf '\nlast'`},
		Env:        []string{"PATH=/usr/bin:/bin"},
		StderrKeep: 5, MaxStderrLine: 100,
		OnStderrLine: func(s string) { lines = append(lines, s) },
	})
	if err != nil {
		t.Fatal(err)
	}
	<-p.Done()
	want := []string{"ab", "", "c", strings.Repeat("x", 100) + "…", "last"}
	if fmt.Sprintf("%q", lines) != fmt.Sprintf("%q", want) {
		t.Fatalf("lines %q\nwant  %q", lines, want)
	}
	if got := p.Stderr(); got != "ab\r\n\n" {
		t.Fatalf("kept %q", got)
	}
}

// A child that ignores EOF and SIGTERM is killed, with the grandchild it
// started; Stop returns only after the reap.
func TestStopKillsStubbornGroup(t *testing.T) {
	p, err := Start(shell(`trap "" TERM; sleep 1000 & echo $!; while :; do sleep 1; done`))
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(p.Stdout()).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	grandchild, _ := strconv.Atoi(strings.TrimSpace(line))
	if !alive(grandchild) {
		t.Fatalf("grandchild %d not running", grandchild)
	}
	if step := p.StopFor(200*time.Millisecond, "shutting down"); step != StoppedByKill {
		t.Fatalf("stop step %d, want StoppedByKill", step)
	}
	if ok, sig := p.Signaled(); !ok || sig != "killed" {
		t.Fatalf("signaled %v %q (reason %s)", ok, sig, p.ExitReason())
	}
	// The proxy's kill says so, and why, in the same words on every OS.
	const want = "killed by the proxy (shutting down; still running 200ms after its stdin was closed and 200ms after SIGTERM): signal 9 (killed)"
	if r := p.ExitReason(); r != want {
		t.Fatalf("exit reason %q, want %q", r, want)
	}
	if !waitFor(func() bool { return len(groupMembers(p.Pid())) == 0 }) {
		t.Fatalf("group %d still has %v after Stop", p.Pid(), groupMembers(p.Pid()))
	}
}

// A child that stops on SIGTERM reports StoppedByTerm.
func TestStopByTerm(t *testing.T) {
	p, err := Start(shell(`trap "exit 7" TERM; echo up; while :; do sleep 0.05; done`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(p.Stdout()).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	if step := p.Stop(100 * time.Millisecond); step != StoppedByTerm {
		t.Fatalf("stop step %d (%s), want StoppedByTerm", step, p.ExitReason())
	}
	// It caught SIGTERM and exited: its own exit, not the proxy's kill.
	if r := p.ExitReason(); r != "exited with status 7" {
		t.Fatalf("exit reason %q", r)
	}
}

// KillFor of a running child reads as the proxy's kill; a child that had
// already exited when KillFor came keeps its own exit reason.
func TestKillForReason(t *testing.T) {
	p, err := Start(shell(`echo up; while :; do sleep 0.05; done`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(p.Stdout()).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	p.KillFor("the run timed out")
	if r, ok := p.KilledByProxy(); !ok || r != "killed by the proxy (the run timed out): signal 9 (killed)" {
		t.Fatalf("KilledByProxy %q %v", r, ok)
	}
	q, err := Start(shell(`exit 3`))
	if err != nil {
		t.Fatal(err)
	}
	<-q.Done()
	q.KillFor("too late")
	if r := q.ExitReason(); r != "exited with status 3" {
		t.Fatalf("exit reason %q", r)
	}
}

// When the child exits on its own, what it left running in its group is
// killed before the reap.
func TestLeaderExitKillsItsGroup(t *testing.T) {
	p, err := Start(shell(`sleep 1000 & echo $!`))
	if err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(p.Stdout()).ReadString('\n')
	grandchild, _ := strconv.Atoi(strings.TrimSpace(line))
	<-p.Done()
	if grandchild == 0 || !waitFor(func() bool { return !alive(grandchild) }) {
		t.Fatalf("grandchild %d still running after the leader exited (%s)", grandchild, p.ExitReason())
	}
	p.Kill() // after Done: a no-op, not a signal to a reused pid
}

// TestKill9OfParentLeavesNoProcess runs a stand-in proxy (this test binary,
// role proc-test-parent) that starts a shell which starts a grandchild, then
// kills the stand-in with SIGKILL: with the reaper enabled, no process of the
// child's group remains. Pdeathsig alone would kill only the shell.
func TestKill9OfParentLeavesNoProcess(t *testing.T) {
	cmd := exec.Command(os.Args[0], "proc-test-parent")
	cmd.Env = append(os.Environ(), "PROC_TEST_REAPER=1", "PROC_TEST_SCRIPT=sleep 1000 & sleep 1000 & wait")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	child, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("parent said %q", line)
	}
	if !waitFor(func() bool { return len(groupMembers(child)) == 3 }) {
		t.Fatalf("want the shell and two sleeps in group %d, found %v", child, groupMembers(child))
	}
	t.Logf("group %d before kill -9 of the parent %d: %v", child, cmd.Process.Pid, groupMembers(child))
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if !waitFor(func() bool { return len(groupMembers(child)) == 0 }) {
		left := groupMembers(child)
		for _, pid := range left {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		t.Fatalf("processes of group %d left after kill -9 of the parent: %v", child, left)
	}
}
