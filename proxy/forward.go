package proxy

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
	"github.com/mcp-toolsearch/mcp-toolsearch/internal/front"
	"github.com/mcp-toolsearch/mcp-toolsearch/modes"
	"github.com/mcp-toolsearch/mcp-toolsearch/upstream"
)

// forward sends one tools/call to the entry's upstream under its exact
// original name and returns the upstream's result unchanged. call_timeout
// applies through ctx (upstream.Manager.CallToolWith), restarted by
// progress up to a ceiling.
//
// When the client called this very tool with tools/call (not from inside
// tool_search_code or tool_call):
//   - its params._meta is passed on (MCP spec basic "_meta");
//   - its progress token is replaced upstream by a proxy token unique on
//     the upstream session, and each upstream notifications/progress is
//     relayed to the calling client session with the client's own token
//     and the upstream's progress, total and message: as many
//     notifications reach the client as the upstream sent
//     (spec basic/utilities/progress).
//
// Cancellation: when the client sends notifications/cancelled the go-sdk
// server cancels ctx; the go-sdk client then sends notifications/cancelled
// upstream with the upstream's request id and CallToolWith returns at once.
//
// The call runs on the client's per-client upstream session when the
// upstream has session = "per-client"; otherwise on the shared session,
// registered as in flight so that sampling, elicitation and roots requests
// of the upstream reach this client (passthrough_relay.go).
// progressRelay returns the OnProgress hook that relays an upstream's
// notifications/progress to the client session s under the client's
// token (progress, total and message as the upstream sent them); nil when
// the client gave no token or s has no server session.
func (p *Proxy) progressRelay(ctx context.Context, s *session, token any, up string) func(*mcp.ProgressNotificationParams) {
	if token == nil || s.ss == nil {
		return nil
	}
	ss := s.ss
	return func(n *mcp.ProgressNotificationParams) {
		out := *n
		out.ProgressToken = token
		if err := ss.NotifyProgress(context.WithoutCancel(ctx), &out); err != nil {
			p.log.Debug("progress relay failed", "upstream", up, "err", err)
		}
	}
}

func (p *Proxy) forward(ctx context.Context, s *session, e *catalog.Entry, args json.RawMessage) (*mcp.CallToolResult, error) {
	params := &mcp.CallToolParams{Name: e.Name, Arguments: args}
	var opts upstream.CallOptions
	opts.Raw = innerRawSlot(ctx) // rawslot.go: tool_call and the code bridge
	if req := callRequest(ctx, e.Exposed); req != nil {
		opts.Raw = rawSlotFrom(ctx) // rawslot.go
		token := req.Params.GetProgressToken()
		if req.Params.RequestState == "" && len(req.Params.InputResponses) > 0 {
			// Answers a 2026-07-28 client supplies with its first call
			// (SEP-2322) go to the upstream's first round; a retry's
			// answers are the exchange's (exchange.go).
			params.InputResponses = req.Params.InputResponses
		}
		if len(req.Params.Meta) > 0 {
			meta := mcp.Meta{}
			for k, v := range req.Params.Meta {
				if k != "progressToken" && !front.IsHopMetaKey(k) { // meta.go
					meta[k] = v
				}
			}
			if len(meta) > 0 {
				params.Meta = meta
			}
		}
		opts.OnProgress = p.progressRelay(ctx, s, token, e.Upstream)
		opts.LogLevel = p.pt.callerLogLevel(s, req.Params.Meta) // logroute.go
	} else if req := toolCallRequest(ctx); req != nil {
		// The one call tool_call makes for the client: the upstream's
		// progress reaches the client under the token of its tool_call
		// request (its _meta stays tool_call's own). Not for
		// tool_search_code, whose several calls would mix their progress
		// under one token, which must increase (spec
		// basic/utilities/progress).
		opts.OnProgress = p.progressRelay(ctx, s, req.Params.GetProgressToken(), e.Upstream)
	}
	opts.ClientCapabilities = callerCapabilities(s) // mrtr.go
	opts.Modern = callerModern(s)                   // upstream/generation.go
	p.injectTrace(ctx, params)                      // W3C trace context in params._meta
	if cc, err := p.userConn(ctx, s, e.Upstream); err != nil || cc != nil {
		// A per-user credential source (userconn.go).
		if err != nil {
			return nil, err
		}
		opts.Conn = cc
	} else if s.ss != nil && p.pt.perClient(e.Upstream) {
		cc := p.pt.conn(s, e.Upstream)
		if cc == nil {
			reason := p.pt.perClientErr(s, e.Upstream)
			if reason == "" {
				reason = "no per-client session"
			}
			return nil, fmt.Errorf("%w: %q: %s", upstream.ErrUnavailable, e.Upstream, reason)
		}
		opts.Conn = cc
		if s.ex != nil {
			// A 2026-07-28 client's call: questions of its per-client
			// session go to this call's exchange (relayMiddleware).
			var f *inflight
			ctx, f = p.pt.beginCall(ctx, e.Upstream, s, "")
			defer p.pt.endCall(f)
		}
	} else {
		var f *inflight
		ctx, f = p.pt.beginCall(ctx, e.Upstream, s, "")
		defer p.pt.endCall(f)
	}
	if tc := taskCallFrom(ctx); tc != nil && tc.asTask && callRequest(ctx, e.Exposed) != nil && opts.Raw != nil {
		// The client called this very tool as a task (tasks.go).
		opts.Task = tc.param
		tc.sent, tc.route = true, taskRoute{upstream: e.Upstream, entryID: e.ID, conn: opts.Conn}
	}
	res, err := p.callRounds(ctx, s, e, params, opts) // mrtr.go
	if opts.LogLevel != "" {
		// The call's log messages sent just before its answer are handled
		// before the answer goes on (logroute.go, endCall).
		p.ups.Settle(e.Upstream, opts.Conn, logGrace)
	}
	if ie, ok := modes.AsInvalidResult(e.Upstream, err); ok {
		// A result that does not decode is worded in JSON terms on every
		// surface (direct tools/call, tool_call, the code bridge), and
		// logged for the operator: one line and one summary a minute
		// per upstream.
		if p.pt.upRelay(e.Upstream).invalid.Allow() {
			p.log.Warn("upstream sent an invalid tool result", "upstream", e.Upstream, "tool", e.Name, "error", ie.Error())
		}
		return nil, ie
	}
	return res, err
}
