package proxy

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcp-toolsearch/catalog"
)

// session is the proxy's state for one client session: who the client is
// (clientInfo.name from initialize, and the endpoint it came through) and
// its view of the catalog. It implements modes.Env.
type session struct {
	p        *Proxy
	ss       *mcp.ServerSession
	endpoint string
	client   string
}

// Snapshot implements modes.Env.
func (s *session) Snapshot() *catalog.Snapshot { return s.p.cat.Snapshot() }

// Allowed implements modes.Env: this session's policy (SPEC §6).
func (s *session) Allowed(e *catalog.Entry) bool { return s.allowed(e) }

func (s *session) allowed(e *catalog.Entry) bool {
	return s.p.view(s.client, s.endpoint).Allowed(e)
}

// Call implements modes.Env: the single call path.
func (s *session) Call(ctx context.Context, e *catalog.Entry, args json.RawMessage, via string) (*mcp.CallToolResult, error) {
	return s.p.call(ctx, s, e, args, via)
}

// Searched implements modes.Env.
func (s *session) Searched(query string, hits int, via string) {}

// Described implements modes.Env.
func (s *session) Described(id string, found bool, via string) {}

// sessionFor returns the proxy's state for ss, creating it on first use.
func (p *Proxy) sessionFor(ss *mcp.ServerSession, endpoint string) *session {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s, ok := p.sessions[ss]; ok {
		return s
	}
	s := &session{p: p, ss: ss, endpoint: endpoint}
	if ip := ss.InitializeParams(); ip != nil && ip.ClientInfo != nil {
		s.client = ip.ClientInfo.Name
	}
	p.sessions[ss] = s
	go func() {
		_ = ss.Wait()
		p.mu.Lock()
		delete(p.sessions, ss)
		p.mu.Unlock()
	}()
	return s
}
