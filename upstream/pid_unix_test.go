//go:build unix

package upstream

import (
	"errors"
	"syscall"
)

// pidGone reports whether no process (not even a zombie) has this pid.
func pidGone(pid int) bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }

// killedAfterGrace is how a child that outlived the grace period is
// described once Close killed it: SIGKILL to its process group.
const killedAfterGrace = "signal 9"
