//go:build !unix

package cli

import "os"

// reloadSignals: Windows has no SIGHUP; use [server] watch_config.
func reloadSignals() []os.Signal { return nil }

// reopenSignals: none on Windows (no SIGUSR1, and no logrotate renaming
// files under a running process: an open file cannot be renamed there).
func reopenSignals() []os.Signal { return nil }
