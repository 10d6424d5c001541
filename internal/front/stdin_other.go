//go:build !linux

package front

import "os"

// Stdin is the stdio front's input: os.Stdin. stdin_linux.go reopens a
// pipe in non-blocking mode as a new open file description; elsewhere that
// would need fcntl O_NONBLOCK on the description shared with the parent and
// its other children (darwin's and the BSDs' /dev/fd/0 duplicates it), and
// Windows pipes are read as they are.
func Stdin() *os.File { return os.Stdin }
