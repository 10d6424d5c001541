//go:build unix

package cli

import (
	"os"
	"syscall"
)

// reloadSignals are the signals that reload the config: SIGHUP.
func reloadSignals() []os.Signal { return []os.Signal{syscall.SIGHUP} }
