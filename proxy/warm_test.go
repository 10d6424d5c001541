package proxy

import (
	"sync"
	"testing"
)

// TestGoWarm: every function handed to goWarm runs, also when more run
// at once than goroutines are idle, and in waves that reuse idle ones.
func TestGoWarm(t *testing.T) {
	for wave := 0; wave < 3; wave++ {
		var wg sync.WaitGroup
		var mu sync.Mutex
		ran := map[int]bool{}
		release := make(chan struct{})
		for i := 0; i < 50; i++ {
			wg.Add(1)
			goWarm(func() {
				defer wg.Done()
				<-release // all 50 at once: none can take another's work
				mu.Lock()
				ran[i] = true
				mu.Unlock()
			})
		}
		close(release)
		wg.Wait()
		if len(ran) != 50 {
			t.Fatalf("wave %d: %d of 50 functions ran", wave, len(ran))
		}
	}
}
