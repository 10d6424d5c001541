package upstream

import "fmt"

// skippedFrames are the number of frames the wire skipped (not JSON-RPC
// messages, answers to nothing, …) and the first of them ("why: line").
func (w *wire) skippedFrames() (int, string) {
	w.skipped.mu.Lock()
	defer w.skipped.mu.Unlock()
	return w.skipped.total, w.skipped.first
}

// skippedNote is "; it wrote N line(s) the proxy could not use, the
// first: WHY: LINE" for the reason of a failed connection
// attempt on l, or "" when it wrote none (or l's transport is not the
// proxy's own). A stdio server that prints a banner or its logs to stdout,
// or is no MCP server at all, is told apart from a slow one so.
func skippedNote(l *live) string {
	sk, ok := l.conn.(interface{ skippedFrames() (int, string) })
	if !ok {
		return ""
	}
	n, first := sk.skippedFrames()
	if n == 0 {
		return ""
	}
	lines := "line"
	if n > 1 {
		lines = "lines"
	}
	hint := ""
	if l.child != nil {
		hint = " (an MCP server writes only JSON-RPC messages to stdout; logs go to stderr)"
	}
	return fmt.Sprintf("; it wrote %d %s the proxy could not use, the first: %s%s", n, lines, truncate(first, 160), hint)
}
