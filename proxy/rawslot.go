package proxy

// Raw forwarding of tools/call results. When a client calls an
// upstream tool directly (direct mode), nothing between the upstream and
// the client needs the result decoded, unless the tool's output is
// validated (trusted tools with an outputSchema) or an error result must be
// redacted. The result then travels as the upstream's bytes: the upstream
// transport keeps it raw (upstream.RawResult), p.call sees only its
// isError, and the front writes it (front.RawResult): unchanged for a client
// before 2026-07-28 (rawSlotFor), stamped with resultType and the
// server's _meta for a 2026-07-28 client (its exchange holds the slot,
// exchange.go). Passing the bytes saves 7.5 KB and a quarter of the CPU
// of a direct call, 16 KB and a third of a tool_call (docs/performance.md).

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/upstream"
)

type rawSlotKey struct{}

// withRawSlot returns ctx with a slot the call path may fill with the raw
// result of the tool the client called.
func withRawSlot(ctx context.Context, slot *upstream.RawResult) context.Context {
	return context.WithValue(ctx, rawSlotKey{}, slot)
}

// withoutRawSlot removes the slot (the result must be decoded).
func withoutRawSlot(ctx context.Context) context.Context {
	if rawSlotFrom(ctx) == nil {
		return ctx
	}
	return context.WithValue(ctx, rawSlotKey{}, (*upstream.RawResult)(nil))
}

type innerRawKey struct{}

// withInnerRawSlot returns ctx with a fresh raw-result slot for a call
// made on the client's behalf by the proxy's own tools (tool_call:
// session.CallEnveloped), whose name is not the one the client
// called: forward fills it although callRequest does not match (the
// client's _meta does not pass to such calls; its progress token does
// for tool_call's one call: toolCallRequest).
func withInnerRawSlot(ctx context.Context) (context.Context, *upstream.RawResult) {
	c := &slotCtx{Context: ctx, inner: true}
	return c, &c.slot
}

// slotCtx is a context carrying a fresh raw-result slot (rawSlotKey;
// with inner also innerRawKey), the slot stored in the context itself: one
// allocation of 64 B instead of the slot's and one or two
// context.WithValue's (48 B each). Every other key,
// the deadline, Done and Err are its parent's.
type slotCtx struct {
	context.Context
	slot  upstream.RawResult
	inner bool
}

func (c *slotCtx) Value(key any) any {
	switch key.(type) {
	case rawSlotKey:
		return &c.slot
	case innerRawKey:
		if c.inner {
			return &c.slot
		}
	}
	return c.Context.Value(key)
}

// innerRawSlot is the slot of withInnerRawSlot when it is still ctx's
// raw-result slot (withoutRawSlot takes it away).
func innerRawSlot(ctx context.Context) *upstream.RawResult {
	s := rawSlotFrom(ctx)
	if s == nil || ctx.Value(innerRawKey{}) != s {
		return nil
	}
	return s
}

func rawSlotFrom(ctx context.Context) *upstream.RawResult {
	s, _ := ctx.Value(rawSlotKey{}).(*upstream.RawResult)
	return s
}

// rawSlotFor returns ctx with a raw-result slot when the client session
// may get raw results (rawFrontOK), and the slot (nil otherwise).
func rawSlotFor(ctx context.Context, ss *mcp.ServerSession) (context.Context, *upstream.RawResult) {
	if !rawFrontOK(ss) {
		return ctx, nil
	}
	c := &slotCtx{Context: ctx} // the slot and its context in one allocation
	return c, &c.slot
}

// rawFrontOK reports whether a client session may get its results
// unstamped: the protocol generations before 2026-07-28, whose results
// the go-sdk does not stamp (resultType, server identity). Calls of
// 2026-07-28 clients take their raw slot from their exchange
// (startExchange) and are stamped (stampRaw).
func rawFrontOK(ss *mcp.ServerSession) bool {
	ip := ss.InitializeParams()
	return ip != nil && ip.ProtocolVersion != "" && ip.ProtocolVersion < "2026-07-28"
}

// materialize decodes a raw result (when it must be changed after all:
// redaction of an error result).
func materialize(slot *upstream.RawResult) (*mcp.CallToolResult, error) {
	var res mcp.CallToolResult
	err := json.Unmarshal(slot.JSON, &res)
	slot.JSON = nil
	if err != nil {
		return nil, err
	}
	return &res, nil
}
