package front

// Warm goroutines for the call path.
//
// A tools/call runs on a goroutine of its own (the exchange of a
// 2026-07-28 client; the stdio front's fast path) and goes deep:
// middleware, (*Proxy).call, forward, the upstream leg. A new goroutine
// starts on a small stack and grows it by copying (runtime.newstack and
// copystack: with a new goroutine per call the proxy spends 13-24% more
// CPU per call, docs/performance.md). GoWarm hands the
// work to an idle goroutine that ran an earlier call, whose stack has
// already grown, and starts one only when none is idle. The number of
// goroutines is what it would have been (one per call in flight), plus
// the idle ones.
//
// Idle ones end when they were not needed: every warmIdle a reaper sends
// an end (a nil task) to as many idle goroutines as were idle all through
// the last period (the low-water mark of the idle count), so the pool
// shrinks to what the last warmIdle used. An idle goroutine waits on the
// queue alone: a timer in its wait cost a timer-heap insert and removal
// each time it parked and woke (selectgo with a timer channel, about 2% of
// the proxy's CPU per stdio call).

import (
	"sync"
	"sync/atomic"
	"time"
)

// warmIdle is how often idle warm goroutines are trimmed.
const warmIdle = 30 * time.Second

// WarmTask is work for a warm goroutine: a call's own struct (stdio_fast.go
// fastCall, exchange.go exchange) passed as it is, so that handing it over
// allocates no closure; funcTask adapts a func.
type WarmTask interface{ Run() }

// funcTask runs a func as a WarmTask.
type funcTask func()

func (f funcTask) Run() { f() }

var (
	warmq = make(chan WarmTask)
	// warmIdleNow counts goroutines waiting on warmq; warmLow is its
	// lowest value since the reaper last looked.
	warmIdleNow, warmLow atomic.Int32
	warmReaper           sync.Once
)

// GoWarm runs f on a goroutine (as go f() does), reusing an idle one.
func GoWarm(f func()) { GoWarmTask(funcTask(f)) }

// GoWarmTask runs t.run() on a goroutine (as go t.run() does), reusing an
// idle one.
func GoWarmTask(t WarmTask) {
	select {
	case warmq <- t:
	default:
		warmReaper.Do(func() { go reapWarm(warmIdle, nil) })
		go warmLoop(t)
	}
}

func warmLoop(f WarmTask) {
	for f != nil {
		f.Run()
		warmIdleNow.Add(1)
		f = <-warmq
		if n := warmIdleNow.Add(-1); n < warmLow.Load() {
			lowerWarmLow(n)
		}
	}
}

// lowerWarmLow sets warmLow to n if n is lower.
func lowerWarmLow(n int32) {
	for {
		low := warmLow.Load()
		if n >= low || warmLow.CompareAndSwap(low, n) {
			return
		}
	}
}

// reapWarm ends, every period, the goroutines that stayed idle through
// the whole period, until stop is closed (nil: never).
func reapWarm(period time.Duration, stop <-chan struct{}) {
	t := time.NewTicker(period)
	defer t.Stop()
	warmLow.Store(warmIdleNow.Load())
	for {
		select {
		case <-t.C:
		case <-stop:
			return
		}
		n := warmLow.Swap(warmIdleNow.Load())
	trim:
		for ; n > 0; n-- {
			select {
			case warmq <- nil:
			default:
				break trim // none idle any more
			}
		}
	}
}
