package proxy

import (
	"sort"

	"github.com/mcp-toolsearch/mcp-toolsearch/upstream"
)

// Starting implements modes.StartingReporter (issue 12 trial, trip point
// 1): the upstreams still in state "starting" that the session's policy
// lets it see (the same decision as for their resources and prompts,
// policy.View.Features), sorted. Search notes, the catalog summary and the
// instructions name them, so a model that searches before a slow upstream
// is ready is told to search again instead of "no tool fits". An upstream
// the session may not see is never named (its existence is policy, SPEC §6).
func (s *session) Starting() []string {
	var out []string
	snap := s.Snapshot()
	view := s.p.view(s.client, s.endpoint)
	for _, st := range s.p.ups.Statuses() {
		if st.State != upstream.StateStarting {
			continue
		}
		if view.Features(st.Name, upstreamTools(snap, st.Name)).Allowed {
			out = append(out, st.Name)
		}
	}
	sort.Strings(out)
	return out
}
