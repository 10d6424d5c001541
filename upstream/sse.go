package upstream

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/memtrim"
)

// sseEvent is one server-sent event (WHATWG HTML "Server-sent events",
// "Interpreting an event stream"). When its data was past the size cap,
// Data is empty, Oversize is true, Size counts the data bytes and Sniff
// holds the JSON-RPC id found in them.
type sseEvent struct {
	Name     string // "" means "message"
	ID       string // the last event id so far ("" when none was sent)
	Data     []byte // valid until fn returns
	Retry    time.Duration
	Oversize bool
	Size     int
	Sniff    *idSniffer
}

// maxSSELine bounds a non-data line of an event stream (bytes); the rest
// of such a line is dropped.
const maxSSELine = 4096

// errEventCut ends the reading of a stream in the middle of an event that
// went past cutAfter: the rest of it is not read (an upstream could send
// gigabytes, or a small gzip body that inflates to them, and keep the
// proxy busy reading them).
var errEventCut = errors.New("the upstream sent an SSE event far past server.max_message_bytes; the stream was cut off")

// cutAfter is how much of an event past the cap is still read, looking
// for its JSON-RPC id (which may come last): four times the cap, at least
// 1 MiB.
func cutAfter(maxBytes int) int { return max(4*maxBytes, 1<<20) }

// readSSE reads events from r until it ends or fn returns false; it
// returns nil at the end of the stream and the read error otherwise. An
// event's data past maxBytes is not kept (Oversize). Events with no data
// are passed too (ids and retry hints).
// sseReaders pools the 16 KiB line readers of readSSE (one per response
// stream; a fresh one per tools/call answer was a fifth of the HTTP
// upstream side's garbage).
// With the reader it pools the rest of a stream's reading state: the event,
// the id sniffer and the line and data buffers (at most sseKeep bytes
// each are kept).
var sseReaders = sync.Pool{New: func() any { return &sseState{br: bufio.NewReaderSize(nil, 16<<10)} }}

type sseState struct {
	br         *bufio.Reader
	ev         sseEvent
	sniff      idSniffer
	data, line []byte
}

const sseKeep = 64 << 10

func readSSE(r io.Reader, maxBytes int, fn func(*sseEvent) bool) error {
	st := sseReaders.Get().(*sseState)
	br := st.br
	br.Reset(r)
	var (
		data     = st.data[:0]
		line     = st.line[:0]
		hasData  bool
		overLine bool // the current data line is being sniffed, not kept
		// direct: the current data line is longer than the reader's
		// buffer; its value goes straight into data as it is read (not
		// into line first and then copied: one copy of a large message
		// less).
		direct bool
	)
	defer func() {
		br.Reset(nil)
		st.data, st.line = nil, nil
		if cap(data) <= sseKeep {
			st.data = data[:0]
		}
		if cap(line) <= sseKeep {
			st.line = line[:0]
		}
		sseReaders.Put(st)
	}()
	st.ev, st.sniff = sseEvent{}, idSniffer{}
	ev, sniff := &st.ev, &st.sniff
	ev.Sniff = sniff
	startOversize := func() {
		if !ev.Oversize {
			ev.Oversize = true
			sniff.reset()
			sniff.feed(data)
			ev.Size = len(data)
			data = data[:0]
		}
	}
	for {
		chunk, err := br.ReadSlice('\n')
		full := errors.Is(err, bufio.ErrBufferFull)
		switch {
		case overLine:
			sniff.feed(chunk)
			ev.Size += len(chunk)
		case direct && !ev.Oversize && len(data)+len(chunk) > maxBytes+len("\r\n"):
			startOversize()
			sniff.feed(chunk)
			ev.Size += len(chunk)
			direct, overLine = false, true
		case direct:
			data = appendDoubling(data, chunk, maxBytes+len("\r\n"))
		case isDataLine(line, chunk) && len(data)+len(line)+len(chunk) > maxBytes+len("data: \r\n"):
			startOversize()
			for _, v := range dataValueParts(line, chunk) {
				sniff.feed(v)
				ev.Size += len(v)
			}
			line, overLine, hasData = line[:0], true, true
		case full && !ev.Oversize && isDataLine(line, chunk) && len(line)+len(chunk) > len("data: "):
			for _, v := range dataValueParts(line, chunk) {
				data = appendDoubling(data, v, maxBytes+len("\r\n"))
			}
			line, direct, hasData = line[:0], true, true
		case !isDataLine(line, chunk) && len(line)+len(chunk) > maxSSELine:
			line = append(line, chunk[:max(0, maxSSELine-len(line))]...)
		default:
			line = append(line, chunk...)
		}
		if ev.Oversize && ev.Size > cutAfter(maxBytes) {
			memtrim.Soon()
			return errEventCut
		}
		if full {
			continue
		}
		switch {
		case overLine:
			overLine = false
			sniff.feed([]byte("\n"))
		case direct:
			direct = false
			data = bytes.TrimRight(data, "\r\n")
			if len(data)+1 > maxBytes {
				startOversize()
				sniff.feed([]byte("\n"))
				ev.Size++
			} else {
				data = append(data, '\n')
			}
		default:
			if l := bytes.TrimRight(line, "\r\n"); len(l) == 0 && len(chunk) > 0 {
				if hasData || ev.Name != "" {
					if len(data) > 0 && data[len(data)-1] == '\n' {
						data = data[:len(data)-1]
					}
					ev.Data = data
					if !fn(ev) {
						return nil
					}
				}
				data = data[:0]
				if cap(data) > 1<<20 {
					data = nil
				}
				ev.Name, ev.Oversize, ev.Size, ev.Retry, hasData = "", false, 0, 0, false
			} else if len(l) > 0 && l[0] != ':' {
				field, value, _ := bytes.Cut(l, []byte(":"))
				value = bytes.TrimPrefix(value, []byte(" "))
				switch string(field) {
				case "event":
					if string(value) == "message" {
						ev.Name = "message" // the usual name, without a copy
					} else {
						ev.Name = string(value)
					}
				case "data":
					hasData = true
					if !ev.Oversize && len(data)+len(value)+1 > maxBytes {
						startOversize()
					}
					if ev.Oversize {
						sniff.feed(value)
						sniff.feed([]byte("\n"))
						ev.Size += len(value) + 1
					} else {
						data = append(data, value...)
						data = append(data, '\n')
					}
				case "id":
					if bytes.IndexByte(value, 0) < 0 {
						ev.ID = string(value)
					}
				case "retry":
					if n, err := strconv.Atoi(string(value)); err == nil && n >= 0 {
						ev.Retry = time.Duration(n) * time.Millisecond
					}
				}
			}
		}
		line = line[:0]
		if cap(line) > sseKeep {
			line = nil // a long line's buffer is not kept for the stream's life
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// appendDoubling is append that at least doubles the capacity when it
// grows, up to ceiling: append grows a large slice by a quarter, so
// reading a message of n bytes in 16 KiB pieces left about 4n of garbage;
// doubling leaves at most n.
func appendDoubling(dst, src []byte, ceiling int) []byte {
	if need := len(dst) + len(src); need > cap(dst) {
		grown := make([]byte, len(dst), max(min(2*cap(dst), ceiling), need))
		copy(grown, dst)
		dst = grown
	}
	return append(dst, src...)
}

// isDataLine reports whether the line being read (line so far, then
// chunk) is a "data" field.
func isDataLine(line, chunk []byte) bool {
	at := func(i int) int {
		if i < len(line) {
			return int(line[i])
		}
		if i-len(line) < len(chunk) {
			return int(chunk[i-len(line)])
		}
		return -1
	}
	for i := 0; i < 4; i++ {
		if at(i) != int("data"[i]) {
			return false
		}
	}
	c := at(4)
	return c == ':' || c == '\n' || c == '\r' || c == -1
}

// dataValueParts is the value part of a data line ("data: VALUE") read
// so far as line then chunk, without joining them: the field name, its
// colon and one space are cut from the front, a line end from the back.
func dataValueParts(line, chunk []byte) [2][]byte {
	if len(line) < len("data: ") {
		whole := append(line, chunk...) // short: the copy is small
		line, chunk = whole, nil
	}
	v := bytes.TrimPrefix(line, []byte("data"))
	v = bytes.TrimPrefix(v, []byte(":"))
	v = bytes.TrimPrefix(v, []byte(" "))
	if len(chunk) == 0 {
		return [2][]byte{bytes.TrimRight(v, "\r\n")}
	}
	return [2][]byte{v, bytes.TrimRight(chunk, "\r\n")}
}

// eventCapTripper bounds the events of every event-stream response of the
// legacy HTTP+SSE transport (whose events the go-sdk reads): a read that
// would take an event past max bytes fails with errEventTooLarge, which
// ends the session. Trust: upstream servers are not trusted; without it an
// event of any size up to the go-sdk's bound was held whole.
type eventCapTripper struct {
	base http.RoundTripper
	max  int
	log  *slog.Logger
}

func (e eventCapTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := e.base.RoundTrip(req)
	if err != nil || resp.Body == nil || mediaType(resp.Header.Get("Content-Type")) != "text/event-stream" {
		return resp, err
	}
	resp.Body = &eventCap{ReadCloser: resp.Body, max: e.max, log: e.log}
	return resp, nil
}

// errEventTooLarge is the read error of an event past the cap.
var errEventTooLarge = errors.New("the upstream sent an SSE event larger than server.max_message_bytes")

// eventCap is an event-stream body that fails once one event (the bytes
// since the blank line that ended the previous one) passes max.
type eventCap struct {
	io.ReadCloser
	max     int
	log     *slog.Logger
	n       int // bytes of the current event
	lineLen int // bytes of the current line, line end excluded
	err     error
}

func (c *eventCap) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.ReadCloser.Read(p)
	for i, b := range p[:n] {
		c.n++
		switch b {
		case '\n':
			if c.lineLen == 0 {
				c.n = 0 // a blank line: the event ended
			}
			c.lineLen = 0
		case '\r':
		default:
			c.lineLen++
		}
		if c.n > c.max {
			c.err = fmt.Errorf("%w (more than %d bytes)", errEventTooLarge, c.max)
			if c.log != nil {
				c.log.Warn("upstream sent an SSE event past the cap; ending its session", "cap", c.max, "limit", "server.max_message_bytes")
			}
			memtrim.Soon()
			return i, c.err
		}
	}
	return n, err
}
