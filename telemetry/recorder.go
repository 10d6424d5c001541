package telemetry

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/logfile"
	"github.com/mcp-toolsearch/mcp-toolsearch/redact"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/pathq"
)

// Recorder writes the session log of one deployment (SPEC §7): JSON Lines,
// one record per event, and a summary record when a session ends. It also
// feeds the Metrics it was given. One Recorder per deployment; all methods
// of Recorder and Session are safe for concurrent use.
//
// Record shape (every line one JSON object, written with one write call):
//
//	{"ts":"2025-01-02T03:04:05.123456789Z","session":"<id>","event":"<name>", ...fields}
//
// Events and their fields:
//
//	session_start  client, clientVersion, transport ("stdio"|"streamable-http"|"sse"), endpoint, mode
//	tools_list     bytes, toolCount, schemaCount
//	instructions   bytes
//	catalog        total, byUpstream{name:n}, trusted, untrusted
//	search         mode, hits, viaBridge, query (only with logArguments)
//	describe       mode, id, found, viaBridge
//	call           id, upstream, trusted, mode, viaBridge, durationMs, outcome, bytesIn, bytesOut,
//	               args (only with logArguments)
//	code_run       durationMs, ok, timedOut, searchCount, describeCount, callCount
//	session_end    summary (see Summary)
//
// Privacy: argument values and query text are written only when
// logArguments is true (config [telemetry] log_arguments, default false).
// Tool ids, upstream names, counts, sizes and outcomes are always written.
// Strings from the client or model (client name, ids) are cut to 256 bytes;
// queries to 2000 bytes; args above 64 KiB are replaced by a note.
//
// Write errors do not stop the proxy: the first one is kept (see Err) and
// later records are still attempted. Summaries are always kept in memory,
// with or without a file.
type Recorder struct {
	logArgs bool
	toFile  bool                // a path was given (immutable); false skips encoding entirely
	path    string              // the session log's path ("" without a file)
	redact  func(string) string // SetRedactor (redact.go); nil: none
	metrics *Metrics
	now     func() time.Time

	mu       sync.Mutex // serializes writes and guards the fields below
	f        *os.File
	closed   bool
	err      error
	dropped  int
	active   map[*Session]struct{}
	order    []*Session // sessions in start order: active ones and the last maxEnded ended
	endedCnt int
}

// maxEnded bounds how many ended sessions Summaries keeps in memory.
const maxEnded = 64

// NewRecorder opens the session log at path (created with mode 0600 if
// missing, its folder with 0700; opened O_APPEND so several processes may share it; an existing
// file keeps its mode). path "" keeps records only in memory: Session
// summaries and metrics still work. logArguments allows argument values and
// query text in the log. m may be nil (no metrics).
//
// Errors: the file cannot be opened, e.g.
// `telemetry: open session log "/x/y.jsonl": open /x/y.jsonl: no such file or directory`.
func NewRecorder(path string, logArguments bool, m *Metrics) (*Recorder, error) {
	r := &Recorder{logArgs: logArguments, metrics: m, now: time.Now, active: map[*Session]struct{}{}}
	if path != "" {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("telemetry: session log folder %s: %w", pathq.Quote(filepath.Dir(path)), err)
		}
		f, err := logfile.OpenAppend(path, false)
		if err != nil {
			return nil, fmt.Errorf("telemetry: open session log %s: %w", pathq.Quote(path), err)
		}
		r.f, r.toFile, r.path = f, true, path
	}
	return r, nil
}

// Reopen opens the session log's path again, for log rotation (logrotate's
// default `create` renames the file; the proxy would go on writing the
// renamed one): later records go to the file now at the path, created with
// mode 0600 if missing. Records in flight are written whole to one file or
// the other. Without a file, or after Close, it does nothing. On an error
// (naming the path) writing stays on the open file.
func (r *Recorder) Reopen() error {
	if r == nil || !r.toFile {
		return nil
	}
	f, err := logfile.OpenAppend(r.path, false)
	if err != nil {
		return fmt.Errorf("telemetry: reopen session log %s: %w", pathq.Quote(r.path), err)
	}
	r.mu.Lock()
	if r.closed || r.f == nil {
		r.mu.Unlock()
		return f.Close()
	}
	old := r.f
	r.f = f
	r.mu.Unlock()
	return old.Close()
}

// Metrics returns the Metrics given to NewRecorder (may be nil).
func (r *Recorder) Metrics() *Metrics {
	if r == nil {
		return nil
	}
	return r.metrics
}

// Err returns the first error met while encoding or writing a record, with
// the number of records that could not be written; nil if none.
func (r *Recorder) Err() error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err == nil {
		return nil
	}
	return fmt.Errorf("telemetry: %d session-log record(s) not written; first error: %w", r.dropped, r.err)
}

// Close ends every session still open (writing their session_end records),
// then closes the log file. Later events are kept in memory only. Close is
// idempotent; it returns the error of closing the file.
func (r *Recorder) Close() error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	open := make([]*Session, 0, len(r.active))
	for _, s := range r.order {
		if _, ok := r.active[s]; ok {
			open = append(open, s)
		}
	}
	r.mu.Unlock()
	for _, s := range open {
		s.End()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	if err != nil {
		return fmt.Errorf("telemetry: close session log: %w", err)
	}
	return nil
}

// Summaries returns a snapshot of the summaries of the open sessions and of
// up to the last 64 ended ones, in start order.
func (r *Recorder) Summaries() []Summary {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	ss := append([]*Session(nil), r.order...)
	r.mu.Unlock()
	out := make([]Summary, 0, len(ss))
	for _, s := range ss {
		out = append(out, s.Summary())
	}
	return out
}

// write encodes rec and appends it to the file as one line with one write.
func (r *Recorder) write(rec any) {
	if !r.toFile {
		return
	}
	b, err := json.Marshal(rec)
	if err == nil && r.redact != nil {
		b = []byte(r.redact(string(b)))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return
	}
	if err == nil {
		_, err = r.f.Write(append(b, '\n'))
	}
	if err != nil {
		r.dropped++
		if r.err == nil {
			r.err = err
		}
	}
}

// SessionInfo describes a client session at its start.
type SessionInfo struct {
	ID            string // unique per session; "" => a random id is generated
	ClientName    string // clientInfo.name from initialize (MCP lifecycle)
	ClientVersion string // clientInfo.version
	Transport     string // "stdio" | "streamable-http" | "sse"
	Endpoint      string // HTTP path or endpoint name; "" for stdio
	Mode          string // "direct" | "code" | "tools" | "directory" (SPEC §3)
}

// Session records the events of one client session. Obtain it from
// StartSession; call End when the session closes. Methods are safe for
// concurrent use and are no-ops on a nil *Session. Events after End are
// still written to the log and metrics but no longer change the summary.
type Session struct {
	r      *Recorder
	id     string
	mode   string
	client string // clientInfo.name, bounded

	mu    sync.Mutex // orders summary updates with their writes
	sum   Summary
	ended bool
}

// StartSession writes the session_start record, counts the session as
// active in the metrics, and returns the Session.
func (r *Recorder) StartSession(info SessionInfo) *Session {
	id := info.ID
	if id == "" {
		id = randomID()
	}
	s := &Session{r: r, id: truncate(id, maxStringLen), mode: info.Mode, client: truncate(info.ClientName, maxStringLen)}
	rec := &startRecord{
		header:        s.header(EventSessionStart),
		Client:        truncate(info.ClientName, maxStringLen),
		ClientVersion: truncate(info.ClientVersion, maxStringLen),
		Transport:     truncate(info.Transport, maxStringLen),
		Endpoint:      truncate(info.Endpoint, maxStringLen),
		Mode:          truncate(info.Mode, maxStringLen),
	}
	r.mu.Lock()
	r.active[s] = struct{}{}
	r.order = append(r.order, s)
	r.mu.Unlock()
	r.metrics.SessionStarted()
	s.mu.Lock()
	s.sum.addStart(rec)
	r.write(rec)
	s.mu.Unlock()
	return s
}

// ID returns the session id used in the log.
func (s *Session) ID() string {
	if s == nil {
		return ""
	}
	return s.id
}

// modeOr returns mode, or the session's mode when mode is "".
func (s *Session) modeOr(mode string) string {
	if mode == "" {
		return s.mode
	}
	return mode
}

func (s *Session) header(event string) header {
	return header{TS: s.r.now().UTC(), Session: s.id, Client: s.client, Event: event}
}

// emit folds rec into the summary (unless ended) and writes it, under s.mu so
// the file order matches the summary order.
func (s *Session) emit(rec any, fold func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ended {
		fold()
	}
	s.r.write(rec)
}

// ToolsListed records one tools/list result sent to the client: bytes is its
// serialized size, toolCount the tools in it, schemaCount how many of them
// carried a full input schema (every tool in direct mode; the bridge and
// direct-only/pinned tools otherwise).
func (s *Session) ToolsListed(bytes int, toolCount int, schemaCount int) {
	if s == nil {
		return
	}
	rec := &toolsListRecord{header: s.header(EventToolsList), Bytes: bytes, ToolCount: toolCount, SchemaCount: schemaCount}
	s.emit(rec, func() { s.sum.addToolsList(rec) })
}

// Instructions records the size in bytes of the server instructions sent to
// the client in the initialize result (directory mode puts its directory
// there, SPEC §3).
func (s *Session) Instructions(bytes int) {
	if s == nil {
		return
	}
	rec := &instructionsRecord{header: s.header(EventInstructions), Bytes: bytes}
	s.emit(rec, func() { s.sum.addInstructions(rec) })
}

// Catalog records the effective catalog of the session (after policy):
// total tools, tools per upstream name, and tools from trusted and untrusted
// upstreams. byUpstream is copied. It does not set the catalog gauge: the
// proxy sets that from the deployment-wide catalog with SetCatalogSize.
func (s *Session) Catalog(total int, byUpstream map[string]int, trusted, untrusted int) {
	if s == nil {
		return
	}
	bu := make(map[string]int, len(byUpstream))
	for k, v := range byUpstream {
		bu[truncate(k, maxStringLen)] += v
	}
	rec := &catalogRecord{header: s.header(EventCatalog),
		CatalogSummary: CatalogSummary{Total: total, ByUpstream: bu, Trusted: trusted, Untrusted: untrusted}}
	s.emit(rec, func() { s.sum.addCatalog(rec) })
}

// Search records one search (SPEC §4) in mode ("" means the session's mode)
// with its hit count; viaBridge when it ran inside tool_search_code. The
// query is an argument value: it is written only when logArguments. Counts
// mcp_toolsearch_searches_total{mode}.
func (s *Session) Search(mode string, query string, hits int, viaBridge bool) {
	if s == nil {
		return
	}
	mode = s.modeOr(mode)
	rec := &searchRecord{header: s.header(EventSearch), Mode: mode, Hits: hits, ViaBridge: viaBridge}
	if s.r.logArgs {
		rec.Query = truncate(query, maxQueryLen)
	}
	s.r.metrics.IncSearch(mode)
	s.emit(rec, func() { s.sum.addSearch(rec) })
}

// Describe records one describe of tool id (SPEC §4) in mode ("" means the
// session's mode); found is false when the id was unknown or outside the
// policy. Counts mcp_toolsearch_describes_total{mode}.
func (s *Session) Describe(mode, id string, found bool, viaBridge bool) {
	if s == nil {
		return
	}
	mode = s.modeOr(mode)
	rec := &describeRecord{header: s.header(EventDescribe), Mode: mode, ID: truncate(id, maxStringLen), Found: found, ViaBridge: viaBridge}
	s.r.metrics.IncDescribe(mode)
	s.emit(rec, func() { s.sum.addDescribe(rec) })
}

// CallRecord is one tool call through the proxy's single call path.
type CallRecord struct {
	ID         string  // catalog id, e.g. "mcp:calendar:create_event"
	Upstream   string  // upstream name ("" if the id was unknown)
	Trusted    bool    // the upstream is trusted (config trusted = true)
	Mode       string  // the mode the call came through (SPEC §3); "" means the session's mode
	ViaBridge  bool    // made by openclaw.tools.call inside tool_search_code
	DurationMs float64 // wall-clock time of the call, policy and approval included
	// Outcome is one of "ok", "tool_error" (result isError), "error",
	// "denied", "blocked_approval", "unavailable", "timeout",
	// "invalid_arguments" (the Outcome* constants).
	Outcome  string
	BytesIn  int             // serialized size of the arguments received
	BytesOut int             // serialized size of the result returned
	Args     json.RawMessage // the arguments; written only when logArguments
	// Rule is, for outcome "denied", the policy rule that denied the tool.
	Rule string
}

// Call records one tool call and observes it in the metrics
// (mcp_toolsearch_tool_calls_total and the duration histogram).
func (s *Session) Call(c CallRecord) {
	if s == nil {
		return
	}
	rec := &callRecord{header: s.header(EventCall), ID: truncate(c.ID, maxStringLen),
		Upstream: truncate(c.Upstream, maxStringLen), Trusted: c.Trusted, Mode: s.modeOr(c.Mode),
		ViaBridge: c.ViaBridge, DurationMs: c.DurationMs, Outcome: c.Outcome,
		BytesIn: c.BytesIn, BytesOut: c.BytesOut, Rule: truncate(c.Rule, maxStringLen)}
	if s.r.logArgs && len(c.Args) > 0 {
		switch {
		case len(c.Args) > maxArgsLen:
			rec.ArgsOmitted = fmt.Sprintf("args are %d bytes, over the %d-byte limit", len(c.Args), maxArgsLen)
		case !json.Valid(c.Args):
			rec.ArgsOmitted = "args are not valid JSON"
		default:
			rec.Args = redact.JSON(c.Args, nil) // secret keys masked; values by write
		}
	}
	s.r.metrics.ObserveCall(c.Upstream, c.Outcome, c.DurationMs/1000)
	s.emit(rec, func() { s.sum.addCall(rec) })
}

// CodeRun records one tool_search_code run: its duration, whether it
// succeeded, whether the parent killed it on timeout, and how many bridge
// searches, describes and calls it made (those are also recorded one by one
// through Search, Describe and Call with viaBridge). The record's "ok" is
// ok && !timedOut; the metric outcome is "timeout", else "error" when !ok,
// else "ok".
func (s *Session) CodeRun(durationMs float64, ok bool, timedOut bool, searchCount, describeCount, callCount int) {
	if s == nil {
		return
	}
	rec := &codeRunRecord{header: s.header(EventCodeRun), DurationMs: durationMs, OK: ok && !timedOut, TimedOut: timedOut,
		SearchCount: searchCount, DescribeCount: describeCount, CallCount: callCount}
	outcome := CodeRunOK
	switch {
	case timedOut:
		outcome = CodeRunTimeout
	case !ok:
		outcome = CodeRunError
	}
	s.r.metrics.IncCodeRun(outcome)
	s.emit(rec, func() { s.sum.addCodeRun(rec) })
}

// End writes the session_end record holding the Summary and decrements the
// active-session gauge. Only the first call has an effect.
func (s *Session) End() {
	if s == nil {
		return
	}
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	s.ended = true
	rec := &endRecord{header: s.header(EventSessionEnd)}
	s.sum.touch(rec.TS)
	s.sum.normalize()
	rec.Summary = s.sum.clone()
	s.r.write(rec)
	s.mu.Unlock()

	r := s.r
	r.metrics.SessionEnded()
	r.mu.Lock()
	delete(r.active, s)
	r.endedCnt++
	if r.endedCnt > maxEnded {
		// Drop the oldest ended session from the in-memory list.
		for i, o := range r.order {
			if _, open := r.active[o]; !open {
				r.order = append(r.order[:i:i], r.order[i+1:]...)
				r.endedCnt--
				break
			}
		}
	}
	r.mu.Unlock()
}

// Summary returns a snapshot of the session's totals so far (after End: the
// totals written in session_end).
func (s *Session) Summary() Summary {
	if s == nil {
		return Summary{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.sum.clone()
	c.normalize()
	return c
}

func randomID() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		// crypto/rand does not fail on supported platforms; keep a usable id anyway.
		return fmt.Sprintf("s-%d", time.Now().UnixNano())
	}
	return "s-" + hex.EncodeToString(b[:])
}
