package upstream

import (
	"errors"
	"syscall"

	"golang.org/x/sys/windows"
)

// isConnRefused reports a refused connection. On Windows a refused dial
// is WSAECONNREFUSED (10061), which errors.Is does not match to
// syscall.ECONNREFUSED (an invented Errno there), so both are checked.
func isConnRefused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, windows.WSAECONNREFUSED)
}

// isConnReset: as isConnRefused, for WSAECONNRESET (10054).
func isConnReset(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, windows.WSAECONNRESET)
}
