//go:build unix

package integration

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The process helpers below work on a snapshot of the process table. Each
// OS gives it its own way: procs_linux_test.go reads /proc, which tells
// argv elements apart and costs no process start; procs_other_test.go
// (macOS and the BSDs) runs ps(1). The ps(1) side (psTable, below) is built
// on every Unix so that Linux CI checks it against /proc
// (TestProcessTableViaPS), and MCPTS_ITEST_PROCS=ps makes Linux use it
// throughout.

// procInfo is one process-table row.
type procInfo struct {
	pid, ppid, pgid int
	// state is the first letter of the process state: R, S, D, T, Z, ...
	// (Linux /proc and ps(1) agree on Z for a zombie, T for a stopped one).
	state byte
	// args is the command line. From /proc it is argv, one element each;
	// from ps(1) it is one element, argv joined with spaces. Empty for a
	// zombie.
	args []string
}

// procStat returns the state letter and parent pid of pid; ok is false
// when the process does not exist.
func procStat(pid int) (state byte, ppid int, ok bool) {
	p, ok := procLookup(pid)
	return p.state, p.ppid, ok
}

// procGroup returns the process group of pid, or -1 when it does not exist.
func procGroup(pid int) int {
	if p, ok := procLookup(pid); ok {
		return p.pgid
	}
	return -1
}

// procArgs returns pid's command line, argv joined with spaces ("" when
// the process does not exist or is a zombie).
func procArgs(pid int) string {
	p, _ := procLookup(pid)
	return strings.Join(p.args, " ")
}

// childPIDs returns every live descendant of pid (children, grandchildren,
// ...; zombies included, since they are not yet reaped), from one snapshot
// of the process table, in no particular order.
func childPIDs(pid int) []int {
	kids := map[int][]int{}
	for _, p := range procTable() {
		kids[p.ppid] = append(kids[p.ppid], p.pid)
	}
	var out []int
	queue := []int{pid}
	seen := map[int]bool{pid: true}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range kids[p] {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
				queue = append(queue, c)
			}
		}
	}
	return out
}

// processesWithArg returns the pids (other than this test process and
// zombies) whose command line has an argument containing substr, sorted.
// Zombies never match: use childPIDs and procStat to find them.
func processesWithArg(substr string) []int {
	self := os.Getpid()
	var out []int
	for _, p := range procTable() {
		if p.pid == self || p.state == 'Z' {
			continue
		}
		for _, a := range p.args {
			if strings.Contains(a, substr) {
				out = append(out, p.pid)
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

// liveInGroups lists the live (not zombie) processes whose group is one of
// groups.
func liveInGroups(groups map[int]bool) []int {
	var out []int
	for _, p := range procTable() {
		if groups[p.pgid] && p.state != 'Z' {
			out = append(out, p.pid)
		}
	}
	return out
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	st, _, ok := procStat(pid)
	return ok && st != 'Z'
}

// waitGone polls until none of pids is alive (zombies count as gone) or
// the fail-safe bound within passes; it returns the pids still alive.
func waitGone(pids []int, within time.Duration) []int {
	deadline := time.Now().Add(within)
	for {
		var left []int
		for _, p := range pids {
			if alive(p) {
				left = append(left, p)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// describeProcs renders pids with their state and command line, for failure
// messages.
func describeProcs(pids []int) string {
	var sb strings.Builder
	for _, pid := range pids {
		p, _ := procLookup(pid)
		fmt.Fprintf(&sb, "  pid %d ppid %d pgid %d state %c: %s\n", pid, p.ppid, p.pgid, p.state, strings.Join(p.args, " "))
	}
	return sb.String()
}

// psColumns are the ps(1) columns psTable asks for; POSIX ps on Linux
// (procps), macOS and the BSDs all know these names, and "=" drops the
// header line.
var psColumns = []string{"-o", "pid=", "-o", "ppid=", "-o", "pgid=", "-o", "stat=", "-o", "command="}

// psTable runs ps(1) with extra (e.g. "-A", or "-p", "PID") and parses its
// rows. The error names the ps failure; a -p for a pid that does not exist
// gives no rows and no error.
func psTable(extra ...string) ([]procInfo, error) {
	cmd := exec.Command("ps", append(extra, psColumns...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil && len(out) == 0 {
		// ps -p PID exits 1 without rows when PID does not exist.
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 && stderr.Len() == 0 {
			return nil, nil
		}
		return nil, fmt.Errorf("ps %s: %v: %s", strings.Join(extra, " "), err, strings.TrimSpace(stderr.String()))
	}
	var rows []procInfo
	for _, line := range strings.Split(string(out), "\n") {
		if p, ok := parsePSLine(line); ok {
			rows = append(rows, p)
		}
	}
	return rows, nil
}

// psLookup asks ps(1) about one pid; ok is false when it does not exist.
func psLookup(pid int) (procInfo, bool) {
	rows, err := psTable("-p", strconv.Itoa(pid))
	if err != nil || len(rows) == 0 {
		return procInfo{}, false
	}
	return rows[0], true
}

// psAll lists every process (ps -A); it panics when ps fails, since every
// process helper would then answer wrongly.
func psAll() []procInfo {
	rows, err := psTable("-A")
	if err != nil {
		panic(err)
	}
	return rows
}

// parsePSLine parses "PID PPID PGID STAT COMMAND..." (columns separated by
// blanks; COMMAND may hold blanks of its own).
func parsePSLine(line string) (procInfo, bool) {
	var p procInfo
	rest := line
	nums := []*int{&p.pid, &p.ppid, &p.pgid}
	for i := 0; i < 4; i++ {
		rest = strings.TrimLeft(rest, " \t")
		end := strings.IndexAny(rest, " \t")
		if end < 0 {
			end = len(rest)
		}
		field := rest[:end]
		rest = rest[end:]
		if field == "" {
			return procInfo{}, false
		}
		if i < 3 {
			n, err := strconv.Atoi(field)
			if err != nil {
				return procInfo{}, false
			}
			*nums[i] = n
		} else {
			p.state = field[0]
		}
	}
	if cmd := strings.TrimSpace(rest); cmd != "" && p.state != 'Z' {
		p.args = []string{cmd}
	}
	return p, true
}
