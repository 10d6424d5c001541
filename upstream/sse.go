package upstream

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"
	"sync"
	"time"
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

// readSSE reads events from r until it ends or fn returns false; it
// returns nil at the end of the stream and the read error otherwise. An
// event's data past maxBytes is not kept (Oversize). Events with no data
// are passed too (ids and retry hints).
// sseReaders pools the 16 KiB line readers of readSSE (one per response
// stream; issue 16: a fresh one per tools/call answer was a fifth of the
// HTTP upstream side's garbage).
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
		switch {
		case overLine:
			sniff.feed(chunk)
			ev.Size += len(chunk)
		case isDataLine(line, chunk) && len(data)+len(line)+len(chunk) > maxBytes+len("data: \r\n"):
			startOversize()
			whole := append(line, chunk...)
			v := dataValue(whole)
			sniff.feed(v)
			ev.Size += len(v)
			line, overLine, hasData = line[:0], true, true
		case !isDataLine(line, chunk) && len(line)+len(chunk) > maxSSELine:
			line = append(line, chunk[:max(0, maxSSELine-len(line))]...)
		default:
			line = append(line, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if overLine {
			overLine = false
			sniff.feed([]byte("\n"))
		} else if l := bytes.TrimRight(line, "\r\n"); len(l) == 0 && len(chunk) > 0 {
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
		line = line[:0]
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
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

// dataValue is the value part of a data line ("data: VALUE").
func dataValue(l []byte) []byte {
	v := bytes.TrimPrefix(l, []byte("data"))
	v = bytes.TrimPrefix(v, []byte(":"))
	v = bytes.TrimPrefix(v, []byte(" "))
	return bytes.TrimRight(v, "\r\n")
}
