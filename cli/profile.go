package cli

import (
	"log/slog"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
)

// startProfiles writes profiles of a `serve` run for performance work
// (docs/performance.md "Overhead per call"): MCP_TOOLSEARCH_CPUPROFILE=FILE
// records a CPU profile for the whole run, MCP_TOOLSEARCH_MEMPROFILE=FILE
// writes the allocation profile (go tool pprof -sample_index=alloc_space)
// when serve ends, sampling one allocation per runtime.MemProfileRate
// bytes (512 KiB by default; MCP_TOOLSEARCH_MEMPROFILERATE=N samples one
// per N bytes, e.g. 4096 to see the allocations of a single request);
// MCP_TOOLSEARCH_TRACE=FILE records an execution trace (runtime/trace: go
// tool trace FILE; goroutines created and woken per call, syscalls). The
// returned function ends them; it is a no-op when no variable is set.
// Environment only: the operator's, trusted.
func startProfiles(log *slog.Logger) func() {
	cpuPath, memPath := os.Getenv("MCP_TOOLSEARCH_CPUPROFILE"), os.Getenv("MCP_TOOLSEARCH_MEMPROFILE")
	if n, err := strconv.Atoi(os.Getenv("MCP_TOOLSEARCH_MEMPROFILERATE")); err == nil && n > 0 && memPath != "" {
		runtime.MemProfileRate = n
	}
	var cpu *os.File
	if cpuPath != "" {
		f, err := os.Create(cpuPath)
		if err == nil && pprof.StartCPUProfile(f) == nil {
			cpu = f
		} else {
			log.Warn("cannot write the CPU profile", "file", cpuPath, "err", err)
		}
	}
	var tr *os.File
	if p := os.Getenv("MCP_TOOLSEARCH_TRACE"); p != "" {
		f, err := os.Create(p)
		if err == nil && trace.Start(f) == nil {
			tr = f
		} else {
			log.Warn("cannot write the execution trace", "file", p, "err", err)
		}
	}
	return func() {
		if tr != nil {
			trace.Stop()
			_ = tr.Close()
		}
		if cpu != nil {
			pprof.StopCPUProfile()
			_ = cpu.Close()
		}
		if memPath != "" {
			f, err := os.Create(memPath)
			if err != nil {
				log.Warn("cannot write the allocation profile", "file", memPath, "err", err)
				return
			}
			runtime.GC()
			_ = pprof.Lookup("allocs").WriteTo(f, 0)
			_ = f.Close()
		}
	}
}
