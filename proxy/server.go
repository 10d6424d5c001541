package proxy

//lint:file-ignore SA1019 sampling, roots and logging are deprecated from protocol 2026-07-28 on; clients and servers of earlier protocols still use them

import (
	"context"
	"errors"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/front"
	"github.com/mcp-toolsearch/mcp-toolsearch/internal/logs"
)

// Server returns the MCP server for an endpoint ("" is the main one),
// creating it on first use. tools/list and tools/call are answered by the
// proxy's middleware from the session's surface and policy; initialize
// gets the surface's instructions for the session.
//
// transport ("stdio", "streamable-http" or "sse") is recorded in telemetry.
func (p *Proxy) Server(endpoint, transport string) *mcp.Server {
	key := endpoint + "\x00" + transport
	p.mu.Lock()
	defer p.mu.Unlock()
	if s, ok := p.servers[key]; ok {
		return s
	}
	s := mcp.NewServer(front.ServerImpl(), &mcp.ServerOptions{
		Logger: logs.SDKServer(p.log, transport == transportStateless),
		// stateless.go: which versions and capabilities each front has
		// (2026-07-28 on Streamable HTTP only on the stateless server).
		SupportedProtocolVersions: p.serverVersions(transport),
		Capabilities:              p.serverCapabilities(transport),
		// Subscriptions go to the owning upstream; the SDK keeps
		// the client's subscription for ResourceUpdated (passthrough.go).
		SubscribeHandler:   p.subscribeHandler(transport),
		UnsubscribeHandler: p.pt.unsubscribe,
		RootsListChangedHandler: func(ctx context.Context, req *mcp.RootsListChangedRequest) {
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
				if s := p.sessionOf(ss); s != nil {
					p.pt.rootsChanged(s)
				}
			}
		},
	})
	front.TasksMethods(s) // answered by serveTasksRequest (tasks.go)
	chain := p.receivingMiddleware(endpoint, transport)
	s.AddReceivingMiddleware(chain...)
	// The stdio front's tools/call fast path (internal/front) runs the same
	// chain without the go-sdk's request decoding.
	p.chains[key] = composeMiddleware(chain, noHandler)
	if transport == transportStateful {
		// internal/front: messages of a fast-path call go on its POST
		// stream (innermost: added first).
		s.AddSendingMiddleware(front.SessionSending)
	}
	s.AddSendingMiddleware(p.listChangedFilter) // listchanged.go
	s.AddSendingMiddleware(beforeInitialize)    // lifecycle.go
	p.servers[key] = s
	return s
}

// receivingMiddleware is the receiving middleware of the server for
// endpoint and transport, outermost first: what every request the go-sdk
// server accepts runs through, and what the stdio front's tools/call fast
// path runs (internal/front).
func (p *Proxy) receivingMiddleware(endpoint, transport string) []mcp.Middleware {
	chain := []mcp.Middleware{
		p.drains.middleware,                                        // drain.go: counted from the first step, answered to the last
		p.listenMiddleware(transport), p.cacheMiddleware(endpoint), // stateless.go, cache.go
		p.identityMiddleware(transport), p.redactMiddleware, p.middleware(endpoint, transport), // identity.go: verified user, request span
		p.stdioDiscover(transport), // innermost: stdio2026.go
	}
	switch transport {
	case "stdio":
		chain = append([]mcp.Middleware{front.NotesMiddleware}, chain...) // internal/front: notification order
	case transportStateless:
		chain = append([]mcp.Middleware{p.stateless.LearnTriple}, chain...) // the fast path's _meta triple cache
	}
	return chain
}

// composeMiddleware is h wrapped in chain, the first outermost (as
// mcp.Server.AddReceivingMiddleware composes it).
func composeMiddleware(chain []mcp.Middleware, h mcp.MethodHandler) mcp.MethodHandler {
	for i := len(chain) - 1; i >= 0; i-- {
		h = chain[i](h)
	}
	return h
}

// noHandler ends the fast path's chain: the proxy's middleware answers
// every tools/call of a *mcp.ServerSession itself, so it is not reached.
func noHandler(_ context.Context, method string, _ mcp.Request) (mcp.Result, error) {
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "no handler for " + method + " on the stdio fast path"}
}

// receivingHandler is the composed receiving chain of the server for
// endpoint and transport (Server), ending in noHandler.
func (p *Proxy) receivingHandler(endpoint, transport string) mcp.MethodHandler {
	p.Server(endpoint, transport)
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.chains[endpoint+"\x00"+transport]
}

func (p *Proxy) middleware(endpoint, transport string) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if transport == "stdio" && method != "initialize" && !strings.HasPrefix(method, "notifications/") {
				// A 2026-07-28 stdio client sends no initialize: it is
				// admitted under server.max_sessions at its first request
				// (lifetime.go admitStdio).
				if err := p.admitStdio(req); err != nil {
					return nil, err
				}
				p.openPerClient2026(req, endpoint, transport) // stdio2026.go
			}
			switch method {
			case "initialize":
				return p.onInitialize(ctx, endpoint, transport, next, req) // lifecycle.go
			case "server/discover":
				return p.onDiscover(ctx, endpoint, transport, next, req) // lifecycle.go
			case "notifications/initialized":
				return p.onInitialized(ctx, next, req) // lifecycle.go
			}
			ss, ok := req.GetSession().(*mcp.ServerSession)
			if !ok {
				return next(ctx, method, req)
			}
			switch method {
			case "tools/list":
				return p.onToolsList(p.sessionFor(ss, endpoint, transport)), nil // tools.go
			case "tools/call":
				return p.onToolsCall(ctx, p.sessionFor(ss, endpoint, transport), ss, req) // tools.go
			case "tasks/get", "tasks/result", "tasks/list", "tasks/cancel":
				return p.serveTasksRequest(ctx, p.sessionFor(ss, endpoint, transport), method, req) // tasks.go
			case "logging/setLevel":
				return p.onSetLevel(ctx, p.sessionFor(ss, endpoint, transport), next, req) // logging.go
			case "resources/list", "resources/templates/list", "resources/read", "prompts/list", "prompts/get", "completion/complete":
				// Passed on to the owning upstreams (passthrough.go).
				s := p.sessionFor(ss, endpoint, transport)
				ctx, stop := s.bind(ctx)
				defer stop()
				// In a search mode's start-up window (initialize was
				// answered before the upstreams were up) they wait for
				// the upstreams still starting, as a search does, so
				// that a client's first list has theirs.
				s.WaitStarting(ctx)
				res, err, _ := p.pt.handle(ctx, s, method, req)
				return res, err
			}
			return next(ctx, method, req)
		}
	}
}

// wireError is the JSON-RPC error a client gets for a failed tools/call: an
// upstream's JSON-RPC error keeps its code and data, with the full message
// naming the upstream; any other failure (an upstream that is down, a
// timeout) is -32603 internal error (JSON-RPC 2.0 section 5.1).
func wireError(err error) error {
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return &jsonrpc.Error{Code: je.Code, Message: err.Error(), Data: je.Data}
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
}

// redactMiddleware hides secret values in the message of every error the
// proxy answers with (whatever the method), keeping its JSON-RPC code.
func (p *Proxy) redactMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err == nil {
			return res, nil
		}
		msg := p.conf().Redact(err.Error())
		if msg == err.Error() {
			return res, err
		}
		code := int64(jsonrpc.CodeInternalError)
		var je *jsonrpc.Error
		if errors.As(err, &je) {
			code = je.Code
		}
		return res, &jsonrpc.Error{Code: code, Message: msg}
	}
}
