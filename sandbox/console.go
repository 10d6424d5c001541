package sandbox

import (
	"fmt"
	"strings"

	"github.com/dop251/goja"
)

// Console output of a run is bounded by Options.MaxLogBytes (each line
// costs its text plus one byte, so empty lines are bounded too). Trust: the
// script is model-written and untrusted; it may log without end, so the
// worker keeps at most the limit and the parent, which must not believe the
// worker, bounds what it keeps again.
//
// What is cut is said, never dropped silently (3,000
// lines ended "[log] lin", and a line after a long one vanished): the output
// ends at a line boundary — a line that no longer fits is dropped whole —
// except that a line arriving while at least half of the limit is still
// free keeps its start (so one long line still shows), and Result.Logs then
// ends with a LogLine of Level "note" saying how many lines and bytes were
// not kept (consoleNote).

// consoleState is the worker's count of its console output.
type consoleState struct {
	bytes     int   // bytes kept, each line's text plus one
	full      bool  // the limit was reached: later lines are only counted
	cutBytes  int   // bytes cut from the end of the last line kept
	dropLines int   // lines dropped whole
	dropBytes int64 // their bytes (text only)
}

// log is console.log/warn/error (level "log", "warn" or "error"): the
// arguments rendered by stringifyArg, joined by spaces, sent as one line
// while they fit. Lines past the limit are still rendered, to count their
// bytes: that costs what a line within the limit costs, bounded by the
// run's timeout like all of the script's work.
func (w *jsWorker) log(level string, args []goja.Value) {
	parts := make([]string, len(args))
	n := max(len(args)-1, 0) // the spaces between arguments
	for i, a := range args {
		parts[i] = w.stringifyArg(a)
		n += len(parts[i])
	}
	c := &w.con
	if c.full {
		c.dropLines++
		c.dropBytes += int64(n)
		return
	}
	keep := consoleKeep(w.limits.MaxLogBytes, c.bytes, n)
	if keep == n {
		c.bytes += n + 1
		_ = w.out.send(message{T: msgLog, Level: level, Text: strings.Join(parts, " ")})
		return
	}
	c.full = true
	if budget := keep; budget > 0 {
		var b strings.Builder
		for i, p := range parts {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(p[:min(len(p), budget+utf8Max-b.Len())])
			if b.Len() > budget {
				break
			}
		}
		text := truncateUTF8(b.String(), budget)
		c.cutBytes = n - len(text)
		c.bytes += len(text) + 1
		_ = w.out.send(message{T: msgLog, Level: level, Text: text, Truncated: true})
		return
	}
	c.dropLines++
	c.dropBytes += int64(n)
	_ = w.out.send(message{T: msgLog, Level: level, Truncated: true}) // tells the parent now, in case the run never ends
}

// consoleKeep is how many bytes of an n-byte line to keep when used bytes
// of the limit are taken: n when it fits (with its newline); else the rest
// when at least half of the limit is still free (a long line keeps its
// start); else -1 (the line is dropped whole, also an empty one once the
// limit is reached). The one rule of the worker and the parent.
func consoleKeep(limit, used, n int) int {
	rest := limit - used - 1
	switch {
	case n <= rest:
		return n
	case rest > 0 && rest >= limit/2:
		return rest
	default:
		return -1
	}
}

// utf8Max is the longest UTF-8 encoding of a rune, in bytes.
const utf8Max = 4

// parentConsole is the parent's count of a run's console output.
type parentConsole struct {
	bytes     int
	full      bool
	counted   bool // the worker's done message brought its counts
	cutBytes  int
	dropLines int
	dropBytes int64
}

// addLog keeps one console line from the worker, under the same rule as
// the worker's (a worker that keeps it never has a line cut or dropped
// here; one that does not is bounded all the same, and what is dropped here
// is counted with what the worker reports).
func (r *run) addLog(m message) {
	c := &r.con
	if m.Truncated {
		r.res.LogsTruncated = true
		if m.Text == "" { // only the news that lines are being dropped
			return
		}
	}
	if c.full {
		c.dropLines++
		c.dropBytes += int64(len(m.Text))
		return
	}
	text := m.Text
	if keep := consoleKeep(r.pool.opts.MaxLogBytes, c.bytes, len(text)); keep < len(text) {
		r.res.LogsTruncated = true
		c.full = true
		if keep <= 0 {
			c.dropLines++
			c.dropBytes += int64(len(text))
			return
		}
		text = truncateUTF8(text, keep)
		c.cutBytes += len(m.Text) - len(text)
	}
	c.bytes += len(text) + 1
	level := m.Level
	if level != "warn" && level != "error" {
		level = "log" // never "note": only the parent writes that
	}
	r.res.Logs = append(r.res.Logs, LogLine{Level: level, Text: text})
}

// countedLogs adds the counts of the worker's done message m.
func (r *run) countedLogs(m message) {
	c := &r.con
	c.counted = true
	// The worker is not trusted: counts are clamped, so no sum overflows.
	c.cutBytes += min(max(m.LogCut, 0), 1<<30)
	c.dropLines += min(max(m.LogDropLines, 0), 1<<30)
	c.dropBytes += min(max(m.LogDropBytes, 0), 1<<50)
	if m.LogCut > 0 || m.LogDropLines > 0 {
		r.res.LogsTruncated = true
	}
}

// noteLogs ends a truncated console with its note and fills the Result's
// counts; once per run (finish).
func (r *run) noteLogs() {
	if !r.res.LogsTruncated {
		return
	}
	c := &r.con
	r.res.LogsDroppedLines = c.dropLines
	r.res.LogsDroppedBytes = c.dropBytes + int64(c.cutBytes)
	r.res.Logs = append(r.res.Logs, LogLine{Level: "note", Text: consoleNote(r.pool.opts.MaxLogBytes, c)})
}

// consoleNote says what of the console output was not kept, in the
// bracketed form of the returned value's "[output truncated: …]", e.g.
// "[console output truncated at 16384 bytes: 1250 more lines (14234 bytes)
// were dropped]".
func consoleNote(limit int, c *parentConsole) string {
	head := fmt.Sprintf("[console output truncated at %d bytes", limit)
	switch {
	case !c.counted:
		return head + "; the run ended before what was dropped could be counted]"
	case c.cutBytes > 0 && c.dropLines > 0:
		return fmt.Sprintf("%s: the last line shown was cut short, and %s %s dropped; %s in all were not kept]", head, moreLines(c.dropLines), wasWere(c.dropLines), plural(c.dropBytes+int64(c.cutBytes), "byte"))
	case c.cutBytes > 0:
		return fmt.Sprintf("%s: the last line shown was cut short (%s not kept)]", head, plural(int64(c.cutBytes), "byte"))
	case c.dropLines > 0:
		return fmt.Sprintf("%s: %s (%s) %s dropped]", head, moreLines(c.dropLines), plural(c.dropBytes, "byte"), wasWere(c.dropLines))
	default:
		return head + "]"
	}
}

// moreLines is "1 more line" or "N more lines".
func moreLines(n int) string {
	if n == 1 {
		return "1 more line"
	}
	return fmt.Sprintf("%d more lines", n)
}

func wasWere(n int) string {
	if n == 1 {
		return "was"
	}
	return "were"
}

func plural(n int64, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}
