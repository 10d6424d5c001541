package proxy

import (
	"context"
	"testing"
)

// TestSlotCtx: the raw-result slot kept in its context (slotCtx)
// reads as the context.WithValue pair it replaces.
func TestSlotCtx(t *testing.T) {
	type other struct{}
	parent, cancel := context.WithCancel(context.WithValue(context.Background(), other{}, "v"))
	ctx, slot := withInnerRawSlot(parent)
	if rawSlotFrom(ctx) != slot || innerRawSlot(ctx) != slot || ctx.Value(other{}) != "v" {
		t.Fatal("withInnerRawSlot: the slot, the inner mark or the parent's value is not read back")
	}
	outer := &slotCtx{Context: ctx}
	if rawSlotFrom(outer) != &outer.slot || innerRawSlot(outer) != nil {
		t.Fatal("a slot over an inner one: its own slot, no inner mark")
	}
	if rawSlotFrom(withoutRawSlot(ctx)) != nil || innerRawSlot(withoutRawSlot(ctx)) != nil {
		t.Fatal("withoutRawSlot left the slot")
	}
	child, stop := context.WithCancel(ctx)
	defer stop()
	cancel()
	<-child.Done() // the parent's cancellation reaches through the slot's context
	if ctx.Err() == nil {
		t.Fatal("the slot's context is not cancelled with its parent")
	}
}
