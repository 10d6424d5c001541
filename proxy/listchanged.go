package proxy

// notifications/tools/list_changed only when it means something: an upstream's re-listing that changes nothing, a change to
// tools a client may not see, or any catalog change in a mode whose
// surface does not list catalog tools (code, tools) left every client
// re-listing for nothing. The proxy tells each client session only when
// the tools/list answer IT would get differs from the last one it got (or
// was told about). The go-sdk sends the notification to every session of
// a server; the sending middleware below drops it per session.

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// surfaceMark is what a client session last saw of its surface.
type surfaceMark struct {
	mu   sync.Mutex
	seen bool
	fp   uint64
	// announced is set once the session's initialize answer is known;
	// resLC and promptLC say whether it declared resources and prompts
	// with listChanged (announce, listChangedAnnounced).
	announced       bool
	resLC, promptLC bool
}

// announce records which list_changed notifications the session's
// initialize answer allowed: resources and prompts with listChanged.
func (m *surfaceMark) announce(caps *mcp.ServerCapabilities) {
	if m == nil || caps == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.announced = true
	m.resLC = caps.Resources != nil && caps.Resources.ListChanged
	m.promptLC = caps.Prompts != nil && caps.Prompts.ListChanged
}

// listChangedAnnounced reports whether the session may be sent method, a
// notifications/resources/list_changed or notifications/prompts/list_changed:
// only when its initialize answer declared that capability with
// listChanged (MCP spec server/resources and server/prompts "Capabilities":
// a server that declared listChanged SHOULD send them; one that did not
// has no such feature to tell about). Unknown (no answer recorded) allows.
func (m *surfaceMark) listChangedAnnounced(method string) bool {
	if m == nil {
		return true
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.announced {
		return true
	}
	if method == "notifications/resources/list_changed" {
		return m.resLC
	}
	return m.promptLC
}

// swap records fp and reports whether it differs from the last one (or
// none was recorded). A nil mark (a session without one) always differs.
func (m *surfaceMark) swap(fp uint64) bool {
	if m == nil {
		return true
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	changed := !m.seen || m.fp != fp
	m.seen, m.fp = true, fp
	return changed
}

// surfaceFingerprint hashes what matters of a tools/list answer: each
// tool's name, title, description, annotations, _meta, schemas and its
// extra members (extras[i], modes.ToolExtras: "execution", …; a change
// there alone is a change of the list).
func surfaceFingerprint(tools []*mcp.Tool, extras []json.RawMessage) uint64 {
	h := fnv.New64a()
	raw := func(v any) {
		switch x := v.(type) {
		case nil:
		case json.RawMessage:
			_, _ = h.Write(x)
		default:
			b, _ := json.Marshal(x)
			_, _ = h.Write(b)
		}
		_, _ = h.Write([]byte{0})
	}
	for i, t := range tools {
		_, _ = h.Write([]byte(t.Name + "\x00" + t.Title + "\x00" + t.Description + "\x00"))
		raw(extraAt(extras, i))
		raw(t.InputSchema)
		raw(t.OutputSchema)
		if t.Annotations != nil {
			raw(t.Annotations)
		}
		if len(t.Meta) > 0 {
			raw(map[string]any(t.Meta))
		}
	}
	return h.Sum64()
}

// listChangedFilter is the front servers' sending middleware: a
// notifications/tools/list_changed goes only to a session whose surface
// changed since it last listed (or was told); a resources or prompts
// list_changed only to a session whose initialize answer declared that
// capability with listChanged (a reload told a tools-only
// client that resources and prompts changed). The go-sdk's own placeholder
// trick (passthrough.go sendListChanged) notifies every session of a server.
func (p *Proxy) listChangedFilter(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "notifications/resources/list_changed" || method == "notifications/prompts/list_changed" {
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
				if s := p.sessionOf(ss); s != nil && !s.surface.listChangedAnnounced(method) {
					return nil, nil
				}
			}
			return next(ctx, method, req)
		}
		if method != "notifications/tools/list_changed" {
			return next(ctx, method, req)
		}
		ss, ok := req.GetSession().(*mcp.ServerSession)
		if !ok {
			return next(ctx, method, req)
		}
		p.mu.Lock()
		s := p.sessions[ss]
		p.mu.Unlock()
		if s == nil {
			return next(ctx, method, req)
		}
		if !s.surface.swap(surfaceFingerprint(p.listedTools(s))) {
			return nil, nil // nothing this client sees changed
		}
		return next(ctx, method, req)
	}
}
