package proxy

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
	"github.com/mcp-toolsearch/mcp-toolsearch/ingest"
	"github.com/mcp-toolsearch/mcp-toolsearch/pins"
)

// churn lists tool name of upstream up changes+1 times through an ingest
// pipeline holding the warn-mode pinning step st, each time with another
// definition, logging each listing's diagnostics as the upstream package
// does (only when they differ from the last listing's). It fails the test
// if a change is not shown in the diagnostics (list/check).
func churn(t *testing.T, log *slog.Logger, st pinStep, up, name string, changes int) {
	t.Helper()
	pl := ingest.New(st)
	var prev []ingest.Diagnostic
	for i := 0; i <= changes; i++ {
		raw := fmt.Sprintf(`{"name":%q,"description":"version %d","inputSchema":{"type":"object"}}`, name, i)
		res := pl.Run(up, []json.RawMessage{json.RawMessage(raw)})
		if len(res.Tools) != 1 {
			t.Fatalf("%s listing %d: the tool did not pass: %v", name, i, res.Diagnostics)
		}
		if i > 0 && (len(res.Diagnostics) != 1 || !strings.Contains(res.Diagnostics[0].Detail, "changed since it was pinned")) {
			t.Fatalf("%s change %d: want the change as a diagnostic (shown in list/check), got %v", name, i, res.Diagnostics)
		}
		if !ingest.Same(prev, res.Diagnostics) {
			ingest.Log(log, res.Diagnostics)
		}
		prev = res.Diagnostics
	}
}

// warnStep is a warn-mode pinning step over an in-memory pins store whose
// change warnings use a window of every, logging into logs.
func warnStep(t *testing.T, every time.Duration) (*syncBuffer, *slog.Logger, pinStep) {
	t.Helper()
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	st, err := pins.Open("")
	if err != nil {
		t.Fatal(err)
	}
	g := &pinGuard{store: st, log: log, warns: &pinWarnings{log: log, every: every}}
	return logs, log, pinStep{g: g, mode: config.ChangeWarn}
}

// TestPinWarningsLimited: an upstream whose tool changes at
// every listing logged one WARN per change, forever. Now each tool's first
// change is logged, later ones one line per window and upstream, and the
// rest are counted in the window's summary. The window here is an hour,
// so nothing depends on timing.
func TestPinWarningsLimited(t *testing.T) {
	logs, log, step := warnStep(t, time.Hour)
	churn(t, log, step, "churny", "a", 50)
	churn(t, log, step, "churny", "b", 1) // a first change of another tool: logged
	churn(t, log, step, "other", "a", 2)  // another upstream has its own window
	lines := map[string]int{}
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "tool definition changed since it was pinned") {
			lines[regexp.MustCompile(`id=\S+`).FindString(l)]++
		}
	}
	if strings.Contains(logs.String(), "tool normalised") {
		t.Errorf("the ingest point logged the changes once more:\n%s", logs.String())
	}
	want := map[string]int{"id=mcp:churny:a": 2, "id=mcp:churny:b": 1, "id=mcp:other:a": 2}
	if len(lines) != len(want) {
		t.Fatalf("full warnings per tool %v, want %v\n%s", lines, want, logs.String())
	}
	for id, n := range want {
		if lines[id] != n {
			t.Errorf("full warnings per tool %v, want %v", lines, want)
		}
	}
}

// TestPinWarningsSummed: with a short window, every change is either
// logged in full or counted in a summary line, however the windows fall.
func TestPinWarningsSummed(t *testing.T) {
	logs, log, step := warnStep(t, 5*time.Millisecond)
	const changes = 300
	churn(t, log, step, "churny", "a", changes)
	count := func() (full, summed int) {
		for _, l := range strings.Split(logs.String(), "\n") {
			if strings.Contains(l, "tool definition changed since it was pinned") {
				full++
			}
			if strings.Contains(l, "more tool definition changes from upstream") {
				if !strings.Contains(l, "upstream=churny") {
					t.Fatalf("summary does not name the upstream: %s", l)
				}
				n, _ := strconv.Atoi(regexp.MustCompile(`changes=(\d+)`).FindStringSubmatch(l)[1])
				summed += n
			}
		}
		return
	}
	deadline := time.Now().Add(30 * time.Second) // fail-safe, not a speed check
	for {
		full, summed := count()
		if full+summed == changes {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d changes: %d logged in full + %d in summaries\n%s", changes, full, summed, logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
