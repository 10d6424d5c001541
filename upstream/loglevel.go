package upstream

//lint:file-ignore SA1019 sampling, roots and logging are deprecated from protocol 2026-07-28 on; clients and servers of earlier protocols still use them

// The log level of an initialize-era upstream session. A client's in-call
// log messages come only as verbose as the session's logging/setLevel;
// on a shared session clients set levels in turn, and a 2026-07-28 client
// sets none (its level rides in each request's _meta, which an older leg
// does not read). Before a call the session is made at least as verbose as
// the calling client wants (ensureLogLevel); the proxy passes each client
// only the messages at its own level (the go-sdk server filters per
// session, and per request at 2026-07-28).

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// levelRank orders the MCP log levels (RFC 5424 severities): lower is
// more verbose; an unknown level ranks as debug.
func levelRank(l mcp.LoggingLevel) int {
	switch l {
	case "debug":
		return 0
	case "info":
		return 1
	case "notice":
		return 2
	case "warning":
		return 3
	case "error":
		return 4
	case "critical":
		return 5
	case "alert":
		return 6
	case "emergency":
		return 7
	}
	return 0
}

// noteLogLevel is a sending middleware of the upstream client: it records
// the level of every logging/setLevel sent on the session (the proxy's
// relay of a client's, or ensureLogLevel's).
func (l *live) noteLogLevel(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if p, ok := req.GetParams().(*mcp.SetLoggingLevelParams); ok && p != nil && err == nil {
			l.logMu.Lock()
			l.logLevel = p.Level
			l.logMu.Unlock()
		}
		return res, err
	}
}

// ensureLogLevel sets the session's level to want when it is unset or
// less verbose, when the upstream offers logging; bounded by one second
// (a server that does not answer must not hold the call).
func (l *live) ensureLogLevel(ctx context.Context, want mcp.LoggingLevel, log *slog.Logger) {
	if l.session == nil {
		return
	}
	if ir := l.session.InitializeResult(); ir == nil || ir.Capabilities == nil || ir.Capabilities.Logging == nil {
		return
	}
	l.logMu.Lock()
	cur := l.logLevel
	l.logMu.Unlock()
	if cur != "" && levelRank(cur) <= levelRank(want) {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	if err := l.session.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: want}); err != nil {
		log.Debug("logging/setLevel before a call failed", "level", want, "err", err)
	}
}

// Settle waits, at most wait, until the go-sdk client of upstream's
// session (conn's when non-nil, else the shared one) has handled every
// notification that arrived before now (its log messages above all). An
// upstream's notifications are handled in order, one at a time, but a
// call's answer reaches its caller at once: a log message sent just
// before the answer would otherwise be handled after the caller passed
// the answer on, too late for the call's stream. A marker notification
// queued behind them (noteSettled) says when they are done. Over the
// go-sdk's own transports (the legacy SSE transport) it returns at once.
func (m *Manager) Settle(upstream string, conn *ClientConn, wait time.Duration) {
	var l *live
	if conn != nil {
		l = conn.l
	} else if c, ok := m.conns[upstream]; ok {
		c.mu.Lock()
		l = c.cur
		c.mu.Unlock()
	}
	if l == nil {
		return
	}
	l.modMu.Lock()
	mod := l.modern
	l.modMu.Unlock()
	if mod != nil { // the call may have taken it (generation.go)
		mod.settle(wait)
	}
	l.settle(wait)
}

// settle is Settle on l.
func (l *live) settle(wait time.Duration) {
	in, ok := l.conn.(interface{ inject(jsonrpc.Message) bool })
	if !ok {
		return
	}
	done := make(chan struct{})
	l.settleMu.Lock()
	l.settleSeq++
	id := l.settleSeq
	if l.settles == nil {
		l.settles = map[int64]chan struct{}{}
	}
	l.settles[id] = done
	l.settleMu.Unlock()
	defer func() {
		l.settleMu.Lock()
		delete(l.settles, id)
		l.settleMu.Unlock()
	}()
	params, _ := json.Marshal(map[string]any{"level": "debug", "logger": settleLogger, "data": id})
	if !in.inject(&jsonrpc.Request{Method: "notifications/message", Params: params}) {
		return
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	case <-l.ctx.Done():
	}
}

// settleLogger names Settle's marker: a notifications/message (a method
// the go-sdk client handles, in order with the others) that never leaves
// the proxy.
const settleLogger = "io.github.mcp-toolsearch/settled"

// noteSettled is a receiving middleware of the upstream client: it takes
// Settle's marker (nothing else sees it). Trust: an upstream that sends a
// message with that logger name itself only wakes a Settle early.
func (l *live) noteSettled(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "notifications/message" {
			if p, ok := req.GetParams().(*mcp.LoggingMessageParams); ok && p != nil && p.Logger == settleLogger {
				if seq, ok := p.Data.(float64); ok {
					l.settleMu.Lock()
					done := l.settles[int64(seq)]
					delete(l.settles, int64(seq))
					l.settleMu.Unlock()
					if done != nil {
						close(done)
					}
				}
				return nil, nil
			}
		}
		return next(ctx, method, req)
	}
}
