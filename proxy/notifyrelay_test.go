package proxy

import (
	"runtime"
	"sync"
	"testing"
)

// N list_changed notifications while a sending runs make exactly one more
// sending (one running plus one waiting).
func TestCoalescerOneMoreRun(t *testing.T) {
	started := make(chan int, 16)
	release := make(chan struct{})
	var mu sync.Mutex
	runs := 0
	c := newCoalescer(func() {
		mu.Lock()
		runs++
		n := runs
		mu.Unlock()
		started <- n
		<-release
	})
	c.kick()
	if n := <-started; n != 1 {
		t.Fatalf("first run is number %d", n)
	}
	for i := 0; i < 100; i++ { // while run 1 blocks
		c.kick()
	}
	release <- struct{}{} // run 1 ends; run 2 starts
	if n := <-started; n != 2 {
		t.Fatalf("second run is number %d", n)
	}
	release <- struct{}{} // run 2 ends; nothing waits
	c.q.mu.Lock()
	running, waiting := c.q.running, len(c.q.items)
	c.q.mu.Unlock()
	// drain may still be between the end of run 2 and its check of the
	// queue; it finds it empty whenever it gets there.
	if waiting != 0 {
		t.Fatalf("%d runs waiting after 100 kicks during one run, want 0 (running=%v)", waiting, running)
	}
	c.kick()
	if n := <-started; n != 3 {
		t.Fatalf("a kick after the runs made run %d, want 3", n)
	}
	release <- struct{}{}
	select {
	case n := <-started:
		t.Fatalf("an extra run %d", n)
	default:
	}
}

// A full relay queue drops (push says false) instead of blocking, keeps
// order, and holds one entry per equal item.
func TestRelayQueueBoundedAndDeduplicated(t *testing.T) {
	release := make(chan struct{})
	var got []string
	done := make(chan struct{}, 8)
	q := &relayQueue[string]{max: 3, same: func(a, b string) bool { return a == b }, run: func(s string) {
		<-release
		got = append(got, s)
		done <- struct{}{}
	}}
	if !q.push("a") { // taken by the goroutine (blocks on release) or waiting
		t.Fatal("push a")
	}
	// Wait until "a" is taken off the queue, so that three places are free.
	for {
		q.mu.Lock()
		n := len(q.items)
		q.mu.Unlock()
		if n == 0 {
			break
		}
		runtime.Gosched()
	}
	for _, s := range []string{"b", "c", "b", "d"} {
		if !q.push(s) {
			t.Fatalf("push %s refused", s)
		}
	}
	if q.push("e") {
		t.Fatal("push e into a full queue was accepted")
	}
	for i := 0; i < 4; i++ {
		release <- struct{}{}
		<-done
	}
	if want := []string{"a", "b", "c", "d"}; len(got) != 4 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || got[3] != want[3] {
		t.Fatalf("ran %v, want %v", got, want)
	}
}
