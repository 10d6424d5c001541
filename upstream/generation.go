package upstream

// A 2026-07-28 session beside the shared initialize-era one (protocol
// "auto", version.go). The shared session speaks 2025-11-25 so that tools
// that ask the client themselves work for every client; a client that
// speaks 2026-07-28 gets, directly, the server at 2026-07-28: its tools
// that ask through input-required results answer it with their own
// results (keys, requestState), and on stdio the question is tied to the
// call. So a 2026-07-28 client's tools/call goes over a second session of
// the upstream opened at 2026-07-28 (a second child process for stdio, a
// second session for Streamable HTTP), opened at the first such call,
// watched as the shared one is (watchModern: a hung or dead companion is
// torn down at once and opened again at the next such call) and ended
// with the shared one; when the upstream does not speak 2026-07-28
// (it answers initialize at 2025-11-25) there is none and the call takes
// the shared session. Cost: that second process or session while
// 2026-07-28 clients call.

import (
	"context"
	"errors"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
)

// wantsModern reports whether shared calls of 2026-07-28 clients on c may
// take a 2026-07-28 session of their own: protocol "auto", stdio or
// Streamable HTTP.
func (c *conn) wantsModern() bool {
	u := c.cfg
	if u == nil || (u.Protocol != "" && u.Protocol != config.DefaultProtocol) || u.Session == "per-client" {
		return false
	}
	return !u.IsHTTP() || (u.Transport != "sse" && !c.sseFound.Load())
}

// modernLeg is the 2026-07-28 session beside main, opened now when there
// is none; nil when main is of 2026-07-28 itself, the upstream does not
// speak it, or it cannot be opened (the call then takes main).
func (c *conn) modernLeg(ctx context.Context, main *live) *live {
	if !c.wantsModern() || main == nil || modernLeg(main.session) {
		return nil
	}
	main.modMu.Lock()
	defer main.modMu.Unlock() // one attempt at a time; the others wait for it
	if main.noModern {
		return nil
	}
	if ml := main.modern; ml != nil {
		select {
		case <-ml.ctx.Done():
		default:
			if len(ml.down) == 0 {
				return ml
			}
		}
		go ml.teardown(c.m.opts.Grace, c.log, "its 2026-07-28 session failed")
		main.modern = nil
	}
	ml, err := c.connectWith(context.WithoutCancel(ctx), nil, nil, true)
	if err != nil {
		if ml != nil {
			go ml.teardown(c.m.opts.Grace, c.log, "its 2026-07-28 session could not be opened")
		}
		if !errors.Is(err, context.Canceled) {
			c.log.Warn("2026-07-28 session for a 2026-07-28 client could not be opened; its calls take the shared session", "error", err.Error())
		}
		return nil
	}
	if !modernLeg(ml.session) {
		main.noModern = true // the server answered at an older version
		v := ""
		if ir := ml.session.InitializeResult(); ir != nil {
			v = ir.ProtocolVersion
		}
		// Said once per connection of the upstream (noModern stays
		// set on this shared session; a reconnect or reload tries
		// again): the extra session, and for a stdio upstream the extra
		// process, that a 2026-07-28 client's call started is otherwise
		// unexplained.
		c.log.Info("a 2026-07-28 client's call opened a second session to try 2026-07-28; the upstream answered at an older version, so that session is closed and such calls take the shared session (protocol = \"auto\")", "answered", v)
		go ml.teardown(c.m.opts.Grace, c.log, "the upstream does not speak 2026-07-28")
		return nil
	}
	if ml.child != nil {
		ml.child.quiet.Store(true)
	}
	c.log.Info("2026-07-28 session opened beside the shared session, for 2026-07-28 clients")
	main.modern = ml
	ml.wg.Add(1) // its teardown waits for the watch
	go func() {
		defer ml.wg.Done()
		c.watchModern(main, ml)
	}()
	return ml
}

// watchModern watches ml, main's 2026-07-28 companion, with the shared
// leg's rules (watch: the session ends, the child exits, health pings
// fail), so that a hung or dead companion does not hold the calls of
// 2026-07-28 clients until their call_timeout. When ml fails it is torn
// down at once (its calls in flight fail as unavailable, naming the
// upstream, as on the shared leg) and taken from main, so that the next
// such call opens a new one; the shared leg and its clients are left
// alone. It returns when ml ends.
func (c *conn) watchModern(main, ml *live) {
	reason, closing := c.watch(ml.ctx, ml, "2026-07-28 session: ")
	if closing || ml.torn.Load() {
		return // ended by its teardown: the shared leg's, or modernLeg's
	}
	ml.fail(reason) // modernLeg sees it failed until it is taken from main below
	c.log.Warn("2026-07-28 session down; the next call of a 2026-07-28 client opens a new one", "reason", reason)
	go ml.teardown(c.m.opts.Grace, c.log, "its 2026-07-28 session is down")
	main.modMu.Lock()
	if main.modern == ml {
		main.modern = nil
	}
	main.modMu.Unlock()
}
