//go:build !unix

package main

import "os"

// reloadSignals is empty: no SIGHUP here (reload.go).
var reloadSignals []os.Signal
