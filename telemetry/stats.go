package telemetry

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
)

// SessionStats is one session as read back from a session log.
type SessionStats struct {
	ID string
	// Ended is true when a session_end record was read. Summary is then that
	// record's summary (plus any events logged after it); otherwise it is
	// rebuilt from the session's events, exactly as End would have computed
	// it (a crashed or still-running session).
	Ended   bool
	Started bool // a session_start record was read
	Events  int  // records read for this session, session_end included
	Summary Summary
}

// Log is a parsed session log.
type Log struct {
	Sessions []SessionStats // in order of first appearance in the log
	// Skipped counts lines that were not valid records: not JSON, no
	// "session" or "event" field, a field of the wrong type, or an unknown
	// event name. Blank lines are ignored and not counted.
	Skipped       int
	FirstSkipLine int    // 1-based line number of the first skipped line (0 if none)
	FirstSkipWhy  string // why that line was skipped
}

// ParseLog reads a session log (JSON Lines, as written by Recorder) and
// rebuilds each session's summary. Bad lines are skipped and counted in
// Log.Skipped, with the first one's line number and reason, so one torn
// line (a crash mid-write) does not hide the rest of the log. The only
// error returned is a read error of r.
func ParseLog(r io.Reader) (*Log, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	lg := &Log{}
	index := map[string]int{} // session id -> index in lg.Sessions of its current (latest) entry
	skip := func(line int, why string) {
		lg.Skipped++
		if lg.FirstSkipLine == 0 {
			lg.FirstSkipLine, lg.FirstSkipWhy = line, why
		}
	}
	for lineNo := 1; ; lineNo++ {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			if why := lg.add(index, bytes.TrimSpace(line)); why != "" {
				skip(lineNo, why)
			}
		}
		if errors.Is(err, io.EOF) {
			return lg, nil
		}
		if err != nil {
			return lg, fmt.Errorf("telemetry: read session log at line %d: %w", lineNo, err)
		}
	}
}

// add folds one line into the log; it returns why the line was skipped, or "".
func (lg *Log) add(index map[string]int, line []byte) string {
	if len(line) == 0 {
		return ""
	}
	var h header
	if err := json.Unmarshal(line, &h); err != nil {
		return "not a JSON record: " + err.Error()
	}
	if h.Session == "" {
		return `no "session" field`
	}
	var rec any
	switch h.Event {
	case EventSessionStart:
		rec = &startRecord{}
	case EventToolsList:
		rec = &toolsListRecord{}
	case EventInstructions:
		rec = &instructionsRecord{}
	case EventCatalog:
		rec = &catalogRecord{}
	case EventSearch:
		rec = &searchRecord{}
	case EventDescribe:
		rec = &describeRecord{}
	case EventCall:
		rec = &callRecord{}
	case EventCodeRun:
		rec = &codeRunRecord{}
	case EventSessionEnd:
		rec = &endRecord{}
	case "":
		return `no "event" field`
	default:
		return fmt.Sprintf("unknown event %q", h.Event)
	}
	if err := json.Unmarshal(line, rec); err != nil {
		return fmt.Sprintf("bad %s record: %v", h.Event, err)
	}

	i, ok := index[h.Session]
	// A session_start for an id already seen starts a new entry (an id
	// reused by a restarted stdio proxy writing to the same file).
	if !ok || (h.Event == EventSessionStart && (lg.Sessions[i].Started || lg.Sessions[i].Ended)) {
		lg.Sessions = append(lg.Sessions, SessionStats{ID: h.Session})
		i = len(lg.Sessions) - 1
		index[h.Session] = i
	}
	ss := &lg.Sessions[i]
	ss.Events++
	sum := &ss.Summary
	switch r := rec.(type) {
	case *startRecord:
		ss.Started = true
		sum.addStart(r)
	case *toolsListRecord:
		sum.addToolsList(r)
	case *instructionsRecord:
		sum.addInstructions(r)
	case *catalogRecord:
		sum.addCatalog(r)
	case *searchRecord:
		sum.addSearch(r)
	case *describeRecord:
		sum.addDescribe(r)
	case *callRecord:
		sum.addCall(r)
	case *codeRunRecord:
		sum.addCodeRun(r)
	case *endRecord:
		// The written summary is authoritative for everything before it.
		start := sum.start
		ss.Ended = true
		ss.Summary = r.Summary
		ss.Summary.start = start
	}
	return ""
}

// Stats reads a session log from r and writes a human-readable report to w,
// one block per session (SPEC §7): client and mode; how many tool schemas
// the model saw first (and how many tools); tools/list and instructions
// bytes; the catalog by upstream and trust; how many searches, describes,
// calls and code runs ran (bridge sub-counts in parentheses); bytes in/out;
// and every tool finally called with its upstream, trust and outcome.
// Sessions without a session_end (a crash) are rebuilt from their events and
// marked "no session_end". Bad lines are skipped; the last line of the report
// gives their count and the first one's line number and reason.
// Errors: a read error of r, or a write error of w.
func Stats(r io.Reader, w io.Writer) error {
	lg, err := ParseLog(r)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	for i := range lg.Sessions {
		writeSession(bw, &lg.Sessions[i])
	}
	ended := 0
	for _, s := range lg.Sessions {
		if s.Ended {
			ended++
		}
	}
	fmt.Fprintf(bw, "%d session(s), %d with session_end, %d without", len(lg.Sessions), ended, len(lg.Sessions)-ended)
	if lg.Skipped > 0 {
		fmt.Fprintf(bw, "; warning: %d bad line(s) skipped, first at line %d: %s", lg.Skipped, lg.FirstSkipLine, lg.FirstSkipWhy)
	}
	fmt.Fprintln(bw)
	return bw.Flush()
}

func writeSession(w io.Writer, ss *SessionStats) {
	s := &ss.Summary
	state := "ended"
	if !ss.Ended {
		state = fmt.Sprintf("no session_end: rebuilt from %d event(s)", ss.Events)
	}
	client := orDash(s.Client)
	if s.ClientVersion != "" {
		client += " " + s.ClientVersion
	}
	fmt.Fprintf(w, "session %s (%s)\n", ss.ID, state)
	fmt.Fprintf(w, "  client: %s  mode: %s  transport: %s", client, orDash(s.Mode), orDash(s.Transport))
	if s.Endpoint != "" {
		fmt.Fprintf(w, "  endpoint: %s", s.Endpoint)
	}
	fmt.Fprintf(w, "  duration: %.1f ms\n", s.DurationMs)
	if s.ToolsListCount == 0 {
		fmt.Fprintf(w, "  tool schemas seen first: - (no tools/list)\n")
	} else {
		fmt.Fprintf(w, "  tool schemas seen first: %d (of %d tools in the first tools/list)\n", s.SchemasSeenFirst, s.ToolsSeenFirst)
	}
	fmt.Fprintf(w, "  tools/list: %d sent, last %d bytes, total %d bytes; instructions: %d bytes\n",
		s.ToolsListCount, s.ToolsListBytesLast, s.ToolsListBytesTotal, s.InstructionsBytes)
	if c := s.Catalog; c != nil {
		fmt.Fprintf(w, "  catalog: %d tools (trusted %d, untrusted %d); by upstream: %s\n", c.Total, c.Trusted, c.Untrusted, countsString(c.ByUpstream))
	}
	fmt.Fprintf(w, "  searches: %d (bridge %d)  describes: %d (bridge %d)  calls: %d (bridge %d)  code runs: %d (errors %d, timeouts %d)\n",
		s.SearchCount, s.SearchBridgeCount, s.DescribeCount, s.DescribeBridgeCount, s.CallCount, s.BridgeCallCount,
		s.CodeRunCount, s.CodeRunErrors, s.CodeRunTimeouts)
	if s.CallCount > 0 {
		fmt.Fprintf(w, "  calls by mode: %s; by outcome: %s\n", countsString(s.CallsByMode), countsString(s.CallsByOutcome))
	}
	fmt.Fprintf(w, "  bytes: in %d, out %d\n", s.BytesIn, s.BytesOut)
	if len(s.FinalCalls) == 0 {
		fmt.Fprintf(w, "  final calls: none\n")
	} else {
		fmt.Fprintf(w, "  final calls:\n")
		for i, c := range s.FinalCalls {
			via := orDash(c.Mode)
			if c.ViaBridge {
				via += ", bridge"
			}
			fmt.Fprintf(w, "    %d. %s  upstream=%s  %s  %s  (%s)\n", i+1, c.ID, orDash(c.Upstream), trustLabel(c.Trusted), c.Outcome, via)
		}
		if s.FinalCallsDropped > 0 {
			fmt.Fprintf(w, "    ... and %d more not kept (limit %d)\n", s.FinalCallsDropped, MaxFinalCalls)
		}
	}
	fmt.Fprintln(w)
}

// countsString renders a count map as "a=1, b=2" in key order.
func countsString(m map[string]int) string {
	if len(m) == 0 {
		return "-"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s=%d", orDash(k), m[k])
	}
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
