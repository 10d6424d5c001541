//go:build !windows

package upstream

import (
	"errors"
	"syscall"
)

// isConnRefused reports a refused connection (ECONNREFUSED).
func isConnRefused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }

// isConnReset reports a connection reset by the peer (ECONNRESET).
func isConnReset(err error) bool { return errors.Is(err, syscall.ECONNRESET) }
