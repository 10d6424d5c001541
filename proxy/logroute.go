package proxy

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
// the top of this file): one session, every session (all), or nobody
// (neither).
func (pt *passthrough) logTarget(up, token string) (target *session, all bool) {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	now := time.Now()
	if token != "" {
		for _, c := range pt.inflight {
			if c.up == up && c.token == token {
				return c.s, false
			}
		}
		for _, e := range pt.ended {
			if e.up == up && e.token == token && now.Sub(e.at) <= logGrace {
				return e.s, false
			}
		}
	}
	var sessions []*session
	add := func(s *session) {
		if !slices.Contains(sessions, s) {
			sessions = append(sessions, s)
		}
	}
	for _, c := range pt.inflight {
		if c.up == up {
			add(c.s)
		}
	}
	for _, e := range pt.ended {
		if e.up == up && now.Sub(e.at) <= logGrace {
			add(e.s)
		}
	}
	switch len(sessions) {
	case 0:
		return nil, true
	case 1:
		return sessions[0], false
	}
	return nil, false
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
