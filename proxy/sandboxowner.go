package proxy

import (
	"context"
	"fmt"
)

// SandboxOwner implements modes.SandboxOwner: the sandbox shares its slots
// between owners, so that one client's runs cannot hold
// them all. The owner of a run made in a client session is that session.
// A run without one (a stateless request, the CLI) is owned by who the
// caller verifiably is, never by what it declares:
//
//   - the verified user of an OAuth access token ("user:alice"), on every
//     endpoint;
//   - else an endpoint with its own token ("endpoint:alice"): whoever holds
//     that token (docs/identity.md, per-user endpoints);
//   - else the remote address (an IPv4 address, an IPv6 /64; the one a
//     proxy of [server] trusted_proxies forwarded, clientaddr.go), alone: the
//     self-declared clientInfo.name and an endpoint without its own token
//     are the caller's choice, so keying on them would let an anonymous
//     caller take more slots by inventing names;
//   - else (no network peer: the CLI, in-process) the endpoint.
//
// Behind a load balancer every anonymous caller has the balancer's address
// and shares one allowance (docs/security.md, "Code-run allowance"),
// unless the balancer is in [server] trusted_proxies.
func (s *session) SandboxOwner(ctx context.Context) string {
	if s.ss != nil && !s.ephemeral() {
		return fmt.Sprintf("session:%p", s.ss)
	}
	return s.p.verifiedSubject(ctx, s.ident(), s.endpoint) // shares.go
}

// ephemeral reports whether s lives for one stateless request.
func (s *session) ephemeral() bool {
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	_, tracked := s.p.sessions[s.ss]
	return !tracked
}
