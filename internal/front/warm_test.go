package front

import (
	"sync"
	"testing"
	"time"
)

// TestWarmReaped: goroutines GoWarm started are reused while busy and end
// once they stayed idle through a reaper period (no timer per goroutine).
func TestWarmReaped(t *testing.T) {
	stop := make(chan struct{})
	defer close(stop)
	go reapWarm(20*time.Millisecond, stop)
	var wg sync.WaitGroup
	release := make(chan struct{})
	for range 8 {
		wg.Add(1)
		GoWarm(func() { defer wg.Done(); <-release })
	}
	close(release)
	wg.Wait()
	// Idle now; each ran a call, so a new call reuses one of them.
	deadline := time.Now().Add(10 * time.Second)
	for warmIdleNow.Load() < 8 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	done := make(chan struct{})
	GoWarm(func() { close(done) })
	<-done
	for warmIdleNow.Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := warmIdleNow.Load(); n != 0 {
		t.Fatalf("%d warm goroutines still idle after the reaper's periods, want 0", n)
	}
	// Still usable after the pool emptied.
	done = make(chan struct{})
	GoWarm(func() { close(done) })
	<-done
}
