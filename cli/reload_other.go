//go:build !unix

package cli

import "os"

// reloadSignals: Windows has no SIGHUP; use [server] watch_config.
func reloadSignals() []os.Signal { return nil }
