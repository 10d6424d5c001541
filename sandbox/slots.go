package sandbox

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Fair sandbox slots. Trust: model-written code from one
// client session must not keep other sessions from running theirs. A pool
// has MaxConcurrentRuns slots; one owner (a client session: WithOwner) holds
// at most MaxRunsPerOwner of them at once; a run that finds no slot it may
// take waits at most SlotWait (and never past its own timeout), and a slot
// that frees goes to the waiting run whose owner holds the fewest (the
// oldest first among equals). A run still waiting then gets "sandbox busy"
// — not "timed out": it never ran. Runs without an owner are each their own.

type ownerKey struct{}

// WithOwner returns ctx marking the runs made with it as owner's (a client
// session's id): Pool.Run shares slots between owners.
func WithOwner(ctx context.Context, owner string) context.Context {
	return context.WithValue(ctx, ownerKey{}, owner)
}

func ownerOf(ctx context.Context) string {
	o, _ := ctx.Value(ownerKey{}).(string)
	return o
}

// ErrBusy is the error of a run that got no slot within its wait (matched
// with errors.Is on Pool.acquire's error; Result.Busy in Run's result).
var ErrBusy = errors.New("sandbox busy, retry in a few seconds")

type slots struct {
	total, perOwner int

	mu      sync.Mutex
	used    int
	byOwner map[string]int
	waiting []*slotWaiter // in arrival order
}

type slotWaiter struct {
	owner   string
	granted chan struct{} // closed when a slot is given
}

func newSlots(total, perOwner int) *slots {
	return &slots{total: total, perOwner: perOwner, byOwner: map[string]int{}}
}

// mayTake reports whether owner may take a free slot now (locked).
func (s *slots) mayTake(owner string) bool {
	return s.used < s.total && (owner == "" || s.byOwner[owner] < s.perOwner)
}

func (s *slots) takeLocked(owner string) {
	s.used++
	if owner != "" {
		s.byOwner[owner]++
	}
}

// acquire takes a slot for owner, waiting at most wait (or until ctx ends).
// It returns the function that gives the slot back, or an error wrapping
// ErrBusy that says how the slots are held.
func (s *slots) acquire(ctx context.Context, owner string, wait time.Duration) (func(), error) {
	s.mu.Lock()
	// A free slot goes to a newcomer only when nobody who may take it waits.
	if s.mayTake(owner) && s.next() == nil {
		s.takeLocked(owner)
		s.mu.Unlock()
		return func() { s.release(owner) }, nil
	}
	w := &slotWaiter{owner: owner, granted: make(chan struct{})}
	s.waiting = append(s.waiting, w)
	s.mu.Unlock()

	timer := time.NewTimer(wait)
	defer timer.Stop()
	var why error
	select {
	case <-w.granted:
		return func() { s.release(owner) }, nil
	case <-timer.C:
	case <-ctx.Done():
		why = ctx.Err()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-w.granted: // granted while giving up: keep it
		return func() { s.release(owner) }, nil
	default:
	}
	for i, x := range s.waiting {
		if x == w {
			s.waiting = append(s.waiting[:i], s.waiting[i+1:]...)
			break
		}
	}
	if why != nil {
		return nil, why
	}
	if owner != "" && s.byOwner[owner] >= s.perOwner {
		return nil, fmt.Errorf("%w: this session already runs %d bodies, the most one session may run at once (the sandbox has %d slots, shared between sessions); waited %d ms", ErrBusy, s.perOwner, s.total, wait.Milliseconds())
	}
	return nil, fmt.Errorf("%w: all %d sandbox slots were in use for %d ms", ErrBusy, s.total, wait.Milliseconds())
}

// next is the waiter a free slot goes to: among those whose owner is under
// its share, the one whose owner holds the fewest slots, oldest first
// (locked).
func (s *slots) next() *slotWaiter {
	var best *slotWaiter
	for _, w := range s.waiting {
		if w.owner != "" && s.byOwner[w.owner] >= s.perOwner {
			continue
		}
		if best == nil || s.byOwner[w.owner] < s.byOwner[best.owner] {
			best = w
		}
	}
	return best
}

// release gives owner's slot back and hands free slots to waiters.
func (s *slots) release(owner string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.used--
	if owner != "" {
		if s.byOwner[owner]--; s.byOwner[owner] <= 0 {
			delete(s.byOwner, owner)
		}
	}
	for s.used < s.total {
		w := s.next()
		if w == nil {
			return
		}
		for i, x := range s.waiting {
			if x == w {
				s.waiting = append(s.waiting[:i], s.waiting[i+1:]...)
				break
			}
		}
		s.takeLocked(w.owner)
		close(w.granted)
	}
}
