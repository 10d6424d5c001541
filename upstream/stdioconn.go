package upstream

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/linewrite"
)

// stdioTransport is the proxy's own newline-delimited JSON transport to a
// stdio upstream (MCP spec 2025-11-25 basic/transports "stdio": one
// message per line, no embedded newlines). It replaces the go-sdk's
// IOTransport on upstream legs: lines are framed with one reusable
// buffer (no decoder buffer per message), a line that is not a JSON-RPC
// message is skipped whatever its first character, and faults in one
// line never end the session (see wire).
type stdioTransport struct {
	r        io.ReadCloser // the child's stdout
	w        io.WriteCloser
	log      *slog.Logger
	maxBytes int
	// ended, when set, is closed once the child was reaped (its group
	// or job killed): Close drains stdout until then (see Close). nil
	// closes stdout at once.
	ended <-chan struct{}
}

func (t *stdioTransport) Connect(context.Context) (mcp.Connection, error) {
	w := newWire(t.log, t.maxBytes)
	w.timesCalls = true // wiredue.go: a write does not need the call's context to end
	c := &stdioConn{
		wire:     w,
		r:        t.r,
		w:        t.w,
		out:      linewrite.New(t.w),
		incoming: make(chan jsonrpc.Message, 8),
		done:     make(chan struct{}),
		readDone: make(chan struct{}),
		ended:    t.ended,
	}
	go c.readLoop()
	return c, nil
}

// stdioConn is one connection over a child's stdin/stdout.
type stdioConn struct {
	*wire
	r   io.ReadCloser
	w   io.WriteCloser
	out *linewrite.Writer // over w: requests finished together go out in one write

	incoming chan jsonrpc.Message
	readErr  error // set before incoming is closed
	done     chan struct{}
	readDone chan struct{}   // closed when readLoop returns
	ended    <-chan struct{} // stdioTransport.ended
	once     sync.Once
}

// utf8BOM is the UTF-8 encoding of U+FEFF, the byte order mark.
var utf8BOM = []byte("\xEF\xBB\xBF")

// stdioReadBuf is the read buffer of a stdio connection (bytes).
const stdioReadBuf = 64 << 10

// maxSkippedBeforeMessage is how many lines that are not JSON-RPC messages
// a stdio upstream may write before its first message. Past it the
// connection ends (errNoMessages): a program that streams output and is
// no MCP server (or a server that writes its logs to stdout without
// end) otherwise kept the proxy reading and skipping at 30-60 % of a core
// for its whole startup_timeout, again at every retry. A banner or a
// start-up log is far shorter.
const maxSkippedBeforeMessage = 100_000

// errNoMessages ends a connection past maxSkippedBeforeMessage.
var errNoMessages = fmt.Errorf("stdout: %d lines and no JSON-RPC message", maxSkippedBeforeMessage)

// readLoop frames lines and hands their messages to Read until stdout
// ends. Once the connection is closed it reads on and drops what it
// reads (Close).
func (c *stdioConn) readLoop() {
	defer close(c.readDone)
	defer close(c.incoming)
	defer func() { // owncall.go
		select {
		case <-c.done: // we closed it (teardown): the read error says nothing
			c.closeOwn(mcp.ErrConnectionClosed)
			return
		default:
		}
		if c.readErr != nil {
			c.closeOwn(c.readErr)
		} else {
			c.closeOwn(io.EOF)
		}
	}()
	br := bufio.NewReaderSize(c.r, stdioReadBuf)
	var line []byte
	var sniff idSniffer
	oversize := false
	size := 0
	first := true
	delivered := false // a message was read (maxSkippedBeforeMessage)
	for {
		chunk, err := br.ReadSlice('\n')
		if first {
			// One UTF-8 byte order mark at the start of the stream is
			// not part of the first message: some Windows programs
			// write one (MCP basic/transports "stdio" frames JSON-RPC
			// messages, which cannot start with U+FEFF; RFC 8259 §8.1
			// lets a parser ignore it). One later in the stream is not
			// skipped: the line is then not a JSON-RPC message.
			first = false
			chunk = bytes.TrimPrefix(chunk, utf8BOM)
		}
		size += len(chunk)
		var frame []byte // the whole line, when it is complete
		// The line's end ("\n" or "\r\n") is framing, not message: a
		// message of exactly maxBytes is taken. Before the newline arrives
		// (a buffer-full piece) a trailing "\r" may be that end's.
		n, limit := len(line)+len(chunk), c.maxBytes
		end := 0
		if err == nil {
			end = messageEnd(line, chunk)
			n -= end
		} else if errors.Is(err, bufio.ErrBufferFull) {
			limit++
		}
		switch {
		case !oversize && len(line) == 0 && !errors.Is(err, bufio.ErrBufferFull) && n <= limit:
			// The line in one piece: decoded from the reader's buffer
			// (decode copies what it keeps), not copied into line first.
			frame = chunk
		case oversize:
			sniff.feed(chunk)
		case n > limit:
			oversize = true
			sniff.reset()
			sniff.feed(line)
			sniff.feed(chunk)
			line = line[:0]
		default:
			line = append(line, chunk...)
			frame = line
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		var msgs []jsonrpc.Message
		switch {
		case c.closed(): // draining after Close: dropped unread
		case oversize:
			msgs = c.oversized(sniff.id(), sniff.sawMethod, size-end)
		default:
			msgs = c.decode(frame)
		}
		if len(msgs) > 0 {
			delivered = true
		} else if !delivered && !c.closed() {
			if n, _ := c.skippedFrames(); n >= maxSkippedBeforeMessage {
				c.readErr = errNoMessages
				return
			}
		}
	deliver:
		for _, m := range msgs {
			select {
			case c.incoming <- m:
			case <-c.done:
				break deliver
			}
		}
		if cap(line) > 4*stdioReadBuf {
			line = nil // do not keep a huge buffer after one large message
		} else {
			line = line[:0]
		}
		oversize, size = false, 0
		if err != nil {
			if !errors.Is(err, io.EOF) {
				c.readErr = err
			}
			return
		}
	}
}

// messageEnd is the length of the line end ("\n": 1, "\r\n": 2) of a
// line read as line+chunk, chunk ending in "\n" (the "\r" may be line's
// last byte when chunk is just "\n").
func messageEnd(line, chunk []byte) int {
	if k := len(chunk); k >= 2 && chunk[k-2] == '\r' || k == 1 && len(line) > 0 && line[len(line)-1] == '\r' {
		return 2
	}
	return 1
}

// inject hands m to the go-sdk behind the messages read so far
// (Manager.Settle).
func (c *stdioConn) inject(m jsonrpc.Message) (ok bool) {
	defer func() {
		if recover() != nil { // incoming closed: the child's output ended
			ok = false
		}
	}()
	select {
	case c.incoming <- m:
		return true
	case <-c.done:
		return false
	}
}

// Read implements mcp.Connection. It returns io.EOF once the upstream's
// stdout is closed.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case m, ok := <-c.incoming:
		if !ok {
			if c.readErr != nil {
				return nil, c.readErr
			}
			return nil, io.EOF
		}
		return m, nil
	case <-c.done:
		return nil, io.EOF
	}
}

// Write implements mcp.Connection: one line, encoded into a pooled buffer.
// A line written while another is being written is queued and goes out
// with the next write (internal/linewrite): Write then returns before the
// line is on the pipe. If that write fails (the child closed its stdin),
// later Writes fail with its error; the queued line's call waits for the
// child's end (readLoop fails the calls waiting) or its call_timeout.
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case <-c.done:
		return mcp.ErrConnectionClosed
	default:
	}
	buf, err := c.encode(nil, msg)
	if err != nil {
		return err
	}
	_, err = c.out.Write(append(buf, '\n'))
	return err
}

func (c *stdioConn) closed() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// Close implements mcp.Connection: it closes stdin (the child sees EOF,
// MCP's first shutdown step) and fails the proxy's own requests still
// waiting. Stdout stays open and is read and dropped until it ends or
// the child was reaped (transport ended): a child that still writes
// after its stdin closed (an answer, a log line, its start-up output)
// must not meet a closed pipe, which Node servers report as "Error:
// write EPIPE" stack traces on their stderr. The caller stops the child
// (child.stop: stdin closed, grace, SIGTERM, grace, kill, reap), which
// bounds the draining. Without ended, stdout is closed at once.
func (c *stdioConn) Close() error {
	var err error
	c.once.Do(func() {
		close(c.done)
		err = c.w.Close()
		c.closeOwn(mcp.ErrConnectionClosed) // owncall.go
		if c.ended == nil {
			_ = c.r.Close()
			return
		}
		go func() {
			select {
			case <-c.readDone: // stdout ended
			case <-c.ended: // a grandchild that left the group may hold stdout open
			}
			_ = c.r.Close()
		}()
	})
	return err
}

func (c *stdioConn) SessionID() string { return "" }

// idSniffer reads the members of a JSON object as it streams past
// without keeping it: it records the raw value of the top-level "id"
// (bounded) and whether a top-level "method" was seen. It is used on a
// frame past the size cap, so that the request it answers can be failed.
type idSniffer struct {
	depth     int
	inString  bool
	escape    bool
	inKey     bool   // the current string is a member name at depth 1
	afterKey  bool   // a member name at depth 1 was read; value not yet started/ended
	key       []byte // current member name at depth 1 (bounded)
	capture   bool   // capturing the value of "id"
	val       []byte
	done      bool // the id value was captured completely
	sawMethod bool
}

const sniffMax = 128

func (s *idSniffer) reset() { *s = idSniffer{key: s.key[:0], val: s.val[:0]} }

func (s *idSniffer) id() []byte {
	if !s.done || len(s.val) == 0 || len(s.val) > sniffMax {
		return nil
	}
	return s.val
}

func (s *idSniffer) feed(p []byte) {
	for _, b := range p {
		if s.inString {
			if s.capture && len(s.val) <= sniffMax {
				s.val = append(s.val, b)
			}
			switch {
			case s.escape:
				s.escape = false
				if s.inKey && len(s.key) < sniffMax {
					s.key = append(s.key, b)
				}
			case b == '\\':
				s.escape = true
				if s.inKey && len(s.key) < sniffMax {
					s.key = append(s.key, b)
				}
			case b == '"':
				s.inString = false
				if s.inKey {
					s.inKey = false
					s.afterKey = true
					if string(s.key) == "method" {
						s.sawMethod = true
					}
				} else if s.capture {
					s.capture, s.done = false, true
				}
			default:
				if s.inKey && len(s.key) < sniffMax {
					s.key = append(s.key, b)
				}
			}
			continue
		}
		switch b {
		case '"':
			s.inString = true
			if s.depth == 1 && !s.afterKey {
				s.inKey = true
				s.key = s.key[:0]
			} else if s.depth == 1 && s.afterKey && string(s.key) == "id" && !s.done {
				s.capture = true
				s.val = append(s.val[:0], b)
			}
		case '{', '[':
			s.depth++
		case '}', ']':
			if s.depth == 1 && s.capture {
				s.capture, s.done = false, true
			}
			s.depth--
		case ':':
			if s.depth == 1 && s.afterKey && string(s.key) == "id" && !s.done {
				s.capture = true
				s.val = s.val[:0]
			}
		case ',':
			if s.depth == 1 {
				if s.capture {
					s.capture, s.done = false, true
				}
				s.afterKey = false
			}
		case ' ', '\t', '\r', '\n':
		default:
			if s.capture && len(s.val) <= sniffMax {
				s.val = append(s.val, b)
			}
		}
	}
}
