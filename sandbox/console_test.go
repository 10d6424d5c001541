package sandbox

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestConsoleTruncationSaysWhatWasDropped: console
// output past MaxLogBytes ends at a line boundary with a note (Level "note",
// the last entry of Logs) saying how many lines and bytes were not kept; a
// single long line keeps its start and the note says it was cut short.
func TestConsoleTruncationSaysWhatWasDropped(t *testing.T) {
	p := newPool(t, nil) // MaxLogBytes 16 KiB, the default
	limit := p.opts.MaxLogBytes

	r := p.Run(context.Background(), `for (let i = 0; i < 3000; i++) console.log("line " + i); return 1`, 8*time.Second, nil)
	if !r.OK || len(r.Logs) < 2 {
		t.Fatalf("3000 lines: ok=%v error %q, %d log lines", r.OK, r.Error, len(r.Logs))
	}
	kept, note := r.Logs[:len(r.Logs)-1], r.Logs[len(r.Logs)-1]
	used, droppedBytes := 0, 0
	for i, l := range kept {
		if want := fmt.Sprintf("line %d", i); l.Text != want || l.Level != "log" {
			t.Fatalf("log %d = %+v; want %q whole", i, l, want)
		}
		used += len(l.Text) + 1
	}
	for i := len(kept); i < 3000; i++ {
		droppedBytes += len(fmt.Sprintf("line %d", i))
	}
	want := fmt.Sprintf("[console output truncated at %d bytes: %d more lines (%d bytes) were dropped]", limit, 3000-len(kept), droppedBytes)
	if note.Level != "note" || note.Text != want || !r.LogsTruncated || used > limit || used < limit-len("line 2999") {
		t.Errorf("3000 lines: %d kept (%d bytes), last %+v; want the note %q", len(kept), used, note, want)
	}
	if r.LogsDroppedLines != 3000-len(kept) || r.LogsDroppedBytes != int64(droppedBytes) {
		t.Errorf("LogsDroppedLines %d, LogsDroppedBytes %d; want %d, %d", r.LogsDroppedLines, r.LogsDroppedBytes, 3000-len(kept), droppedBytes)
	}

	r = p.Run(context.Background(), `console.log("y".repeat(20000)); console.log("z"); return 1`, 8*time.Second, nil)
	if !r.OK || len(r.Logs) != 2 || r.Logs[0].Text != strings.Repeat("y", limit-1) {
		t.Fatalf("long line: ok=%v error %q logs %d: %.40q", r.OK, r.Error, len(r.Logs), r.Logs)
	}
	want = fmt.Sprintf("[console output truncated at %d bytes: the last line shown was cut short, and 1 more line was dropped; %d bytes in all were not kept]", limit, 20000-(limit-1)+1)
	if r.Logs[1] != (LogLine{"note", want}) {
		t.Errorf("long line: note %+v; want %q", r.Logs[1], want)
	}

	r = p.Run(context.Background(), `console.log("y".repeat(20000)); return 1`, 8*time.Second, nil)
	want = fmt.Sprintf("[console output truncated at %d bytes: the last line shown was cut short (%d bytes not kept)]", limit, 20000-(limit-1))
	if !r.OK || len(r.Logs) != 2 || r.Logs[1] != (LogLine{"note", want}) {
		t.Errorf("one long line: %d lines, %.100q; want the note %q", len(r.Logs), r.Logs, want)
	}

	// A line that does not fit once more than half the output is used is
	// dropped whole.
	r = p.Run(context.Background(), `console.log("a".repeat(10000)); console.log("b".repeat(10000)); console.log("c"); return 1`, 8*time.Second, nil)
	want = fmt.Sprintf("[console output truncated at %d bytes: 2 more lines (10001 bytes) were dropped]", limit)
	if !r.OK || len(r.Logs) != 2 || len(r.Logs[0].Text) != 10000 || r.Logs[1] != (LogLine{"note", want}) {
		t.Errorf("second long line: %d lines, %.100q; want the note %q", len(r.Logs), r.Logs, want)
	}

	// Within the limit: no note.
	r = p.Run(context.Background(), `console.log("x".repeat(`+fmt.Sprint(limit-1)+`)); return 1`, 8*time.Second, nil)
	if !r.OK || len(r.Logs) != 1 || r.LogsTruncated {
		t.Errorf("exactly the limit: %d lines, truncated %v", len(r.Logs), r.LogsTruncated)
	}

	// The run ends before the worker could count: the note says so. On a
	// loaded machine the deadline can pass before the body reached its
	// console.log (no line at all: not the case under test, and a clean-clone
	// CI run saw it at load 20), so a longer deadline is tried then.
	for _, d := range []time.Duration{500 * time.Millisecond, 2 * time.Second, 8 * time.Second} {
		r = p.Run(context.Background(), `console.log("y".repeat(20000)); while (true) {}`, d, nil)
		if len(r.Logs) > 0 {
			break
		}
	}
	want = fmt.Sprintf("[console output truncated at %d bytes; the run ended before what was dropped could be counted]", limit)
	if !r.TimedOut || len(r.Logs) != 2 || r.Logs[1] != (LogLine{"note", want}) {
		t.Errorf("timed out: %d lines, %.100q; want the note %q", len(r.Logs), r.Logs, want)
	}
}
