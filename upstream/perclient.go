package upstream

//lint:file-ignore SA1019 sampling, roots and logging are deprecated from protocol 2026-07-28 on; clients and servers of earlier protocols still use them

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/ingest"
)

// ClientConn is an upstream session opened for ONE client session
// (config `session = "per-client"`): its own stdio child or its own HTTP
// session, initialized with that client's capabilities. It is not
// reconnected when it dies (the client session it belongs to keeps getting
// errors naming the upstream); Close ends it, and Manager.Close ends every
// one still open.
type ClientConn struct {
	c         *conn
	l         *live
	closed    atomic.Bool
	closeOnce sync.Once // Close's teardown; concurrent callers wait for it

	mu        sync.Mutex
	tools     []*mcp.Tool
	diags     []ingest.Diagnostic
	extra     map[string]json.RawMessage // ingest.Result.Extra of the last listing
	rootsFlip bool                       // rootsSentinel is in the client's own roots
}

// OpenSession connects a new session to upstream with opts (copied; the
// manager adds its own list_changed and progress handlers) and the
// receiving middleware mw (may be nil; used instead of
// Options.ClientMiddleware, so it can know the client it serves), bounded by ctx and the upstream's
// startup_timeout, and lists its tools. onTools (may be nil) is called with
// the full list after every re-listing caused by
// notifications/tools/list_changed, serialized. Errors name the upstream and
// the phase (initialize, tools/list).
func (m *Manager) OpenSession(ctx context.Context, upstream string, opts *mcp.ClientOptions, mw mcp.Middleware, onTools func([]*mcp.Tool)) (*ClientConn, error) {
	c, ok := m.conns[upstream]
	if !ok {
		return nil, fmt.Errorf("upstream %q: %w", upstream, ErrUnknownUpstream)
	}
	m.mu.Lock()
	closed := m.closed
	m.mu.Unlock()
	if closed {
		return nil, unavailable(upstream, "manager closed", nil)
	}
	if opts == nil {
		opts = &mcp.ClientOptions{}
	}
	l, err := c.connect(ctx, opts, mw)
	if err != nil {
		if l != nil {
			l.teardown(m.opts.Grace, c.log, "its per-client session could not be opened")
		}
		return nil, fmt.Errorf("upstream %q: per-client session: %w", upstream, err)
	}
	if l.child != nil {
		l.child.quiet.Store(true)
	}
	cc := &ClientConn{c: c, l: l, tools: l.initial.Tools, diags: l.initial.Diagnostics, extra: l.initial.Extra}
	c.logDiagnostics(nil, l.initial.Diagnostics)
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		l.teardown(m.opts.Grace, c.log, whyStopping)
		return nil, unavailable(upstream, "manager closed", nil)
	}
	if m.perClient == nil {
		m.perClient = map[*ClientConn]bool{}
	}
	m.perClient[cc] = true
	m.mu.Unlock()
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		cc.relistLoop(onTools)
	}()
	c.log.Debug("per-client session opened", "tools", len(l.initial.Tools))
	return cc, nil
}

// relistLoop re-lists after notifications/tools/list_changed until the
// session is closed.
func (cc *ClientConn) relistLoop(onTools func([]*mcp.Tool)) {
	cc.c.relistEach(cc.l, "per-client session: ", func(res ingest.Result) {
		cc.mu.Lock()
		cc.c.logDiagnostics(cc.diags, res.Diagnostics)
		cc.tools, cc.diags, cc.extra = res.Tools, res.Diagnostics, res.Extra
		cc.mu.Unlock()
		if onTools != nil {
			onTools(res.Tools)
		}
	})
}

// Diagnostics are the ingest pipeline's decisions on the session's last
// listing (shared, read-only).
func (cc *ClientConn) Diagnostics() []ingest.Diagnostic {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.diags
}

// Extra is ingest.Result.Extra of the session's last listing: each tool's
// members that mcp.Tool does not carry, by tool name (shared, read-only).
func (cc *ClientConn) Extra() map[string]json.RawMessage {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.extra
}

// Upstream is the name of the upstream this session belongs to.
func (cc *ClientConn) Upstream() string { return cc.c.name }

// Session is the go-sdk client session (for resources, prompts, ...).
func (cc *ClientConn) Session() *mcp.ClientSession { return cc.l.session }

// Tools is the session's last tool listing (shared, read-only values).
func (cc *ClientConn) Tools() []*mcp.Tool {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return append([]*mcp.Tool(nil), cc.tools...)
}

// Close ends the session: the HTTP session is deleted, a stdio child gets
// the shutdown sequence (stdin closed, grace, SIGTERM, grace, SIGKILL) and
// is reaped. Idempotent.
//
// Every caller returns only once the session is torn down and its child
// reaped: Manager.Close, racing the closing of a client session, must not
// return while a per-client child still runs.
func (cc *ClientConn) Close() {
	cc.closeOnce.Do(func() {
		cc.closed.Store(true)
		m := cc.c.m
		cc.l.teardown(m.opts.Grace, cc.c.log, "its client session ended, or the proxy is stopping")
		m.mu.Lock()
		delete(m.perClient, cc)
		m.mu.Unlock()
	})
}

// Ping pings this session; -32601 counts as alive (see Manager.Ping).
func (cc *ClientConn) Ping(ctx context.Context) error {
	if cc.closed.Load() {
		return errors.New("per-client session closed")
	}
	return pingAlive(ctx, cc.l.session)
}

// SessionFor returns the shared session of upstream for requests other
// than tools/call (resources, prompts, completion, logging), or an error
// wrapping ErrUnavailable naming the state.
func (m *Manager) SessionFor(upstream string) (*mcp.ClientSession, error) {
	c, ok := m.conns[upstream]
	if !ok {
		return nil, fmt.Errorf("upstream %q: %w", upstream, ErrUnknownUpstream)
	}
	l, err := c.ready()
	if err != nil {
		return nil, err
	}
	return l.session, nil
}

// CallTimeout is upstream's call_timeout (default 55s); 0 for an unknown
// upstream.
func (m *Manager) CallTimeout(upstream string) time.Duration {
	c, ok := m.conns[upstream]
	if !ok {
		return 0
	}
	if t := c.cfg.CallTimeout.Duration; t > 0 {
		return t
	}
	return defaultCallTimeout
}

// rootsSentinel is added to or removed from the go-sdk client's own roots,
// alternately, to make it send one notifications/roots/list_changed; the
// upstream never sees it: roots/list is relayed to the proxy's client.
const rootsSentinel = "mcp-toolsearch:roots-changed"

// NotifyRootsChanged sends notifications/roots/list_changed to the upstream
// (MCP spec client/roots), when this session advertised roots.listChanged:
// the proxy's client said its roots changed.
func (cc *ClientConn) NotifyRootsChanged() {
	if cc == nil || cc.closed.Load() || cc.l.client == nil {
		return
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.rootsFlip {
		cc.l.client.RemoveRoots(rootsSentinel)
	} else {
		cc.l.client.AddRoots(&mcp.Root{URI: rootsSentinel})
	}
	cc.rootsFlip = !cc.rootsFlip
}
