//go:build unix

package schemacheck

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user + system) this process has used: the
// benchmarks report it per operation, which stays meaningful on a loaded
// machine where wall time per operation does not.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
