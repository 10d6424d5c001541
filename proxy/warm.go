package proxy

// Warm goroutines for the call path (issue 16).
//
// A tools/call runs on a goroutine of its own (the exchange of a
// 2026-07-28 client, exchange.go; the stdio front's fast path,
// frontfast.go) and goes deep: middleware, (*Proxy).call, forward, the
// go-sdk client's marshalling. A new goroutine starts on a small stack
// and grows it by copying (runtime.newstack/copystack: 10–12% of the
// proxy's CPU under the overhead bench, docs/figures.md). goWarm hands the
// work to an idle goroutine that ran an earlier call, whose stack has
// already grown, and starts one only when none is idle; an idle one ends
// after warmIdle. The number of goroutines is what it would have been
// (one per call in flight), plus the idle ones of the last warmIdle.

import "time"

// warmIdle is how long a warm goroutine waits for more work.
const warmIdle = 30 * time.Second

var warmq = make(chan func())

// goWarm runs f on a goroutine (as go f() does), reusing an idle one.
func goWarm(f func()) {
	select {
	case warmq <- f:
	default:
		go warmLoop(f)
	}
}

func warmLoop(f func()) {
	f()
	t := time.NewTimer(warmIdle)
	defer t.Stop()
	for {
		select {
		case f = <-warmq:
			f()
			t.Reset(warmIdle)
		case <-t.C:
			return
		}
	}
}
