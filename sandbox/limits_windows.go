package sandbox

import (
	"fmt"
	"runtime/debug"

	"github.com/mcp-toolsearch/mcp-toolsearch/proc"
)

// applyLimits on Windows: the parent's Job Object enforces the memory and
// CPU-time limits and forbids child processes (jobLimits); the worker adds
// the Go runtime's soft memory limit and stack cap.
func applyLimits(l runLimits) error {
	if l.MemoryLimitBytes > 0 {
		debug.SetMemoryLimit(l.MemoryLimitBytes / 4 * 3)
		debug.SetMaxStack(int(min(l.MemoryLimitBytes/4, 256<<20)))
	}
	return nil
}

// jobLimits are the worker's Job Object limits: committed memory, user-mode
// CPU time, and no process but the worker itself.
func jobLimits(o *Options) proc.Limits {
	return proc.Limits{MemoryBytes: o.MemoryLimitBytes, CPUSeconds: o.CPUSeconds, Processes: 1}
}

// osLimits says what holds for a worker on Windows (logged when the pool
// starts; docs/modes.md "Sandbox per OS").
func osLimits(o *Options) (enforced, notByOS string) {
	return fmt.Sprintf("memory %d MiB (Job Object process memory), CPU time %d s (Job Object user time), no child processes (Job Object active-process limit 1), job killed at the wall-clock timeout and when the proxy dies (kill-on-close)", o.MemoryLimitBytes>>20, o.CPUSeconds),
		"open files and file writes are not limited by the OS (the interpreter has no file API); no restricted token"
}
