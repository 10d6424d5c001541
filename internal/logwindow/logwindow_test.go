package logwindow

import (
	"testing"
	"time"
)

// The window's end is called by hand (the period is an hour), so nothing
// here depends on timing.
func TestWindowLogsFirstAndSumsTheRest(t *testing.T) {
	var got []int
	w := New(time.Hour, func(n int, _ time.Duration) {
		if n > 0 {
			got = append(got, n)
		}
	})
	if !w.Allow() {
		t.Fatal("the first event of a window was not allowed")
	}
	for i := 0; i < 5; i++ {
		if w.Allow() {
			t.Fatalf("event %d of the same window was allowed", i+2)
		}
	}
	w.close()
	if len(got) != 1 || got[0] != 5 {
		t.Fatalf("summaries %v, want [5]", got)
	}
	if !w.Allow() {
		t.Fatal("the first event after a window ended was not allowed")
	}
	w.close()
	if len(got) != 1 {
		t.Fatalf("a window with one event had a summary: %v", got)
	}
}
