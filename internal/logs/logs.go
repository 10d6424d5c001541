// Package logs builds the proxy's slog loggers: the process log, whose
// text passes through the config's secret redaction, and the logger
// handed to the go-sdk's servers, which lowers the go-sdk's per-session
// noise to DEBUG.
package logs

import (
	"context"
	"io"
	"log/slog"
	"strings"
)

// New returns a text logger on w (stderr when serving stdio: stdout
// is the protocol) whose messages and string attributes pass through
// redact, so no secret value from ${VAR} expansion is ever printed.
func New(w io.Writer, level slog.Level, redact func(string) string) *slog.Logger {
	h := slog.NewTextHandler(w, &slog.HandlerOptions{Level: level})
	if redact == nil {
		return slog.New(h)
	}
	return slog.New(&redactHandler{h: h, redact: redact})
}

type redactHandler struct {
	h      slog.Handler
	redact func(string) string
}

func (r *redactHandler) Enabled(ctx context.Context, l slog.Level) bool { return r.h.Enabled(ctx, l) }

func (r *redactHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, r.redact(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(r.attr(a))
		return true
	})
	return r.h.Handle(ctx, out)
}

func (r *redactHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, r.redact(v.String()))
	case slog.KindGroup:
		as := v.Group()
		out := make([]any, len(as))
		for i, x := range as {
			out[i] = r.attr(x)
		}
		return slog.Group(a.Key, out...)
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.String(a.Key, r.redact(err.Error()))
		}
		if s, ok := v.Any().(interface{ String() string }); ok {
			return slog.String(a.Key, r.redact(s.String()))
		}
	}
	return a
}

func (r *redactHandler) WithAttrs(as []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(as))
	for i, a := range as {
		red[i] = r.attr(a)
	}
	return &redactHandler{h: r.h.WithAttrs(red), redact: r.redact}
}

func (r *redactHandler) WithGroup(name string) slog.Handler {
	return &redactHandler{h: r.h.WithGroup(name), redact: r.redact}
}

// SDKServer is the logger given to the go-sdk's servers: l, except
// that the go-sdk's WARN for a notification a client session could not
// take because it has no stream open ("calling
// notifications/tools/list_changed: rejected by transport: undelivered
// message: …") is logged at DEBUG. Over Streamable HTTP a client without
// a GET stream does not receive server notifications by its own choice
// (MCP basic/transports, "Listening for Messages from the Server"), and
// the go-sdk logged one WARN per such session at every catalog change,
// naming no session (53 WARNs over 22 reloads).
//
// perRequest is set for the stateless server, whose go-sdk session lives
// for one HTTP request (every 2026-07-28 request, or every request with
// server.stateless): its INFO lines "server connecting", "server session
// connected" and "server session disconnected" (session_id="") go out at
// DEBUG. They said nothing per request and were 2,721 of 2,785 log lines
// in a 3.5-minute go-sdk v1.8.0 client session.
func SDKServer(l *slog.Logger, perRequest bool) *slog.Logger {
	return slog.New(undeliveredHandler{l.Handler(), perRequest})
}

type undeliveredHandler struct {
	h          slog.Handler
	perRequest bool
}

// sessionLifecycle are the go-sdk server's INFO messages about one session
// (go-sdk mcp/server.go Connect, disconnect).
var sessionLifecycle = map[string]bool{"server connecting": true, "server session connected": true, "server session disconnected": true}

func (u undeliveredHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return u.h.Enabled(ctx, l) || (l == slog.LevelWarn && u.h.Enabled(ctx, slog.LevelDebug))
}

func (u undeliveredHandler) Handle(ctx context.Context, rec slog.Record) error {
	if rec.Level == slog.LevelWarn && strings.HasPrefix(rec.Message, "calling notifications/") && strings.Contains(rec.Message, "undelivered message") {
		if !u.h.Enabled(ctx, slog.LevelDebug) {
			return nil
		}
		rec = rec.Clone()
		rec.Level = slog.LevelDebug
	}
	if u.perRequest && rec.Level == slog.LevelInfo && sessionLifecycle[rec.Message] {
		rec = rec.Clone()
		rec.Level = slog.LevelDebug
	}
	if !u.h.Enabled(ctx, rec.Level) {
		return nil
	}
	return u.h.Handle(ctx, rec)
}

func (u undeliveredHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return undeliveredHandler{u.h.WithAttrs(as), u.perRequest}
}

func (u undeliveredHandler) WithGroup(name string) slog.Handler {
	return undeliveredHandler{u.h.WithGroup(name), u.perRequest}
}
