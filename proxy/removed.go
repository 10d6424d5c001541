package proxy

// The tools of upstreams a config reload removed, kept until the next
// reload, so that a call to one says its MCP server was removed instead of
// "unknown tool" with a suggestion from another server
// (modes.RemovedReporter).

import (
	"slices"
	"strings"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
)

// removedTools are the catalog entries of the upstreams one reload
// removed, as they were in the catalog just before it: by id and by
// lower-case exposed name. Read-only once built.
type removedTools struct {
	byID      map[string]*catalog.Entry
	byExposed map[string]*catalog.Entry
}

// newRemovedTools collects the entries of snap whose upstream is in
// removed; nil when there are none.
func newRemovedTools(snap *catalog.Snapshot, removed []string) *removedTools {
	if len(removed) == 0 {
		return nil
	}
	var r *removedTools
	for _, e := range snap.Entries {
		if !slices.Contains(removed, e.Upstream) {
			continue
		}
		if r == nil {
			r = &removedTools{byID: map[string]*catalog.Entry{}, byExposed: map[string]*catalog.Entry{}}
		}
		r.byID[e.ID] = e
		r.byExposed[strings.ToLower(e.Exposed)] = e
	}
	return r
}

// RemovedUpstream implements modes.RemovedReporter: the upstream a config
// reload (the last one) removed whose tool ref names, by id or exposed
// name, when the session's current policy would let it see that tool; ""
// otherwise. A tool that is in the catalog again is never reported (the
// caller asks only about references the catalog does not resolve).
func (s *session) RemovedUpstream(ref string) string {
	r := s.p.removedP.Load()
	if r == nil {
		return ""
	}
	e := r.byID[ref]
	if e == nil {
		e = r.byExposed[strings.ToLower(ref)]
	}
	if e == nil || !s.allowed(e) {
		return ""
	}
	return e.Upstream
}
