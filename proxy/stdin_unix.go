//go:build unix

package proxy

import (
	"os"
	"syscall"
)

// frontStdin is the stdio front's input. When stdin is a pipe or a socket
// (how an MCP client starts a stdio server), it is switched to
// non-blocking mode and opened again as a file the Go runtime's network
// poller waits on, as os.Pipe's ends are (issue 16). os.Stdin reads with
// a blocking read(2): the reader goroutine holds its thread in the
// system call between lines, so the call goroutine it has just handed a
// request to waits on that thread's processor until another thread takes
// it (a wake-up, a spin and a steal per request). A terminal or a regular
// file keeps os.Stdin (non-blocking mode on a terminal would outlive the
// process and break the shell that owns it).
func frontStdin() *os.File {
	var st syscall.Stat_t
	if err := syscall.Fstat(0, &st); err != nil {
		return os.Stdin
	}
	if t := st.Mode & syscall.S_IFMT; t != syscall.S_IFIFO && t != syscall.S_IFSOCK {
		return os.Stdin
	}
	if err := syscall.SetNonblock(0, true); err != nil {
		return os.Stdin
	}
	if f := os.NewFile(0, "/dev/stdin"); f != nil {
		return f
	}
	return os.Stdin
}
