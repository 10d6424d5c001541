package clientconfig

import (
	"fmt"
	"regexp"
	"strings"
)

// TOML renders the result as an mcp-toolsearch config file: a header naming
// the source, the variables to set and the entries not imported, a
// [tool_search] table (code mode), and one [upstreams.NAME] table per
// server with its notes as comments. No secret value appears in it.
func (r *Result) TOML() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# mcp-toolsearch config imported from %s (%s) by `mcp-toolsearch import`.\n", r.Path, r.Format)
	b.WriteString("# Check it with `mcp-toolsearch check --config FILE` (starts every upstream once).\n")
	b.WriteString("# All keys: docs/config.md and examples/config.reference.toml.\n")
	if len(r.Vars) > 0 {
		b.WriteString("#\n# Set these environment variables before starting (a missing one is an error):\n")
		for _, v := range r.Vars {
			fmt.Fprintf(&b, "#   %-32s %s: %s\n", v.Name, v.Where, v.Why)
		}
	}
	if len(r.Skipped) > 0 {
		b.WriteString("#\n# NOT IMPORTED (add them by hand if you need them):\n")
		for _, s := range r.Skipped {
			fmt.Fprintf(&b, "#   %q: %s\n#     %s\n", s.Name, s.Reason, clip(s.JSON, 400))
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "# note: %s\n", n)
	}
	b.WriteString(`
[tool_search]
# The compact surface: the model sees one tool (tool_search_code) and finds the
# upstream tools by search. "tools" gives tool_search / tool_describe / tool_call;
# enabled = false exposes every upstream tool directly (a plain aggregating proxy).
enabled = true
mode = "code"
# A tool_search_code run (and every call it makes) ends after this many ms (1000..60000;
# default 10000). 55000 lets a tool take as long as an upstream's default call_timeout (55 s),
# and both end before the 60 s after which TypeScript SDK clients give up on a request.
code_timeout_ms = 55000
`)
	for _, s := range r.Servers {
		fmt.Fprintf(&b, "\n# %s server %q\n", r.Format, s.Original)
		for _, n := range s.Notes {
			fmt.Fprintf(&b, "# note: %s\n", n)
		}
		fmt.Fprintf(&b, "[upstreams.%s]\n", tomlKey(s.Name))
		if s.Command != "" {
			fmt.Fprintf(&b, "command = %s\n", tomlString(s.Command))
			if len(s.Args) > 0 {
				q := make([]string, len(s.Args))
				for i, a := range s.Args {
					q[i] = tomlString(a)
				}
				fmt.Fprintf(&b, "args = [%s]\n", strings.Join(q, ", "))
			}
			if len(s.Env) > 0 {
				fmt.Fprintf(&b, "env = %s\n", inlineTable(s.Env))
			}
			if s.Cwd != "" {
				fmt.Fprintf(&b, "cwd = %s\n", tomlString(s.Cwd))
			}
			if s.StartupTimeout != "" {
				fmt.Fprintf(&b, "# %s downloads the server on its first start, which can take longer than the\n"+
					"# default 30 s; a start stopped halfway can leave its cache broken.\n", clip(s.Command, 40))
				fmt.Fprintf(&b, "startup_timeout = %s\n", tomlString(s.StartupTimeout))
			}
		} else {
			fmt.Fprintf(&b, "url = %s\n", tomlString(s.URL))
			if s.Transport != "" {
				fmt.Fprintf(&b, "transport = %s\n", tomlString(s.Transport))
			}
			if len(s.Headers) > 0 {
				fmt.Fprintf(&b, "headers = %s\n", inlineTable(s.Headers))
			}
		}
		if s.Disabled {
			b.WriteString("enabled = false # disabled in the client\n")
		}
	}
	return []byte(b.String())
}

// Summary is a short report for the terminal: what was imported, what was
// not, and which variables to set.
func (r *Result) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "imported %d server%s from %s (%s)\n", len(r.Servers), plural(len(r.Servers)), r.Path, r.Format)
	for _, s := range r.Skipped {
		fmt.Fprintf(&b, "NOT imported: %q: %s\n", s.Name, s.Reason)
	}
	seen := map[string]bool{}
	var names []string
	for _, v := range r.Vars {
		if !seen[v.Name] {
			seen[v.Name] = true
			names = append(names, v.Name)
		}
	}
	if len(names) > 0 {
		fmt.Fprintf(&b, "set these environment variables before starting: %s (see the header of the config)\n", strings.Join(names, " "))
	}
	n := 0
	for _, s := range r.Servers {
		n += len(s.Notes)
	}
	if n > 0 {
		fmt.Fprintf(&b, "%d note%s in the config (# note: lines)\n", n, plural(n))
	}
	return b.String()
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

var bareKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

func tomlKey(k string) string {
	if bareKey.MatchString(k) {
		return k
	}
	return tomlString(k)
}

func inlineTable(kv [][2]string) string {
	parts := make([]string, len(kv))
	for i, p := range kv {
		parts[i] = tomlKey(p[0]) + " = " + tomlString(p[1])
	}
	return "{ " + strings.Join(parts, ", ") + " }"
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
