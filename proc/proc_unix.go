//go:build unix

package proc

import (
	"fmt"
	"os"
	"syscall"
	"time"
)

// sysProc is the Unix part of a Process: its process group, whose id is the
// child's pid (Setpgid), registered with the reaper while it lives.
type sysProc struct{ pid int }

func (s *sysProc) afterStart(pid int, _ Limits) error {
	s.pid = pid
	reaperAdd(pid)
	return nil
}

// kill sends SIGKILL to the whole group.
func (s *sysProc) kill(pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }

// terminate sends SIGTERM to the whole group.
func (s *sysProc) terminate(pid int) bool { return syscall.Kill(-pid, syscall.SIGTERM) == nil }

// release forgets the group (it is dead and its leader reaped).
func (s *sysProc) release() {
	if s.pid != 0 {
		reaperRemove(s.pid)
	}
}

// endedBy tells whether the reaped state is the proxy's doing: killed by
// SIGKILL after a kill, or by SIGTERM after a stop request (a child that
// exited, or caught SIGTERM and exited, reads as its own exit). verb is
// "killed" or "stopped"; how is the signal, as DescribeExit words it.
func endedBy(ps *os.ProcessState, a asked) (verb, how string, ok bool) {
	ws, isWS := ps.Sys().(syscall.WaitStatus)
	if !isWS || !ws.Signaled() {
		return "", "", false
	}
	how = fmt.Sprintf("signal %d (%s)", int(ws.Signal()), ws.Signal())
	switch {
	case ws.Signal() == syscall.SIGKILL && a.kill:
		return "killed", how, true
	case ws.Signal() == syscall.SIGTERM && a.term:
		return "stopped", how, true
	}
	return "", "", false
}

// termNote is what StopFor adds to why when it kills: the SIGTERM the
// child outlived.
func termNote(grace time.Duration) string { return " and " + grace.String() + " after SIGTERM" }
