package sandbox

import (
	"runtime/metrics"
	"testing"
	"time"
)

// TestWatchMemoryFires: the watchdog (macOS's memory limit) reports once the
// runtime holds more than the limit, and stays quiet below it. Runs in
// process on every OS.
func TestWatchMemoryFires(t *testing.T) {
	quiet := make(chan uint64, 1)
	stop := watchMemory(1<<40, time.Millisecond, func(n uint64) { quiet <- n })
	time.Sleep(20 * time.Millisecond)
	stop()
	select {
	case n := <-quiet:
		t.Fatalf("fired at %d bytes with a 1 TiB limit", n)
	default:
	}

	fired := make(chan uint64, 1)
	stop = watchMemory(64<<20, time.Millisecond, func(n uint64) { fired <- n })
	defer stop()
	var keep [][]byte
	for i := 0; i < 64; i++ { // up to 256 MiB, four times the limit
		keep = append(keep, make([]byte, 4<<20))
		for j := range keep[i] {
			keep[i][j] = 1
		}
		select {
		case n := <-fired:
			if n <= 64<<20 {
				t.Fatalf("fired at %d bytes, under the 64 MiB limit", n)
			}
			t.Logf("fired at %d MiB after %d MiB allocated", n>>20, (i+1)*4)
			return
		default:
		}
		time.Sleep(2 * time.Millisecond)
	}
	select {
	case n := <-fired:
		t.Logf("fired at %d MiB after the loop", n>>20)
		return
	case <-time.After(time.Second):
	}
	t.Fatalf("no report after %d MiB allocated with a 64 MiB limit (in use %d MiB)", len(keep)*4, memoryInUse(samples())>>20)
}

func samples() []metrics.Sample { return []metrics.Sample{{Name: metricTotal}, {Name: metricReleased}} }
