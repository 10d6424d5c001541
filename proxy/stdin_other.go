//go:build !unix

package proxy

import "os"

// frontStdin is the stdio front's input: os.Stdin (stdin_unix.go makes a
// pipe pollable; Windows pipes are read as they are).
func frontStdin() *os.File { return os.Stdin }
