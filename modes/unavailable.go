package modes

import (
	"fmt"
	"strings"
)

// Unavailable is an upstream that failed to start or lost its connection
// and has no tools in the catalog, with the proxy's reason.
type Unavailable struct {
	Name string
	// Reason is one line in the proxy's own words (no upstream output),
	// bounded by the reporter, e.g. `exec: "uvx": executable file not
	// found in $PATH`.
	Reason string
}

// UnavailableReporter is implemented by Envs that know which upstreams
// are unavailable (the proxy: state "failed", no tools listed, visible to
// the session's policy). Search notes, the catalog summary, the
// instructions and the unknown-tool answer name them, so a model can tell
// the user that a server is broken and why instead of "no tool fits"
// (`command = "uvx"` not on a desktop client's PATH).
type UnavailableReporter interface {
	// Unavailable returns those upstreams, sorted by name.
	Unavailable() []Unavailable
}

// unavailable returns the upstreams env reports as unavailable (nil when
// none, or when env does not know).
func unavailable(env Env) []Unavailable {
	if ur, ok := env.(UnavailableReporter); ok {
		return ur.Unavailable()
	}
	return nil
}

// unavailableText is `MCP server "fetch" is unavailable (<reason>)` or
// `2 MCP servers are unavailable: "a" (<reason>), "b" (<reason>)` (at most
// maxStartingNamed named), "" for none.
func unavailableText(us []Unavailable) string {
	if len(us) == 0 {
		return ""
	}
	if len(us) == 1 {
		return fmt.Sprintf("MCP server %q is unavailable (%s)", clipRef(us[0].Name), us[0].Reason)
	}
	shown := make([]string, 0, min(len(us), maxStartingNamed+1))
	for i, u := range us {
		if i == maxStartingNamed {
			shown = append(shown, fmt.Sprintf("and %d more", len(us)-maxStartingNamed))
			break
		}
		shown = append(shown, fmt.Sprintf("%q (%s)", clipRef(u.Name), u.Reason))
	}
	return fmt.Sprintf("%d MCP servers are unavailable: %s", len(us), strings.Join(shown, ", "))
}

// unavailableNote adds the unavailable upstreams to a search note: when
// the search found no strong match (note != ""), or when the query names
// one of them (then only those). Their tools are not in the catalog, so
// the model is told to tell the user which server is broken and why.
func unavailableNote(note, query string, us []Unavailable) string {
	if len(us) == 0 {
		return note
	}
	if note == "" {
		lq := strings.ToLower(query)
		var named []Unavailable
		for _, u := range us {
			if strings.Contains(lq, strings.ToLower(u.Name)) {
				named = append(named, u)
			}
		}
		if len(named) == 0 {
			return ""
		}
		us = named
	}
	t := unavailableText(us) + ": its tools are not in the catalog; if the user asked for it, tell them it is unavailable and why."
	if len(us) > 1 {
		t = unavailableText(us) + ": their tools are not in the catalog; if the user asked for one of them, tell them it is unavailable and why."
	}
	if note == "" {
		return t
	}
	return note + " " + t
}

// searchNoteFor is the note of a search for query with catalog note
// (catalog.SearchNote): searchNote's starting upstreams, then
// unavailableNote's.
func searchNoteFor(env Env, note, query string) string {
	return unavailableNote(searchNote(note, starting(env)), query, unavailable(env))
}

// unavailableSummary is the sentence added to the catalog summary and the
// instructions while upstreams are unavailable.
func unavailableSummary(env Env) string {
	return unavailableSentence(unavailable(env))
}

// unavailableSentence is unavailableSummary's sentence for us, "" for none.
func unavailableSentence(us []Unavailable) string {
	t := unavailableText(us)
	if t == "" {
		return ""
	}
	if len(us) > 1 {
		return " " + t + "; their tools are not in the catalog."
	}
	return " " + t + "; its tools are not in the catalog."
}

// unavailableRef is the answer to a reference to a tool that is not in
// the catalog whose upstream (catalog.Snapshot.UpstreamOf) env reports as
// unavailable: `upstream "fetch" is unavailable: <reason>`. "" otherwise;
// an upstream the session's policy hides is never reported (SPEC §6).
func unavailableRef(env Env, ref string) string {
	us := unavailable(env)
	if len(us) == 0 {
		return ""
	}
	up := env.Snapshot().UpstreamOf(ref)
	if up == "" {
		return ""
	}
	for _, u := range us {
		if u.Name == up {
			return fmt.Sprintf("upstream %q is unavailable: %s", clipRef(up), u.Reason)
		}
	}
	return ""
}
