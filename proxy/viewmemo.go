package proxy

import (
	"sync/atomic"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
	"github.com/mcp-toolsearch/mcp-toolsearch/identity"
	"github.com/mcp-toolsearch/mcp-toolsearch/policy"
)

// viewMemo keeps a session's policy view (SPEC §6) and its last decision
// between calls (a tools/call built the view twice, in
// resolveCallable's Allowed and in (*Proxy).call's decide: the subject,
// its lower-cased client name, the key of the policy's view cache and a
// sync.Map lookup each time, then the view's decision cache).
//
// Nothing has to invalidate it: an entry is used only while everything
// the view was made from is unchanged, compared on every use: the policy
// (a reload stores a new *policy.Policy, reload.go), the verified identity
// (identityMiddleware stores a new *identity.Identity per request that
// carries one), the client name and the endpoint. The decision is reused
// for the same view and a tool with the same id, exposed name and
// direct-only flag, the key of the view's own decision cache
// (policy.View.Decide). Shared by a session's copies (exchange.go).
type viewMemo struct {
	view atomic.Pointer[viewMemoView]
	last atomic.Pointer[viewMemoDecision]
}

type viewMemoView struct {
	pol              *policy.Policy
	id               *identity.Identity
	client, endpoint string
	v                *policy.View
}

type viewMemoDecision struct {
	v           *policy.View
	id, exposed string
	directOnly  bool
	d           policy.Decision
}

// memoView is s.p.subjectView for the session's subject, from m when
// nothing it was made from changed.
func (m *viewMemo) memoView(s *session) *policy.View {
	pol, id := s.p.pol(), s.ident()
	if c := m.view.Load(); c != nil && c.pol == pol && c.id == id && c.client == s.client && c.endpoint == s.endpoint {
		return c.v
	}
	v := pol.View(subjectOf(s.client, s.endpoint, id))
	m.view.Store(&viewMemoView{pol: pol, id: id, client: s.client, endpoint: s.endpoint, v: v})
	return v
}

// memoDecide is v.Decide(toolOf(e)), from m when v decided the same tool
// last; keep makes the decision the last one (a call's; not for each entry
// of a listing, which would allocate per entry).
func (m *viewMemo) memoDecide(v *policy.View, e *catalog.Entry, keep bool) policy.Decision {
	if c := m.last.Load(); c != nil && c.v == v && c.id == e.ID && c.exposed == e.Exposed && c.directOnly == e.DirectOnly {
		return c.d
	}
	d := v.Decide(toolOf(e))
	if !keep {
		return d
	}
	m.last.Store(&viewMemoDecision{v: v, id: e.ID, exposed: e.Exposed, directOnly: e.DirectOnly, d: d})
	return d
}
