package proxy

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The stdio front at protocol 2026-07-28.
//
// Over stdio one connection carries one client, which may speak 2026-07-28
// (server/discover, then requests whose _meta names the version) or an
// older version (initialize). A client that offers 2026-07-28 first and
// falls back to initialize when server/discover is not answered in time
// (mark3labs/mcp-go v1.2.1 waits 5 s: client/protocol.go
// defaultDiscoverProbeTimeout) sends both when the proxy is slow to start
// answering: `serve` reads stdin only after server.startup_wait. The
// go-sdk's own server/discover handler records the client's _meta as the
// session's initialize parameters (mcp/server.go (*Server).discover), so
// the late initialize was refused ("duplicate initialize received") and
// such a client could not connect at all.
//
// stdioDiscover answers server/discover on stdio without touching the
// session: the session takes the client's _meta at its first other
// 2026-07-28 request (the go-sdk does that for any request that names the
// version), and an initialize after a discover still opens a 2025-11-25
// session. The rest of the answer (capabilities, instructions, cache
// hints, resultType) is filled in by the outer middleware, as for every
// front (server.go, cache.go). Guards against nothing untrusted: it is
// about clients that behave as the spec allows.
func (p *Proxy) stdioDiscover(transport string) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		if transport != "stdio" {
			return next
		}
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "server/discover" {
				return next(ctx, method, req)
			}
			return &mcp.DiscoverResult{SupportedVersions: p.serverVersions(transport)}, nil
		}
	}
}

// openPerClient2026 opens the per-client upstream sessions of a 2026-07-28
// stdio client at its first request that names the version (there is no
// notifications/initialized; the go-sdk has by then taken the request's
// _meta as the session's initialize parameters, so each upstream session
// is opened with the client's capabilities). It does nothing without a
// per-client upstream, for server/discover (answered without touching the
// session) and for older clients (notifications/initialized opens them).
// Questions a per-client upstream asks during a call of such a client
// reach it as input-required results (forward registers the call,
// passthrough_relay.go relayMiddleware finds its exchange).
func (p *Proxy) openPerClient2026(req mcp.Request, endpoint, transport string) {
	if !p.anyPerClient() || !modernRequestOf(req) {
		return
	}
	ss, ok := req.GetSession().(*mcp.ServerSession)
	if !ok || ss.InitializeParams() == nil {
		return
	}
	p.pt.clientInitialized(p.sessionFor(ss, endpoint, transport))
}
