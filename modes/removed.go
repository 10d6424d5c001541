package modes

import "fmt"

// RemovedReporter is implemented by Envs that know the tools of MCP
// servers a config reload removed (the proxy: the catalog entries of the
// removed upstreams as they were just before that reload, kept until the
// next reload). A call to such a tool then says why it is gone instead of
// "unknown tool" with a suggestion from another server.
type RemovedReporter interface {
	// RemovedUpstream returns the name of the removed upstream whose tool
	// ref names (by id, or by exposed name, case-insensitively) when the
	// session's policy would let it see that tool; "" otherwise (a tool
	// the session may not see gets the plain unknown-tool answer, SPEC §6).
	RemovedUpstream(ref string) string
}

// removedRef is the reason a reference to a tool that is not in the
// catalog is gone: its MCP server was removed from the configuration by a
// reload (RemovedReporter). "" otherwise.
func removedRef(env Env, ref string) string {
	rr, ok := env.(RemovedReporter)
	if !ok {
		return ""
	}
	up := rr.RemovedUpstream(ref)
	if up == "" {
		return ""
	}
	return fmt.Sprintf("MCP server %q, which provided this tool, was removed from the proxy's configuration (config reload), so its tools are no longer available", clipRef(up))
}

// absentRef is the reason a reference to a tool that is not in the
// catalog may be meaningful: its MCP server is still starting
// (startingRef), failed (unavailableRef) or was removed by a config reload (removedRef). "" when
// there is none (the caller then answers unknown tool with suggestions).
func absentRef(env Env, ref string) string {
	if st := startingRef(env, ref); st != "" {
		return st
	}
	if st := unavailableRef(env, ref); st != "" { // unavailable.go
		return st
	}
	return removedRef(env, ref)
}
