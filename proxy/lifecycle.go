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
