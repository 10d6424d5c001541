//go:build !linux

package proxy

import "os"

// frontStdin is the stdio front's input: os.Stdin. stdin_linux.go reopens a
// pipe in non-blocking mode as a new open file description; elsewhere that
// would need fcntl O_NONBLOCK on the description shared with the parent and
// its other children (darwin's and the BSDs' /dev/fd/0 duplicates it), and
// Windows pipes are read as they are.
func frontStdin() *os.File { return os.Stdin }
