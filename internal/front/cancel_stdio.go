package front

// No answer for a cancelled request on the stdio front.
//
// MCP basic/utilities/cancellation: a receiver of notifications/cancelled
// SHOULD "not send a response for the cancelled request". go-sdk v1.8.0's
// jsonrpc2 still answers it (the handler's context error, e.g. -32603
// "context canceled"), and a client that has already dropped the id
// reports the answer as an error of its own (the TypeScript SDK's
// Protocol: "Received a response for an unknown message ID"). The front
// notes the ids a client cancels while they are in flight, on either path
// (the go-sdk's or the fast path), and drops the one answer written for
// each. A cancellation of an id that is not in flight is ignored: not
// noted (its answer is already out) and not passed to the go-sdk, whose
// canceller could otherwise catch a later request reusing the id. A request inside a batch is
// still answered in its batch's array (the array must hold one answer per
// request).
//
// Trust: the client is not trusted; it can only suppress answers to its
// own requests.

import (
	"encoding/json"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/jsonscan"
)

// cancelledID is the request id that notifications/cancelled params name
// (requestId), read as the go-sdk's canceller reads it (a JSON value
// through jsonrpc.MakeID: 3, 3.0 and 3e0 are one id); ok is false when
// params name none.
func cancelledID(params []byte) (id jsonrpc.ID, ok bool) {
	var raw []byte
	if _, err := jsonscan.Object(params, func(k, v []byte) bool {
		if string(k) == "requestId" {
			raw = v
		}
		return true
	}); err != nil || raw == nil {
		return id, false
	}
	return rawID(raw)
}

// rawID reads a JSON-RPC id (a JSON value) as the go-sdk reads it
// (jsonrpc.MakeID: 3, 3.0 and 3e0 are one id); ok is false when it is not
// an id the go-sdk takes.
func rawID(raw []byte) (id jsonrpc.ID, ok bool) {
	if PlainString(raw) {
		id, err := jsonrpc.MakeID(string(raw[1 : len(raw)-1]))
		return id, err == nil
	}
	if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		id, err := jsonrpc.MakeID(float64(n))
		return id, err == nil
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return id, false
	}
	id, err := jsonrpc.MakeID(v)
	return id, err == nil
}

// noteCancelled notes the in-flight ids that the notifications/cancelled
// among msgs name (their answers are not written: dropCancelled) and
// returns msgs without the cancellations of ids that are not in flight,
// which the front ignores (MCP basic/utilities/cancellation: a receiver
// MAY ignore a cancellation of an unknown or completed request). Passed
// on, such a cancellation could cancel a later request that reuses the
// id: go-sdk v1.8.0's canceller looks the id up on a goroutine of its
// own, which may run after the reader has taken that request (about 1
// run in 4 under -race in TestFrontCancelledNoAnswer). A call earlier in
// msgs (the same batch) counts as in flight.
func (c *Conn) noteCancelled(msgs []jsonrpc.Message) []jsonrpc.Message {
	var keep []jsonrpc.Message // nil: msgs as they are
	for i, m := range msgs {
		r, ok := m.(*jsonrpc.Request)
		if !ok || r.IsCall() || r.Method != "notifications/cancelled" {
			if keep != nil {
				keep = append(keep, m)
			}
			continue
		}
		id, ok := cancelledID(r.Params)
		if !ok {
			if keep != nil {
				keep = append(keep, m)
			}
			continue // the go-sdk's canceller refuses it as it does
		}
		c.mu.Lock()
		_, fast := c.inflight[id]
		_, sdk := c.sdkCalls[id]
		if fast || sdk {
			if c.cancelled == nil {
				c.cancelled = map[jsonrpc.ID]bool{}
			}
			c.cancelled[id] = true
		}
		c.mu.Unlock()
		if fast || sdk || callIn(msgs[:i], id) {
			if keep != nil {
				keep = append(keep, m)
			}
			continue
		}
		if keep == nil {
			keep = append(make([]jsonrpc.Message, 0, len(msgs)), msgs[:i]...)
		}
	}
	if keep == nil {
		return msgs
	}
	return keep
}

// callIn reports whether msgs hold a call with id.
func callIn(msgs []jsonrpc.Message, id jsonrpc.ID) bool {
	for _, m := range msgs {
		if r, ok := m.(*jsonrpc.Request); ok && r.IsCall() && r.ID == id {
			return true
		}
	}
	return false
}

// dropCancelled reports whether the answer to id must not be written
// (the client cancelled the request), forgetting the note.
func (c *Conn) dropCancelled(id jsonrpc.ID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.cancelled[id] {
		return false
	}
	delete(c.cancelled, id)
	return true
}
