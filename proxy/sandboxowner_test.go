package proxy

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/modes"
)

var _ modes.SandboxOwner = (*session)(nil)

// TestSandboxOwner (issue 14 item 6): two client sessions are two owners of
// sandbox slots even with the same client name; requests without a session
// (2026-07-28) are told apart by endpoint and client name (and address,
// when the front knows it).
func TestSandboxOwner(t *testing.T) {
	p := &Proxy{sessions: map[*mcp.ServerSession]*session{}}
	ctx := context.Background()
	a := &session{p: p, ss: &mcp.ServerSession{}, client: "agent"}
	b := &session{p: p, ss: &mcp.ServerSession{}, client: "agent"}
	p.sessions[a.ss], p.sessions[b.ss] = a, b
	if oa, ob := a.SandboxOwner(ctx), b.SandboxOwner(ctx); oa == ob {
		t.Errorf("two sessions share the owner %q", oa)
	}
	e1 := &session{p: p, ss: &mcp.ServerSession{}, client: "agent"}
	e2 := &session{p: p, ss: &mcp.ServerSession{}, client: "agent"}
	e3 := &session{p: p, ss: &mcp.ServerSession{}, client: "other"}
	e4 := &session{p: p, ss: &mcp.ServerSession{}, client: "agent", endpoint: "ops"}
	if o1, o2 := e1.SandboxOwner(ctx), e2.SandboxOwner(ctx); o1 != o2 {
		t.Errorf("two stateless requests of one client: owners %q and %q", o1, o2)
	}
	if e1.SandboxOwner(ctx) == e3.SandboxOwner(ctx) || e1.SandboxOwner(ctx) == e4.SandboxOwner(ctx) {
		t.Errorf("stateless requests of other clients or endpoints share an owner")
	}
	if a.SandboxOwner(ctx) == e1.SandboxOwner(ctx) {
		t.Errorf("a session and a stateless request share an owner")
	}
}
