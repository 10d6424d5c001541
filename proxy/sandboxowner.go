package proxy

import (
	"context"
	"fmt"

	"github.com/mcp-toolsearch/mcp-toolsearch/connlimit"
)

// SandboxOwner implements modes.SandboxOwner: the sandbox shares its slots
// between owners (issue 14 item 6), so that one client's runs cannot hold
// them all. The owner of a run made in a client session is that session. A
// stateless request (2026-07-28 on the HTTP front) has no session: its
// owner is the remote address it came from (an IPv4 address, an IPv6 /64)
// with its endpoint and client name; the CLI's is its client name.
func (s *session) SandboxOwner(ctx context.Context) string {
	if s.ss != nil && !s.ephemeral() {
		return fmt.Sprintf("session:%p", s.ss)
	}
	if addr, ok := connlimit.AddressOf(ctx); ok {
		return "addr:" + addr + ":" + s.endpoint + ":" + s.client
	}
	return "client:" + s.endpoint + ":" + s.client
}

// ephemeral reports whether s lives for one stateless request.
func (s *session) ephemeral() bool {
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	_, tracked := s.p.sessions[s.ss]
	return !tracked
}
