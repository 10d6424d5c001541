package sandbox

// applyLimits sets the worker's own limits on macOS: the rlimits of
// applyRlimits. macOS enforces RLIMIT_CPU, RLIMIT_NOFILE, RLIMIT_FSIZE and
// RLIMIT_CORE; it does not enforce RLIMIT_DATA for mmap'd memory, which is
// all a Go program allocates (see docs/modes.md).
func applyLimits(l runLimits) error { return applyRlimits(l) }
