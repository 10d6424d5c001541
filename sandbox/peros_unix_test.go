//go:build unix

package sandbox

import "os"

// killedFromOutside is how a worker ended by os.Process.Kill is described:
// SIGKILL on Unix.
const killedFromOutside = "killed by signal killed"

// underWine is false off Windows.
func underWine() bool { return false }

// openDescriptors counts this process's open file descriptors (/dev/fd
// lists them on Linux and macOS).
func openDescriptors() (int, error) { e, err := os.ReadDir("/dev/fd"); return len(e), err }
