//go:build unix

package integration

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Linux: the process table is read from /proc, or with
// MCPTS_ITEST_PROCS=ps from ps(1) as on macOS (to run the kill and restart
// tests the way they run there).
var procsViaPS = os.Getenv("MCPTS_ITEST_PROCS") == "ps"

// procLookup reads /proc/PID/stat and /proc/PID/cmdline; ok is false when
// the process does not exist.
func procLookup(pid int) (procInfo, bool) {
	if procsViaPS {
		return psLookup(pid)
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procInfo{}, false
	}
	// Format: pid (comm) state ppid pgrp ...; comm may contain spaces and ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procInfo{}, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 3 {
		return procInfo{}, false
	}
	p := procInfo{pid: pid, state: f[0][0]}
	p.ppid, _ = strconv.Atoi(f[1])
	p.pgid, _ = strconv.Atoi(f[2])
	if cl, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline"); err == nil && len(cl) > 0 {
		for _, a := range bytes.Split(bytes.TrimRight(cl, "\x00"), []byte{0}) {
			p.args = append(p.args, string(a))
		}
	}
	return p, true
}

// procTable lists every process from the numeric entries of /proc.
func procTable() []procInfo {
	if procsViaPS {
		return psAll()
	}
	ents, _ := os.ReadDir("/proc")
	var out []procInfo
	for _, e := range ents {
		if n, err := strconv.Atoi(e.Name()); err == nil {
			if p, ok := procLookup(n); ok {
				out = append(out, p)
			}
		}
	}
	return out
}

// procEnviron returns pid's initial environment, NUL-separated, from
// /proc/PID/environ.
func procEnviron(pid int) ([]byte, error) {
	return os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
}

// rssKB returns pid's resident set size in KiB (VmRSS), 0 when unknown.
func rssKB(pid int) int {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return n
		}
	}
	return 0
}

// peakRSSKB returns pid's peak resident set size in KiB (VmHWM), 0 when
// unknown.
func peakRSSKB(pid int) int {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return n
		}
	}
	return 0
}

// fdCount returns the number of pid's open file descriptors.
func fdCount(pid int) int {
	es, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	return len(es)
}
