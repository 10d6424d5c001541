package sandbox

import (
	"fmt"
	"syscall"
)

// applyLimits sets the worker's own limits on Linux: the rlimits of
// applyRlimits (all enforced by the kernel, RLIMIT_DATA included) and
// no_new_privs.
func applyLimits(l runLimits) error {
	if err := applyRlimits(l, true); err != nil {
		return err
	}
	const prSetNoNewPrivs = 38
	if _, _, errno := syscall.RawSyscall6(syscall.SYS_PRCTL, prSetNoNewPrivs, 1, 0, 0, 0, 0); errno != 0 {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", errno)
	}
	return nil
}

// osLimits says what holds for a worker on Linux (logged when the pool
// starts; docs/modes.md "Sandbox per OS").
func osLimits(o *Options) (enforced, notByOS string) {
	return fmt.Sprintf("memory %d MiB (RLIMIT_DATA), CPU time %d s (RLIMIT_CPU), 16 open files, no file writes (RLIMIT_FSIZE=0), no core files, no_new_privs, own process group killed at the wall-clock timeout, killed with the proxy (Pdeathsig, reaper)", o.MemoryLimitBytes>>20, o.CPUSeconds), ""
}
