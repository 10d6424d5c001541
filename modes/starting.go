package modes

import (
	"context"
	"fmt"
	"strings"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
)

// StartingReporter is implemented by Envs that know which upstreams are
// still starting (the proxy: upstreams in state "starting" whose features
// the session's policy lets it see). Until one is ready its tools are not
// in the catalog, so a search that finds nothing may find it a moment
// later (with server.startup_wait shorter
// than a slow upstream's start, the first search said "tell the user that
// no available tool fits" while filesystem was still starting).
type StartingReporter interface {
	// Starting returns the names of those upstreams, sorted.
	Starting() []string
}

// StartWaiter is implemented by Envs whose upstreams may still be on
// their first connection attempt when a client calls the surface's tools
// (the proxy answers initialize and tools/list of the search modes at
// once). WaitStarting returns once they settled or the start-up wait
// ended (server.startup_wait), whichever comes first, or when ctx ends.
type StartWaiter interface {
	WaitStarting(ctx context.Context)
}

// waitStarting waits as env's StartWaiter says; nothing when env is not one.
func waitStarting(ctx context.Context, env Env) {
	if w, ok := env.(StartWaiter); ok {
		w.WaitStarting(ctx)
	}
}

// maxStartingNamed bounds the upstream names a starting note lists.
const maxStartingNamed = 8

// starting returns the upstreams env reports as still starting (nil when
// none, or when env does not know).
func starting(env Env) []string {
	if sr, ok := env.(StartingReporter); ok {
		return sr.Starting()
	}
	return nil
}

// startingText is "2 MCP servers still starting: filesystem, memory" for
// names (at most maxStartingNamed named), "" for none. Upstream names come
// from the operator's config (trusted) and are bounded by clipRef.
func startingText(names []string) string {
	if len(names) == 0 {
		return ""
	}
	shown := make([]string, 0, min(len(names), maxStartingNamed+1))
	for i, n := range names {
		if i == maxStartingNamed {
			shown = append(shown, fmt.Sprintf("and %d more", len(names)-maxStartingNamed))
			break
		}
		shown = append(shown, clipRef(n))
	}
	server := "MCP servers"
	if len(names) == 1 {
		server = "MCP server"
	}
	return fmt.Sprintf("%d %s still starting: %s", len(names), server, strings.Join(shown, ", "))
}

// searchNote is the note of a search result (catalog.SearchNote), told
// when upstreams are still starting: their tools are not searched yet, so
// instead of "tell the user that no available tool fits" it says to search
// again in a moment; with a strong match it says the hits may grow.
func searchNote(note string, names []string) string {
	st := startingText(names)
	if st == "" {
		return note
	}
	switch {
	case strings.HasPrefix(note, "no match"):
		return "no match yet: nothing in the catalog matches this query, but " + st + ", and their tools are not in the catalog yet. Search again in a moment (or rephrase the query with other words)."
	case note != "":
		note = strings.TrimSuffix(note, " "+catalog.NoStrongAdvice) // not "… tell the user that no available tool fits"
		return note + " " + st + ", and their tools are not in the catalog yet: search again in a moment, or rephrase the query with other words."
	}
	return st + ": their tools are not in these hits yet; search again in a moment if none of these fits."
}

// startingSummary is the sentence added to the catalog summary while
// upstreams are starting (tool_search's description).
func startingSummary(names []string) string {
	st := startingText(names)
	if st == "" {
		return ""
	}
	return " " + st + "; a search finds their tools once they are ready."
}

// startingInstructions is the sentence added to the instructions when
// upstreams are still starting at initialize (the search modes answer
// initialize at once, so this is the usual case at a client's start).
// MCP cannot update instructions, so it says no more than what stays true.
func startingInstructions(env Env) string {
	return startingSummary(starting(env))
}

// startingRef is the reason a reference to a tool that is not in the
// catalog may still be good: ref names, by its id or
// exposed-name form (catalog.Snapshot.UpstreamOf), an upstream env reports
// as still starting, whose tools are not listed yet. "" otherwise. Only
// upstreams the session's policy lets it see are reported as starting
// (StartingReporter), so a denied upstream gets the plain unknown-tool
// answer (SPEC §6).
func startingRef(env Env, ref string) string {
	names := starting(env)
	if len(names) == 0 {
		return ""
	}
	up := env.Snapshot().UpstreamOf(ref)
	if up == "" {
		return ""
	}
	for _, n := range names {
		if n == up {
			return fmt.Sprintf("MCP server %q is still starting and its tools are not in the catalog yet; retry in a moment", clipRef(up))
		}
	}
	return ""
}
