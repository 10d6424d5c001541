package upstream

import (
	"io"
	"log/slog"
	"testing"
	"time"
)

// One list_changed of a kind waits at a time: the ones that come while it
// waits are dropped until the handler takes it (or listChangedHold passes).
func TestNotifyGateCoalescesListChanged(t *testing.T) {
	g := newNotifyGate("flood", slog.New(slog.NewTextHandler(io.Discard, nil)))
	now := time.Now()
	const tools = "notifications/tools/list_changed"
	if !g.admit(tools, now) {
		t.Fatal("first list_changed dropped")
	}
	for i := 0; i < 1000; i++ {
		if g.admit(tools, now) {
			t.Fatalf("list_changed %d admitted while one waits", i+2)
		}
	}
	if !g.admit("notifications/prompts/list_changed", now) {
		t.Fatal("a prompts/list_changed was dropped because a tools/list_changed waits")
	}
	g.handled(tools)
	if !g.admit(tools, now) {
		t.Fatal("list_changed dropped after the handler took the waiting one")
	}
	if !g.admit(tools, now.Add(listChangedHold)) {
		t.Fatal("list_changed dropped although the waiting one was never handed over for listChangedHold")
	}
}

// notifications/message past msgBurst at one instant are dropped and
// counted; other notifications have their own budget.
func TestNotifyGateRateLimitsMessages(t *testing.T) {
	g := newNotifyGate("flood", slog.New(slog.NewTextHandler(io.Discard, nil)))
	now := time.Now()
	admitted := 0
	for i := 0; i < 10*msgBurst; i++ {
		if g.admit("notifications/message", now) {
			admitted++
		}
	}
	if admitted != msgBurst {
		t.Fatalf("admitted %d notifications/message at one instant, want the burst %d", admitted, msgBurst)
	}
	g.mu.Lock()
	dropped := g.dropped["notifications/message"]
	g.mu.Unlock()
	if dropped != 9*msgBurst {
		t.Fatalf("counted %d dropped, want %d", dropped, 9*msgBurst)
	}
	if !g.admit("notifications/progress", now) {
		t.Fatal("a progress notification was dropped by the message budget")
	}
	if !g.admit("notifications/message", now.Add(time.Second)) {
		t.Fatal("no notifications/message admitted a second later")
	}
}
