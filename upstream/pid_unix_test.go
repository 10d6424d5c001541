//go:build unix

package upstream

import (
	"errors"
	"syscall"
)

// pidGone reports whether no process (not even a zombie) has this pid.
func pidGone(pid int) bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }
