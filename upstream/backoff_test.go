package upstream

import (
	"testing"
	"time"
)

func TestBackoffBounds(t *testing.T) {
	lo, hi := 10*time.Millisecond, 80*time.Millisecond
	for attempt := 0; attempt < 10; attempt++ {
		d := lo << min(attempt, 3)
		for range 100 {
			got := backoff(lo, hi, attempt)
			if got < d/2 || got > d {
				t.Fatalf("attempt %d: %v outside [%v, %v]", attempt, got, d/2, d)
			}
		}
	}
}
