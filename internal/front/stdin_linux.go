package front

import (
	"os"
	"syscall"
)

// Stdin is the stdio front's input. When stdin is a pipe (how an MCP
// client starts a stdio server), it is opened again through
// /proc/self/fd/0 in non-blocking mode, a file the Go runtime's network
// poller waits on, as os.Pipe's ends are. os.Stdin reads with a
// blocking read(2): the reader goroutine holds its thread in the system
// call between lines, so the call goroutine it has just handed a request to
// waits on that thread's processor until another thread takes it (a
// wake-up, a spin and a steal per request).
//
// Opening /proc/self/fd/0 gives the pipe a new open file description with
// its own flags (open(2) of a FIFO), so the proxy never changes the mode of
// the description it inherited: a parent shell, a wrapper script or a
// `serve || fallback` sibling reading the same stdin keeps blocking reads
// (fcntl O_NONBLOCK on fd 0 made their read(2) fail with
// EAGAIN). A socket cannot be opened that way (ENXIO), a terminal or a
// regular file is not reopened (non-blocking mode on a terminal would
// outlive the process), and stdin closed or unreadable: each keeps
// os.Stdin. Other systems keep os.Stdin (stdin_other.go): /dev/fd/0 on
// darwin and the BSDs duplicates the same description.
//
// The caller closes a file that is not os.Stdin when it is done with it.
func Stdin() *os.File {
	var st syscall.Stat_t
	if err := syscall.Fstat(0, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
		return os.Stdin
	}
	fd, err := syscall.Open("/proc/self/fd/0", syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return os.Stdin
	}
	if f := os.NewFile(uintptr(fd), "/dev/stdin"); f != nil {
		return f
	}
	syscall.Close(fd)
	return os.Stdin
}
