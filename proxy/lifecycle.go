package proxy

import (
	"context"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// beforeInitialize is a sending middleware: no
// notifications/*/list_changed reaches a client session that has not sent
// initialize yet. The go-sdk sends list-changed notifications to every
// connected session, initialized or not, so over stdio an upstream that
// re-listed while the client was starting put a
// notifications/tools/list_changed on the wire before the client's
// initialize (MCP spec, Lifecycle: the initialization phase comes first;
// the client lists tools after initializing anyway, so nothing is lost).
// Sessions of protocol 2026-07-28 have no initialize: their notifications
// are for a subscriptions/listen stream and carry its id, and pass.
func beforeInitialize(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if strings.HasPrefix(method, "notifications/") && strings.HasSuffix(method, "/list_changed") {
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss.InitializeParams() == nil && !subscribed(req) {
				return nil, nil
			}
		}
		return next(ctx, method, req)
	}
}

// subscribed reports whether a notification is for a 2026-07-28
// subscriptions/listen stream (its _meta names the subscription).
func subscribed(req mcp.Request) bool {
	p := req.GetParams()
	if p == nil {
		return false
	}
	_, ok := p.GetMeta()[mcp.MetaKeySubscriptionID]
	return ok
}

// onInitialize answers initialize: under server.max_sessions
// (lifetime.go), with the session's instructions and the capabilities
// some upstream offers (passthrough.go, tasks.go).
func (p *Proxy) onInitialize(ctx context.Context, endpoint, transport string, next mcp.MethodHandler, req mcp.Request) (mcp.Result, error) {
	ss, _ := req.GetSession().(*mcp.ServerSession)
	if err := p.reserve(ctx, ss); err != nil {
		return nil, err
	}
	res, err := next(ctx, "initialize", req)
	if err != nil {
		p.unreserve(ss)
		return res, err
	}
	ir, ok := res.(*mcp.InitializeResult)
	if !ok {
		return res, err
	}
	var s *session
	if ss != nil {
		s = p.sessionFor(ss, endpoint, transport)
		if transport == transportStateful {
			p.hsess.Record(ctx, ss, endpoint, s.flags, s.life) // idle timer, owner
		}
		if c, ok := req.(*mcp.InitializeRequest); ok && c.Params != nil && c.Params.ClientInfo != nil {
			s.client = c.Params.ClientInfo.Name
		}
		ir.Instructions = p.surf().Instructions(s)
		s.ts.Instructions(len(ir.Instructions))
	}
	ir.Capabilities = p.frontCapabilities(transport, s)
	if s != nil {
		s.surface.announce(ir.Capabilities) // listchanged.go
	}
	return p.withTasksCapability(ir, s), nil
}

// onDiscover answers server/discover (2026-07-28) with the capabilities
// and instructions initialize gives.
func (p *Proxy) onDiscover(ctx context.Context, endpoint, transport string, next mcp.MethodHandler, req mcp.Request) (mcp.Result, error) {
	res, err := next(ctx, "server/discover", req)
	if dr, ok := res.(*mcp.DiscoverResult); ok && err == nil {
		var s *session
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
			s = p.sessionFor(ss, endpoint, transport)
			dr.Instructions = p.surf().Instructions(s)
		}
		dr.Capabilities = p.frontCapabilities(transport, s)
	}
	return res, err
}

// onInitialized opens the client's per-client upstream sessions once the
// go-sdk handled its notifications/initialized, and lets the session fast
// path serve it.
func (p *Proxy) onInitialized(ctx context.Context, next mcp.MethodHandler, req mcp.Request) (mcp.Result, error) {
	res, err := next(ctx, "notifications/initialized", req)
	if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
		if s := p.sessionOf(ss); s != nil { // nil: its initialize was refused
			p.pt.clientInitialized(s)
			if s.flags != nil {
				s.flags.Initialized.Store(true)
			}
		}
	}
	return res, err
}
