// Package memtrim hands memory back to the operating system soon after a
// burst that an untrusted party caused: an upstream server's message past
// server.max_message_bytes, a flood of connections from clients without a
// token. Go returns freed heap to the OS only after a later garbage
// collection (forced every 2 minutes when the program is idle) and then
// gradually (its background scavenger), and with the proxy's GOGC=400
// the next collection waits for the heap to grow five-fold; so the
// resident size after such a burst stayed near its peak for minutes.
//
// Soon calls debug.FreeOSMemory (a collection, then every free page
// returned) once the burst is over: a second after the last request, at
// most once per MinInterval, so that a party repeating the burst costs
// the proxy one collection per MinInterval at most.
package memtrim

import (
	"runtime/debug"
	"sync"
	"time"
)

// Settle is how long after the last request the memory is returned (the
// burst is assumed over); MinInterval is the least time between two
// returns.
const (
	Settle      = time.Second
	MinInterval = 10 * time.Second
)

var (
	mu      sync.Mutex
	timer   *time.Timer
	last    time.Time
	count   int
	release = debug.FreeOSMemory // tests count calls
)

// Soon asks for the memory to be returned after Settle (or, when it was
// returned less than MinInterval ago, once MinInterval has passed); calls
// before then are folded into one.
func Soon() {
	mu.Lock()
	defer mu.Unlock()
	wait := Settle
	if next := last.Add(MinInterval); time.Until(next) > wait {
		wait = time.Until(next)
	}
	if timer == nil {
		timer = time.AfterFunc(wait, run)
		return
	}
	timer.Reset(wait) // a later request pushes it back: the burst is not over
}

func run() {
	mu.Lock()
	last = time.Now()
	count++
	f := release
	mu.Unlock()
	f()
}

// Count is the number of times memory was returned (for /metrics and
// tests).
func Count() int {
	mu.Lock()
	defer mu.Unlock()
	return count
}
