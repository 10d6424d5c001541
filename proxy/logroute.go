package proxy

//lint:file-ignore SA1019 sampling, roots and logging are deprecated from protocol 2026-07-28 on; clients and servers of earlier protocols still use them

// Which client gets an upstream's notifications/message (a log message)
// from a SHARED upstream session. A log message sent while a call runs is
// that call's client's business: connected directly, no other client
// would see it (trust: tool output and log text are the upstream's, and a
// client's calls are its own). The rule follows relay_route.go:
//
//  1. On a Streamable HTTP upstream, a message on a call's POST response
//     stream carries that call's token (callerTagger): it goes to that
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
)

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

// takeLogToken removes metaKeyCaller from a log message's _meta and
// returns its value ("" when absent).
func takeLogToken(p *mcp.LoggingMessageParams) string {
	if p == nil || p.Meta == nil {
		return ""
	}
	v, ok := p.Meta[metaKeyCaller]
	if !ok {
		return ""
	}
	delete(p.Meta, metaKeyCaller)
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
