package proxy

//lint:file-ignore SA1019 sampling, roots and logging are deprecated from protocol 2026-07-28 on; clients and servers of earlier protocols still use them

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/identity"
	"github.com/mcp-toolsearch/mcp-toolsearch/internal/front"
	"github.com/mcp-toolsearch/mcp-toolsearch/internal/paramheader"
	"github.com/mcp-toolsearch/mcp-toolsearch/telemetry"
)

// Stateless serving (docs/scale-out.md).
//
// A request is served "stateless" when no state of its client survives it
// on this process: the go-sdk's stateless Streamable HTTP handler gives it
// a temporary ServerSession that ends with the request, and the proxy's
// session for it (ephemeralSession) holds only what the request itself
// says: the endpoint (its path and token), and, for protocol 2026-07-28,
// the clientInfo of the request's _meta. Policy views, names, the catalog,
// search indexes and code runs are functions of the config and of the
// upstreams' tools, which every replica has alike, so any replica answers
// any such request the same way.
//
// Two cases take this path:
//   - `[server] stateless = true`: every Streamable HTTP request, whatever
//     its protocol version (legacy clients still send initialize; it is
//     answered and forgotten). SSE is not served (it needs a session).
//   - the default (stateful) front, when route2026 is on: requests of
//     protocol 2026-07-28 and later, which have no session (go-sdk v1.8.0
//     serves that version only on a stateless handler:
//     mcp/streamable.go SupportsProtocolVersion).

// transportStateless is the transport name of stateless requests, in the
// session log and the servers map.
const transportStateless = "streamable-http-stateless"

// transportStateful is the transport name of the stateful Streamable HTTP
// front's sessions.
const transportStateful = "streamable-http"

// modernVersion is the first protocol version without initialize and
// sessions (MCP 2026-07-28, SEP-2575).
const modernVersion = front.ModernVersion

// modernRequest reports whether an HTTP request speaks protocol 2026-07-28
// or later: its MCP-Protocol-Version header names such a version (the
// spec requires the header on every 2026-07-28 request; a request that
// puts the version only in its _meta is refused by the go-sdk with
// -32020 header mismatch either way).
func modernRequest(r *http.Request) bool {
	v := strings.TrimSpace(r.Header.Get("Mcp-Protocol-Version"))
	return v >= modernVersion
}

// route2026 routes 2026-07-28 requests of the default (stateful) front to
// a stateless handler (tests switch it off to see the older behaviour).
// What such a client cannot get without a session is mapped: questions
// to it become input-required results (exchange.go), change notifications
// come through subscriptions/listen. One thing cannot be mapped: an
// upstream with session = "per-client" needs a client session to open its
// own session for, and a 2026-07-28 HTTP request has none; with one
// configured, Streamable HTTP keeps offering up to 2025-11-25 (serve2026).
// stdio has its connection as the session, so it offers 2026-07-28 either
// way (stdioServes2026).
var route2026 = true

// stdio2026 offers 2026-07-28 on stdio too (with serve2026): a client
// that discovers gets it (server/discover answered by stdioDiscover,
// stdio2026.go), one that sends initialize gets up to 2025-11-25. Tests of
// session behaviour pin their go-sdk clients to 2025-11-25
// (legacyVersion).
var stdio2026 = true

// serve2026 reports whether the stateful Streamable HTTP front routes
// 2026-07-28 requests (to its stateless handler): not with a per-client
// upstream.
func (p *Proxy) serve2026() bool {
	return route2026 && !p.anyPerClient()
}

// stdioServes2026 reports whether the stdio front offers 2026-07-28. A
// 2026-07-28 stdio client's connection is its session, so per-client
// upstream sessions are opened for it at its first request
// (openPerClient2026).
func stdioServes2026() bool { return route2026 && stdio2026 }

// anyPerClient reports whether an enabled upstream has session =
// "per-client". It runs for every stdio request (openPerClient2026), so it
// reads the map as it is (EnabledUpstreams sorts a copy).
func (p *Proxy) anyPerClient() bool {
	for _, u := range p.conf().Upstreams {
		if u != nil && u.IsEnabled() && u.Session == "per-client" {
			return true
		}
	}
	return false
}

// streamableHandler is the Streamable HTTP handler of one path (endpoint ""
// is /mcp). With server.stateless every request goes to the go-sdk's
// stateless handler. Otherwise legacy requests get sessions as before and,
// with route2026, 2026-07-28 requests go to the stateless handler.
func (p *Proxy) streamableHandler(endpoint string) http.Handler {
	// A plain 2026-07-28 tools/call is served by the front's fast path,
	// handed the stateless server's receiving chain.
	stateless := p.stateless.Handler(p.fastEndpoint(endpoint, transportStateless), p.paramHeaderCheck(endpoint, front.NotFound(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return p.Server(endpoint, transportStateless) },
		&mcp.StreamableHTTPOptions{Stateless: true, Logger: p.log, DisableLocalhostProtection: true,
			// A 2026-07-28 request's handler ends when its POST does: closing
			// the response stream is the cancellation signal on Streamable
			// HTTP (MCP 2026-07-28, Cancellation), and the handler's end
			// cancels the call's exchange (exchange.go, waitExchange). Older
			// protocol versions are unaffected (go-sdk v1.8.0).
			PropagateRequestCancellation: true}))))
	if p.conf().Server.Stateless {
		return stateless
	}
	// internal/front: the idle timeout and the owner check are the
	// proxy's (sessionsFront), for the go-sdk's path and the tools/call
	// fast path alike; frontnotfound.go: -32601 answers; frontcancelhttp.go:
	// no answer for a call the client cancelled (the fast path withholds
	// its own).
	stateful := front.RequireSession(p.sessionGate(endpoint, p.hsess.Handler(endpoint, p.fastEndpoint(endpoint, transportStateful), p.conf().Server.SessionIdleTimeout.Duration,
		front.CancelGate(front.NotFound(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return p.Server(endpoint, transportStateful) },
			&mcp.StreamableHTTPOptions{Logger: p.log, DisableLocalhostProtection: true}))))))
	if !p.serve2026() {
		return stateful
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if modernRequest(r) {
			stateless.ServeHTTP(w, r)
			return
		}
		stateful.ServeHTTP(w, r)
	})
}

// sseHandler is the legacy SSE handler of one path; with server.stateless
// it answers 404 with the reason (an SSE client's POSTs must reach the
// process that holds its stream, which a load balancer without affinity
// does not guarantee).
func (p *Proxy) sseHandler(endpoint, streamablePath string) http.Handler {
	if p.conf().Server.Stateless {
		msg := fmt.Sprintf("not found: the SSE transport needs a session and this proxy runs with server.stateless = true; use Streamable HTTP at %s", streamablePath)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, msg, http.StatusNotFound)
		})
	}
	return front.SSECancelGate(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return p.Server(endpoint, "sse") }, &mcp.SSEOptions{DisableLocalhostProtection: true})) // frontcancelhttp.go
}

// serverVersions are the protocol versions a front server offers: every
// version the go-sdk supports on stateless servers and, when serve2026, on
// stdio; up to 2025-11-25 on the others (the go-sdk serves 2026-07-28 on
// Streamable HTTP only without sessions, and the legacy SSE transport is of
// 2024-11-05). See docs/design.md "Protocol versions".
func (p *Proxy) serverVersions(transport string) []string {
	if transport == transportStateless || (transport == "stdio" && stdioServes2026()) {
		return mcp.SupportedProtocolVersions()
	}
	return front.FrontVersions()
}

// serverCapabilities are the front server's own capabilities. The answers
// to initialize and server/discover are the proxy's (frontCapabilities);
// these matter where the go-sdk decides by itself: subscriptions/listen
// honours only what they name, so servers that speak 2026-07-28 name
// resource subscriptions and resource and prompt list changes too (the
// proxy relays them from the upstreams that have them).
func (p *Proxy) serverCapabilities(transport string) *mcp.ServerCapabilities {
	caps := &mcp.ServerCapabilities{
		Tools:   &mcp.ToolCapabilities{ListChanged: true},
		Logging: &mcp.LoggingCapabilities{},
	}
	if slices.Contains(p.serverVersions(transport), modernVersion) {
		caps.Resources = &mcp.ResourceCapabilities{Subscribe: true, ListChanged: true}
		caps.Prompts = &mcp.PromptCapabilities{ListChanged: true}
	}
	return caps
}

// listenMiddleware keeps the proxy session of a stateless
// subscriptions/listen request registered while the listen stream is open:
// its resource subscriptions go to the upstreams through the session
// (passthrough.go), and end with it.
func (p *Proxy) listenMiddleware(transport string) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			ss, ok := req.GetSession().(*mcp.ServerSession)
			if method != "subscriptions/listen" || transport != transportStateless || !ok {
				return next(ctx, method, req)
			}
			s := p.ephemeralSession(ss, "")
			// The stream's surface mark starts at what this client's
			// tools/list answers hold now, so that a
			// notifications/tools/list_changed reaches it only when they
			// change (listchanged.go); without one every catalog event
			// reached it: three per restart of an upstream whose tools did
			// not change.
			s.surface = &surfaceMark{}
			s.surface.swap(surfaceFingerprint(p.listedTools(s)))
			p.mu.Lock()
			p.sessions[ss] = s
			p.mu.Unlock()
			defer func() {
				p.pt.sessionEnded(s)
				p.mu.Lock()
				delete(p.sessions, ss)
				p.mu.Unlock()
			}()
			return next(ctx, method, req)
		}
	}
}

// statelessState is the per-process part of stateless serving: one
// telemetry session per endpoint that records every stateless request of
// that endpoint on this replica (a session per request would write two
// records per request and make session counts meaningless).
type statelessState struct {
	mu sync.Mutex
	ts map[string]*telemetry.Session // endpoint -> pseudo-session
}

// statelessTelemetry returns the telemetry session of endpoint's stateless
// requests, started on first use (id "stateless-<endpoint>"; ended when
// the recorder closes).
func (p *Proxy) statelessTelemetry(endpoint string) *telemetry.Session {
	st := &p.st
	st.mu.Lock()
	defer st.mu.Unlock()
	if ts, ok := st.ts[endpoint]; ok {
		return ts
	}
	if st.ts == nil {
		st.ts = map[string]*telemetry.Session{}
	}
	name := endpoint
	if name == "" {
		name = "main"
	}
	ts := p.rec.StartSession(telemetry.SessionInfo{ID: "stateless-" + name, Transport: transportStateless, Endpoint: endpoint, Mode: p.surf().Mode()})
	st.ts[endpoint] = ts
	return ts
}

// ephemeralSession is the proxy's session for one stateless request: not
// registered in p.sessions (so no relay targets it and nothing waits for
// its end), with the client name from the request's own _meta clientInfo
// (2026-07-28; the go-sdk fills InitializeParams from it) or, for a
// legacy initialize, from its params (set by the middleware).
func (p *Proxy) ephemeralSession(ss *mcp.ServerSession, endpoint string) *session {
	s := &session{p: p, ss: ss, endpoint: endpoint, ts: p.statelessTelemetry(endpoint)}
	if p.idn != nil {
		if v, ok := p.idn.idents.Load(ss); ok {
			s.fixedID = v.(*identity.Identity) // identity.go: the record ends with the request
		}
	}
	if ip := ss.InitializeParams(); ip != nil && ip.ClientInfo != nil {
		s.client = ip.ClientInfo.Name
	}
	return s
}

// frontCapabilities are the capabilities announced to client session s
// (initialize, server/discover): what the upstreams it may see offer
// (passthrough.go), less
// resources.subscribe on stateless servers, where no session outlives the
// request to receive notifications/resources/updated.
func (p *Proxy) frontCapabilities(transport string, s *session) *mcp.ServerCapabilities {
	caps := p.pt.capabilities(s)
	if transport == transportStateless && caps.Resources != nil {
		caps.Resources.Subscribe = false
	}
	return caps
}

// subscribeHandler is the front server's resources/subscribe handler:
// passed on to the owning upstream (passthrough.go), or refused on a
// stateless server (-32601, with the reason).
func (p *Proxy) subscribeHandler(transport string) func(context.Context, *mcp.SubscribeRequest) error {
	if transport != transportStateless {
		return p.pt.subscribe
	}
	return func(ctx context.Context, req *mcp.SubscribeRequest) error {
		if modernRequestOf(req) { // a resourceSubscriptions entry of subscriptions/listen
			return p.pt.subscribe(ctx, req)
		}
		return &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "resources/subscribe needs a session, which a stateless request does not have (server.stateless = true); on 2026-07-28 use subscriptions/listen"}
	}
}

// fastEndpoint is what the front's fast path needs of endpoint: its
// server for transport and that server's receiving chain, and whether a tool binds
// arguments to Mcp-Param-* headers (paramheader.go checks those).
func (p *Proxy) fastEndpoint(endpoint, transport string) front.Endpoint {
	return front.Endpoint{
		Server: func() (*mcp.Server, mcp.MethodHandler) {
			return p.Server(endpoint, transport), p.receivingHandler(endpoint, transport)
		},
		BindsHeaders: func(r *http.Request, name, client string) bool {
			e := p.visibleToolOf(endpoint, r, name, client)
			return e != nil && len(paramheader.Bindings(e.InputSchema)) > 0
		},
	}
}
