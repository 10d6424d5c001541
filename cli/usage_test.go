package cli

import (
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestUsageNamesEveryFlag: the top-level usage named only
// some flags of each command (`describe`/`search`/`call --client`,
// `list --json`, `bench surface --tools/--limit/--trusted` were missing).
// For every command, built-in and registered (extraCommands), this runs
// `COMMAND --help`, reads the flags its flag set prints, and checks that
// each one is on the command's own lines of the usage (--log-level and
// --mode: the command is in the list of commands that take them), so a
// flag added later without its usage fails here.
func TestUsageNamesEveryFlag(t *testing.T) {
	commands := []string{"serve", "list", "describe", "call", "search", "check"}
	for name := range extraCommands {
		commands = append(commands, name)
	}
	sort.Strings(commands)
	sub := map[string][]string{"bench": {"search", "surface"}, "audit": {"verify"}}
	m := regexp.MustCompile(`(?s)On every command that reads a config\s*\(([^)]*)\)`).FindStringSubmatch(usage)
	readsConfig := map[string]bool{}
	if m == nil {
		t.Error("the usage lacks the list of commands that take --log-level and --mode")
	} else {
		for _, c := range strings.Split(m[1], ",") {
			readsConfig[strings.Join(strings.Fields(c), " ")] = true
		}
	}
	flagLine := regexp.MustCompile(`(?m)^  -(\S+)`)
	for _, name := range commands {
		if name == "sandbox-worker" {
			continue // a hidden role, not a command
		}
		full := []string{name}
		if s, ok := sub[name]; ok {
			full = nil
			for _, x := range s {
				full = append(full, name+" "+x)
			}
		}
		for _, cmd := range full {
			// The command's own lines of the usage.
			var lines []string
			for _, l := range strings.Split(usage, "\n") {
				if strings.HasPrefix(l, "  mcp-toolsearch "+cmd+" ") || l == "  mcp-toolsearch "+cmd || (cmd == "serve" && strings.HasPrefix(l, "  mcp-toolsearch [serve]")) {
					lines = append(lines, l)
				}
			}
			if len(lines) == 0 {
				t.Errorf("the usage has no line for %q", cmd)
				continue
			}
			own := strings.Join(lines, "\n") + "\n"
			_, out, errs := run(append(strings.Fields(cmd), "--help")...)
			help := out + errs
			found := flagLine.FindAllStringSubmatch(help, -1)
			for _, f := range found {
				flag := f[1]
				switch {
				case flag == "log-level" || flag == "mode":
					if !readsConfig[cmd] {
						t.Errorf("%s takes --%s but is not in the usage's list of commands that read a config", cmd, flag)
					}
				default:
					if !regexp.MustCompile(`[\s\[]--?` + regexp.QuoteMeta(flag) + `[ =\]\n]`).MatchString(own) {
						t.Errorf("usage of %s lacks --%s:\n%s", cmd, flag, own)
					}
				}
			}
			if readsConfig[cmd] && !strings.Contains(help, "  -log-level") {
				t.Errorf("the usage lists %s among the commands that read a config, but it has no --log-level", cmd)
			}
		}
	}
}
