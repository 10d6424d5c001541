package sandbox

import (
	"fmt"
	"os"
	"time"
)

// memoryWatchInterval is how often the macOS worker checks its memory.
const memoryWatchInterval = 5 * time.Millisecond

// applyLimits sets the worker's own limits on macOS. The kernel enforces
// RLIMIT_CPU, RLIMIT_NOFILE, RLIMIT_FSIZE=0 and RLIMIT_CORE=0. It does not
// apply RLIMIT_DATA to mmap'd memory, which is all a Go program allocates,
// so RLIMIT_DATA is not set; the memory limit is the worker's own watchdog
// (watchMemory), which exits the worker with "out of memory" on stderr. See
// docs/modes.md "Sandbox per OS".
func applyLimits(l runLimits) error {
	if err := applyRlimits(l, false); err != nil {
		return err
	}
	if l.MemoryLimitBytes > 0 {
		watchMemory(uint64(l.MemoryLimitBytes), memoryWatchInterval, func(n uint64) {
			fmt.Fprintf(os.Stderr, "sandbox-worker: out of memory: %d MiB in use, over the limit of %d MiB\n", n>>20, l.MemoryLimitBytes>>20)
			os.Exit(2)
		})
	}
	return nil
}

// osLimits says what holds for a worker on macOS (logged when the pool
// starts; docs/modes.md "Sandbox per OS").
func osLimits(o *Options) (enforced, notByOS string) {
	return fmt.Sprintf("CPU time %d s (RLIMIT_CPU), 16 open files, no file writes (RLIMIT_FSIZE=0), no core files, own process group killed at the wall-clock timeout, killed with the proxy (reaper)", o.CPUSeconds),
		fmt.Sprintf("memory %d MiB is the worker's own watchdog (5 ms checks), not the kernel: macOS does not enforce RLIMIT_DATA for mmap'd memory; no no_new_privs and no Seatbelt profile (needs cgo)", o.MemoryLimitBytes>>20)
}
