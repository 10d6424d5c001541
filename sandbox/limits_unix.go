//go:build unix

package sandbox

import (
	"fmt"
	"runtime/debug"
	"syscall"

	"github.com/mcp-toolsearch/mcp-toolsearch/proc"
)

// applyRlimits sets the worker's own rlimits: RLIMIT_DATA (memory; only
// when data is true, i.e. where the kernel enforces it for mmap'd memory),
// RLIMIT_CPU, RLIMIT_NOFILE=16, RLIMIT_FSIZE=0, RLIMIT_CORE=0, plus the Go
// runtime's soft memory limit and stack cap. RLIMIT_NPROC is left alone: it
// counts threads per user, and Go needs to start threads.
func applyRlimits(l runLimits, data bool) error {
	set := func(name string, res int, v uint64) error {
		if err := syscall.Setrlimit(res, &syscall.Rlimit{Cur: v, Max: v}); err != nil {
			return fmt.Errorf("%s=%d: %w", name, v, err)
		}
		return nil
	}
	if l.MemoryLimitBytes > 0 {
		if data {
			if err := set("RLIMIT_DATA", syscall.RLIMIT_DATA, uint64(l.MemoryLimitBytes)); err != nil {
				return err
			}
		}
		// Make the GC work hard well before the hard limit; a runaway Go
		// recursion (deeply nested values) dies early and clearly.
		debug.SetMemoryLimit(l.MemoryLimitBytes / 4 * 3)
		debug.SetMaxStack(int(min(l.MemoryLimitBytes/4, 256<<20)))
	}
	if l.CPUSeconds > 0 {
		if err := set("RLIMIT_CPU", syscall.RLIMIT_CPU, uint64(l.CPUSeconds)); err != nil {
			return err
		}
	}
	if err := set("RLIMIT_NOFILE", syscall.RLIMIT_NOFILE, 16); err != nil {
		return err
	}
	if err := set("RLIMIT_FSIZE", syscall.RLIMIT_FSIZE, 0); err != nil {
		return err
	}
	return set("RLIMIT_CORE", syscall.RLIMIT_CORE, 0)
}

// jobLimits: none on Unix; the worker sets its own rlimits.
func jobLimits(*Options) proc.Limits { return proc.Limits{} }
