package upstream

import "github.com/mcp-toolsearch/mcp-toolsearch/config"

// Which MCP version the proxy speaks to an upstream (key protocol,
// docs/config.md; docs/design.md "Protocol versions").
//
// A server's SDK decides what a tool may do on each version, and none lets
// the proxy have both on one session:
//
//   - On an initialize-era session (up to 2025-11-25) a tool may send
//     sampling/createMessage, elicitation/create and roots/list itself, and
//     a tool written with input-required results works too: the go-sdk
//     (serverMultiRoundTripMiddleware) and mcp-go (resolveMultiRoundTrip)
//     turn its input requests into those requests. Log messages go by the
//     session's logging/setLevel.
//   - On 2026-07-28 a tool that sends such a request itself fails (go-sdk
//     v1.8.0: "cannot be sent while serving a request on protocol version
//     2026-07-28"; mcp-go: ErrServerInitiatedRequestUnsupported); only
//     input-required results work, and they come back on the call, so
//     the proxy knows which client to ask (proxy/mrtr.go) at any
//     concurrency.
//
// So "auto" (the default) takes the initialize era, which serves every tool
// to every client generation (a 2026-07-28 client's questions come back to
// it as input_required results, proxy/exchange.go):
//
//   - stdio and SSE: initialize at ProtocolVersion (2025-11-25).
//   - Streamable HTTP: the same, unless the server keeps no session (no
//     Mcp-Session-Id in its initialize answer: a stateless server, which
//     can send a client no request on any version); then the proxy
//     connects again offering 2026-07-28 (statelessUpgrade), so tools
//     written with input-required results keep working.
//
// protocol = "2026-07-28" offers it first (server/discover, falling back to
// initialize at 2025-11-25 when the server does not know it); any older
// version is offered as it is, by initialize.
func offeredVersion(u *config.Upstream) string {
	if u == nil {
		return ProtocolVersion
	}
	switch u.Protocol {
	case config.ProtocolModern:
		return "" // the go-sdk client's newest: server/discover first
	case "", config.DefaultProtocol:
		return ProtocolVersion
	}
	return u.Protocol
}

// statelessUpgrade reports whether a session of u opened at offered that
// has no session id should be opened again offering 2026-07-28 (see
// offeredVersion).
func statelessUpgrade(u *config.Upstream, offered string) bool {
	return u != nil && u.IsHTTP() && u.Transport != "sse" && offered == ProtocolVersion &&
		(u.Protocol == "" || u.Protocol == config.DefaultProtocol)
}
