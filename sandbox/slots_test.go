package sandbox

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestSlotsPerOwner: one owner cannot hold every slot;
// another owner gets one at once.
func TestSlotsPerOwner(t *testing.T) {
	s := newSlots(4, 2)
	ctx := context.Background()
	var rel []func()
	for i := 0; i < 2; i++ {
		r, err := s.acquire(ctx, "hog", time.Second)
		if err != nil {
			t.Fatal(err)
		}
		rel = append(rel, r)
	}
	if _, err := s.acquire(ctx, "hog", 50*time.Millisecond); !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "this session already runs 2 bodies, the most one session may run at once (the sandbox has 4 slots") {
		t.Fatalf("a third slot for one owner: %v", err)
	}
	r, err := s.acquire(ctx, "victim", 0)
	if err != nil {
		t.Fatalf("another owner with slots free: %v", err)
	}
	r()
	for _, r := range rel {
		r()
	}
	if s.used != 0 || len(s.byOwner) != 0 || len(s.waiting) != 0 {
		t.Errorf("state after release: used %d owners %v waiting %d", s.used, s.byOwner, len(s.waiting))
	}
}

// TestSlotsFairHandOver: a freed slot goes to the waiting owner holding the
// fewest, even when another owner has waited longer.
func TestSlotsFairHandOver(t *testing.T) {
	s := newSlots(2, 2)
	ctx := context.Background()
	a1, _ := s.acquire(ctx, "a", time.Second)
	a2, _ := s.acquire(ctx, "a", time.Second)
	gotA := make(chan func(), 1)
	go func() {
		r, err := s.acquire(ctx, "a", 10*time.Second)
		if err == nil {
			gotA <- r
		}
	}()
	for waiting := 0; waiting != 1; { // a's third run queues first
		s.mu.Lock()
		waiting = len(s.waiting)
		s.mu.Unlock()
		time.Sleep(time.Millisecond)
	}
	gotB := make(chan func(), 1)
	go func() {
		r, err := s.acquire(ctx, "b", 10*time.Second)
		if err == nil {
			gotB <- r
		}
	}()
	for waiting := 0; waiting != 2; {
		s.mu.Lock()
		waiting = len(s.waiting)
		s.mu.Unlock()
		time.Sleep(time.Millisecond)
	}
	a1()
	select {
	case rb := <-gotB:
		rb()
	case <-gotA:
		t.Fatal("the freed slot went to the owner that already holds one")
	case <-time.After(10 * time.Second): // fail-safe bound
		t.Fatal("nobody got the freed slot")
	}
	a2()
	(<-gotA)()
}

// TestSlotsNoOwner: runs without an owner are each their own.
func TestSlotsNoOwner(t *testing.T) {
	s := newSlots(3, 1)
	for i := 0; i < 3; i++ {
		if _, err := s.acquire(context.Background(), "", 0); err != nil {
			t.Fatalf("run %d without owner: %v", i, err)
		}
	}
	if _, err := s.acquire(context.Background(), "", 10*time.Millisecond); !errors.Is(err, ErrBusy) {
		t.Fatalf("over the total: %v", err)
	}
}
