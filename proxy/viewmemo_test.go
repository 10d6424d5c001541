package proxy

import (
	"context"
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/identity"
)

// TestViewMemoFollowsReloadAndIdentity: a session's policy view and last
// decision are kept between calls (viewmemo.go), and a call after a
// config reload or a change of the session's verified identity is decided
// by the new policy or identity, in both directions.
func TestViewMemoFollowsReloadAndIdentity(t *testing.T) {
	up := startTestUpstream(t)
	base := fmt.Sprintf("[upstreams.t]\nurl = %s\n", tomlQuote(up.URL))
	byUser := "[tools.by_client.\"user:bob\"]\ndeny = [\"t__echo\"]\n"
	p := startProxyText(t, base+byUser)
	cs := connect(t, p, "memo", nil)
	calls := 0
	call := func(want bool, when string) {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "t__echo", Arguments: map[string]any{}})
		got := err == nil && !res.IsError
		if got {
			calls++
		}
		if got != want || up.count("echo") != calls {
			t.Fatalf("%s: call allowed %v (err %v), want %v; the upstream saw %d calls, want %d", when, got, err, want, up.count("echo"), calls)
		}
	}
	call(true, "first call")
	call(true, "second call (from the memo)")

	var ss *mcp.ServerSession
	p.mu.Lock()
	for k := range p.sessions {
		ss = k
	}
	p.mu.Unlock()
	if ss == nil {
		t.Fatal("no session")
	}
	// Identity changes: the verified user of the session's latest request
	// (identityMiddleware stores it per request).
	p.idn.idents.Store(ss, &identity.Identity{Method: "oauth", Subject: "bob"})
	call(false, "as bob (by_client user:bob denies t__echo)")
	call(false, "as bob again")
	p.idn.idents.Store(ss, &identity.Identity{Method: "oauth", Subject: "alice"})
	call(true, "as alice")
	p.idn.idents.Delete(ss)
	call(true, "without an identity")

	reloadText(t, p, base+"[tools]\ndeny = [\"t__echo\"]\n")
	call(false, "after a reload that denies t__echo")
	call(false, "again after that reload")
	reloadText(t, p, base)
	call(true, "after a reload that allows it again")
}
