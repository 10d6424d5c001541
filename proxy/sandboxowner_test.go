package proxy

import (
	"context"
	"net"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
	"github.com/mcp-toolsearch/mcp-toolsearch/connlimit"
	"github.com/mcp-toolsearch/mcp-toolsearch/identity"
	"github.com/mcp-toolsearch/mcp-toolsearch/modes"
)

var _ modes.SandboxOwner = (*session)(nil)

// TestSandboxOwner: two client sessions are two owners of
// sandbox slots even with the same client name; a session and a request
// without one are never the same owner.
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
	if o1, o2 := e1.SandboxOwner(ctx), e2.SandboxOwner(ctx); o1 != o2 {
		t.Errorf("two stateless requests of one client: owners %q and %q", o1, o2)
	}
	if a.SandboxOwner(ctx) == e1.SandboxOwner(ctx) {
		t.Errorf("a session and a stateless request share an owner")
	}
}

// TestSandboxOwnerVerified: without a session, the owner is
// the verified identity (OAuth user, else an endpoint with its own token),
// so users behind one load balancer address have allowances of their own;
// an anonymous caller is its address alone, so inventing client names (or
// picking an endpoint without a token) does not get it more slots.
func TestSandboxOwnerVerified(t *testing.T) {
	cfg := &config.Config{Endpoints: map[string]*config.Endpoint{
		"alice": {Name: "alice", Token: "tok-alice"},
		"bob":   {Name: "bob", Token: "tok-bob"},
		"open":  {Name: "open"},
	}}
	cfg.Server.BearerToken = "tok-main"
	p := &Proxy{sessions: map[*mcp.ServerSession]*session{}}
	p.cfgP.Store(cfg)
	ctx := lbContext(t) // every request comes from the balancer's address
	stateless := func(client, endpoint string, id *identity.Identity) string {
		return (&session{p: p, ss: &mcp.ServerSession{}, client: client, endpoint: endpoint, fixedID: id}).SandboxOwner(ctx)
	}
	alice := &identity.Identity{Method: "oauth", Subject: "alice"}
	bob := &identity.Identity{Method: "oauth", Subject: "bob"}
	if oa, ob := stateless("claude-code", "", alice), stateless("claude-code", "", bob); oa == ob {
		t.Errorf("two OAuth users behind one address share the owner %q", oa)
	}
	if o1, o2 := stateless("claude-code", "", alice), stateless("invented-1", "open", alice); o1 != o2 {
		t.Errorf("one OAuth user under two client names/endpoints: owners %q and %q", o1, o2)
	}
	if oa, ob := stateless("", "alice", nil), stateless("", "bob", nil); oa == ob {
		t.Errorf("two per-user endpoints (own tokens) behind one address share the owner %q", oa)
	}
	if o1, o2 := stateless("a", "alice", nil), stateless("b", "alice", nil); o1 != o2 {
		t.Errorf("one per-user endpoint under two client names: owners %q and %q", o1, o2)
	}
	anon := stateless("", "", nil)
	for _, o := range []string{stateless("invented-1", "", nil), stateless("invented-2", "", nil), stateless("x", "open", nil), stateless("", "", &identity.Identity{Method: "token"})} {
		if o != anon {
			t.Errorf("an anonymous caller escaped its address's allowance: owner %q, want %q", o, anon)
		}
	}
	if anon == stateless("", "alice", nil) || anon == stateless("", "", alice) {
		t.Errorf("an anonymous caller shares the owner of a verified one")
	}
}

// lbContext is a request context carrying a real connection from
// 127.0.0.1 (what connlimit gives the HTTP front's handlers).
func lbContext(t *testing.T) context.Context {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lim := connlimit.New(ln, connlimit.Limits{})
	t.Cleanup(func() { lim.Close() })
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	sc, err := lim.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sc.Close() })
	ctx := connlimit.WithConn(context.Background(), sc)
	if _, ok := connlimit.AddressOf(ctx); !ok {
		t.Fatal("no address in the request context")
	}
	return ctx
}
