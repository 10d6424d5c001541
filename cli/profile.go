package cli

import (
	"log/slog"
	"os"
	"runtime"
	"runtime/pprof"
)

// startProfiles writes profiles of a `serve` run for performance work
// (docs/figures.md "Overhead: profiles"): MCP_TOOLSEARCH_CPUPROFILE=FILE
// records a CPU profile for the whole run, MCP_TOOLSEARCH_MEMPROFILE=FILE
// writes the allocation profile (go tool pprof -sample_index=alloc_space)
// when serve ends. The returned function ends them; it is a no-op when
// neither variable is set. Environment only: the operator's, trusted.
func startProfiles(log *slog.Logger) func() {
	cpuPath, memPath := os.Getenv("MCP_TOOLSEARCH_CPUPROFILE"), os.Getenv("MCP_TOOLSEARCH_MEMPROFILE")
	var cpu *os.File
	if cpuPath != "" {
		f, err := os.Create(cpuPath)
		if err == nil && pprof.StartCPUProfile(f) == nil {
			cpu = f
		} else {
			log.Warn("cannot write the CPU profile", "file", cpuPath, "err", err)
		}
	}
	return func() {
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
