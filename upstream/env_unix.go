//go:build !windows

package upstream

import (
	"io/fs"
	"path/filepath"
	"strings"
)

// minimalEnv are the variables a Unix child keeps from the proxy's
// environment by default (POSIX "Environment Variables" and what common
// runtimes such as Node, Python and Go read to start).
var minimalEnv = map[string]bool{
	"PATH": true, "HOME": true, "USER": true, "LOGNAME": true, "SHELL": true,
	"LANG": true, "LANGUAGE": true, "TZ": true, "TERM": true, "TMPDIR": true,
	"XDG_RUNTIME_DIR": true,
}

// keepEnv reports whether variable name passes into a child by default:
// minimalEnv and the locale (LC_*).
func keepEnv(name string) bool {
	return minimalEnv[name] || strings.HasPrefix(name, "LC_")
}

// envKey is the comparison form of a variable name: Unix names are
// case-sensitive.
func envKey(name string) string { return name }

func executableMode(m fs.FileMode) bool { return m&0o111 != 0 }

// lookPath finds file in the directories of path (":"-separated; an empty
// entry is the current directory, as POSIX execvp does), "" when none has it.
func lookPath(file, path string, _ []string) string {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		if p := filepath.Join(dir, file); isExecutable(p) {
			return p
		}
	}
	return ""
}
