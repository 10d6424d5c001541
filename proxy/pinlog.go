package proxy

import (
	"log/slog"
	"sync"
	"time"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/logwindow"
)

// Warnings of security.on_tool_change = "warn": an upstream
// whose tool definitions change at every notifications/tools/list_changed
// (re-listed up to 5 times a second, upstream relistGap) logged one WARN
// per change, forever. Per upstream now:
//
//   - the first change of each tool is logged in full (a rug pull of a
//     tool that never changed before is never hidden), for up to
//     pinWarnTools tools of the upstream;
//   - later changes share one logwindow.Window of pinWarnEvery: its first
//     change is logged in full, the others are counted, and one summary
//     line gives their number when the window ends.
//
// Every change is still counted in mcp_toolsearch_tool_changes_total and
// pinned, and shown in `list`/`check`: only the log lines are limited.

const (
	// pinWarnEvery is the period of an upstream's change summary.
	pinWarnEvery = time.Minute
	// pinWarnTools bounds the tools per upstream whose first change is
	// remembered (an upstream that makes up new tools without end cannot
	// grow the set past it; past it, changes go through the window).
	pinWarnTools = 4096
)

// pinWarnings decides, per upstream, which changes are logged in full.
type pinWarnings struct {
	log   *slog.Logger
	every time.Duration // pinWarnEvery; tests set it

	mu  sync.Mutex
	ups map[string]*upstreamPinWarnings
}

// upstreamPinWarnings is one upstream's state.
type upstreamPinWarnings struct {
	warned map[string]bool // tools whose change was logged in full
	window *logwindow.Window
}

// full records one changed definition of tool of upstream up and reports
// whether to log it in full (false: counted for the summary). A nil
// *pinWarnings logs every change.
func (w *pinWarnings) full(up, tool string) bool {
	if w == nil {
		return true
	}
	w.mu.Lock()
	u, ok := w.ups[up]
	if !ok {
		if w.ups == nil {
			w.ups = map[string]*upstreamPinWarnings{}
		}
		every := w.every
		if every <= 0 {
			every = pinWarnEvery
		}
		u = &upstreamPinWarnings{warned: map[string]bool{}}
		u.window = logwindow.New(every, func(n int, every time.Duration) {
			if n > 0 {
				w.log.Warn("more tool definition changes from upstream, not logged one by one; each was pinned (security.on_tool_change = \"warn\")", "upstream", up, "changes", n, "in_last", every)
			}
		})
		w.ups[up] = u
	}
	first := !u.warned[tool] && len(u.warned) < pinWarnTools
	if first {
		u.warned[tool] = true
	}
	w.mu.Unlock()
	return first || u.window.Allow()
}
