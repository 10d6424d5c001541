package sandbox

import (
	"runtime/metrics"
	"time"
)

// Metrics of the Go runtime's own memory: everything it has mapped, and the
// part it has handed back to the OS.
const (
	metricTotal    = "/memory/classes/total:bytes"
	metricReleased = "/memory/classes/heap/released:bytes"
)

// memoryInUse is the memory the worker's Go runtime holds from the OS, in
// bytes (mapped minus released). goja is pure Go, so a script's values live
// in this memory and nowhere else.
func memoryInUse(s []metrics.Sample) uint64 {
	metrics.Read(s)
	total, released := s[0].Value.Uint64(), s[1].Value.Uint64()
	if released > total {
		return 0
	}
	return total - released
}

// watchMemory is the worker's memory limit where the kernel enforces none
// (macOS does not apply RLIMIT_DATA to mmap'd memory, which is all Go uses).
// Every interval it reads memoryInUse and calls over once when it exceeds
// limit bytes; over is expected to end the process. It guards against
// model-written code (the script) exhausting the host's memory. A single
// allocation larger than what is left can overshoot by its size until the
// next tick: the Go runtime maps it before the watchdog sees it (it is
// counted at once, touched or not, so the overshoot is bounded by the
// interval's allocation rate, not by lazily committed pages).
func watchMemory(limit uint64, interval time.Duration, over func(inUse uint64)) (stop func()) {
	s := []metrics.Sample{{Name: metricTotal}, {Name: metricReleased}}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if n := memoryInUse(s); n > limit {
					over(n)
					return
				}
			}
		}
	}()
	return func() { close(done) }
}
