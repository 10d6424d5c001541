//go:build windows

package upstream

import (
	"io/fs"
	"path/filepath"
	"strings"
)

// minimalEnv are the variables (upper case) a Windows child keeps from the
// proxy's environment by default: what Windows programs and the runtimes
// on it need to start (system folders, the user's profile folders, the
// temporary folder, PATHEXT for command lookup).
var minimalEnv = map[string]bool{
	"PATH": true, "PATHEXT": true, "SYSTEMROOT": true, "SYSTEMDRIVE": true, "WINDIR": true,
	"COMSPEC": true, "TEMP": true, "TMP": true, "USERPROFILE": true, "USERNAME": true,
	"USERDOMAIN": true, "HOMEDRIVE": true, "HOMEPATH": true, "APPDATA": true, "LOCALAPPDATA": true,
	"PROGRAMDATA": true, "PROGRAMFILES": true, "PROGRAMFILES(X86)": true, "PROGRAMW6432": true,
	"COMMONPROGRAMFILES": true, "COMMONPROGRAMFILES(X86)": true, "NUMBER_OF_PROCESSORS": true,
	"PROCESSOR_ARCHITECTURE": true, "OS": true, "TZ": true, "LANG": true,
}

func keepEnv(name string) bool { return minimalEnv[strings.ToUpper(name)] }

// envKey is the comparison form of a variable name: Windows names are
// case-insensitive ("Path" is "PATH").
func envKey(name string) string { return strings.ToUpper(name) }

func executableMode(fs.FileMode) bool { return true }

// lookPath finds file in the directories of path (";"-separated), trying
// each extension of env's PATHEXT when file has none of them (as cmd.exe
// and os/exec do), "" when none has it.
func lookPath(file, path string, env []string) string {
	exts := []string{".com", ".exe", ".bat", ".cmd"}
	if pe, ok := envLookup(env, "PATHEXT"); ok && pe != "" {
		exts = nil
		for _, e := range strings.Split(strings.ToLower(pe), ";") {
			if e != "" {
				if e[0] != '.' {
					e = "." + e
				}
				exts = append(exts, e)
			}
		}
	}
	hasExt := false
	for _, e := range exts {
		if strings.HasSuffix(strings.ToLower(file), e) {
			hasExt = true
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		if hasExt {
			if p := filepath.Join(dir, file); isExecutable(p) {
				return p
			}
			continue
		}
		for _, e := range exts {
			if p := filepath.Join(dir, file+e); isExecutable(p) {
				return p
			}
		}
	}
	return ""
}
