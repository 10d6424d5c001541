//go:build unix

package cli

import (
	"os"
	"syscall"
)

// reloadSignals are the signals that reload the config: SIGHUP.
func reloadSignals() []os.Signal { return []os.Signal{syscall.SIGHUP} }

// reopenSignals are the signals that reopen the log files after a
// rotation (proxy.ReopenLogs): SIGUSR1, as nginx does; SIGHUP keeps its
// meaning (reload the config).
func reopenSignals() []os.Signal { return []os.Signal{syscall.SIGUSR1} }
