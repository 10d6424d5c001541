package upstream

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
	"github.com/mcp-toolsearch/mcp-toolsearch/internal/logwindow"
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
	exitOwn string        // exitMsg without the stderr line (proc.Process.ExitReason); set before exited is closed
	quiet   atomic.Bool   // stderr logged at debug once ready

	lastMu sync.Mutex
	last   string // last non-empty stderr line

	budget stderrBudget // how many stderr lines may still be logged
}

// Bounds of a child's stderr lines in the proxy's log (stderrLine): a burst
// of stderrBurst lines, then stderrPerSecond a second; the lines past it
// are dropped from the log (the last one that looks like an error is
// still kept for the exit reason), with one WARN when dropping starts and
// one summary per stderrDropWindow. An upstream is not trusted: one that
// writes to stderr in a loop must not fill the disk of the proxy's log
// (the file a desktop client keeps of the proxy's stderr): 378 MB in 30 s
// before this bound.
const (
	stderrBurst      = 200
	stderrPerSecond  = 20
	stderrDropWindow = 10 * time.Second
)

// stderrBudget is a token bucket of stderr lines. Lines come from one
// goroutine (package proc); the summary runs on a timer, hence the lock.
type stderrBudget struct {
	mu      sync.Mutex
	tokens  float64
	last    time.Time
	started bool
	window  *logwindow.Window
}

// take reports whether one more line may be logged now.
func (b *stderrBudget) take(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.started {
		b.started, b.tokens, b.last = true, stderrBurst, now
	}
	b.tokens = min(stderrBurst, b.tokens+now.Sub(b.last).Seconds()*stderrPerSecond)
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// startChild starts u.Command with u.Args (package proc: its own process
// group or job), working directory u.Cwd, and the environment of childEnv
// (env.go): the minimal variables of the proxy's environment plus u.Env,
// or with inherit_env the whole of it plus u.Env. A plain command name is
// looked up in that environment's PATH. It returns an error naming the
// command and the PATH when the program is not found, else exec's error
// unchanged when it cannot be started.
func startChild(u *config.Upstream, log *slog.Logger) (*child, error) {
	env := childEnv(u, os.Environ())
	_, ownPath := envLookup(mapEnv(u.Env), "PATH")
	path, err := resolveCommand(u.Command, env, ownPath)
	if err != nil {
		return nil, err
	}
	c := &child{log: log, exited: make(chan struct{})}
	c.budget.window = logwindow.New(stderrDropWindow, func(n int, every time.Duration) {
		c.lastMu.Lock()
		lg := c.log
		c.lastMu.Unlock()
		lg.Warn("upstream stderr lines dropped from the log (rate limit)", "dropped", n+1, "in_last", every,
			"limit", fmt.Sprintf("%d lines, then %d a second", stderrBurst, stderrPerSecond))
	})
	p, err := proc.Start(proc.Spec{
		Path: path, Args: u.Args, Env: env, Dir: u.Cwd,
		OnStderrLine: c.stderrLine, MaxStderrLine: maxLogLine,
	})
	if err != nil {
		if cerr := cwdError(u.Cwd); cerr != nil {
			return nil, cerr
		}
		return nil, err
	}
	c.p, c.pid = p, p.Pid()
	c.lastMu.Lock() // stderrLine already runs
	c.log = log.With("pid", c.pid)
	c.lastMu.Unlock()
	c.log.Debug("upstream process started", "command", u.Command)
	go c.wait()
	return c, nil
}

// cwdError names the upstream's working directory when it is why the
// command could not start: exec reports a missing cwd as the command's
// own error ("fork/exec /usr/bin/node: no such file or directory"),
// which sends the operator after the wrong path. nil when cwd
// is unset or a folder.
func cwdError(cwd string) error {
	if cwd == "" {
		return nil
	}
	fi, err := os.Stat(cwd)
	if err == nil && !fi.IsDir() {
		err = &os.PathError{Op: "stat", Path: cwd, Err: syscall.ENOTDIR}
	}
	if err != nil {
		return fmt.Errorf("cwd (the working directory of the command): %w", err)
	}
	return nil
}

// transport speaks newline-delimited JSON over the child's stdin/stdout
// (stdioconn.go), skipping stdout lines that are not JSON-RPC messages.
// Once closed, it drains stdout until the child was reaped.
func (c *child) transport(maxBytes int) mcp.Transport {
	return &stdioTransport{r: c.p.Stdout(), w: c.p.Stdin(), log: c.log, maxBytes: maxBytes, ended: c.p.Done()}
}

// wait records the exit reason once the child was reaped.
func (c *child) wait() {
	msg := c.p.ExitReason()
	c.exitOwn = msg
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
// why is the proxy's reason to stop it, for the exit reason when a signal
// or the kill ended it ("killed by the proxy (WHY; …)").
func (c *child) stop(grace time.Duration, why string) {
	switch c.p.StopFor(grace, why) {
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
	c.lastMu.Lock()
	lg := c.log // set by startChild after the process started
	c.lastMu.Unlock()
	if ctx := context.Background(); lg.Enabled(ctx, level) {
		if c.budget.take(time.Now()) {
			lg.Log(ctx, level, "upstream stderr", "line", s)
		} else if c.budget.window.Allow() {
			lg.Warn("upstream writes to stderr faster than the log takes; dropping its lines from the log for a while",
				"limit", fmt.Sprintf("%d lines, then %d a second", stderrBurst, stderrPerSecond))
		}
	}
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
