package proxy

// Fair shares of server.max_sessions.
//
// The global cap alone let one subject lock everyone else out: 1,100
// initialize calls by one OAuth user took every slot, and every other
// user's next initialize got 503 for as long as the sessions idled (30
// minutes). Legacy SSE streams (GET /sse, whose go-sdk session exists from
// the GET on) were not counted until their initialize, so 3,000 streams
// that never sent one held 9,000 goroutines for ever. Now:
//
//   - each subject holds at most server.max_sessions_per_subject of the
//     global cap. The subject is who the caller verifiably is
//     (verifiedSubject): the OAuth user, else an endpoint with a token of
//     its own, else the client address (the one a proxy of
//     trusted_proxies forwarded), never the self-declared client name;
//   - a session is counted from the request that creates it: the POST of
//     a Streamable HTTP initialize, and a legacy SSE stream from its GET,
//     before the go-sdk writes its first byte (a ticket, taken here and
//     claimed by the session at initialize: reserve);
//   - a legacy SSE stream whose session has not initialized within
//     server.initialize_timeout is closed.
//
// Trust: guards against clients (with a token, and without one where the
// front needs none) taking every session, and against anonymous streams
// that never initialize. A subject that opens sessions in bulk is refused
// with 503 past its share; others still get in.
//
// sessionShares is the counter of what each subject holds, behind an
// interface so that a store shared by replicas can hold it
// (statestore): the in-process one is memShares.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/mcp-toolsearch/mcp-toolsearch/identity"
	"github.com/mcp-toolsearch/mcp-toolsearch/telemetry"
)

// sessionShares counts, per subject, the sessions and streams it holds.
type sessionShares interface {
	// Take adds one for subject when it holds fewer than limit and
	// reports whether it did. An error (a shared store out of reach)
	// refuses: no session passes an unchecked share.
	Take(ctx context.Context, subject string, limit int) (bool, error)
	// Give returns one that Take added.
	Give(subject string)
}

// memShares is sessionShares in this process.
type memShares struct {
	mu   sync.Mutex
	held map[string]int
}

func (m *memShares) Take(_ context.Context, subject string, limit int) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.held[subject] >= limit {
		return false, nil
	}
	if m.held == nil {
		m.held = map[string]int{}
	}
	m.held[subject]++
	return true, nil
}

func (m *memShares) Give(subject string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.held[subject] <= 1 {
		delete(m.held, subject)
		return
	}
	m.held[subject]--
}

// shareState is the proxy's part: the counter and the tickets taken but
// not yet claimed by a session (counted against the global cap).
type shareState struct {
	once    sync.Once
	counter sessionShares
	pending atomic.Int64
}

func (p *Proxy) shareCounter() sessionShares {
	p.shares.once.Do(func() {
		if p.shares.counter == nil {
			p.shares.counter = &memShares{}
		}
	})
	return p.shares.counter
}

// shareTicket is one admission under max_sessions, taken for a request
// that creates a session (or opens a legacy SSE stream) before the go-sdk
// sees it; the session claims it at initialize (reserve) and gives it
// back when it ends, else the request gives it back when it ends.
type shareTicket struct {
	p       *Proxy
	subject string
	claimed atomic.Bool
	given   atomic.Bool
}

type shareTicketKey struct{}

func ticketFrom(ctx context.Context) *shareTicket {
	t, _ := ctx.Value(shareTicketKey{}).(*shareTicket)
	return t
}

// claim makes the ticket a session's; false when it was claimed or given
// back already.
func (t *shareTicket) claim() bool {
	if t == nil || t.given.Load() || !t.claimed.CompareAndSwap(false, true) {
		return false
	}
	t.p.shares.pending.Add(-1)
	return true
}

// give returns the ticket's share (once).
func (t *shareTicket) give() {
	if t == nil || !t.given.CompareAndSwap(false, true) {
		return
	}
	if !t.claimed.Load() {
		t.p.shares.pending.Add(-1)
	}
	t.p.shareCounter().Give(t.subject)
}

// verifiedSubject is who the caller of a request verifiably is, never
// what it declares: the OAuth user of id ("user:alice", the same on every
// endpoint), else an endpoint with a token of its own ("endpoint:NAME":
// whoever holds that token), else the client address of ctx's request
// ("addr:…": an IPv4 address or IPv6 /64; the one a proxy of
// trusted_proxies forwarded), else (no network peer: stdio, the CLI)
// "local:ENDPOINT". Anonymous callers behind one address are one subject.
func (p *Proxy) verifiedSubject(ctx context.Context, id *identity.Identity, endpoint string) string {
	if k := id.Key(); k != "" {
		return k
	}
	if p.endpointOwnToken(endpoint) {
		return "endpoint:" + endpoint
	}
	if addr, ok := callerAddr(ctx); ok { // clientaddr.go
		return "addr:" + addr
	}
	return "local:" + endpoint
}

// requestSubject is verifiedSubject of an HTTP request of the front.
func (p *Proxy) requestSubject(r *http.Request, endpoint string) string {
	return p.verifiedSubject(r.Context(), identityOfToken(auth.TokenInfoFromContext(r.Context())), endpoint)
}

// endpointOwnToken reports whether endpoint is guarded by a token of its
// own (endpoints.NAME.token, not the main bearer token).
func (p *Proxy) endpointOwnToken(endpoint string) bool {
	if endpoint == "" {
		return false
	}
	c := p.conf()
	if c == nil {
		return false
	}
	ep, ok := c.Endpoints[endpoint]
	return ok && ep != nil && ep.Token != "" && ep.Token != c.Server.BearerToken
}

// takeShare admits a request that creates a session under max_sessions and
// its subject's share. It returns the ticket (to be claimed or given back)
// or, refused, the limit that refused it and its message.
func (p *Proxy) takeShare(r *http.Request, endpoint string) (*shareTicket, string, string) {
	srv := p.conf().Server
	if p.sessionCount()+int(p.shares.pending.Load()) >= srv.MaxSessions {
		return nil, telemetry.LimitMaxSessions, fmt.Sprintf("mcp-toolsearch: too many sessions: server.max_sessions (%d) reached; end unused sessions (HTTP DELETE) or retry later", srv.MaxSessions)
	}
	subject := p.requestSubject(r, endpoint)
	ok, err := p.shareCounter().Take(r.Context(), subject, srv.MaxSessionsPerSubject)
	if err != nil {
		return nil, telemetry.LimitMaxSessionsPerSubject, "mcp-toolsearch: sessions cannot be counted now: " + p.conf().Redact(err.Error()) + "; retry later"
	}
	if !ok {
		return nil, telemetry.LimitMaxSessionsPerSubject, fmt.Sprintf("mcp-toolsearch: too many sessions of this client: server.max_sessions_per_subject (%d) reached for it (sessions are counted per OAuth user, endpoint token or client address); end unused sessions (HTTP DELETE) or retry later", srv.MaxSessionsPerSubject)
	}
	p.shares.pending.Add(1)
	return &shareTicket{p: p, subject: subject}, "", ""
}

// refuseSession answers a refused session request: 503 with Retry-After
// and, for a POST, the JSON-RPC error initialize would get.
func (p *Proxy) refuseSession(w http.ResponseWriter, r *http.Request, limit, msg string) {
	p.metrics.Refused(limit)
	p.log.Warn("client session refused", "limit", "server."+limit, "remote", r.RemoteAddr)
	w.Header().Set("Retry-After", "5")
	if r.Method != http.MethodPost {
		http.Error(w, msg, http.StatusServiceUnavailable)
		return
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": requestID(r), "error": map[string]any{"code": codeServerBusy, "message": msg}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusServiceUnavailable)
	_, _ = w.Write(body)
}

// withTicket serves a request that creates a session (a POST without
// Mcp-Session-Id) with a ticket in its context: the initialize it carries
// claims it (reserve); unclaimed, it is given back when the POST ends.
func (p *Proxy) withTicket(w http.ResponseWriter, r *http.Request, endpoint string, next http.Handler) {
	t, limit, msg := p.takeShare(r, endpoint)
	if t == nil {
		p.refuseSession(w, r, limit, msg)
		return
	}
	defer func() {
		if !t.claimed.Load() {
			t.give()
		}
	}()
	next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), shareTicketKey{}, t)))
}

// sseShareGate counts a legacy SSE stream from its GET: it takes a
// ticket before the go-sdk writes a byte, gives it back when the stream
// ends unless its session claimed it, and closes a stream whose session
// has not initialized within server.initialize_timeout.
func (p *Proxy) sseShareGate(endpoint string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			next.ServeHTTP(w, r)
			return
		}
		t, limit, msg := p.takeShare(r, endpoint)
		if t == nil {
			p.refuseSession(w, r, limit, msg)
			return
		}
		defer func() {
			if !t.claimed.Load() {
				t.give()
			}
		}()
		ctx, cancel := context.WithCancel(context.WithValue(r.Context(), shareTicketKey{}, t))
		defer cancel()
		var expired atomic.Bool
		idle := time.AfterFunc(p.conf().Server.InitializeTimeout.Duration, func() {
			if !t.claimed.Load() {
				p.log.Debug("legacy SSE stream closed: no initialize in time", "limit", "server.initialize_timeout", "remote", r.RemoteAddr)
				expired.Store(true)
				cancel()
			}
		})
		defer idle.Stop()
		next.ServeHTTP(w, r.WithContext(ctx))
		if expired.Load() {
			// The connection goes too: kept alive, an idle client's
			// connection would still hold a goroutine and its buffers.
			t.give()
			panic(http.ErrAbortHandler)
		}
	})
}

// claimTicket makes the ticket of ctx (if any) ss's: true when ss was
// admitted by it (the global cap and the subject's share were checked when
// the ticket was taken).
func (p *Proxy) claimTicket(ctx context.Context, ss any) bool {
	t := ticketFrom(ctx)
	if !t.claim() {
		return false
	}
	p.mu.Lock()
	if p.tickets == nil {
		p.tickets = map[any]*shareTicket{}
	}
	p.tickets[ss] = t
	p.mu.Unlock()
	return true
}

// releaseTicket gives back the ticket ss claimed, if any (its session
// ended, or its initialize failed).
func (p *Proxy) releaseTicket(ss any) {
	p.mu.Lock()
	t := p.tickets[ss]
	delete(p.tickets, ss)
	p.mu.Unlock()
	t.give()
}
