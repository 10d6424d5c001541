package proc

import (
	"errors"
	"os/exec"
	"runtime"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// sysProcAttr: own process group, SIGKILL when the parent dies (Pdeathsig).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// Pdeathsig is delivered when the THREAD that forked the child exits, not
// the process (prctl(2) PR_SET_PDEATHSIG; golang/go#27505). Go may end a
// thread (a goroutine that exits while locked to it), so every child is
// forked from one goroutine locked to its thread for the life of the
// process.
var (
	starterOnce sync.Once
	starter     chan func()
)

func startCmd(cmd *exec.Cmd) error {
	starterOnce.Do(func() {
		starter = make(chan func())
		go func() {
			runtime.LockOSThread() // never unlocked: this thread lives as long as the process
			for f := range starter {
				f()
			}
		}()
	})
	errc := make(chan error, 1)
	starter <- func() { errc <- cmd.Start() }
	return <-errc
}

// awaitExit blocks until the child has exited, leaving it a zombie
// (waitid WNOWAIT), so its pid and group id cannot be reused before the
// rest of the group is killed. It reports false if it could not wait.
func (s *sysProc) awaitExit(pid int) bool {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return err == nil
	}
}
