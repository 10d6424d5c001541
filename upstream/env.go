package upstream

// The environment of a stdio upstream.
//
// By default a child gets a minimal environment: the variables a program
// needs to run at all (search path, home and user, locale, time zone,
// temporary folder; on Windows the system folders and PATHEXT; the lists
// are in env_unix.go and env_windows.go), copied from the proxy's own
// environment, plus its own `env` table (which wins). Nothing else of the
// proxy's environment reaches it: not the tokens the proxy was started
// with, not another upstream's `env`. `inherit_env = true` on an upstream
// gives it the proxy's whole environment plus its `env`.
//
// The command is looked up in the CHILD's PATH (its `env.PATH` when set),
// so a program found only there starts.
//
// Guards against: upstream servers (untrusted) reading secrets meant for
// other upstreams or for the proxy (server-everything's get-env tool
// returns its whole environment to the model).

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/pathq"
)

// ConfigChainEnv names the variable that holds the absolute paths of the
// config files of the proxies a process runs under (os.PathListSeparator
// between them): every child gets it from the proxy's environment, even a
// minimal one, so that `serve` can refuse a config that starts itself as
// an upstream (cli: a new level every fraction of a second otherwise).
const ConfigChainEnv = "MCP_TOOLSEARCH_CONFIG_CHAIN"

// childEnv returns the environment of u's child ("KEY=value" entries,
// sorted by key): from base (the proxy's environment, os.Environ() form),
// only the minimal variables (keepEnv) unless u.InheritEnv, then u.Env on
// top. Keys compare as the OS does (case-insensitively on Windows).
func childEnv(u *config.Upstream, base []string) []string {
	vals := map[string]string{} // envKey(name) -> "NAME=value"
	for _, kv := range base {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue
		}
		if u.InheritEnv || keepEnv(k) || envKey(k) == envKey(ConfigChainEnv) {
			vals[envKey(k)] = kv
		}
	}
	for k, v := range u.Env {
		vals[envKey(k)] = k + "=" + v
	}
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = vals[k]
	}
	return out
}

// mapEnv renders m in os.Environ() form.
func mapEnv(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	return out
}

// envLookup returns the value of name in env (os.Environ() form).
func envLookup(env []string, name string) (string, bool) {
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && envKey(k) == envKey(name) {
			return v, true
		}
	}
	return "", false
}

// resolveCommand returns the program to start for command in a child with
// environment env: a command with a path separator as it is (config made
// relative ones absolute); a plain name looked up in env's PATH (and, on
// Windows, with env's PATHEXT). ownPath says env's PATH is the upstream's
// own env.PATH. The error reads like os/exec's,
// `exec: "nosuch": executable file not found in $PATH`, plus
// ` (the upstream's env.PATH)` when that is the PATH searched.
func resolveCommand(command string, env []string, ownPath bool) (string, error) {
	if strings.ContainsRune(command, '/') || strings.ContainsRune(command, filepath.Separator) {
		return command, nil
	}
	path, _ := envLookup(env, "PATH")
	if found := lookPath(command, path, env); found != "" {
		return found, nil
	}
	where := ""
	if ownPath {
		where = " (the upstream's env.PATH)"
	}
	return "", fmt.Errorf("exec: %s: %w in $PATH%s", pathq.Quote(command), errNotFound, where)
}

var errNotFound = errors.New("executable file not found")

// isExecutable reports whether path is a regular file this process could
// run (Unix: any execute bit; Windows: it exists).
func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && executableMode(fi.Mode())
}
