// Package testport gives tests a TCP port on 127.0.0.1 for a server they
// start as a separate process, which must be told its port before it
// binds it.
package testport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
)

// The ports Free hands out lie below the kernels' ephemeral ranges (Linux
// 32768–60999, macOS and Windows 49152–65535). A port the kernel picked for
// a listener on port 0 is in that range, and so is the local port of every
// outgoing connection: between the probe's close and the server's bind, a
// connection made by a test running beside it could take it, and the server
// then fails to listen (server-everything's SSE mode even prints that it is
// running and exits 0: Express 5 hands the listen error to a callback that
// ignores it).
const (
	lowest  = 20000
	highest = 32000 // exclusive
)

var (
	mu   sync.Mutex
	next = lowest + rand.IntN(highest-lowest) // processes running side by side start apart
)

// Free returns a port on 127.0.0.1 that was free a moment ago and that no
// other call in this process has returned yet (unless all of the range has
// been handed out, when it starts over).
func Free(t testing.TB) int {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	for range highest - lowest {
		p := next
		if next++; next == highest {
			next = lowest
		}
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			continue // in use by someone else
		}
		if err := l.Close(); err != nil {
			t.Fatalf("testport: closing the probe of port %d: %v", p, err)
		}
		return p
	}
	t.Fatalf("testport: no free port on 127.0.0.1 in %d-%d", lowest, highest-1)
	return 0
}
