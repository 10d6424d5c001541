package proc

// ReaperArg is the argument that selects the reaper role on Unix; on
// Windows there is no reaper (each child's Job Object is killed when the
// proxy's handle to it closes, also when the proxy dies).
const ReaperArg = "proc-reaper"

// EnableReaper does nothing on Windows (see ReaperArg).
func EnableReaper() {}

// ReaperMain exits at once on Windows.
func ReaperMain() int { return 0 }
