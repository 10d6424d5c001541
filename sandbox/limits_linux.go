package sandbox

import (
	"fmt"
	"syscall"
)

// applyLimits sets the worker's own limits on Linux: the rlimits of
// applyRlimits (all enforced by the kernel) and no_new_privs.
func applyLimits(l runLimits) error {
	if err := applyRlimits(l); err != nil {
		return err
	}
	const prSetNoNewPrivs = 38
	if _, _, errno := syscall.RawSyscall6(syscall.SYS_PRCTL, prSetNoNewPrivs, 1, 0, 0, 0, 0); errno != 0 {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", errno)
	}
	return nil
}
