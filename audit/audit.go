// Package audit is the audit log: an append-only JSON Lines file with one
// line per tool call, denial, approval decision, rate-limit refusal and
// config reload, each line chained to the previous one by a SHA-256 hash so
// that an edited, inserted, reordered or deleted line shows (Verify, the
// `mcp-toolsearch audit verify FILE` command).
//
// # Line format
//
// Each line is one JSON object: the fields of Event (seq, time, kind,
// subject, …), then "prev" (the hash of the previous line, "" on the first
// line of a chain) and last "hash":
//
//	{"seq":1,"time":"2026-01-02T03:04:05.123Z","kind":"call",...,"prev":""
//	,"hash":"<64 hex>"}
//
// (one line in the file). hash is hex(SHA-256(body)), where body is the
// line's bytes up to (not including) the `,"hash":` suffix, i.e. the
// object with its hash member removed. Writer writes exactly those bytes,
// so Verify recomputes each hash from the raw line without re-encoding.
// seq counts from 1 in each chain and must grow by one per line.
//
// # What it guards against, and what not
//
// Trust (docs/security.md): the chain shows tampering by someone who can
// edit the file but does not rewrite every later line (an edited line's
// hash no longer matches; a deleted or inserted line breaks seq and prev).
// It cannot show a cut of the file's tail, nor a whole chain rewritten by
// someone with write access: ship the file (or its last hash) elsewhere
// for that. Argument values are written only when configured, and then
// through the deployment's redactor.
package audit

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/logfile"
)

// Kinds of events.
const (
	KindCall     = "call"     // a tool call that reached the call path's end (any outcome)
	KindDenied   = "denied"   // a call refused by policy (answered as an unknown tool)
	KindApproval = "approval" // an approval decision (allowed or denied, with who decided)
	KindLimited  = "rate_limited"
	KindReload   = "reload" // a config reload (applied or refused)
	KindStart    = "start"  // a serving proxy started writing to this log (one-shot commands such as check write none)
	KindConnect  = "connect"
	// KindForeignState is a retry of a 2026-07-28 call that presented the
	// requestState of a call another subject started (answered as an
	// unknown state).
	KindForeignState = "foreign_state"
	// KindRotate is the first line of a file the writer reopened after the
	// old one was moved away (Reopen, log rotation): its seq and prev
	// continue the previous file's chain, so old file + new file verify
	// as one chain (VerifyFiles) and the new file verifies on its own.
	KindRotate = "rotate"
)

// Event is one audit record. Zero fields are left out.
type Event struct {
	Seq  uint64 `json:"seq"`
	Time string `json:"time"` // RFC 3339, UTC, milliseconds
	Kind string `json:"kind"`
	// Subject is who called: the verified user ("user:alice") when the
	// front verified a token, else the client's self-declared name and the
	// endpoint ("client:cursor@main"), else "stdio".
	Subject  string `json:"subject,omitempty"`
	Session  string `json:"session,omitempty"`
	Tool     string `json:"tool,omitempty"`     // catalog id, e.g. "mcp:github:create_issue"
	Upstream string `json:"upstream,omitempty"` // upstream name
	Via      string `json:"via,omitempty"`      // direct | tool | bridge | directory | cli
	Outcome  string `json:"outcome,omitempty"`  // ok, tool_error, error, timeout, blocked_policy, ...
	// DurationMs is the call's wall time in milliseconds.
	DurationMs float64 `json:"duration_ms,omitempty"`
	// Detail is free text: the rule that decided, the approver, the
	// reload's result, the error (redacted).
	Detail string `json:"detail,omitempty"`
	// Args are the call's arguments, only with [audit] arguments = true,
	// redacted (secret keys and known secret values hidden).
	Args    json.RawMessage `json:"args,omitempty"`
	TraceID string          `json:"trace_id,omitempty"`
}

type line struct {
	Event
	Prev string `json:"prev"`
}

// Writer appends events to one file. Safe for concurrent use; nil-safe
// (a nil *Writer records nothing).
type Writer struct {
	mu   sync.Mutex
	path string
	f    *os.File
	seq  uint64
	prev string
	now  func() time.Time
	err  error // first write error, reported by Close
}

// Open opens (creating it with mode 0600) the audit log at path for
// appending. An existing file's chain is continued: its last line must be
// a well-formed audit line (its hash is taken as prev and its seq
// continued); otherwise Open fails naming the problem, so a damaged log is
// never silently extended. The whole file is not verified here (Verify).
func Open(path string) (*Writer, error) {
	f, err := logfile.OpenAppend(path, true)
	if err != nil {
		return nil, err
	}
	w := &Writer{path: path, f: f, now: time.Now}
	last, err := lastLine(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("audit log %s: %w", path, err)
	}
	if last != nil {
		seq, _, hash, err := parseLine(last)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("audit log %s: last line: %w (run `mcp-toolsearch audit verify %s`; move the file away to start a new chain)", path, err, path)
		}
		w.seq, w.prev = seq, hash
	}
	return w, nil
}

// Reopen opens the writer's path again, for log rotation (logrotate's
// default `create`: the file was renamed and a new, empty one may have been
// created in its place). Outcomes:
//   - the path is still the open file: nothing changes;
//   - the path is missing or empty: writing moves to it, and its first line
//     is a KindRotate line whose seq and prev continue the previous file's
//     chain (its Detail names the previous file's last seq and hash);
//   - the path holds another non-empty file: if its last line is this
//     chain's last line (a copy), writing continues there; otherwise the
//     reopen is refused with an error and writing stays on the open file
//     (a different chain is never extended silently).
//
// Errors name the path. After an error the writer still records to the
// file it had open.
func (w *Writer) Reopen() error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return fmt.Errorf("audit log %s: closed", w.path)
	}
	if cur, err := w.f.Stat(); err == nil {
		if st, err := os.Stat(w.path); err == nil && os.SameFile(cur, st) {
			return nil
		}
	}
	f, err := logfile.OpenAppend(w.path, true)
	if err != nil {
		return fmt.Errorf("audit log %s: reopen: %w", w.path, err)
	}
	last, err := lastLine(f)
	if err == nil && last != nil {
		_, _, hash, perr := parseLine(last)
		switch {
		case perr != nil:
			err = fmt.Errorf("last line: %w", perr)
		case hash != w.prev:
			err = errors.New("the file holds another chain (its last hash is not this writer's); move it away and reopen again")
		}
	}
	if err != nil {
		f.Close()
		return fmt.Errorf("audit log %s: reopen refused, still writing the previous file: %w", w.path, err)
	}
	old := w.f
	w.f = f
	_ = old.Sync()
	if cerr := old.Close(); cerr != nil {
		w.keep(cerr)
	}
	if last == nil {
		w.recordLocked(Event{Kind: KindRotate, Detail: fmt.Sprintf("continues the chain of the previous file (last seq %d, hash %s)", w.seq, w.prev)})
	}
	return nil
}

// lastLine returns the last non-empty line of f (nil for an empty file).
// A file not ending in a newline has a torn last line: an error.
func lastLine(f *os.File) ([]byte, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	if size == 0 {
		return nil, nil
	}
	const chunk = 64 << 10
	var buf []byte
	for off := size; off > 0; {
		n := int64(chunk)
		if off < n {
			n = off
		}
		off -= n
		b := make([]byte, n)
		if _, err := f.ReadAt(b, off); err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		buf = append(b, buf...)
		trimmed := bytes.TrimRight(buf, "\n")
		if len(trimmed) == len(buf) {
			return nil, errors.New("the file does not end with a newline (a torn last line)")
		}
		if i := bytes.LastIndexByte(trimmed, '\n'); i >= 0 {
			return trimmed[i+1:], nil
		}
		if off == 0 {
			return trimmed, nil
		}
	}
	return nil, nil
}

// Record appends ev (Seq, Time and the chain fields are set here). Write
// errors are kept and returned by Close and Err; recording goes on.
func (w *Writer) Record(ev Event) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.recordLocked(ev)
}

// recordLocked is Record with w.mu held.
func (w *Writer) recordLocked(ev Event) {
	w.seq++
	ev.Seq = w.seq
	if ev.Time == "" {
		ev.Time = w.now().UTC().Format("2006-01-02T15:04:05.000Z07:00")
	}
	b, err := json.Marshal(line{Event: ev, Prev: w.prev})
	if err != nil {
		w.seq--
		w.keep(fmt.Errorf("encode event: %w", err))
		return
	}
	body := b[:len(b)-1] // without the closing brace
	hash := sha256Hex(body)
	out := make([]byte, 0, len(body)+len(hash)+12)
	out = append(out, body...)
	out = append(out, `,"hash":"`...)
	out = append(out, hash...)
	out = append(out, "\"}\n"...)
	if _, err := w.f.Write(out); err != nil { // one write per line (O_APPEND)
		w.keep(err)
		return
	}
	w.prev = hash
}

func (w *Writer) keep(err error) {
	if w.err == nil {
		w.err = err
	}
}

// Err returns the first write error so far.
func (w *Writer) Err() error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Close syncs and closes the file; it returns the first write error.
func (w *Writer) Close() error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return w.err
	}
	_ = w.f.Sync()
	err := w.f.Close()
	w.f = nil
	if w.err != nil {
		return w.err
	}
	return err
}

// hashSuffix is what follows a line's body: `,"hash":"` 64 hex `"}`.
const hashSuffixLen = len(`,"hash":""}`) + 64

// parseLine checks one line's own hash and returns its seq, prev and hash.
func parseLine(l []byte) (seq uint64, prev, hash string, err error) {
	if len(l) < hashSuffixLen+2 || !bytes.HasSuffix(l, []byte(`"}`)) {
		return 0, "", "", errors.New("not an audit line (no trailing hash)")
	}
	i := len(l) - hashSuffixLen
	if !bytes.HasPrefix(l[i:], []byte(`,"hash":"`)) {
		return 0, "", "", errors.New("not an audit line (no trailing hash)")
	}
	body := l[:i]
	hash = string(l[i+len(`,"hash":"`) : len(l)-2])
	if sha256Hex(body) != hash {
		return 0, "", "", errors.New("hash does not match the line's content (the line was edited)")
	}
	var ln line
	if err := json.Unmarshal(append(append([]byte(nil), body...), '}'), &ln); err != nil {
		return 0, "", "", fmt.Errorf("not JSON: %v", err)
	}
	return ln.Seq, ln.Prev, hash, nil
}

// Result is what Verify found.
type Result struct {
	// FirstSeq and FirstPrev are the first line's seq and prev: 1 and ""
	// for a chain that starts in this file; for a file whose first line is
	// a KindRotate line, the previous file's last seq + 1 and last hash.
	FirstSeq  uint64
	FirstPrev string
	Lines     int    // lines checked
	LastSeq   uint64 // seq of the last line
	LastHash  string // hash of the last line: keep it elsewhere to detect a cut tail
}

// VerifyError names the first bad line.
type VerifyError struct {
	Line int // 1-based line number in the file
	Msg  string
}

func (e *VerifyError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// Verify reads an audit log and checks every line: its own hash, its seq
// (1 on the first line, then one more per line) and its prev (the hash of
// the line before; "" on the first). A first line of kind KindRotate (a
// file started by Writer.Reopen) may carry any seq and prev: they continue
// the previous file's chain, returned as FirstSeq and FirstPrev for the
// caller to match against that file (VerifyFiles does). The error is a
// *VerifyError naming the first bad line, or a read error.
func Verify(r io.Reader) (Result, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	var res Result
	n := 0
	for sc.Scan() {
		n++
		l := sc.Bytes()
		if len(bytes.TrimSpace(l)) == 0 {
			return res, &VerifyError{Line: n, Msg: "empty line"}
		}
		seq, prev, hash, err := parseLine(l)
		if err != nil {
			return res, &VerifyError{Line: n, Msg: err.Error()}
		}
		if n == 1 {
			res.FirstSeq, res.FirstPrev = seq, prev
			if seq != 1 && lineKind(l) == KindRotate {
				res.LastSeq, res.LastHash = seq-1, prev // continues another file's chain
			}
		}
		if seq != res.LastSeq+1 {
			return res, &VerifyError{Line: n, Msg: fmt.Sprintf("seq %d, want %d (a line was deleted, inserted or moved)", seq, res.LastSeq+1)}
		}
		if prev != res.LastHash {
			return res, &VerifyError{Line: n, Msg: "prev does not match the hash of the line before (the chain is broken)"}
		}
		res.Lines, res.LastSeq, res.LastHash = n, seq, hash
	}
	if err := sc.Err(); err != nil {
		return res, err
	}
	return res, nil
}

// lineKind returns the kind of a line that parseLine accepted.
func lineKind(l []byte) string {
	var ev struct {
		Kind string `json:"kind"`
	}
	_ = json.Unmarshal(l, &ev)
	return ev.Kind
}

// VerifyFiles verifies audit logs given oldest first, as one chain: each
// file on its own (Verify), and each file after the first must start with
// the KindRotate line that continues the file before it (its prev the
// previous file's last hash, its seq one more). The error names the file.
func VerifyFiles(paths ...string) (Result, error) {
	var prev Result
	for i, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return prev, err
		}
		res, err := Verify(f)
		f.Close()
		if err != nil {
			return res, fmt.Errorf("%s: %w", p, err)
		}
		if i > 0 && (res.FirstPrev != prev.LastHash || res.FirstSeq != prev.LastSeq+1) {
			return res, fmt.Errorf("%s: does not continue %s (its first line has seq %d, prev %q; %s ends at seq %d, hash %s)", p, paths[i-1], res.FirstSeq, res.FirstPrev, paths[i-1], prev.LastSeq, prev.LastHash)
		}
		prev = res
	}
	return prev, nil
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
