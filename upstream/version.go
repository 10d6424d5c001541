package upstream

import (
	"context"
	"errors"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
)

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
// A server that speaks only 2026-07-28 refuses the initialize era (SEP-2575
// servers answer -32022 "unsupported protocol version" listing the versions
// they support, or -32601 for the removed initialize; some answer
// initialize with no version, or take it and then refuse its requests). A
// 2026-07-28 client connected directly would reach it: it offers
// server/discover first. So under "auto" an attempt the server itself
// refused (eraRefused) is made again offering 2026-07-28 (conn.connect),
// and, once that worked, later attempts offer it at once (modernFound).
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

// eraFallback reports whether an attempt of c at the initialize era that
// the server refused is to be made again offering 2026-07-28: protocol
// "auto" on stdio or Streamable HTTP (SSE carries up to 2025-11-25).
func (c *conn) eraFallback() bool {
	u := c.cfg
	return u != nil && (u.Protocol == "" || u.Protocol == config.DefaultProtocol) &&
		(!u.IsHTTP() || u.Transport != "sse" && !c.sseFound.Load())
}

// eraRefused reports whether a failed connection attempt was refused by
// the server itself: it answered the handshake or the first listing with a
// JSON-RPC error, or answered initialize with a version the client does not
// know (the go-sdk's "unsupported protocol version"). Not a timeout, a
// transport that failed (a POST that never reached the server: errRejected,
// httpconn.go, is a JSON-RPC error too), a process that exited, or an HTTP
// 401/403 (an authorization problem is reported as it is).
func eraRefused(err error) bool {
	if err == nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || errors.Is(err, errRejected) {
		return false
	}
	msg := err.Error()
	if strings.Contains(msg, "HTTP 401 ") || strings.Contains(msg, "HTTP 403 ") {
		return false
	}
	var je *jsonrpc.Error
	return errors.As(err, &je) || strings.Contains(msg, "unsupported protocol version: ")
}

// versionRefusal reports whether err is the server's JSON-RPC refusal of
// the offered version (code -32022, SEP-2575): a Streamable HTTP server
// that speaks MCP, not a legacy SSE server (http.go sseFallback).
func versionRefusal(err error) bool {
	var je *jsonrpc.Error
	return errors.As(err, &je) && je.Code == mcp.CodeUnsupportedProtocolVersion
}
