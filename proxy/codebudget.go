package proxy

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
)

// Code-mode time budget. A tool_search_code run ends at
// code_timeout_ms (default 10 s, at most 60 s) and its bridge calls with it:
// when the run is killed, the sandbox cancels the context of every bridge
// call still in flight, so the upstream call is cancelled too (the go-sdk
// client sends notifications/cancelled with the upstream's request id) and
// nothing keeps running for a result nobody reads. A tool that needs
// longer than code_timeout_ms therefore always fails in code mode, however
// long its upstream's call_timeout (default 55 s) allows; codeBudgetWarning
// says so at start instead of letting the first slow call find out.

// codeBudgetWarning returns the start-up warning for code mode when some
// enabled upstream's call_timeout is longer than code_timeout_ms, or "".
func codeBudgetWarning(cfg *config.Config) string {
	run := time.Duration(cfg.ToolSearch.CodeTimeoutMS) * time.Millisecond
	var longer []string
	for _, u := range cfg.EnabledUpstreams() {
		ct := u.CallTimeout.Duration
		if ct <= 0 {
			ct = config.DefaultCallTimeout
		}
		if ct > run {
			longer = append(longer, fmt.Sprintf("%s (%s)", u.Name, ct))
		}
	}
	if len(longer) == 0 {
		return ""
	}
	sort.Strings(longer)
	if len(longer) > 8 {
		longer = append(longer[:8], fmt.Sprintf("and %d more", len(longer)-8))
	}
	return fmt.Sprintf("a tool_search_code run ends after tool_search.code_timeout_ms (%s), before one call of these upstreams may end (call_timeout): %s; "+
		"a tool that needs longer always fails in code mode (its call is cancelled with the run): raise code_timeout_ms (at most 60000) or lower their call_timeout",
		run, strings.Join(longer, ", "))
}
