package proxy

// Raw forwarding of tools/call results (issue 16). When a client calls an
// upstream tool directly (direct mode), nothing between the upstream and
// the client needs the result decoded, unless the tool's output is
// validated (trusted tools with an outputSchema) or an error result must be
// redacted. The result then travels as the upstream's bytes: the upstream
// transport keeps it raw (upstream.RawResult), p.call sees only its
// isError, and the front writes it unchanged (rawToolResult). Every go-sdk
// decode that is skipped saves a 32 KiB buffer (docs/figures.md).

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

func rawSlotFrom(ctx context.Context) *upstream.RawResult {
	s, _ := ctx.Value(rawSlotKey{}).(*upstream.RawResult)
	return s
}

// rawToolResult is a tools/call answer written as the upstream's bytes
// (mcp.ResultBase makes it an mcp.Result; go-sdk documents custom results).
type rawToolResult struct {
	mcp.ResultBase
	json json.RawMessage
}

func (r *rawToolResult) MarshalJSON() ([]byte, error) { return r.json, nil }

// rawSlotFor returns ctx with a raw-result slot when the client session
// may get raw results (rawFrontOK), and the slot (nil otherwise).
func rawSlotFor(ctx context.Context, ss *mcp.ServerSession) (context.Context, *upstream.RawResult) {
	if !rawFrontOK(ss) {
		return ctx, nil
	}
	slot := &upstream.RawResult{}
	return withRawSlot(ctx, slot), slot
}

// rawFrontOK reports whether a client session may get raw results: the
// protocol generations before 2026-07-28, whose results the go-sdk does
// not stamp (resultType, server identity).
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
