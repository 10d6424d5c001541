package upstream

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
)

// MaxMessageBytes is the largest single JSON-RPC message accepted from a
// stdio upstream (32 MiB; the go-sdk default is 16 MiB).
const MaxMessageBytes = 32 << 20

// maxLogLine bounds a logged stderr or skipped stdout line (bytes); the rest
// of the line is dropped.
const maxLogLine = 4096

// stderrDrainWait bounds how long the exit reason waits for the last stderr
// lines after the child exited (a grandchild may keep stderr open).
const stderrDrainWait = 250 * time.Millisecond

// child is one running stdio upstream process.
type child struct {
	cmd    *exec.Cmd
	pid    int
	stdin  *onceCloser
	stdout *os.File
	log    *slog.Logger

	exited     chan struct{} // closed after cmd.Wait returned
	exitMsg    string        // set before exited is closed
	stderrDone chan struct{}
	quiet      atomic.Bool // stderr logged at debug once ready

	lastMu sync.Mutex
	last   string // last non-empty stderr line
}

// startChild starts u.Command with u.Args in its own process group (so the
// whole group can be signalled), environment os.Environ() plus u.Env (u.Env
// wins), working directory u.Cwd. It returns exec's error unchanged when the
// command cannot be started (e.g. `exec: "x": executable file not found in
// $PATH`).
func startChild(u *config.Upstream, log *slog.Logger) (*child, error) {
	cmd := exec.Command(u.Command, u.Args...)
	env := os.Environ()
	keys := make([]string, 0, len(u.Env))
	for k := range u.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+u.Env[k])
	}
	cmd.Env = env
	cmd.Dir = u.Cwd
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}

	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			_ = f.Close()
		}
	}
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	inR, inW, err := pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := pipe()
	if err != nil {
		closeAll()
		return nil, err
	}
	errR, errW, err := pipe()
	if err != nil {
		closeAll()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if err := cmd.Start(); err != nil {
		closeAll()
		return nil, err
	}
	// The child holds its own copies; ours must go so EOF propagates.
	_ = inR.Close()
	_ = outW.Close()
	_ = errW.Close()

	c := &child{
		cmd:        cmd,
		pid:        cmd.Process.Pid,
		stdin:      &onceCloser{f: inW},
		stdout:     outR,
		log:        log.With("pid", cmd.Process.Pid),
		exited:     make(chan struct{}),
		stderrDone: make(chan struct{}),
	}
	c.log.Debug("upstream process started", "command", u.Command)
	go c.readStderr(errR)
	go c.wait()
	return c, nil
}

// transport speaks newline-delimited JSON over the child's stdin/stdout,
// skipping stdout lines that are not JSON.
func (c *child) transport() mcp.Transport {
	return &mcp.IOTransport{
		Reader:        &jsonLineFilter{r: bufio.NewReaderSize(c.stdout, 64<<10), closer: c.stdout, log: c.log},
		Writer:        c.stdin,
		MaxLineLength: MaxMessageBytes,
	}
}

// wait reaps the child (the only cmd.Wait call) and records the exit reason.
func (c *child) wait() {
	err := c.cmd.Wait()
	t := time.NewTimer(stderrDrainWait)
	select {
	case <-c.stderrDone:
	case <-t.C:
	}
	t.Stop()
	msg := describeExit(c.cmd.ProcessState, err)
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

func describeExit(ps *os.ProcessState, err error) string {
	if ps == nil {
		return fmt.Sprintf("wait: %v", err)
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok {
		switch {
		case ws.Signaled():
			return fmt.Sprintf("killed by signal %d (%s)", int(ws.Signal()), ws.Signal())
		case ws.Exited():
			return fmt.Sprintf("exited with status %d", ws.ExitStatus())
		}
	}
	return ps.String()
}

// stop closes stdin, waits grace, sends SIGTERM to the process group, waits
// grace, sends SIGKILL to the group and waits for the reap. A final SIGKILL
// to the group removes members that outlived the leader.
func (c *child) stop(grace time.Duration) {
	defer func() { _ = syscall.Kill(-c.pid, syscall.SIGKILL) }()
	_ = c.stdin.Close()
	if c.waitExit(grace) {
		return
	}
	c.log.Debug("upstream process still running after stdin closed; sending SIGTERM")
	if err := syscall.Kill(-c.pid, syscall.SIGTERM); err == nil && c.waitExit(grace) {
		return
	}
	c.log.Warn("upstream process ignored SIGTERM; sending SIGKILL")
	_ = syscall.Kill(-c.pid, syscall.SIGKILL)
	<-c.exited
}

func (c *child) waitExit(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c.exited:
		return true
	case <-t.C:
		return false
	}
}

// readStderr logs the child's stderr line by line (bounded) and keeps the
// last non-empty line for the exit reason.
func (c *child) readStderr(f *os.File) {
	defer close(c.stderrDone)
	defer f.Close()
	r := bufio.NewReaderSize(f, maxLogLine)
	var line []byte
	truncated := false
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line) < maxLogLine {
			room := maxLogLine - len(line)
			if len(chunk) > room {
				line = append(line, chunk[:room]...)
				truncated = true
			} else {
				line = append(line, chunk...)
			}
		} else if len(chunk) > 0 {
			truncated = true
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if s := trimLine(line); s != "" {
			if truncated {
				s += "…"
			}
			level := slog.LevelInfo
			if c.quiet.Load() {
				level = slog.LevelDebug
			}
			c.log.Log(context.Background(), level, "upstream stderr", "line", s)
			c.lastMu.Lock()
			// Keep the line that best explains an exit: the last one that
			// looks like an error, else the last one (a usage text printed
			// after "flag provided but not defined" must not hide it).
			if looksLikeError(s) || !looksLikeError(c.last) {
				c.last = truncate(s, 512)
			}
			c.lastMu.Unlock()
		}
		line, truncated = line[:0], false
		if err != nil {
			return
		}
	}
}

func trimLine(b []byte) string {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r' || b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return string(b)
}

// onceCloser closes f once; further Closes return nil.
type onceCloser struct {
	f    *os.File
	once sync.Once
	err  error
}

func (o *onceCloser) Write(p []byte) (int, error) { return o.f.Write(p) }
func (o *onceCloser) Close() error {
	o.once.Do(func() { o.err = o.f.Close() })
	return o.err
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
