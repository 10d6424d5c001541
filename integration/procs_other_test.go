//go:build unix && !linux

package integration

import (
	"errors"
	"os/exec"
	"strconv"
	"strings"
)

// macOS and the BSDs have no /proc (or one without these files): the
// process table comes from ps(1), whose columns psTable names.

func procLookup(pid int) (procInfo, bool) { return psLookup(pid) }

func procTable() []procInfo { return psAll() }

// errNoEnviron: another process's environment is not readable here (macOS
// shows it only with ps -E and only in part).
var errNoEnviron = errors.New("another process's environment is readable only from /proc (Linux)")

// procEnviron always fails with errNoEnviron outside Linux.
func procEnviron(pid int) ([]byte, error) { return nil, errNoEnviron }

// rssKB returns pid's resident set size in KiB (ps -o rss=), 0 when unknown.
func rssKB(pid int) int {
	out, _ := exec.Command("ps", "-o", "rss=", "-p", strconv.Itoa(pid)).Output()
	n, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	return n
}

// peakRSSKB is 0 here: ps(1) shows no peak resident set size.
func peakRSSKB(pid int) int { return 0 }

// fdCount returns the number of pid's open file descriptors (lsof rows,
// header excluded), or -1 when lsof fails.
func fdCount(pid int) int {
	out, err := exec.Command("lsof", "-n", "-P", "-p", strconv.Itoa(pid)).Output()
	if err != nil {
		return -1
	}
	n := strings.Count(string(out), "\n")
	if n > 0 {
		n-- // header
	}
	return n
}
