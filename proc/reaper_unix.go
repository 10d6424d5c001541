//go:build unix

package proc

import (
	"bufio"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// ReaperArg is the argument that selects the reaper role of the binary:
// main runs os.Exit(proc.ReaperMain()) when os.Args[1:] is exactly
// [ReaperArg].
const ReaperArg = "proc-reaper"

// reaperWriteTimeout bounds one registration write to the reaper's stdin.
const reaperWriteTimeout = time.Second

// Why a reaper: Pdeathsig (Linux) kills only the direct child when the
// proxy dies, and macOS has no Pdeathsig at all; a grandchild (npx → node,
// `sh -c "server & …"`) is re-parented and lives on. A process cannot act
// after its own SIGKILL, so a second process must: the reaper, the same
// binary in its own process group, reads "+PGID" / "-PGID" lines on its
// stdin, a pipe only the proxy holds. When the proxy dies for any reason
// the kernel closes that pipe, the reaper reads EOF, sends SIGKILL to every
// group still registered and exits. Alternatives weighed: making the proxy a
// subreaper (PR_SET_CHILD_SUBREAPER) only helps while the proxy lives; a
// watchdog per child doubles the processes; cgroups need privileges.
// Limits: a process that leaves its group (setsid, setpgid) escapes, as it
// does every group kill; a group is registered just after its leader
// started, so a proxy killed within that window leaves it to Pdeathsig.
var reaper struct {
	mu      sync.Mutex
	enabled bool
	w       *os.File         // the reaper's stdin; nil when not running
	live    map[int]struct{} // groups registered, re-sent to a restarted reaper
	warned  bool
}

// EnableReaper makes Start register every child's process group with a
// reaper process, started on first use as os.Executable() ReaperArg, that
// kills the registered groups when this process dies (even by SIGKILL).
// Only a binary whose main dispatches ReaperArg to ReaperMain may call it.
// On Windows it does nothing (each child's Job Object dies with the proxy).
func EnableReaper() {
	reaper.mu.Lock()
	reaper.enabled = true
	reaper.mu.Unlock()
}

func reaperAdd(pgid int) {
	reaper.mu.Lock()
	defer reaper.mu.Unlock()
	if !reaper.enabled {
		return
	}
	if reaper.live == nil {
		reaper.live = map[int]struct{}{}
	}
	reaper.live[pgid] = struct{}{}
	if reaper.w == nil {
		startReaperLocked() // sends every live group, this one included
		return
	}
	reaperSendLocked("+" + strconv.Itoa(pgid))
}

func reaperRemove(pgid int) {
	reaper.mu.Lock()
	defer reaper.mu.Unlock()
	if _, ok := reaper.live[pgid]; !ok {
		return
	}
	delete(reaper.live, pgid)
	if reaper.w != nil {
		reaperSendLocked("-" + strconv.Itoa(pgid))
	}
}

// reaperSendLocked writes one line; a failure (the reaper died or hangs)
// drops this reaper, and the next registration starts a new one.
func reaperSendLocked(line string) {
	_ = reaper.w.SetWriteDeadline(time.Now().Add(reaperWriteTimeout))
	if _, err := reaper.w.Write([]byte(line + "\n")); err != nil {
		reaperWarnLocked("the process reaper stopped answering", err)
		_ = reaper.w.Close()
		reaper.w = nil
	}
}

func reaperWarnLocked(msg string, err error) {
	if !reaper.warned {
		reaper.warned = true
		slog.Warn(msg+"; child processes of a stdio upstream may outlive a killed proxy", "error", err)
	}
}

func startReaperLocked() {
	exe, err := os.Executable()
	if err != nil {
		reaperWarnLocked("cannot start the process reaper", err)
		return
	}
	r, w, err := os.Pipe()
	if err != nil {
		reaperWarnLocked("cannot start the process reaper", err)
		return
	}
	cmd := exec.Command(exe, ReaperArg)
	cmd.Env = []string{}
	cmd.Dir = "/"
	cmd.Stdin = r // stdout and stderr: /dev/null (stdout may be the MCP stream)
	// Its own group: a terminal's Ctrl+C or a kill of the proxy's group
	// must not take it down before it did its job.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	_ = r.Close()
	if err != nil {
		_ = w.Close()
		reaperWarnLocked("cannot start the process reaper", err)
		return
	}
	go func() { _ = cmd.Wait() }()
	reaper.w = w
	for pgid := range reaper.live {
		if reaper.w == nil {
			return
		}
		reaperSendLocked("+" + strconv.Itoa(pgid))
	}
}

// ReaperMain is the reaper role (see EnableReaper): it reads "+PGID" and
// "-PGID" lines from stdin until EOF, then sends SIGKILL to every group
// still registered. It ignores SIGINT, SIGTERM, SIGHUP and SIGQUIT (it ends
// when its parent does). Returns the exit code: 0, or 2 on a malformed line
// (after killing what it knew).
func ReaperMain() int {
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	groups := map[int]struct{}{}
	code := 0
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		line := sc.Text()
		n, err := strconv.Atoi(line[min(1, len(line)):])
		if err != nil || n <= 1 || (line[0] != '+' && line[0] != '-') {
			fmt.Fprintf(os.Stderr, "proc-reaper: bad line %q\n", line)
			code = 2
			break
		}
		if line[0] == '+' {
			groups[n] = struct{}{}
		} else {
			delete(groups, n)
		}
	}
	for pgid := range groups {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
	return code
}
