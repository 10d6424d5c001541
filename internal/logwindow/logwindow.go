// Package logwindow keeps a repeated log line from flooding the log: the
// first event of a window is logged in full, the later ones of the same
// window are only counted, and one summary line gives their number when
// the window ends. It depends on nothing of ours.
package logwindow

import (
	"sync"
	"time"
)

// Window counts events over a fixed period. The zero value is not usable;
// make one with New.
type Window struct {
	every   time.Duration
	summary func(n int, every time.Duration)

	mu   sync.Mutex
	open bool // a window is running (its first event was logged)
	n    int  // events of the running window after its first
}

// New returns a Window of period every (> 0). summary is called once at
// the end of each window with the number of events after the first
// (n >= 0; a caller usually logs nothing for 0); it runs on its own
// goroutine (time.AfterFunc), never under the caller's locks.
func New(every time.Duration, summary func(n int, every time.Duration)) *Window {
	return &Window{every: every, summary: summary}
}

// Allow records one event and reports whether the caller should log it in
// full: true for the first event of a window (which starts the window),
// false for the others (counted for the summary). A nil Window allows
// every event.
func (w *Window) Allow() bool {
	if w == nil {
		return true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.open {
		w.n++
		return false
	}
	w.open = true
	time.AfterFunc(w.every, w.close)
	return true
}

func (w *Window) close() {
	w.mu.Lock()
	n := w.n
	w.open, w.n = false, 0
	w.mu.Unlock()
	if w.summary != nil {
		w.summary(n, w.every)
	}
}
