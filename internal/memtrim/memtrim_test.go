package memtrim

import (
	"sync/atomic"
	"testing"
	"time"
)

// Requests in a burst fold into one return, after the burst; the next
// burst within MinInterval waits for it.
func TestSoonFoldsBursts(t *testing.T) {
	var n atomic.Int32
	mu.Lock()
	release = func() { n.Add(1) }
	mu.Unlock()
	for i := 0; i < 50; i++ {
		Soon()
		time.Sleep(10 * time.Millisecond)
	}
	if n.Load() != 0 {
		t.Fatalf("returned %d times during the burst", n.Load())
	}
	deadline := time.Now().Add(5 * Settle)
	for n.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n.Load() != 1 {
		t.Fatalf("returned %d times after the burst, want 1", n.Load())
	}
	Soon() // within MinInterval of the last return: not before it
	time.Sleep(2 * Settle)
	if n.Load() != 1 {
		t.Fatalf("returned again %d times within MinInterval", n.Load()-1)
	}
	if Count() != 1 {
		t.Fatalf("Count() = %d", Count())
	}
}
