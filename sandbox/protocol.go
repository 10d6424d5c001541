package sandbox

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// The bridge protocol between the parent (Pool) and a worker (WorkerMain).
//
// Both directions carry newline-delimited JSON objects (one message per
// line) over the worker's stdin (parent -> worker) and stdout
// (worker -> parent). The worker's stderr is diagnostics only.
//
// Worker -> parent:
//
//	{"t":"ready"}                                  once, when the worker can take a run
//	{"t":"call","id":7,"op":"search","args":[...]} a bridge call; args is the JS arguments array
//	{"t":"log","level":"log","text":"..."}          one console line (already bounded)
//	{"t":"log","level":"log","text":"...","truncated":true}
//	                                               the line that reached the console limit, cut short
//	{"t":"log","level":"log","truncated":true}     (no text) the first line dropped at the limit; later
//	                                               lines are counted, not sent: done carries
//	                                               "logCut", "logDropLines", "logDropBytes"
//	{"t":"done","ok":true,"value":<json>}           the run finished; value is the returned JSON
//	                                               ("undef":true when the body returned undefined)
//	{"t":"done","ok":false,"error":"..."}           the run failed (thrown error, bad syntax, ...)
//	{"t":"refused","id":1}                         the first bridge call the worker refused
//	                                               locally (call cap); done carries the total in id
//
// Parent -> worker:
//
//	{"t":"run","code":"...","limits":{...}}  once, the run request
//	{"t":"reply","id":7,"value":<json>}      a bridge call succeeded
//	{"t":"reply","id":7,"error":"..."}       a bridge call failed (rejects the JS Promise)
//	                                         "props":{...} adds properties to that Error (e.g. code, data)
const (
	msgReady   = "ready"
	msgRun     = "run"
	msgCall    = "call"
	msgReply   = "reply"
	msgLog     = "log"
	msgDone    = "done"
	msgRefused = "refused"
)

// message is the single wire shape of every protocol message; fields not
// used by a message type are omitted.
type message struct {
	T         string          `json:"t"`
	ID        int64           `json:"id,omitempty"`
	Op        string          `json:"op,omitempty"`
	Args      json.RawMessage `json:"args,omitempty"`
	Value     json.RawMessage `json:"value,omitempty"`
	Error     string          `json:"error,omitempty"`
	OK        bool            `json:"ok,omitempty"`
	Level     string          `json:"level,omitempty"`
	Text      string          `json:"text,omitempty"`
	Truncated bool            `json:"truncated,omitempty"`
	Undef     bool            `json:"undef,omitempty"`
	Props     json.RawMessage `json:"props,omitempty"`
	Code      string          `json:"code,omitempty"`
	Limits    *runLimits      `json:"limits,omitempty"`
	// In "done": the console output the worker did not send (console.go):
	// bytes cut from the end of its last line, and lines (and their
	// bytes) dropped whole.
	LogCut       int   `json:"logCut,omitempty"`
	LogDropLines int   `json:"logDropLines,omitempty"`
	LogDropBytes int64 `json:"logDropBytes,omitempty"`
}

// runLimits travel in the run request; the worker applies them to itself
// before it compiles the script.
type runLimits struct {
	MemoryLimitBytes int64 `json:"memoryLimitBytes"`
	CPUSeconds       int   `json:"cpuSeconds"`
	MaxLogBytes      int   `json:"maxLogBytes"`
	MaxOutputBytes   int   `json:"maxOutputBytes"`
	MaxMessageBytes  int   `json:"maxMessageBytes"`
	MaxRunBytes      int   `json:"maxRunBytes"`
	MaxTotalCalls    int   `json:"maxTotalCalls"`
	MaxCallStackSize int   `json:"maxCallStackSize"`
}

var errLineTooLong = errors.New("protocol message exceeds the size limit")

// readLine reads one '\n'-terminated line of at most max bytes (without the
// newline). It returns errLineTooLong when the line is longer, io.EOF at a
// clean end of stream.
func readLine(r *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > max+1 {
			return nil, errLineTooLong
		}
		line = append(line, chunk...)
		switch {
		case err == nil:
			return line[:len(line)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(line) > 0:
			return nil, io.ErrUnexpectedEOF
		default:
			return nil, err
		}
	}
}

// cutJSON bounds a JSON value to about max bytes. A value within the limit
// is returned unchanged with false. A longer one is replaced by a JSON string
// holding the start of the original JSON text (cut on a UTF-8 boundary)
// followed by a marker "…[output truncated: N bytes total]"; the result is
// valid JSON of at most max bytes plus the marker, and the second return is
// true.
func cutJSON(v []byte, max int) ([]byte, bool) {
	if len(v) <= max {
		return v, false
	}
	marker := fmt.Sprintf("…[output truncated: %d bytes total]", len(v))
	k := max
	for range 8 {
		prefix := v[:k]
		for len(prefix) > 0 {
			if r, size := utf8.DecodeLastRune(prefix); r != utf8.RuneError || size > 1 {
				break
			}
			prefix = prefix[:len(prefix)-1]
		}
		enc, _ := json.Marshal(string(prefix) + marker)
		if len(enc) <= max+len(marker)+2 || k == 0 {
			return enc, true
		}
		// Escaping grew the text: shrink the prefix in proportion.
		k = k * max / len(enc)
		if k > 16 {
			k -= 16
		}
	}
	enc, _ := json.Marshal(marker)
	return enc, true
}
