package proxy

// Policy over resources, resource templates, prompts, completions and log
// messages: a client sees an upstream's features only when its
// policy view allows them (policy.View.Features), and a denied upstream's
// resource, template or prompt gets exactly the answer of one that does not
// exist, by every route (list, read, subscribe, get, complete), because
// every route finds its upstream through the session's own routing tables
// and visibleUpstreams, which leave denied upstreams out. Guards against:
// clients (their clientInfo.name and endpoint decide the view).

import (
	"iter"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
	"github.com/mcp-toolsearch/mcp-toolsearch/policy"
)

// featureTables are the routing tables of one policy view: exposed name or
// URI -> owner, built from what that view may list.
type featureTables struct {
	resources map[string]route // exposed URI -> owner
	templates map[string]route // exposed URI template -> owner
	prompts   map[string]route // exposed prompt name -> owner
}

// tablesFor returns the routing tables of s's policy view (created empty).
// Callers hold no lock; the maps are read and replaced under pt.mu.
func (pt *passthrough) tablesFor(s *session) *featureTables {
	v := s.view()
	pt.mu.Lock()
	defer pt.mu.Unlock()
	t := pt.tables[v]
	if t == nil {
		t = &featureTables{resources: map[string]route{}, templates: map[string]route{}, prompts: map[string]route{}}
		if pt.tables == nil {
			pt.tables = map[*policy.View]*featureTables{}
		}
		pt.tables[v] = t
	}
	return t
}

// visible reports whether s may see upstream up's resources, templates,
// prompts, completions and log messages. It is THE decision for every
// route of those features.
func (pt *passthrough) visible(s *session, up string) bool {
	if s == nil {
		return false
	}
	snap := s.Snapshot()
	return s.view().Features(up, upstreamTools(snap, up)).Allowed
}

// upstreamTools yields the tools of upstream up in snap (entries are sorted
// by id, so they are one run starting at "mcp:<up>:").
func upstreamTools(snap *catalog.Snapshot, up string) iter.Seq[policy.Tool] {
	prefix := catalog.ToolID(up, "")
	return func(yield func(policy.Tool) bool) {
		es := snap.Entries
		for i := sort.Search(len(es), func(i int) bool { return es[i].ID >= prefix }); i < len(es) && strings.HasPrefix(es[i].ID, prefix); i++ {
			if !yield(toolOf(es[i])) {
				return
			}
		}
	}
}

// visibleUpstreams lists, in name order, the ready upstreams whose
// capabilities satisfy has and whose features s may see.
func (pt *passthrough) visibleUpstreams(s *session, has func(*mcp.ServerCapabilities) bool) []string {
	var out []string
	for _, up := range pt.withCap(has) {
		if pt.visible(s, up) {
			out = append(out, up)
		}
	}
	return out
}
