package upstream

import (
	"context"
	"errors"
	"time"
)

// A call's call_timeout without a timer of its own. A tools/call
// without progress used to run under context.WithTimeoutCause: a timer
// added to and removed from the runtime's timer heap, a timerCtx, the
// parent's children map and a Done channel, per call (about 3.5% of the
// proxy's CPU on the stdio path). On a wire that times its own calls
// (timesCalls: the stdio transport, whose Write does not need the call's
// context to end, unlike an HTTP POST), Manager.CallToolWith gives the
// call its deadline instead (time.Now() + call_timeout, taken where the
// context used to be made), and the wire keeps every own call's deadline
// in one map with one timer, armed for the earliest. When it fires, every
// call whose deadline has passed is ended as the context's deadline ended
// it: its waiter gets errWireDeadline at once (taken out of w.own first,
// so the answer can no longer be delivered to it), the upstream gets
// notifications/cancelled with the reason "context deadline exceeded" (the
// text of the context's error), and CallToolWith words the error as
// before ("call_timeout 55s exceeded", wrapping context.DeadlineExceeded).
// A call that ends first only leaves the map; the timer is not moved for
// it (it fires at the deadline it was armed for, finds nothing due and is
// armed again for the earliest left), so a steady stream of calls costs a
// map insert and delete each, and the timer fires about once per
// call_timeout.

// errWireDeadline is what wire.call returns for a call the wire ended at
// its deadline; it matches context.DeadlineExceeded.
var errWireDeadline = &wireDeadline{}

type wireDeadline struct{}

func (*wireDeadline) Error() string { return context.DeadlineExceeded.Error() }
func (*wireDeadline) Unwrap() error { return context.DeadlineExceeded }

// isWireDeadline reports whether err is a call the wire ended at its
// deadline.
func isWireDeadline(err error) bool { return errors.Is(err, errWireDeadline) }

// addDue records at as the deadline of own call id and arms the timer
// when at is earlier than what it waits for. w.mu is held.
func (w *wire) addDue(id int64, at time.Time) {
	if w.due == nil {
		w.due = map[int64]time.Time{}
	}
	w.due[id] = at
	if !w.dueAt.IsZero() && !at.Before(w.dueAt) {
		return
	}
	w.dueAt = at
	if w.dueTimer == nil {
		w.dueTimer = time.AfterFunc(time.Until(at), w.expire)
	} else {
		w.dueTimer.Reset(time.Until(at))
	}
}

// expire ends the own calls whose deadline has passed and arms the timer
// for the earliest deadline left.
func (w *wire) expire() {
	now := time.Now()
	var late []chan ownAnswer
	w.mu.Lock()
	w.dueAt = time.Time{}
	var next time.Time
	for id, at := range w.due {
		if !at.After(now) {
			delete(w.due, id)
			if ch := w.own[id]; ch != nil {
				delete(w.own, id) // its answer, if it comes now, is dropped (ownDone)
				late = append(late, ch)
			}
			continue
		}
		if next.IsZero() || at.Before(next) {
			next = at
		}
	}
	if !next.IsZero() {
		w.dueAt = next
		w.dueTimer.Reset(time.Until(next))
	}
	w.mu.Unlock()
	for _, ch := range late {
		ch <- ownAnswer{err: errWireDeadline} // buffered (1), and no longer in w.own
	}
}
