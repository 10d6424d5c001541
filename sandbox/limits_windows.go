package sandbox

import "runtime/debug"

// applyLimits on Windows: the parent's Job Object enforces the memory and
// CPU-time limits and forbids child processes (see Pool.startWorker); the
// worker adds the Go runtime's soft memory limit and stack cap.
func applyLimits(l runLimits) error {
	if l.MemoryLimitBytes > 0 {
		debug.SetMemoryLimit(l.MemoryLimitBytes / 4 * 3)
		debug.SetMaxStack(int(min(l.MemoryLimitBytes/4, 256<<20)))
	}
	return nil
}
