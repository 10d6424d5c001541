//go:build unix

package proc

import "syscall"

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
