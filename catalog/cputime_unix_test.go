//go:build unix

package catalog

import "syscall"

// processCPU returns the CPU time (user + system) this process has used, in
// nanoseconds, or 0 when it cannot be read. Benchmarks report it per
// operation ("cpu-ns/op"): on a machine loaded by other jobs it moves far
// less than wall time does.
func processCPU() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
