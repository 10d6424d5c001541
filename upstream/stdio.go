package upstream

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
	"github.com/mcp-toolsearch/mcp-toolsearch/proc"
)

// MaxMessageBytes is the largest single JSON-RPC message accepted from a
// stdio upstream (32 MiB; the go-sdk default is 16 MiB).
const MaxMessageBytes = 32 << 20

// maxLogLine bounds a logged stderr or skipped stdout line (bytes); the rest
// of the line is dropped.
const maxLogLine = 4096

// child is one running stdio upstream process (started and stopped by
// package proc: own process group / Job Object, always reaped).
type child struct {
	p   *proc.Process
	pid int
	log *slog.Logger

	exited  chan struct{} // closed after the process was reaped
	exitMsg string        // set before exited is closed
	quiet   atomic.Bool   // stderr logged at debug once ready

	lastMu sync.Mutex
	last   string // last non-empty stderr line
}

// startChild starts u.Command with u.Args (package proc: its own process
// group or job), environment os.Environ() plus u.Env (u.Env wins), working
// directory u.Cwd. It returns exec's error unchanged when the command cannot
// be started (e.g. `exec: "x": executable file not found in $PATH`).
func startChild(u *config.Upstream, log *slog.Logger) (*child, error) {
	env := os.Environ()
	keys := make([]string, 0, len(u.Env))
	for k := range u.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+u.Env[k])
	}
	c := &child{log: log, exited: make(chan struct{})}
	p, err := proc.Start(proc.Spec{
		Path: u.Command, Args: u.Args, Env: env, Dir: u.Cwd,
		OnStderrLine: c.stderrLine, MaxStderrLine: maxLogLine,
	})
	if err != nil {
		return nil, err
	}
	c.p, c.pid = p, p.Pid()
	c.log = log.With("pid", c.pid)
	c.log.Debug("upstream process started", "command", u.Command)
	go c.wait()
	return c, nil
}

// transport speaks newline-delimited JSON over the child's stdin/stdout,
// skipping stdout lines that are not JSON.
func (c *child) transport() mcp.Transport {
	out := c.p.Stdout()
	return &mcp.IOTransport{
		Reader:        &jsonLineFilter{r: bufio.NewReaderSize(out, 64<<10), closer: out, log: c.log},
		Writer:        c.p.Stdin(),
		MaxLineLength: MaxMessageBytes,
	}
}

// wait records the exit reason once the child was reaped.
func (c *child) wait() {
	msg := c.p.ExitReason()
	c.lastMu.Lock()
	if c.last != "" {
		msg += ": " + c.last
	}
	c.lastMu.Unlock()
	c.exitMsg = msg
	c.log.Debug("upstream process exited", "reason", msg)
	close(c.exited)
}

// reason is the exit reason, e.g. "exited with status 1: <last stderr
// line>"; valid once exited is closed.
func (c *child) reason() string {
	<-c.exited
	return c.exitMsg
}

// stop closes stdin, waits grace, sends SIGTERM to the process group, waits
// grace, kills the group (or the job on Windows) and waits for the reap.
func (c *child) stop(grace time.Duration) {
	switch c.p.Stop(grace) {
	case proc.StoppedByTerm:
		c.log.Debug("upstream process stopped on SIGTERM after stdin closed")
	case proc.StoppedByKill:
		c.log.Warn("upstream process did not stop after stdin closed and SIGTERM; killed")
	}
	<-c.exited
}

// stderrLine logs one line of the child's stderr (bounded by package proc)
// and keeps the last non-empty line for the exit reason.
func (c *child) stderrLine(line string) {
	s := trimLine([]byte(line))
	if s == "" {
		return
	}
	level := slog.LevelInfo
	if c.quiet.Load() {
		level = slog.LevelDebug
	}
	c.log.Log(context.Background(), level, "upstream stderr", "line", s)
	c.lastMu.Lock()
	// Keep the line that best explains an exit: the last one that looks
	// like an error, else the last one (a usage text printed after "flag
	// provided but not defined" must not hide it).
	if looksLikeError(s) || !looksLikeError(c.last) {
		c.last = truncate(s, 512)
	}
	c.lastMu.Unlock()
}

func trimLine(b []byte) string {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r' || b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return string(b)
}

// jsonLineFilter passes through stdout lines whose first non-space byte is
// '{' or '[' (a JSON-RPC message or batch) and drops every other line,
// logging it (bounded). Leading blanks and empty lines are dropped. JSON
// lines are streamed without buffering them whole, so their size is only
// bounded by the SDK's MaxLineLength.
type jsonLineFilter struct {
	r      *bufio.Reader
	closer io.Closer
	log    *slog.Logger

	mode    int    // lineStart, passing or skipping
	out     []byte // pending bytes to hand out
	one     [1]byte
	skipped []byte // bounded copy of the line being skipped
	err     error  // deferred read error
}

const (
	lineStart = iota
	passing
	skipping
)

func (f *jsonLineFilter) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		if len(f.out) > 0 {
			n := copy(p, f.out)
			f.out = f.out[n:]
			return n, nil
		}
		if f.err != nil {
			return 0, f.err
		}
		switch f.mode {
		case lineStart:
			b, err := f.r.ReadByte()
			if err != nil {
				f.err = err
				continue
			}
			switch b {
			case ' ', '\t', '\r', '\n':
			case '{', '[':
				f.mode = passing
				f.one[0] = b
				f.out = f.one[:]
			default:
				f.mode = skipping
				f.skipped = append(f.skipped[:0], b)
			}
		case passing:
			chunk, err := f.r.ReadSlice('\n')
			f.out = chunk
			switch {
			case err == nil:
				f.mode = lineStart
			case errors.Is(err, bufio.ErrBufferFull):
			default:
				f.err = err
			}
		case skipping:
			chunk, err := f.r.ReadSlice('\n')
			if room := 512 - len(f.skipped); room > 0 {
				f.skipped = append(f.skipped, chunk[:min(room, len(chunk))]...)
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			f.log.Warn("skipped a non-JSON line on the upstream's stdout", "line", trimLine(f.skipped))
			f.mode = lineStart
			if err != nil {
				f.err = err
			}
		}
	}
}

func (f *jsonLineFilter) Close() error { return f.closer.Close() }

// errorWords mark a stderr line as an error message for exit reasons.
var errorWords = []string{"error", "fatal", "panic", "not defined", "cannot", "can't", "failed", "no such", "not found", "denied", "invalid", "exception"}

func looksLikeError(s string) bool {
	l := strings.ToLower(s)
	for _, w := range errorWords {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}
