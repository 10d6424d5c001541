package upstream

import (
	"context"
	"log/slog"
	"os"
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
	p, err := proc.Start(proc.Spec{
		Path: path, Args: u.Args, Env: env, Dir: u.Cwd,
		OnStderrLine: c.stderrLine, MaxStderrLine: maxLogLine,
	})
	if err != nil {
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

// transport speaks newline-delimited JSON over the child's stdin/stdout
// (stdioconn.go), skipping stdout lines that are not JSON-RPC messages.
func (c *child) transport(maxBytes int) mcp.Transport {
	return &stdioTransport{r: c.p.Stdout(), w: c.p.Stdin(), log: c.log, maxBytes: maxBytes}
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
	c.lastMu.Lock()
	lg := c.log // set by startChild after the process started
	c.lastMu.Unlock()
	lg.Log(context.Background(), level, "upstream stderr", "line", s)
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
