package testport

import (
	"fmt"
	"net"
	"testing"
)

// TestFree: ports are distinct, outside the Linux, macOS and Windows
// ephemeral ranges, bindable, and one taken by someone else is skipped.
func TestFree(t *testing.T) {
	seen := map[int]bool{}
	for range 200 {
		p := Free(t)
		if p < lowest || p >= highest || p >= 32768 {
			t.Fatalf("port %d outside %d-%d", p, lowest, highest-1)
		}
		if seen[p] {
			t.Fatalf("port %d handed out twice", p)
		}
		seen[p] = true
	}
	mu.Lock()
	taken := next
	mu.Unlock()
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", taken))
	if err != nil {
		t.Skipf("port %d is in use here already: %v", taken, err)
	}
	defer l.Close()
	if p := Free(t); p == taken {
		t.Fatalf("Free returned port %d, which a listener holds", p)
	}
}
