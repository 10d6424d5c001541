// Package proc starts and stops the child processes of mcp-toolsearch: stdio
// upstreams (package upstream), sandbox workers (package sandbox) and the
// tools.approval_command (package proxy). It is the one place that knows how
// each OS keeps a child and everything it starts together:
//
//   - Unix: the child leads its own process group; stopping or killing it
//     signals the whole group. After the child exits, what is left of its
//     group is killed before the child is reaped (so its pid, and with it the
//     group id, cannot have been reused).
//   - Linux also sets Pdeathsig (SIGKILL when the proxy dies), from one
//     locked OS thread that lives as long as the process (Pdeathsig fires when
//     the forking thread exits, not the process).
//   - Unix, when the binary enabled it (EnableReaper): a small reaper process
//     that kills every registered group when the proxy dies, even by SIGKILL;
//     Pdeathsig alone reaches only the direct child, never a grandchild.
//   - Windows: the child is created suspended, put in its own Job Object with
//     JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE, then resumed, so the whole tree dies
//     with the job handle, which the proxy holds until the child is reaped
//     (and the kernel closes when the proxy dies).
//
// Trust: the commands come from the operator's config (trusted); what they do
// once running is not (an upstream server may spawn grandchildren, ignore
// SIGTERM or hold its pipes open), and every stop path ends in a kill of the
// whole group or job and a reap.
//
// The caller passes the child's environment as is (Spec.Env); this package
// has no environment policy.
package proc

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Defaults for Spec fields left zero.
const (
	// DefaultMaxStderrLine bounds one stderr line handed to OnStderrLine, in
	// bytes; the rest of a longer line is dropped and "…" appended.
	DefaultMaxStderrLine = 4096
	// stderrDrain bounds how long Done waits for the end of stderr after the
	// child was reaped (a grandchild that left the group may hold it open).
	stderrDrain = 250 * time.Millisecond
	// waitDelay bounds how long the reap waits for exec's copying goroutines
	// (Spec.Stdin / Spec.Stdout set) once the child has exited.
	waitDelay = 2 * time.Second
)

// Spec describes one child process.
type Spec struct {
	// Path is the program (looked up in PATH when it has no separator, as
	// os/exec does); Args are its arguments (without argv[0]).
	Path string
	Args []string
	// Env is the child's whole environment, passed as is ("KEY=value"
	// entries). nil inherits the proxy's environment (the os/exec rule); an
	// empty non-nil slice gives an empty one.
	Env []string
	// Dir is the working directory; "" is the proxy's.
	Dir string

	// Stdin, when set, is copied to the child's stdin (os/exec copies it and
	// closes the pipe at EOF). When nil, Process.Stdin is a pipe the caller
	// writes to.
	Stdin io.Reader
	// Stdout, when set, receives the child's stdout. When nil, Process.Stdout
	// is a pipe the caller reads.
	Stdout io.Writer

	// StderrKeep is how many bytes of the start of stderr Process.Stderr
	// keeps; 0 keeps none.
	StderrKeep int
	// OnStderrLine, when set, is called for each stderr line (without its
	// "\n" or "\r\n"), cut to MaxStderrLine bytes with "…" appended when
	// longer. Calls come from one goroutine, in order.
	OnStderrLine func(line string)
	// MaxStderrLine bounds a line for OnStderrLine, in bytes; default
	// DefaultMaxStderrLine.
	MaxStderrLine int

	// Limits are resource limits the OS applies from outside the child
	// (Windows: the child's Job Object). On Unix they are ignored: a Unix
	// child sets its own rlimits (see package sandbox).
	Limits Limits
}

// Limits are applied by the parent to the child's job (Windows only).
type Limits struct {
	// MemoryBytes caps the committed memory of each process in the job, in
	// bytes (JOB_OBJECT_LIMIT_PROCESS_MEMORY); 0 = none.
	MemoryBytes int64
	// CPUSeconds caps the user-mode CPU time of each process in the job, in
	// seconds (JOB_OBJECT_LIMIT_PROCESS_TIME); 0 = none.
	CPUSeconds int
	// Processes caps the processes alive in the job at once
	// (JOB_OBJECT_LIMIT_ACTIVE_PROCESS); 0 = none. 1 forbids child processes.
	Processes int
}

// Process is a started child. Its methods are safe for concurrent use.
type Process struct {
	cmd   *exec.Cmd
	pid   int
	stdin *onceCloser // nil when Spec.Stdin was set
	out   *os.File    // nil when Spec.Stdout was set

	done       chan struct{} // closed after reap, tree kill and stderr drain
	stderrDone chan struct{}
	err        error            // cmd.Wait's error; set before done closes
	state      *os.ProcessState // set before done closes

	keepMu sync.Mutex
	keep   []byte
	keepN  int

	killMu   sync.Mutex
	released bool // the tree handle is gone (group reaped / job closed)
	sys      sysProc
	// asked records what the proxy itself did to end the child (KillFor,
	// StopFor), so that ExitReason can say the proxy ended it, and why,
	// instead of what the OS reports (on Windows a terminated job reads
	// as an exit status). Guarded by killMu.
	asked asked
}

// asked is what the proxy asked of a child: a stop request (Unix SIGTERM)
// and/or a kill, and why (the caller's words, "" when not given).
type asked struct {
	term, kill bool
	why        string
}

// Start starts the child described by s in its own process group (Unix) or
// Job Object (Windows). It returns os/exec's error unchanged when the program
// cannot be started (e.g. `exec: "x": executable file not found in $PATH`),
// or an error naming the step that failed (pipes, job object). The child is
// reaped by a goroutine of this package; Done tells when.
func Start(s Spec) (*Process, error) {
	cmd := exec.Command(s.Path, s.Args...)
	cmd.Env = s.Env
	cmd.Dir = s.Dir
	cmd.SysProcAttr = sysProcAttr()
	cmd.WaitDelay = waitDelay

	var parentEnds, childEnds []*os.File
	closeAll := func() {
		for _, f := range append(parentEnds, childEnds...) {
			_ = f.Close()
		}
	}
	p := &Process{cmd: cmd, done: make(chan struct{}), stderrDone: make(chan struct{}), keepN: s.StderrKeep}
	if s.Stdin != nil {
		cmd.Stdin = s.Stdin
	} else {
		r, w, err := os.Pipe()
		if err != nil {
			return nil, fmt.Errorf("creating the stdin pipe: %w", err)
		}
		parentEnds, childEnds = append(parentEnds, w), append(childEnds, r)
		cmd.Stdin = r
		p.stdin = &onceCloser{f: w}
	}
	if s.Stdout != nil {
		cmd.Stdout = s.Stdout
	} else {
		r, w, err := os.Pipe()
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("creating the stdout pipe: %w", err)
		}
		parentEnds, childEnds = append(parentEnds, r), append(childEnds, w)
		cmd.Stdout = w
		p.out = r
	}
	var errR *os.File
	if s.StderrKeep > 0 || s.OnStderrLine != nil {
		r, w, err := os.Pipe()
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("creating the stderr pipe: %w", err)
		}
		parentEnds, childEnds = append(parentEnds, r), append(childEnds, w)
		cmd.Stderr = w
		errR = r
	}
	if err := startCmd(cmd); err != nil {
		closeAll()
		return nil, err
	}
	// The child holds its own copies; ours must go so EOF propagates.
	for _, f := range childEnds {
		_ = f.Close()
	}
	p.pid = cmd.Process.Pid
	if err := p.sys.afterStart(p.pid, s.Limits); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		p.sys.release()
		for _, f := range parentEnds {
			_ = f.Close()
		}
		return nil, err
	}
	if errR != nil {
		maxLine := s.MaxStderrLine
		if maxLine <= 0 {
			maxLine = DefaultMaxStderrLine
		}
		go p.readStderr(errR, s.OnStderrLine, maxLine)
	} else {
		close(p.stderrDone)
	}
	go p.wait()
	return p, nil
}

// Pid is the child's process id.
func (p *Process) Pid() int { return p.pid }

// Stdin is the write end of the child's stdin pipe (nil when Spec.Stdin was
// set). Close is idempotent; closing it is the first step of Stop.
func (p *Process) Stdin() io.WriteCloser {
	if p.stdin == nil {
		return nil
	}
	return p.stdin
}

// Stdout is the read end of the child's stdout pipe (nil when Spec.Stdout
// was set). The caller closes it when done reading.
func (p *Process) Stdout() *os.File { return p.out }

// Done is closed once the child was reaped, the rest of its group or job
// killed, and its stderr read to the end (at most 250 ms after the reap).
func (p *Process) Done() <-chan struct{} { return p.done }

// Err is os/exec's Wait error (nil for exit status 0, *exec.ExitError
// otherwise); valid after Done.
func (p *Process) Err() error { <-p.done; return p.err }

// State is the reaped child's state; valid after Done (nil if the wait
// itself failed).
func (p *Process) State() *os.ProcessState { <-p.done; return p.state }

// Stderr returns the kept start of stderr (Spec.StderrKeep bytes at most).
func (p *Process) Stderr() string {
	p.keepMu.Lock()
	defer p.keepMu.Unlock()
	return string(p.keep)
}

// ExitReason describes how the child ended: "exited with status 1",
// "killed by signal 9 (killed)"; when the proxy ended it (KillFor,
// StopFor) "killed by the proxy (WHY): signal 9 (killed)" (Windows: "job
// terminated, exit code 137"), or "stopped by the proxy (WHY): signal 15
// (terminated)" after a stop request. Blocks until Done.
func (p *Process) ExitReason() string {
	<-p.done
	if r, ok := p.endedByProxy(); ok {
		return r
	}
	return DescribeExit(p.state, p.err)
}

// KilledByProxy reports whether the proxy ended the child (KillFor,
// StopFor, Kill) and, if so, how it reads (as ExitReason); valid after
// Done.
func (p *Process) KilledByProxy() (string, bool) {
	<-p.done
	return p.endedByProxy()
}

// endedByProxy is KilledByProxy once done is closed. A child that exited
// on its own before the proxy's signal or kill took effect reads as its
// own exit (endedBy checks the OS's exit state matches what was sent).
func (p *Process) endedByProxy() (string, bool) {
	p.killMu.Lock()
	a := p.asked
	p.killMu.Unlock()
	if p.state == nil || !a.term && !a.kill {
		return "", false
	}
	verb, how, ok := endedBy(p.state, a)
	if !ok {
		return "", false
	}
	if a.why != "" {
		return fmt.Sprintf("%s by the proxy (%s): %s", verb, a.why, how), true
	}
	return fmt.Sprintf("%s by the proxy: %s", verb, how), true
}

// DescribeExit describes a reaped process's state: "exited with status N",
// "killed by signal N (name)", or "wait: <err>" when there is no state.
func DescribeExit(ps *os.ProcessState, err error) string {
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

// Signaled reports whether the reaped child was ended by a signal, and which
// (always false on Windows); valid after Done.
func (p *Process) Signaled() (bool, string) {
	<-p.done
	if p.state == nil {
		return false, ""
	}
	if ws, ok := p.state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return true, ws.Signal().String()
	}
	return false, ""
}

// Kill is KillFor with no reason given.
func (p *Process) Kill() { p.KillFor("") }

// KillFor kills the child's whole process group (Unix, SIGKILL) or job
// (Windows) now, recording why (e.g. "the run timed out after 1000 ms")
// for ExitReason: "killed by the proxy (WHY): …". The first kill's reason
// is kept. It does not wait; Done does. After Done it does nothing.
func (p *Process) KillFor(why string) {
	p.killMu.Lock()
	defer p.killMu.Unlock()
	if !p.released {
		if !p.asked.kill && why != "" { // the first kill's reason, over a stop request's
			p.asked.why = why
		}
		p.asked.kill = true
		p.sys.kill(p.pid)
	}
}

// terminate asks the whole group to stop (Unix SIGTERM), recording why.
// It reports false where there is no such request (Windows) or it failed.
func (p *Process) terminate(why string) bool {
	p.killMu.Lock()
	defer p.killMu.Unlock()
	if p.released {
		return true
	}
	ok := p.sys.terminate(p.pid)
	if ok {
		p.asked.term = true
		if p.asked.why == "" {
			p.asked.why = why
		}
	}
	return ok
}

// StopStep says which step of Stop ended the child.
type StopStep int

const (
	// StoppedByEOF: the child exited after its stdin was closed (or had
	// exited already).
	StoppedByEOF StopStep = iota
	// StoppedByTerm: the child exited after SIGTERM to its group.
	StoppedByTerm
	// StoppedByKill: the group or job was killed.
	StoppedByKill
)

// Stop is StopFor with no reason given.
func (p *Process) Stop(grace time.Duration) StopStep { return p.StopFor(grace, "") }

// StopFor ends the child gracefully and waits until Done: close stdin,
// wait up to grace; SIGTERM the whole group (Unix; Windows has no such
// request and goes on), wait up to grace; kill the whole group or job and
// wait for the reap. why (e.g. "the proxy is shutting down") is recorded
// for ExitReason when a signal or the kill ended the child, with the steps
// it outlived. It reports the step that ended the child.
func (p *Process) StopFor(grace time.Duration, why string) StopStep {
	if p.stdin != nil {
		_ = p.stdin.Close()
	}
	if p.waitDone(grace) {
		return StoppedByEOF
	}
	if why != "" {
		why += "; "
	}
	if p.terminate(why+"still running "+grace.String()+" after its stdin was closed") && p.waitDone(grace) {
		return StoppedByTerm
	}
	p.KillFor(why + "still running " + grace.String() + " after its stdin was closed" + termNote(grace))
	<-p.done
	return StoppedByKill
}

func (p *Process) waitDone(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.done:
		return true
	case <-t.C:
		return false
	}
}

// wait is the only reaper of the child: it waits until the child exited
// (without reaping it where the OS allows), kills the rest of its group or
// job, reaps it, releases the OS handles and waits (bounded) for stderr.
func (p *Process) wait() {
	zombie := p.sys.awaitExit(p.pid)
	if zombie {
		// The leader's pid still names its group; what is left of it is
		// cleared, not a kill of the child (which already exited).
		p.killMu.Lock()
		p.sys.kill(p.pid)
		p.killMu.Unlock()
	}
	err := p.cmd.Wait()
	p.killMu.Lock()
	if !zombie {
		// No wait-without-reaping here: kill what is left of the group
		// now, a small pid-reuse window this OS leaves us.
		p.sys.kill(p.pid)
	}
	p.released = true
	p.sys.release()
	p.killMu.Unlock()
	t := time.NewTimer(stderrDrain)
	select {
	case <-p.stderrDone:
	case <-t.C:
	}
	t.Stop()
	p.err, p.state = err, p.cmd.ProcessState
	if p.stdin != nil {
		_ = p.stdin.Close()
	}
	close(p.done)
}

// readStderr reads stderr to its end: the first StderrKeep bytes are kept,
// each line (bounded to maxLine bytes) goes to onLine.
func (p *Process) readStderr(f *os.File, onLine func(string), maxLine int) {
	defer close(p.stderrDone)
	defer f.Close()
	r := bufio.NewReaderSize(f, max(maxLine, 512))
	var line []byte
	truncated := false
	for {
		chunk, err := r.ReadSlice('\n')
		p.keepBytes(chunk)
		if onLine != nil {
			if room := maxLine - len(line); room > 0 {
				if len(chunk) > room {
					line = append(line, chunk[:room]...)
					truncated = true
				} else {
					line = append(line, chunk...)
				}
			} else if len(chunk) > 0 {
				truncated = true
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if onLine != nil && (len(line) > 0 || truncated) {
			s := string(trimEOL(line))
			if truncated {
				s += "…"
			}
			onLine(s)
		}
		line, truncated = line[:0], false
		if err != nil {
			return
		}
	}
}

func (p *Process) keepBytes(b []byte) {
	if p.keepN <= 0 || len(b) == 0 {
		return
	}
	p.keepMu.Lock()
	defer p.keepMu.Unlock()
	if room := p.keepN - len(p.keep); room > 0 {
		p.keep = append(p.keep, b[:min(room, len(b))]...)
	}
}

func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}

// onceCloser closes f once; further Closes return the first result.
type onceCloser struct {
	f    *os.File
	once sync.Once
	err  error
}

func (o *onceCloser) Write(b []byte) (int, error) { return o.f.Write(b) }
func (o *onceCloser) Close() error {
	o.once.Do(func() { o.err = o.f.Close() })
	return o.err
}
