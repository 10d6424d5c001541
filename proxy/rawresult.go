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
	"bytes"
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/jsonscan"
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

// shapeRaw gives a raw result the shape the decoded way gives it
// (callRounds, eraResult) for a client before 2026-07-28: no resultType,
// and no hop keys in _meta (meta.go: the upstream's serverInfo never
// passes); an empty _meta is dropped. A result that needs no change is
// returned as is (no copy). Guards against: an upstream (untrusted)
// leaking its identity or protocol members to the client.
func shapeRaw(b []byte) []byte {
	change := false
	_, _ = jsonscan.Object(b, func(k, v []byte) bool {
		switch string(k) {
		case "resultType":
			change = true
		case "_meta":
			_, _ = jsonscan.Object(v, func(mk, _ []byte) bool {
				change = change || isHopMetaKey(rawKey(mk))
				return !change
			})
		}
		return !change
	})
	if !change {
		return b
	}
	out := make([]byte, 0, len(b))
	out = append(out, '{')
	n := 0
	member := func(k, v []byte) {
		if n > 0 {
			out = append(out, ',')
		}
		n++
		out = append(out, '"')
		out = append(out, k...)
		out = append(out, '"', ':')
		out = append(out, v...)
	}
	_, _ = jsonscan.Object(b, func(k, v []byte) bool {
		switch string(k) {
		case "resultType":
		case "_meta":
			var meta []byte
			m := 0
			_, _ = jsonscan.Object(v, func(mk, mv []byte) bool {
				if isHopMetaKey(rawKey(mk)) {
					return true
				}
				if m == 0 {
					meta = append(meta, '{')
				} else {
					meta = append(meta, ',')
				}
				m++
				meta = append(meta, '"')
				meta = append(meta, mk...)
				meta = append(meta, '"', ':')
				meta = append(meta, mv...)
				return true
			})
			if m > 0 {
				member(k, append(meta, '}'))
			}
		default:
			member(k, v)
		}
		return true
	})
	return append(out, '}')
}

// rawKey is a member name as raw JSON bytes (between the quotes) decoded
// to a string; escapes are rare and decoded the slow way.
func rawKey(k []byte) string {
	if bytes.IndexByte(k, '\\') < 0 {
		return string(k)
	}
	var s string
	if json.Unmarshal(append(append([]byte{'"'}, k...), '"'), &s) != nil {
		return string(k)
	}
	return s
}
