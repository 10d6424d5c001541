package proxy

import (
	"context"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mcp-toolsearch/mcp-toolsearch/modes"
	"github.com/mcp-toolsearch/mcp-toolsearch/policy"
	"github.com/mcp-toolsearch/mcp-toolsearch/upstream"
)

// Starting implements modes.StartingReporter: the upstreams still in state "starting" that the session's policy
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

// WaitStarting implements modes.StartWaiter: during the start-up window
// of StartServing (search modes), it waits until every upstream settled
// its first attempt, the window ends, or ctx ends, whichever comes first.
// A search made on the client's first turn then sees the upstreams that
// start within server.startup_wait, as when `serve` waited for them
// before answering initialize.
func (s *session) WaitStarting(ctx context.Context) {
	p := s.p
	by := p.startBy.Load()
	if by == 0 || p.startSettled.Load() {
		return
	}
	d := time.Until(time.Unix(0, by))
	if d <= 0 {
		return
	}
	wctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	p.ups.WaitSettled(wctx)
}

// maxCauseBytes bounds the reason told for an unavailable upstream.
const maxCauseBytes = 200

// Unavailable implements modes.UnavailableReporter: the
// upstreams closed by the policy (a deny entry that matches no tool) and
// those in state "failed" with no tools in the session's catalog
// snapshot that the session's policy lets it see (as Starting), sorted by
// name, each with upstream.Status.Cause — the proxy's own words, never
// the upstream's stderr — with control characters replaced and clipped to
// maxCauseBytes. A model told "no strong match" or "unknown tool" can then
// tell the user that the server is broken and why (e.g. `exec: "uvx":
// executable file not found in $PATH`, the usual PATH problem of a
// desktop client).
func (s *session) Unavailable() []modes.Unavailable {
	var out []modes.Unavailable
	snap := s.Snapshot()
	view := s.p.view(s.client, s.endpoint)
	for _, st := range s.p.ups.Statuses() {
		if st.State != upstream.StateFailed {
			continue
		}
		tools := upstreamTools(snap, st.Name)
		listed := false
		for range tools {
			listed = true
			break
		}
		if listed || !view.Features(st.Name, tools).Allowed {
			continue
		}
		out = append(out, modes.Unavailable{Name: st.Name, Reason: clipCause(st.Cause)})
	}
	// Upstreams closed by a deny entry that matches no tool (policy.go:
	// closeDeadDenies), for the sessions the config's policy would let see
	// them.
	if pol := s.p.pol(); pol != s.p.polOpen.Load() {
		open := s.p.polOpen.Load().View(policy.Subject{ClientName: s.client, Endpoint: s.endpoint})
		for _, u := range s.p.conf().EnabledUpstreams() {
			r := pol.ClosedReason(u.Name)
			if r == "" || !open.Features(u.Name, upstreamTools(snap, u.Name)).Allowed {
				continue
			}
			out = append(out, modes.Unavailable{Name: u.Name, Reason: clipCause(r)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// clipCause replaces control characters (and invalid UTF-8) by spaces and
// clips c to maxCauseBytes at a rune boundary, marking the cut with "…".
func clipCause(c string) string {
	c = strings.Map(func(r rune) rune {
		if r == utf8.RuneError || unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(c, " "))
	c = strings.TrimSpace(c)
	if len(c) <= maxCauseBytes {
		return c
	}
	cut := maxCauseBytes
	for cut > 0 && !utf8.RuneStart(c[cut]) {
		cut--
	}
	return c[:cut] + "…"
}
