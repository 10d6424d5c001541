package proxy

//lint:file-ignore SA1019 sampling, roots and logging are deprecated from protocol 2026-07-28 on; clients and servers of earlier protocols still use them

// The logging feature: a client's log level goes to the upstreams that
// offer logging (logging/setLevel), and an upstream's log messages go to
// the clients whose business they are.
//
// Which client gets an upstream's notifications/message (a log message)
// from a SHARED upstream session. A log message sent while a call runs is
// that call's client's business: connected directly, no other client
// would see it (trust: tool output and log text are the upstream's, and a
// client's calls are its own). The rule follows the relay's (passthrough_relay.go):
//
//  1. On a Streamable HTTP upstream, a message on a call's POST response
//     stream carries that call's token (upstream.TagCallers): it goes to that
//     call's client, even when the call has just ended.
//  2. Otherwise the calls in flight on that upstream, and those that ended
//     less than logGrace ago (the message can be handled just after the
//     call's answer), decide: all of one client session: that session;
//     none: every client session that may see the upstream (a message of
//     the server's own, outside any call, as before); two or more: nobody
//     (the message does not say whose it is), counted in a warning.
//
// Per-client upstream sessions send to their client only (passthrough.go
// sendLog).

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/logwindow"
	"github.com/mcp-toolsearch/mcp-toolsearch/upstream"
)

// onSetLevel answers logging/setLevel for session s: the level goes to the
// upstreams that offer logging, and the session fast path no longer serves
// the session (its log notifications could go on a call's stream).
func (p *Proxy) onSetLevel(ctx context.Context, s *session, next mcp.MethodHandler, req mcp.Request) (mcp.Result, error) {
	ctx, stop := s.bind(ctx)
	defer stop()
	if s.flags != nil {
		s.flags.LogLevel.Store(true)
	}
	if lp, ok := req.GetParams().(*mcp.SetLoggingLevelParams); ok {
		p.pt.setLevel(ctx, s, lp)
	}
	return next(ctx, "logging/setLevel", req)
}

// setLevel passes logging/setLevel on to every upstream with logging that
// serves s, to all at once, each bounded by upstreamShareTimeout
// (eachUpstream: an upstream that never answers must not hold the client's
// request). On a shared upstream session the last level set by any client
// wins; each client session still only receives messages at or above its
// own level (the go-sdk server filters per session).
func (pt *passthrough) setLevel(ctx context.Context, s *session, params *mcp.SetLoggingLevelParams) {
	if params == nil {
		return
	}
	pt.noteLevel(s, params.Level) // logroute.go
	pt.eachUpstream(ctx, s, "logging/setLevel", pt.visibleUpstreams(s, hasLogging), func(ctx context.Context, _ int, cs *mcp.ClientSession) error {
		return cs.SetLoggingLevel(ctx, params)
	})
}

// logMessage relays upstream up's notifications/message to client
// sessions: to the owner of a per-client session (owner != nil), else to
// every client session that may see up's features. Each session filters by
// its own level.
//
// On a shared session the client is chosen here, as the message arrives
// (logroute.go); a message that belongs to calls of several client
// sessions goes to none of them.
func (pt *passthrough) logMessage(ctx context.Context, up string, owner *session, params *mcp.LoggingMessageParams) {
	if params == nil {
		return
	}
	r := pt.upRelay(up)
	var done func()
	if owner == nil {
		call, target, all := pt.logTarget(up, takeLogToken(params))
		if target == nil && !all {
			if r.logUnrouted.Allow() {
				pt.p.log.Warn("upstream log message not relayed: calls of several client sessions are in flight on its shared session and the message does not say whose it is (session = \"per-client\" routes exactly)", "upstream", up)
			}
			return
		}
		owner = target
		if call != nil {
			// On the call's stream, at its log level, before its answer
			// (endCall waits for it, logGrace at most).
			ctx = context.WithoutCancel(call.ctx)
			call.logN.Add(1)
			call.logs.Add(1)
			done = call.logs.Done
		}
	}
	if !r.logs.push(logItem{ctx, owner, params, done}) {
		r.logDrops.drop()
		if done != nil {
			done()
		}
	}
}

type logItem struct {
	ctx    context.Context
	owner  *session
	params *mcp.LoggingMessageParams
	done   func() // nil, or called once sent
}

// sendLog sends one of up's notifications/message to owner (a per-client
// session's client, or the client whose call it belongs to) or, owner
// nil, every client session that may see up.
func (pt *passthrough) sendLog(ctx context.Context, up string, owner *session, params *mcp.LoggingMessageParams) {
	targets := pt.p.clientSessions()
	if owner != nil {
		targets = []*session{owner}
	}
	for _, s := range targets {
		if s.ss != nil && pt.visible(s, up) {
			_ = s.ss.Log(ctx, params)
		}
	}
}

// unroutedLogWindow counts up's log messages that went to nobody (rule 2,
// two or more sessions): the first of a relayDropWindow is logged, the
// rest summed up.
func unroutedLogWindow(log *slog.Logger, up string) *logwindow.Window {
	return logwindow.New(relayDropWindow, func(n int, every time.Duration) {
		if n > 0 {
			log.Warn("more upstream log messages not relayed (whose call they belong to is not known)", "upstream", up, "not_relayed", n, "in_last", every)
		}
	})
}

// logGrace is how long an ended call still counts for rule 2.
const logGrace = 250 * time.Millisecond

// endedCall is a call that ended on a shared upstream session (kept
// logGrace for rule 2, at most maxEnded).
type endedCall struct {
	up    string
	s     *session
	token string
	at    time.Time
}

const maxEnded = 256

// noteEnded records f as ended (pt.mu held).
func (pt *passthrough) noteEnded(f *inflight) {
	now := time.Now()
	pt.ended = slices.DeleteFunc(pt.ended, func(e endedCall) bool { return now.Sub(e.at) > logGrace })
	if len(pt.ended) >= maxEnded {
		pt.ended = pt.ended[1:]
	}
	pt.ended = append(pt.ended, endedCall{up: f.up, s: f.s, token: f.token, at: now})
}

// logTarget is where a log message of the shared session of up goes (see
// the top of this file): a call in flight (call, its client's session
// and context: the message goes on that call's stream, at the call's log
// level), a client session whose call just ended (target), every session
// (all), or nobody (none of them).
func (pt *passthrough) logTarget(up, token string) (call *inflight, target *session, all bool) {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	now := time.Now()
	if token != "" {
		for _, c := range pt.inflight {
			if c.up == up && c.token == token {
				return c, c.s, false
			}
		}
		for _, e := range pt.ended {
			if e.up == up && e.token == token && now.Sub(e.at) <= logGrace {
				return nil, e.s, false
			}
		}
	}
	var sessions []*session
	add := func(s *session) {
		if !slices.Contains(sessions, s) {
			sessions = append(sessions, s)
		}
	}
	var last *inflight
	for _, c := range pt.inflight {
		if c.up == up {
			add(c.s)
			last = c
		}
	}
	for _, e := range pt.ended {
		if e.up == up && now.Sub(e.at) <= logGrace {
			add(e.s)
		}
	}
	switch len(sessions) {
	case 0:
		return nil, nil, true
	case 1:
		if last != nil && last.s == sessions[0] {
			return last, last.s, false
		}
		return nil, sessions[0], false
	}
	return nil, nil, false
}

// takeLogToken removes upstream.MetaKeyCaller from a log message's _meta and
// returns its value ("" when absent).
func takeLogToken(p *mcp.LoggingMessageParams) string {
	if p == nil || p.Meta == nil {
		return ""
	}
	v, ok := p.Meta[upstream.MetaKeyCaller]
	if !ok {
		return ""
	}
	delete(p.Meta, upstream.MetaKeyCaller)
	if len(p.Meta) == 0 {
		p.Meta = nil
	}
	tok, _ := v.(string)
	return tok
}

// noteLevel records the level client session s set with logging/setLevel
// (callerLogLevel), forgotten when the session ends.
func (pt *passthrough) noteLevel(s *session, level mcp.LoggingLevel) {
	if s == nil || s.ss == nil {
		return
	}
	pt.mu.Lock()
	defer pt.mu.Unlock()
	if pt.levels == nil {
		pt.levels = map[*mcp.ServerSession]mcp.LoggingLevel{}
	}
	ss := s.ss
	if _, had := pt.levels[ss]; !had && s.life != nil {
		context.AfterFunc(s.life, func() {
			pt.mu.Lock()
			delete(pt.levels, ss)
			pt.mu.Unlock()
		})
	}
	pt.levels[ss] = level
}

// callerLogLevel is the log level of the client a call is made for: a
// 2026-07-28 request's _meta logLevel, else its session's
// logging/setLevel; "" when it asked for none (no log messages then,
// MCP spec server/utilities/logging).
func (pt *passthrough) callerLogLevel(s *session, meta mcp.Meta) mcp.LoggingLevel {
	if v, ok := meta[mcp.MetaKeyLogLevel].(string); ok && v != "" {
		return mcp.LoggingLevel(v)
	}
	if s == nil || s.ss == nil {
		return ""
	}
	pt.mu.Lock()
	defer pt.mu.Unlock()
	return pt.levels[s.ss]
}

// waitLogs waits until the log messages sent to call f are written to
// its client, at most logGrace (a slow client must not hold the answer).
func waitLogs(f *inflight) {
	if f.logN.Load() == 0 {
		return
	}
	done := make(chan struct{})
	go func() { f.logs.Wait(); close(done) }()
	t := time.NewTimer(logGrace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}
