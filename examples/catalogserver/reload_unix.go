//go:build unix

package main

import (
	"os"
	"syscall"
)

// reloadSignals re-read the tools file (reload.go).
var reloadSignals = []os.Signal{syscall.SIGHUP}
