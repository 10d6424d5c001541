package proxy

// Client session lifetime and limits:
//
//   - server.session_idle_timeout ends an idle Streamable HTTP session
//     (the proxy's own timer, internal/front sessionsFront: the go-sdk's
//     SessionTimeout could not see the tools/call fast path's requests);
//   - server.max_sessions caps the client sessions open at once: initialize
//     past it gets a JSON-RPC error, and a new Streamable HTTP session is
//     refused with HTTP 503 before the SDK creates it (sessionGate);
//   - when a session ends for any reason (DELETE, idle timeout, SSE stream
//     closed, stdin EOF) sessionGone releases what the proxy held for it;
//     requests of the session still in flight are cancelled (bind), on
//     DELETE before the SDK waits for them;
//   - server.max_per_client_upstreams caps per-client upstream sessions
//     over all clients (reservePerClient).
//
// Guards against: clients that never end their sessions (a proxy for many
// clients would otherwise grow without bound) and clients that open
// sessions in bulk.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/front"
	"github.com/mcp-toolsearch/mcp-toolsearch/telemetry"
)

// codeServerBusy is the JSON-RPC error code of a refused session: in the
// implementation-defined server error range -32000..-32099 (JSON-RPC 2.0
// section 5.1).
const codeServerBusy = -32000

// errSessionEnded is the cause of a request cancelled because its client
// session ended.
var errSessionEnded = front.ErrSessionEnded

func (p *Proxy) tooManySessions() *jsonrpc.Error {
	return &jsonrpc.Error{Code: codeServerBusy, Message: fmt.Sprintf(
		"mcp-toolsearch: too many sessions: server.max_sessions (%d) reached; end unused sessions (HTTP DELETE) or retry later", p.conf().Server.MaxSessions)}
}

// reserve admits the initialize of ss under server.max_sessions: a session
// already known; one whose request took a ticket (shares.go: the global
// cap and its subject's share were checked then), which it claims; or one
// more while fewer than the maximum are open, admitted or ticketed. nil ss
// (no session to count) is always admitted.
func (p *Proxy) reserve(ctx context.Context, ss *mcp.ServerSession) error {
	if ss == nil {
		return nil
	}
	p.mu.Lock()
	_, known := p.sessions[ss]
	known = known || p.reserved[ss]
	p.mu.Unlock()
	if known {
		return nil
	}
	if p.claimTicket(ctx, ss) {
		p.mu.Lock()
		p.reserved[ss] = true
		p.mu.Unlock()
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.sessions)+len(p.reserved)+int(p.shares.pending.Load()) >= p.conf().Server.MaxSessions {
		p.metrics.Refused(telemetry.LimitMaxSessions)
		p.log.Warn("client session refused", "limit", "server.max_sessions", "max", p.conf().Server.MaxSessions)
		return p.tooManySessions()
	}
	p.reserved[ss] = true
	return nil
}

// admitStdio admits the stdio connection of req under server.max_sessions
// at a request other than initialize: a 2026-07-28 client never sends
// initialize (MCP 2026-07-28, SEP-2575), so its first request takes the
// slot, and past the limit gets the same -32000 error. A session already
// known or admitted passes. The admission ends with the connection.
func (p *Proxy) admitStdio(req mcp.Request) error {
	ss, ok := req.GetSession().(*mcp.ServerSession)
	if !ok || ss == nil {
		return nil
	}
	p.mu.Lock()
	_, known := p.sessions[ss]
	known = known || p.reserved[ss]
	p.mu.Unlock()
	if known {
		return nil
	}
	if err := p.reserve(context.Background(), ss); err != nil {
		return err
	}
	go func() {
		_ = ss.Wait()
		p.unreserve(ss) // a no-op once sessionFor registered it
	}()
	return nil
}

// unreserve drops the admission of an initialize that failed.
func (p *Proxy) unreserve(ss *mcp.ServerSession) {
	if ss == nil {
		return
	}
	p.mu.Lock()
	delete(p.reserved, ss)
	p.mu.Unlock()
	p.releaseTicket(ss) // shares.go
}

// sessionCount is the number of client sessions open or admitted.
func (p *Proxy) sessionCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.sessions) + len(p.reserved)
}

// sessionGone releases what the proxy held for s once its go-sdk session
// has ended: requests still in flight, the per-client state
// (passthrough_relay.go closes its upstream sessions), subscriptions on
// shared upstream sessions, the telemetry session.
func (p *Proxy) sessionGone(s *session) {
	s.end()
	s.ts.End()
	p.pt.sessionEnded(s)
	p.mu.Lock()
	delete(p.sessions, s.ss)
	p.mu.Unlock()
	p.releaseTicket(s.ss) // shares.go
}

// bind returns ctx cancelled also when s ends; stop releases it.
func (s *session) bind(ctx context.Context) (context.Context, func()) {
	if s.life == nil {
		return ctx, func() {}
	}
	if ctx, ok := front.BindFast(ctx, s.life); ok {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(s.life, func() { cancel(errSessionEnded) })
	return ctx, func() { stop(); cancel(nil) }
}

// endByID ends the requests in flight of the session with this
// Mcp-Session-Id (a DELETE is coming: the go-sdk waits for them before it
// closes the session).
func (p *Proxy) endByID(id string) {
	p.mu.Lock()
	var s *session
	for ss, cand := range p.sessions {
		if ss.ID() == id {
			s = cand
			break
		}
	}
	p.mu.Unlock()
	if s != nil && s.end != nil {
		s.end()
	}
}

// sessionGate wraps the Streamable HTTP handler of endpoint: a POST that
// would create a session (no Mcp-Session-Id) takes a ticket under
// server.max_sessions and its subject's share (shares.go); refused, it
// gets HTTP 503 with Retry-After and the JSON-RPC error initialize would
// get. (A DELETE's cancelling of the session's requests in flight is
// sessionsFront's, after the owner check: internal/front.)
func (p *Proxy) sessionGate(endpoint string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "" {
			p.withTicket(w, r, endpoint, h)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// requestID is the JSON-RPC id of a POSTed request (json null when there is
// none or the body is not one request); the body is left readable.
func requestID(r *http.Request) json.RawMessage {
	null := json.RawMessage("null")
	if r.Body == nil {
		return null
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(b), r.Body))
	if err != nil {
		return null
	}
	var msg struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(b, &msg) != nil || len(msg.ID) == 0 {
		return null
	}
	return msg.ID
}
