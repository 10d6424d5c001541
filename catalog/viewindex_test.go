package catalog

import (
	"testing"
	"time"

	"github.com/mcp-toolsearch/mcp-toolsearch/policy"
)

// testView is a policy view as a View (the proxy's adapter).
type testView struct{ v *policy.View }

func (tv testView) Allows(e *Entry) bool {
	return tv.v.Allowed(policy.Tool{ID: e.ID, Exposed: e.Exposed, Base: e.Base, Name: e.Name, Upstream: e.Upstream, DirectOnly: e.DirectOnly})
}

func viewFixture(t *testing.T) (*Catalog, *policy.Policy) {
	t.Helper()
	cat := New("__", nil, []UpstreamInfo{{Name: "gh", Prefix: "gh"}, {Name: "ops", Prefix: "ops"}})
	cat.SetTools("gh", []*Entry{{Name: "create_issue", Description: "Create an issue"}})
	cat.SetTools("ops", []*Entry{{Name: "delete_cluster", Description: "Delete an issue tracker cluster"}})
	pol, err := policy.Compile(policy.Spec{Tools: policy.Rules{Deny: []string{"mcp:ops:*"}},
		Upstreams: []policy.Upstream{{Name: "gh", NamePrefix: "gh__", IDPrefix: "mcp:gh:"}, {Name: "ops", NamePrefix: "ops__", IDPrefix: "mcp:ops:"}}})
	if err != nil {
		t.Fatal(err)
	}
	return cat, pol
}

// A view's index follows catalog changes off the request path and never holds a denied tool.
func TestViewIndexFollowsSnapshots(t *testing.T) {
	cat, pol := viewFixture(t)
	var vi ViewIndexes
	cat.OnPublish(vi.Published)
	view := pol.View(policy.Subject{ClientName: "x"})
	ix := vi.Index(testView{view}, cat.Snapshot())
	if ix == cat.Snapshot().Index || ix.Len() != 1 {
		t.Fatalf("restricted view: index of %d entries (shared: %v), want its own with 1", ix.Len(), ix == cat.Snapshot().Index)
	}
	cat.SetTools("gh", []*Entry{{Name: "create_issue", Description: "Create an issue"}, {Name: "close_issue", Description: "Close an issue"}})
	snap := cat.Snapshot()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ix = vi.Index(testView{view}, snap)
		if ix.Len() == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("view index never caught up: %d entries", ix.Len())
		}
		time.Sleep(5 * time.Millisecond)
	}
	for _, s := range ix.Search("issue cluster", 10, nil) {
		if s.Entry.Upstream == "ops" {
			t.Errorf("denied tool %s in the view index", s.Entry.ID)
		}
	}
	vi.mu.Lock()
	e := vi.views[viewKey{testView{view}, cat}]
	vi.mu.Unlock()
	if e == nil || e.snap != snap {
		t.Errorf("view entry not at the newest snapshot")
	}
}

// At most maxViewIndexes views are kept; the least recently used goes.
func TestViewIndexLRU(t *testing.T) {
	cat, _ := viewFixture(t)
	var vi ViewIndexes
	snap := cat.Snapshot()
	newView := func() *policy.View { // a distinct view each time
		_, pol := viewFixture(t)
		return pol.View(policy.Subject{})
	}
	first := newView()
	vi.Index(testView{first}, snap)
	for i := 1; i <= maxViewIndexes; i++ {
		vi.Index(testView{newView()}, snap)
		if i == maxViewIndexes/2 {
			vi.Index(testView{first}, snap) // used again: not the least recent
		}
	}
	vi.mu.Lock()
	defer vi.mu.Unlock()
	if len(vi.views) != maxViewIndexes {
		t.Fatalf("%d views kept, want %d", len(vi.views), maxViewIndexes)
	}
	if vi.views[viewKey{testView{first}, cat}] == nil {
		t.Error("a recently used view was evicted")
	}
}
