package upstream

// A plain tools/call past the go-sdk client. The go-sdk's
// ClientSession.CallTool marshals every request by reflection (with, on a
// 2026-07-28 leg, the _meta triple of SEP-2575 built and marshaled again
// each time) and keeps per-call bookkeeping in jsonrpc2; it was the
// largest piece of the proxy's own CPU left per proxied call. On the
// proxy's own transports (stdio and Streamable HTTP, wire.go) a plain
// tools/call is written here instead, with the bytes the go-sdk client
// would write, and sent as one of our own requests (owncall.go: an id
// below zero, the answer raw to the caller). What the go-sdk client does
// for such a call is done here too:
//
//   - params: CallToolParams as jsonrpc2 marshals it (members in struct
//     order, _meta keys sorted, no HTML escaping, arguments compacted,
//     absent arguments as {}); on a 2026-07-28 leg the _meta triple
//     (protocolVersion, clientInfo, clientCapabilities) as the go-sdk
//     client itself sent it on this session (captured from its first
//     request that carried it, captureMeta), keys the caller set winning;
//   - progress: the upstream's notifications/progress under the call's
//     token are handed to CallOptions.OnProgress in order, before the
//     result (wire.call), without the go-sdk's settle wait;
//   - cancellation: notifications/cancelled with our id when ctx ends;
//   - the result decoded by the go-sdk's own CallToolResult.UnmarshalJSON
//     when it is not taken raw; errors worded as the go-sdk words them
//     ("calling \"tools/call\": …"), so the caller sees the same error.
//
// The go-sdk path stays for: the legacy SSE transport (the go-sdk's),
// sessions whose client answers input_required results itself (the
// go-sdk's multi-round-trip middleware is on: per-user sessions), a
// 2026-07-28 session whose triple was not captured, and params the
// writer here cannot reproduce (an encoding error).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/jsonscan"
)

// metaMember is one _meta key with its value as JSON.
type metaMember struct {
	key string
	val json.RawMessage
}

// tripleKeys are the _meta keys the go-sdk client adds to every request
// on a 2026-07-28 leg (SEP-2575; injectRequestMeta in go-sdk mcp/client.go).
var tripleKeys = []string{mcp.MetaKeyProtocolVersion, mcp.MetaKeyClientInfo, mcp.MetaKeyClientCapabilities}

// captureMeta is a sending middleware of the go-sdk client: it keeps the
// _meta triple of the first tools/list the client sends with one (the
// listing that makes the session ready), as JSON.
func (l *live) captureMeta(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if p, ok := req.GetParams().(*mcp.ListToolsParams); ok && p != nil && l.ownTools && !l.metaSet.Load() {
			if _, has := p.Meta[mcp.MetaKeyProtocolVersion]; has {
				var ms []metaMember
				for _, k := range tripleKeys {
					v, ok := p.Meta[k]
					if !ok {
						continue
					}
					b, err := marshalNoEscape(v)
					if err != nil {
						ms = nil
						break
					}
					ms = append(ms, metaMember{key: k, val: b})
				}
				if ms != nil {
					l.metaMu.Lock()
					l.meta = ms
					l.metaMu.Unlock()
					l.metaSet.Store(true)
				}
			}
		}
		return next(ctx, method, req)
	}
}

// marshalNoEscape is v's JSON as jsonrpc2 writes it (no HTML escaping).
func marshalNoEscape(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// ownToolWire is the wire a plain tools/call on l goes through past the
// go-sdk, nil when it keeps the go-sdk path (see the file comment).
func (l *live) ownToolWire() *wire {
	if !l.ownTools {
		return nil
	}
	oc, ok := l.conn.(ownCaller)
	if !ok {
		return nil
	}
	if modernLeg(l.session) && !l.metaSet.Load() {
		return nil
	}
	return oc.ownWire()
}

// withMeta is p with the members of extra set in a copy of its _meta
// (the params the go-sdk path sends); p itself when extra is empty.
func withMeta(p *mcp.CallToolParams, extra []metaMember) *mcp.CallToolParams {
	if len(extra) == 0 {
		return p
	}
	q := &mcp.CallToolParams{}
	if p != nil {
		*q = *p
	}
	meta := make(mcp.Meta, len(q.Meta)+len(extra))
	for k, v := range q.Meta {
		meta[k] = v
	}
	for _, m := range extra {
		meta[m.key] = m.val
	}
	q.Meta = meta
	return q
}

// appendCallParams appends the params of tools/call as the go-sdk client
// writes withMeta(p, extra) on l: CallToolParams marshaled by jsonrpc2
// (see the file comment). _meta keys come from extra first, then p.Meta,
// then (modern) the captured triple.
func (l *live) appendCallParams(buf []byte, p *mcp.CallToolParams, extra []metaMember, modern bool) ([]byte, error) {
	var triple []metaMember
	if modern {
		l.metaMu.Lock()
		triple = l.meta
		l.metaMu.Unlock()
	}
	type member struct {
		key string
		raw json.RawMessage // extra and triple
		val any             // p.Meta
	}
	// A call's _meta has a few members (a 2026-07-28 leg: the captured
	// triple and the progress token): on the stack up to len(stack), with
	// no allocation (~0.2 KB per call to a 2026-07-28 upstream).
	var stack [8]member
	members := stack[:0]
	if n := len(extra) + len(p.Meta) + len(triple); n > len(stack) {
		members = make([]member, 0, n)
	}
	// inExtra scans extra only (at most a few members): p.Meta holds the
	// client's own _meta keys, as many as it sends (untrusted), so
	// membership is never a scan of what was collected (that made a call
	// with 40k keys take 13 s).
	inExtra := func(k string) bool {
		for _, m := range extra {
			if m.key == k {
				return true
			}
		}
		return false
	}
	for _, m := range extra {
		members = append(members, member{key: m.key, raw: m.val})
	}
	for k, v := range p.Meta {
		if !inExtra(k) {
			members = append(members, member{key: k, val: v})
		}
	}
	for _, m := range triple {
		if _, inMeta := p.Meta[m.key]; !inMeta && !inExtra(m.key) {
			members = append(members, member{key: m.key, raw: m.val})
		}
	}
	buf = append(buf, '{')
	if len(members) > 0 {
		slices.SortFunc(members, func(a, b member) int { return strings.Compare(a.key, b.key) })
		buf = append(buf, `"_meta":{`...)
		for i, m := range members {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = appendString(buf, m.key)
			buf = append(buf, ':')
			if m.raw != nil {
				buf = append(buf, m.raw...) // compact JSON written here
				continue
			}
			var err error
			if buf, err = appendValue(buf, m.val); err != nil {
				return buf, err
			}
		}
		buf = append(buf, "},"...)
	}
	buf = append(buf, `"name":`...)
	buf = appendString(buf, p.Name)
	buf = append(buf, `,"arguments":`...)
	var err error
	if p.Arguments == nil {
		buf = append(buf, "{}"...) // the go-sdk never sends nil arguments
	} else if buf, err = appendValue(buf, p.Arguments); err != nil {
		return buf, err
	}
	if len(p.InputResponses) > 0 {
		buf = append(buf, `,"inputResponses":`...)
		if buf, err = appendValue(buf, p.InputResponses); err != nil {
			return buf, err
		}
	}
	if p.RequestState != "" {
		buf = append(buf, `,"requestState":`...)
		buf = appendString(buf, p.RequestState)
	}
	return append(buf, '}'), nil
}

// appendValue appends v's JSON as jsonrpc2 writes it (encoding/json, no
// HTML escaping; raw JSON compacted).
func appendValue(buf []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case string:
		return appendString(buf, x), nil
	case json.RawMessage:
		if x == nil {
			return append(buf, "null"...), nil
		}
		if out, ok := jsonscan.AppendCompact(buf, x); ok { // json.Compact's bytes, faster
			return out, nil
		}
		b := bytes.NewBuffer(buf)
		if err := json.Compact(b, x); err != nil {
			return buf, err
		}
		return b.Bytes(), nil
	}
	b, err := marshalNoEscape(v)
	if err != nil {
		return buf, err
	}
	return append(buf, b...), nil
}

// callOwn sends the plain tools/call withMeta(p, extra) on l past the go-sdk (w is
// l.ownToolWire()) and returns what the go-sdk's CallTool would have
// returned for it: the decoded result, or with raw set the result in
// raw.JSON (when rawPassable) and only IsError decoded; the upstream's
// JSON-RPC error and transport failures wrapped as "calling
// \"tools/call\": …"; ctx.Err() when ctx ended first (the upstream got
// notifications/cancelled). ok is false when p cannot be written here:
// nothing was sent, and the caller takes the go-sdk path.
func (l *live) callOwn(ctx context.Context, w *wire, p *mcp.CallToolParams, extra []metaMember, raw *RawResult, token string, onProgress func(*mcp.ProgressNotificationParams), due time.Time) (res *mcp.CallToolResult, err error, ok bool) {
	if p == nil {
		p = &mcp.CallToolParams{}
	}
	buf, err := l.appendCallParams(nil, p, extra, modernLeg(l.session))
	if err != nil {
		return nil, nil, false
	}
	var sink *progressSink
	if onProgress != nil && token != "" {
		sink = newProgressSink(onProgress)
	}
	answer, err := w.call(ctx, l.conn, "tools/call", buf, token, sink, due, raw)
	if err != nil {
		return nil, sdkCallError(ctx, err), true
	}
	if raw != nil {
		rm, _ := raw.Members()
		if passable, isErr, plain := rawPassableRec(answer, rm); passable {
			raw.JSON, raw.Plain = answer, plain
			return &mcp.CallToolResult{IsError: isErr}, nil, true
		}
		raw.DropRecords() // decoded below: nothing reads them
	}
	var r mcp.CallToolResult
	if err := r.UnmarshalJSON(answer); err != nil {
		return nil, fmt.Errorf("calling %q: %w", "tools/call", err), true
	}
	return &r, nil, true
}

// sdkCallError words an error of wire.call as the go-sdk's call (go-sdk
// mcp/transport.go) words the same failure.
func sdkCallError(ctx context.Context, err error) error {
	if err == errWireDeadline {
		return err // the call's deadline (wiredue.go): CallToolWith words it
	}
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return ctx.Err()
	}
	var ce *connEnded
	if errors.As(err, &ce) {
		// The go-sdk's call fails with the read error (or, when the
		// proxy closed the connection, that it was closed).
		return fmt.Errorf("calling %q: %w", "tools/call", ce.cause)
	}
	var wf *writeFailed
	if errors.As(err, &wf) {
		err = wf.err
	}
	if errors.Is(err, mcp.ErrConnectionClosed) {
		return fmt.Errorf("%w: calling %q: %v", mcp.ErrConnectionClosed, "tools/call", err)
	}
	return fmt.Errorf("calling %q: %w", "tools/call", err)
}
