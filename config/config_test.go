package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// env returns a getenv func over a fixed map.
func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

// minimal is the smallest valid config; tests append to it.
const minimal = `
[upstreams.fs]
command = "node"
`

func mustParse(t *testing.T, src string, vars map[string]string) *Config {
	t.Helper()
	cfg, err := Parse([]byte(src), "config.toml", env(vars))
	if err != nil {
		t.Fatalf("Parse: unexpected error:\n%v\n--- input:\n%s", err, src)
	}
	return cfg
}

func mustFail(t *testing.T, src string, vars map[string]string) *Error {
	t.Helper()
	cfg, err := Parse([]byte(src), "config.toml", env(vars))
	if err == nil {
		t.Fatalf("Parse: expected an error, got config %+v\n--- input:\n%s", cfg, src)
	}
	if cfg != nil {
		t.Errorf("Parse returned a config together with an error")
	}
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("error is %T, want *config.Error: %v", err, err)
	}
	return ce
}

// hasProblem reports whether some problem has the line and contains want.
func hasProblem(e *Error, line int, want string) bool {
	for _, p := range e.Problems {
		if p.Line == line && strings.Contains(p.String(), want) {
			return true
		}
	}
	return false
}

func TestDefaults(t *testing.T) {
	cfg := mustParse(t, minimal+"[upstreams.web]\nurl = \"https://example.com/mcp\"\n", nil)
	s := cfg.Server
	if s.Transport != "stdio" || s.Listen != "127.0.0.1:8080" || s.NameSeparator != "__" || s.ShutdownGrace.Duration != 3*time.Second {
		t.Errorf("server defaults: %+v", s)
	}
	ts := cfg.ToolSearch
	if ts.Enabled || ts.Mode != "code" || ts.CodeTimeoutMS != 10000 || ts.MaxSearchLimit != 20 || ts.SearchDefaultLimit != 8 || ts.DirectoryMaxChars != 6000 {
		t.Errorf("tool_search defaults: %+v", ts)
	}
	if cfg.Tools.ApprovalTimeout.Duration != 60*time.Second {
		t.Errorf("approval_timeout = %v", cfg.Tools.ApprovalTimeout)
	}
	fs, web := cfg.Upstreams["fs"], cfg.Upstreams["web"]
	if fs.Name != "fs" || web.Name != "web" {
		t.Errorf("names: %q %q", fs.Name, web.Name)
	}
	for _, u := range []*Upstream{fs, web} {
		if u.StartupTimeout.Duration != 30*time.Second || u.CallTimeout.Duration != 55*time.Second || u.Session != "shared" || !u.IsEnabled() || u.PrefixOrName() != u.Name {
			t.Errorf("upstream %s defaults: %+v", u.Name, u)
		}
	}
	if fs.Transport != "stdio" || web.Transport != "streamable-http" {
		t.Errorf("transports: fs=%q web=%q", fs.Transport, web.Transport)
	}
	if fs.Command != "node" {
		t.Errorf("plain command name changed to %q", fs.Command)
	}
	if len(cfg.Warnings) != 0 {
		t.Errorf("unexpected warnings: %q", cfg.Warnings)
	}
}

func TestEnabledUpstreamsAndEndpointNames(t *testing.T) {
	cfg := mustParse(t, `
[upstreams.zeta]
command = "z"
[upstreams.alpha]
command = "a"
[upstreams.mid]
command = "m"
enabled = false
[endpoints.team]
path = "/team/mcp"
`, nil)
	var names []string
	for _, u := range cfg.EnabledUpstreams() {
		names = append(names, u.Name)
	}
	if !slices.Equal(names, []string{"alpha", "zeta"}) {
		t.Errorf("EnabledUpstreams = %v, want [alpha zeta]", names)
	}
	if cfg.Endpoints["team"].Name != "team" {
		t.Errorf("endpoint name = %q", cfg.Endpoints["team"].Name)
	}
}

func TestUnknownKeys(t *testing.T) {
	cases := []struct {
		name string
		src  string
		line int
		want string
	}{
		{"typo with suggestion", "[upstreams.fs]\ncommand = \"node\"\ncomand = \"x\"\n", 3,
			`config.toml:3: unknown key "upstreams.fs.comand" (did you mean "command"?)`},
		{"case differs", minimal + "[server]\nListen = \"1.2.3.4:5\"\n", 5, `unknown key "server.Listen" (did you mean "listen"?)`},
		{"unknown table", minimal + "\n# comment\n[upstream.gh]\nurl = \"https://x\"\n", 6, `unknown key "upstream" (did you mean "upstreams"?)`},
		{"no suggestion", minimal + "[tools]\nzzzzzzzz = 1\n", 5, `unknown key "tools.zzzzzzzz"`},
		{"inside inline table", "tool_search = { enabled = true,\n  mdoe = \"tools\" }\n" + minimal, 2, `unknown key "tool_search.mdoe" (did you mean "mode"?)`},
		{"after multi-line string and array", minimal + "[tools]\nallow = [\n  \"a\",\n  \"b\",\n]\n" +
			"[upstreams.x]\ncommand = \"\"\"\nmulti\nline\n\"\"\"\nsesion = \"shared\"\n", 14, `unknown key "upstreams.x.sesion" (did you mean "session"?)`},
		{"dotted key", "server.lisen = \"a:1\"\n" + minimal, 1, `unknown key "server.lisen" (did you mean "listen"?)`},
		{"quoted key", minimal + "[server]\n\"bearer token\" = \"x\"\n", 5, `unknown key "server.\"bearer token\"" (did you mean "bearer_token"?)`},
		{"a word of longer keys", "[upstreams.b]\ncommand = \"x\"\ntimeout = \"5s\"\n", 3, `unknown key "upstreams.b.timeout" (did you mean "startup_timeout" or "call_timeout"?)`},
		{"by_client entry", minimal + "[tools.by_client.\"Claude*\"]\nprofil = \"full\"\n", 5, `did you mean "profile"?`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := mustFail(t, c.src, nil)
			if !hasProblem(e, c.line, c.want) {
				t.Errorf("want a problem at line %d containing %q; got:\n%v", c.line, c.want, e)
			}
		})
	}
}

func TestTypeErrors(t *testing.T) {
	cases := []struct {
		name string
		src  string
		line int
		want string
	}{
		{"listen integer", minimal + "[server]\nlisten = 5\n", 5, "server.listen: wrong type: expected string, got integer"},
		{"bool as string", minimal + "[tool_search]\nenabled = \"yes\"\n", 5, "tool_search.enabled: wrong type: expected boolean, got string"},
		{"int as string", minimal + "[tool_search]\ncode_timeout_ms = \"10\"\n", 5, "tool_search.code_timeout_ms: wrong type: expected integer, got string"},
		{"float for int", minimal + "[tool_search]\nmax_search_limit = 2.5\n", 5, "expected integer, got float"},
		{"array element", "[upstreams.fs]\ncommand = \"node\"\nargs = [\"a\", 3]\n", 3, "upstreams.fs.args[1]: wrong type: expected string, got integer"},
		{"table expected", "server = 5\n" + minimal, 1, "server: wrong type: expected table, got integer"},
		{"duration number", minimal + "startup_timeout = 30\n", 4, `upstreams.fs.startup_timeout: wrong type: expected duration string (like "30s"), got integer`},
		{"duration text", minimal + "call_timeout = \"soon\"\n", 4, `upstreams.fs.call_timeout: invalid duration "soon"`},
		{"map value", minimal + "env = { A = 1 }\n", 4, "upstreams.fs.env.A: wrong type: expected string, got integer"},
		{"array expected", minimal + "args = \"--x\"\n", 4, "upstreams.fs.args: wrong type: expected array of strings, got string"},
		{"datetime", minimal + "[server]\nlisten = 1979-05-27\n", 5, "got datetime"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := mustFail(t, c.src, nil)
			if !hasProblem(e, c.line, c.want) {
				t.Errorf("want a problem at line %d containing %q; got:\n%v", c.line, c.want, e)
			}
			if len(e.Problems) != 1 {
				t.Errorf("want exactly 1 problem, got:\n%v", e)
			}
		})
	}
}

func TestSyntaxError(t *testing.T) {
	e := mustFail(t, "[server]\nlisten = \"a:1\"\ntransport = \n", nil)
	if len(e.Problems) != 1 || e.Problems[0].Line != 3 || !strings.Contains(e.Error(), "config.toml:3: TOML syntax") {
		t.Errorf("got %v", e)
	}
}

func TestAllProblemsCollected(t *testing.T) {
	src := `[server]
transport = "ws"
listen = 5

[tool_search]
mode = "fast"

[upstreams.a]
comand = "x"
`
	e := mustFail(t, src, nil)
	want := []struct {
		line int
		text string
	}{
		{2, `server.transport: invalid value "ws"`},
		{3, "server.listen: wrong type"},
		{6, `tool_search.mode: invalid value "fast"`},
		{8, "upstreams.a: needs command"},
		{9, `unknown key "upstreams.a.comand"`},
	}
	for _, w := range want {
		if !hasProblem(e, w.line, w.text) {
			t.Errorf("missing problem %d %q in:\n%v", w.line, w.text, e)
		}
	}
	if n := len(strings.Split(e.Error(), "\n")); n != len(e.Problems) || n < len(want) {
		t.Errorf("Error() has %d lines for %d problems:\n%v", n, len(e.Problems), e)
	}
	// File order.
	for i := 1; i < len(e.Problems); i++ {
		a, b := e.Problems[i-1].Line, e.Problems[i].Line
		if b != 0 && (a == 0 || a > b) {
			t.Errorf("problems not in line order: %v", e)
		}
	}
}

func TestValidation(t *testing.T) {
	cases := []struct {
		name string
		src  string
		line int // 0: any line
		want string
	}{
		{"server transport", minimal + "[server]\ntransport = \"sse\"\n", 5, `server.transport: invalid value "sse": must be one of "stdio", "http"`},
		{"empty transport", minimal + "[server]\ntransport = \"\"\n", 5, `server.transport: invalid value ""`},
		{"mode", minimal + "[tool_search]\nmode = \"fast\"\n", 5, `tool_search.mode: invalid value "fast": must be one of "code", "tools", "directory"`},
		{"mode off", minimal + "[tool_search]\nmode = \"off\"\n", 5, `(for direct mode set tool_search.enabled = false)`},
		{"both command and url", "[upstreams.x]\ncommand = \"a\"\nurl = \"http://h\"\n", 1, "upstreams.x: set either command (a stdio server) or url (an HTTP server), not both"},
		{"neither command nor url", "[upstreams.x]\ntrusted = true\n", 1, "upstreams.x: needs command"},
		{"sse with command", minimal + "transport = \"sse\"\n", 4, `upstreams.fs.transport: "sse" needs url`},
		{"bad http transport", "[upstreams.x]\nurl = \"http://h\"\ntransport = \"stdio\"\n", 3, `upstreams.x.transport: invalid value "stdio": must be one of "streamable-http", "sse"`},
		{"env with url", "[upstreams.x]\nurl = \"http://h\"\nenv = { A = \"b\" }\n", 3, "upstreams.x.env: only for command upstreams"},
		{"cwd with url", "[upstreams.x]\nurl = \"http://h\"\ncwd = \"/tmp\"\n", 3, "upstreams.x.cwd: only for command upstreams"},
		{"args with url", "[upstreams.x]\nurl = \"http://h\"\nargs = [\"a\"]\n", 3, "upstreams.x.args: only for command upstreams"},
		{"headers with command", minimal + "headers = { A = \"b\" }\n", 4, "upstreams.fs.headers: only for url upstreams"},
		{"bad header name", "[upstreams.x]\nurl = \"http://h\"\nheaders = { \"Bad Name\" = \"b\" }\n", 3, `"Bad Name" is not a valid HTTP header name`},
		{"session", minimal + "session = \"per-user\"\n", 4, `upstreams.fs.session: invalid value "per-user": must be one of "shared", "per-client"`},
		{"protocol", minimal + "protocol = \"2026\"\n", 4, `upstreams.fs.protocol: invalid value "2026": must be one of "auto", "2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"`},
		{"protocol 2026 over sse", "[upstreams.x]\nurl = \"http://h\"\ntransport = \"sse\"\nprotocol = \"2026-07-28\"\n", 4, `upstreams.x.protocol: "2026-07-28" needs transport "streamable-http" or a command`},
		{"prefix chars", minimal + "prefix = \"a.b\"\n", 4, `upstreams.fs.prefix: "a.b" must be at most 32 characters of [a-zA-Z0-9_-]`},
		{"prefix length", minimal + "prefix = \"" + strings.Repeat("p", 33) + "\"\n", 4, "upstreams.fs.prefix:"},
		{"separator chars", minimal + "[server]\nname_separator = \".\"\n", 5, `server.name_separator: "." must be 1 to 4 characters`},
		{"separator empty", minimal + "[server]\nname_separator = \"\"\n", 5, "server.name_separator:"},
		{"upstream name", "[upstreams.\"a:b\"]\ncommand = \"x\"\n", 1, `upstreams."a:b": upstream name must match ^[a-zA-Z0-9_-]{1,64}$`},
		{"upstream name too long", "[upstreams." + strings.Repeat("n", 65) + "]\ncommand = \"x\"\n", 1, "upstream name must match"},
		{"duplicate prefix", minimal + "[upstreams.b]\ncommand = \"y\"\nprefix = \"fs\"\n", 6, `upstreams.b.prefix: upstreams "fs" and "b" both use the prefix "fs"`},
		{"zero duration", minimal + "startup_timeout = \"0s\"\n", 4, "upstreams.fs.startup_timeout: must be greater than 0"},
		{"negative duration", minimal + "[server]\nshutdown_grace = \"-1s\"\n", 5, "server.shutdown_grace: must be greater than 0"},
		{"approval timeout", minimal + "[tools]\napproval_timeout = \"0ms\"\n", 5, "tools.approval_timeout: must be greater than 0"},
		{"endpoint no slash", minimal + "[endpoints.a]\npath = \"team\"\n", 5, `endpoints.a.path: "team" must start with "/"`},
		{"endpoint missing path", minimal + "[endpoints.a]\ntoken = \"a-long-token\"\n", 4, "endpoints.a.path: required"},
		{"endpoint reserved", minimal + "[endpoints.a]\npath = \"/metrics\"\n", 5, `endpoints.a.path: "/metrics" is reserved`},
		{"endpoint reserved mcp", minimal + "[endpoints.a]\npath = \"/mcp\"\n", 5, "is reserved"},
		{"endpoint duplicate", minimal + "[endpoints.a]\npath = \"/t\"\n[endpoints.b]\npath = \"/t\"\n", 7, `endpoints.b.path: "/t" is also the path of endpoints.a`},
		{"listen not host:port", minimal + "[server]\nlisten = \"8080\"\n", 5, `server.listen: "8080" is not host:port`},
		{"listen bad port", minimal + "[server]\nlisten = \"h:http\"\n", 5, "port must be a number"},
		{"metrics listen", minimal + "[telemetry]\nmetrics_listen = \"nope\"\n", 5, "telemetry.metrics_listen:"},
		{"url scheme", "[upstreams.x]\nurl = \"ftp://h/x\"\n", 2, "upstreams.x.url: scheme must be http or https"},
		{"url unparsable", "[upstreams.x]\nurl = \"http://h:bad/\"\n", 2, "upstreams.x.url: not a valid URL"},
		{"url no host", "[upstreams.x]\nurl = \"http:///x\"\n", 2, "upstreams.x.url: URL has no host"},
		{"unknown profile", minimal + "[tools]\nprofile = \"minmal\"\n", 5, `tools.profile: unknown profile "minmal" (did you mean "minimal"?)`},
		{"unknown by_client profile", minimal + "[tools.by_client.cursor]\nprofile = \"team\"\n", 5, `tools.by_client.cursor.profile: unknown profile "team" (known: "full", "minimal")`},
		{"unknown endpoint profile", minimal + "[endpoints.a]\npath = \"/a\"\ntools = { profile = \"nope\" }\n", 6, "endpoints.a.tools.profile: unknown profile"},
		{"redefined builtin profile", minimal + "[profiles.full]\nallow = [\"*\"]\n", 4, "profiles.full: \"full\" is a built-in profile"},
		{"unknown group in allow", minimal + "[tools]\nallow = [\"group:gh\"]\n", 5, `tools.allow[0]: "group:gh" names no upstream and no [groups] entry`},
		{"group suggestion", minimal + "[tools]\ndeny = [\"x\", \"group:fss\"]\n", 5, `tools.deny[1]: "group:fss" names no upstream and no [groups] entry (did you mean "group:fs"?)`},
		{"group in groups", minimal + "[groups]\nw = [\"group:nope\"]\n", 5, `groups.w[0]: "group:nope"`},
		{"group in profile", minimal + "[profiles.p]\nallow = [\"group:nope\"]\n", 5, `profiles.p.allow[0]`},
		{"group in endpoint", minimal + "[endpoints.a]\npath = \"/a\"\n[endpoints.a.tools]\nalso_allow = [\"group:nope\"]\n", 7, `endpoints.a.tools.also_allow[0]`},
		{"group in approval", minimal + "[tools]\nrequire_approval = [\"group:nope\"]\n", 5, `tools.require_approval[0]`},
		{"group in by_client", minimal + "[tools.by_client.x]\nallow = [\"group:nope\"]\n", 5, `tools.by_client.x.allow[0]`},
		{"group name is upstream", minimal + "[groups]\nfs = [\"a\"]\n", 5, `groups.fs: group name "fs" is also an upstream name`},
		{"spaces around an entry", minimal + "[tools]\nallow = [\"fs__x \"]\n", 5, `tools.allow[0]: entry "fs__x " has leading or trailing spaces`},
		{"group cycle", minimal + "[groups]\na = [\"group:b\"]\nb = [\"group:A\"]\n", 5, `groups.a: cycle group:a -> group:b -> group:a`},
		{"profiles differing in case", minimal + "[profiles.ro]\n[profiles.RO]\n", 4, `profiles.ro: same name as profiles.RO (profile names are case-insensitive)`},
		{"empty rule", minimal + "[tools]\ndeny = [\"\"]\n", 5, "tools.deny[0]: empty entry"},
		{"no enabled upstream", "[upstreams.x]\ncommand = \"a\"\nenabled = false\n", 1, "upstreams: at least one enabled upstream is required"},
		{"no upstreams at all", "[server]\ntransport = \"stdio\"\n", 0, "upstreams: at least one enabled upstream is required"},
		{"approval command empty", minimal + "[tools]\napproval_command = [\"\"]\n", 5, "tools.approval_command: the first element"},
		{"unknown upstream id in a group", minimal + "[groups]\ndev = [\"fs__read\", \"mcp:ghost:thing\"]\n", 5,
			`groups.dev[1]: "mcp:ghost:thing" names upstream "ghost", which is not configured (known: "fs")`},
		{"upstream typo in an exposed name", minimal + "[groups]\ndev = [\"mcp:fs:read\", \"fss__read\"]\n", 5,
			`groups.dev[1]: "fss__read": no configured upstream has the prefix "fss" (did you mean "fs"?); a tool whose own name contains "__" is written as its id mcp:UPSTREAM:NAME`},
		{"unknown upstream glob in a profile", minimal + "[profiles.p]\nallow = [\"mcp:ghost:*\"]\n", 5, `profiles.p.allow[0]: "mcp:ghost:*" names upstream "ghost", which is not configured`},
		{"unknown prefix glob in deny", minimal + "[tools]\ndeny = [\"x\", \"Ghost__*\"]\n", 5, `tools.deny[1]: "Ghost__*": no configured upstream has the prefix "Ghost"`},
		{"unknown upstream in by_client", minimal + "[tools.by_client.x]\nalso_allow = [\"mcp:fss:read\"]\n", 5, `tools.by_client.x.also_allow[0]: "mcp:fss:read" names upstream "fss", which is not configured (did you mean "fs"?)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := mustFail(t, c.src, nil)
			if !hasProblem(e, c.line, c.want) {
				t.Errorf("want a problem at line %d containing %q; got:\n%v", c.line, c.want, e)
			}
		})
	}
}

func TestValidEdgeCases(t *testing.T) {
	cases := []struct{ name, src string }{
		{"disabled upstreams may share a prefix", minimal + "[upstreams.b]\ncommand = \"y\"\nprefix = \"fs\"\nenabled = false\n"},
		{"group of a [groups] key", minimal + "[groups]\nw = [\"fs__write\"]\n[tools]\nallow = [\"group:w\", \"group:fs\", \"mcp:fs:*\"]\n"},
		{"defined profile", minimal + "[profiles.ro]\nallow = [\"*__read*\"]\n[tools]\nprofile = \"ro\"\n"},
		// One dialect, one case rule (package policy): '[' is an ordinary
		// character, and group, profile and upstream names are case-insensitive.
		{"bracket is literal", minimal + "[tools]\ndeny = [\"fs__[a]*\"]\n"},
		{"names in any case", minimal + "[profiles.ro]\nallow = [\"group:FS\"]\n[tools]\nprofile = \"RO\"\n[tools.by_client.\"Cursor*\"]\nprofile = \"Minimal\"\n"},
		{"sse url upstream", "[upstreams.x]\nurl = \"https://h/sse\"\ntransport = \"sse\"\n"},
		{"port 0 and empty host", minimal + "[server]\ntransport = \"http\"\nlisten = \":0\"\n"},
		{"dollar literal", minimal + "args = [\"$$HOME\", \"a$b\", \"$\"]\n"},
		// Entries naming upstreams: a disabled one counts, an upstream part
		// that is a glob is not checked, and "a__b" is not taken for an
		// upstream's prefix when some upstream has none or the separator
		// is one character (then it may be a tool's own name).
		{"entries naming upstreams", minimal + "[upstreams.off]\ncommand = \"y\"\nenabled = false\nprefix = \"o\"\n[tools]\ndeny = [\"mcp:off:x\", \"o__x\", \"mcp:*:x\", \"*__x\", \"f?__x\", \"mcp:fs\"]\n"},
		{"an upstream without a prefix", minimal + "[upstreams.n]\ncommand = \"y\"\nprefix = \"\"\n[tools]\ndeny = [\"x__y\"]\n"},
		{"one-character separator", minimal + "[server]\nname_separator = \"_\"\n[tools]\ndeny = [\"read_file\"]\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { mustParse(t, c.src, nil) })
	}
}

func TestAllowListNilVersusEmpty(t *testing.T) {
	unset := mustParse(t, minimal, nil)
	if unset.Tools.Allow != nil {
		t.Errorf("allow not written: got %#v, want nil", unset.Tools.Allow)
	}
	empty := mustParse(t, minimal+"[tools]\nallow = []\n", nil)
	if empty.Tools.Allow == nil || len(empty.Tools.Allow) != 0 {
		t.Errorf("allow = []: got %#v, want an empty non-nil list", empty.Tools.Allow)
	}
}

func TestEmptyPrefixWarning(t *testing.T) {
	one := mustParse(t, minimal+"prefix = \"\"\n", nil)
	if len(one.Warnings) != 0 || one.Upstreams["fs"].PrefixOrName() != "" {
		t.Errorf("one empty prefix: warnings %q", one.Warnings)
	}
	two := mustParse(t, minimal+"prefix = \"\"\n[upstreams.b]\ncommand = \"y\"\nprefix = \"\"\n", nil)
	if len(two.Warnings) != 1 || !strings.Contains(two.Warnings[0], `upstreams "b", "fs" all use the empty prefix`) {
		t.Errorf("two empty prefixes: warnings %q", two.Warnings)
	}
}

// TestSandboxLimitDefaults: the code-mode sandbox limits (memory,
// runs, slots), and the per-session share following code_max_runs.
func TestSandboxLimitDefaults(t *testing.T) {
	ts := mustParse(t, minimal, nil).ToolSearch
	if ts.CodeMaxRuns != 4 || ts.CodeMaxRunsPerSession != 2 || ts.CodeMaxCallBytes != 256<<10 || ts.CodeMaxRunBytes != 2<<20 {
		t.Errorf("defaults: %d runs, %d per session, %d bytes a call, %d a run", ts.CodeMaxRuns, ts.CodeMaxRunsPerSession, ts.CodeMaxCallBytes, ts.CodeMaxRunBytes)
	}
	ts = mustParse(t, minimal+"[tool_search]\ncode_max_runs = 9\ncode_max_call_bytes = 4194304\n", nil).ToolSearch
	if ts.CodeMaxRunsPerSession != 4 || ts.CodeMaxRunBytes != 4<<20 {
		t.Errorf("derived: %d per session (want 4), %d bytes a run (want 4 MiB)", ts.CodeMaxRunsPerSession, ts.CodeMaxRunBytes)
	}
}

func TestClamps(t *testing.T) {
	cases := []struct {
		key   string
		value string
		get   func(ToolSearch) int
		want  int
		warn  string // "" means no warning
	}{
		{"code_timeout_ms", "100", func(s ToolSearch) int { return s.CodeTimeoutMS }, 1000, "config.toml:5: tool_search.code_timeout_ms: 100 is outside 1000..60000; using 1000"},
		{"code_timeout_ms", "999999", func(s ToolSearch) int { return s.CodeTimeoutMS }, 60000, "999999 is outside 1000..60000; using 60000"},
		{"code_timeout_ms", "5000", func(s ToolSearch) int { return s.CodeTimeoutMS }, 5000, ""},
		{"max_search_limit", "0", func(s ToolSearch) int { return s.MaxSearchLimit }, 1, "tool_search.max_search_limit: 0 is outside 1..50; using 1"},
		{"max_search_limit", "51", func(s ToolSearch) int { return s.MaxSearchLimit }, 50, "51 is outside 1..50; using 50"},
		{"search_default_limit", "-3", func(s ToolSearch) int { return s.SearchDefaultLimit }, 1, "tool_search.search_default_limit: -3 is outside 1..20; using 1"},
		{"search_default_limit", "30", func(s ToolSearch) int { return s.SearchDefaultLimit }, 20, "30 is outside 1..20; using 20"},
		{"directory_max_chars", "10", func(s ToolSearch) int { return s.DirectoryMaxChars }, 500, "tool_search.directory_max_chars: 10 is outside 500..50000; using 500"},
		{"directory_max_chars", "60000", func(s ToolSearch) int { return s.DirectoryMaxChars }, 50000, "using 50000"},
		{"code_max_runs", "0", func(s ToolSearch) int { return s.CodeMaxRuns }, 1, "tool_search.code_max_runs: 0 is outside 1..64; using 1"},
		{"code_max_runs", "100", func(s ToolSearch) int { return s.CodeMaxRuns }, 64, "using 64"},
		{"code_max_runs_per_session", "9", func(s ToolSearch) int { return s.CodeMaxRunsPerSession }, 4, "tool_search.code_max_runs_per_session: 9 is outside 1..4; using 4"},
		{"code_max_call_bytes", "1", func(s ToolSearch) int { return s.CodeMaxCallBytes }, 16384, "tool_search.code_max_call_bytes: 1 is outside 16384..33554432; using 16384"},
		{"code_max_run_bytes", "1", func(s ToolSearch) int { return s.CodeMaxRunBytes }, 262144, "tool_search.code_max_run_bytes: 1 is outside 262144..268435456; using 262144"},
	}
	for _, c := range cases {
		t.Run(c.key+"="+c.value, func(t *testing.T) {
			cfg := mustParse(t, minimal+"[tool_search]\n"+c.key+" = "+c.value+"\n", nil)
			if got := c.get(cfg.ToolSearch); got != c.want {
				t.Errorf("%s = %d, want %d", c.key, got, c.want)
			}
			switch {
			case c.warn == "" && len(cfg.Warnings) != 0:
				t.Errorf("unexpected warnings %q", cfg.Warnings)
			case c.warn != "" && (len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0], c.warn)):
				t.Errorf("warnings = %q, want one containing %q", cfg.Warnings, c.warn)
			}
		})
	}
}

func TestDefaultLimitFollowsClampedMax(t *testing.T) {
	cfg := mustParse(t, minimal+"[tool_search]\nmax_search_limit = 5\n", nil)
	if cfg.ToolSearch.SearchDefaultLimit != 5 || len(cfg.Warnings) != 0 {
		t.Errorf("search_default_limit = %d (warnings %q), want 5 without warning", cfg.ToolSearch.SearchDefaultLimit, cfg.Warnings)
	}
}

func TestExpansion(t *testing.T) {
	vars := map[string]string{"TOK": "tok-123", "GH": "ghp_abcdef", "HOST": "api.example.com", "DIR": "/srv/data", "EMPTY": "", "EP": "ep-secret", "BEARER": "bearer-xyz"}
	cfg := mustParse(t, `
[server]
transport = "http"
bearer_token = "${BEARER}"
[endpoints.a]
path = "/a"
token = "${EP}"
[upstreams.fs]
command = "./srv"
args = ["--root", "${DIR}", "$$literal", "${EMPTY}x"]
env = { TOKEN = "${TOK}", PLAIN = "p$$" }
[upstreams.gh]
url = "https://${HOST}/mcp"
headers = { Authorization = "Bearer ${GH}", X-Plain = "plain" }
`, vars)
	fs, gh := cfg.Upstreams["fs"], cfg.Upstreams["gh"]
	if want := []string{"--root", "/srv/data", "$literal", "x"}; !slices.Equal(fs.Args, want) {
		t.Errorf("args = %q, want %q", fs.Args, want)
	}
	if fs.Env["TOKEN"] != "tok-123" || fs.Env["PLAIN"] != "p$" {
		t.Errorf("env = %q", fs.Env)
	}
	if gh.URL != "https://api.example.com/mcp" || gh.Headers["Authorization"] != "Bearer ghp_abcdef" || gh.Headers["X-Plain"] != "plain" {
		t.Errorf("gh = %q %q", gh.URL, gh.Headers)
	}
	if cfg.Server.BearerToken != "bearer-xyz" || cfg.Endpoints["a"].Token != "ep-secret" {
		t.Errorf("tokens = %q %q", cfg.Server.BearerToken, cfg.Endpoints["a"].Token)
	}
	got := cfg.Secrets()
	// "Bearer ghp_abcdef": a header value is a secret unless public
	// (collectLiteralSecrets), whole and its credential part; so is
	// "plain" (X-Plain is not listed in public); "p$" is too short to be
	// hidden by value.
	want := []string{"Bearer ghp_abcdef", "ghp_abcdef", "bearer-xyz", "ep-secret", "/srv/data", "api.example.com", "tok-123", "plain"}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("Secrets() = %q, missing %q", got, w)
		}
	}
	if slices.Contains(got, "") || len(got) != len(want) {
		t.Errorf("Secrets() = %q, want exactly %q", got, want)
	}
	for i := 1; i < len(got); i++ {
		if len(got[i]) > len(got[i-1]) {
			t.Errorf("Secrets() not longest first: %q", got)
		}
	}
}

func TestMissingVariable(t *testing.T) {
	src := minimal + `[upstreams.gh]
url = "https://h/mcp"
headers = { Authorization = "Bearer ${GH_TOKEN}" }
[server]
bearer_token = "${NOPE}"
`
	e := mustFail(t, src, nil)
	if !hasProblem(e, 6, `config.toml:6: upstreams.gh.headers.Authorization: environment variable "GH_TOKEN" is not set`) {
		t.Errorf("got:\n%v", e)
	}
	if !hasProblem(e, 8, `server.bearer_token: environment variable "NOPE" is not set`) {
		t.Errorf("got:\n%v", e)
	}
}

func TestBadReference(t *testing.T) {
	for _, arg := range []string{"${", "${A", "${}", "${A-B}", "${1X}"} {
		e := mustFail(t, minimal+"args = [\""+arg+"\"]\n", map[string]string{"A": "a"})
		if !hasProblem(e, 4, "upstreams.fs.args[0]:") {
			t.Errorf("%q: got:\n%v", arg, e)
		}
	}
}

func TestErrorsNeverContainSecrets(t *testing.T) {
	const secret = "hunter2-very-secret"
	src := `[upstreams.gh]
url = "ftp://user:${SECRET}@h/${SECRET}"
headers = { Authorization = "Bearer ${SECRET}", "X Bad" = "${SECRET}" }
session = "${SECRET}"
[upstreams.fs]
command = "node"
args = ["${SECRET}"]
transport = "sse"
[server]
bearer_token = "literal-token-value"
listen = "literal-token-value"
`
	_, err := Parse([]byte(src), "config.toml", env(map[string]string{"SECRET": secret}))
	if err == nil {
		t.Fatal("expected an error")
	}
	text := err.Error()
	if strings.Contains(text, secret) || strings.Contains(text, "literal-token-value") {
		t.Errorf("error leaks a secret:\n%s", text)
	}
	if !strings.Contains(text, "upstreams.gh.url: scheme must be http or https") || !strings.Contains(text, "server.listen: \"***\" is not host:port") {
		t.Errorf("error lost its content:\n%s", text)
	}
}

func TestRedact(t *testing.T) {
	cfg := mustParse(t, `
[server]
transport = "http"
bearer_token = "literal-bearer"
[endpoints.a]
path = "/a"
token = "ep-tok"
[upstreams.fs]
command = "node"
env = { A = "${SHORT}", B = "${LONG}" }
`, map[string]string{"SHORT": "abc", "LONG": "abcdef"})
	in := "x abcdef y abc z literal-bearer w ep-tok"
	if got, want := cfg.Redact(in), "x *** y *** z *** w ***"; got != want {
		t.Errorf("Redact = %q, want %q", got, want)
	}
	var nilCfg *Config
	if nilCfg.Redact("abc") != "abc" {
		t.Error("nil Config must not change the text")
	}
	byHand := &Config{Server: Server{BearerToken: "tok"}}
	if got := byHand.Redact("a tok b"); got != "a *** b" {
		t.Errorf("hand-built Redact = %q", got)
	}
}

// A path that names its own root stays as written; only a relative one is
// joined under the config's folder. On Windows "/srv" and `\srv` are rooted on
// the current drive and "D:srv" is drive-relative: none of them lies under the
// config's folder (filepath.IsAbs is false for all three).
func TestResolveFileKeepsRootedPaths(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cfg")
	keep := []string{"/srv/x", string(filepath.Separator) + "srv"}
	if runtime.GOOS == "windows" {
		keep = append(keep, `C:\srv\x`, `D:srv`, `\\host\share\x`)
	}
	for _, p := range keep {
		if got := resolveFile(dir, p); got != p {
			t.Errorf("resolveFile(%q) = %q, want it as written", p, got)
		}
	}
	if got, want := resolveFile(dir, "logs/s.jsonl"), filepath.Join(dir, "logs", "s.jsonl"); got != want {
		t.Errorf("resolveFile(relative) = %q, want %q", got, want)
	}
}

func TestPathResolution(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	cfg := mustParseAt(t, path, `
[upstreams.rel]
command = "./bin/server"
cwd = "data"
[upstreams.sub]
command = "tools/srv"
[upstreams.plain]
command = "node"
cwd = "/abs/dir"
[upstreams.abs]
command = "/usr/bin/srv"
[telemetry]
session_log = "logs/s.jsonl"
`)
	checks := map[string][2]string{
		"rel command":   {cfg.Upstreams["rel"].Command, filepath.Join(dir, "bin/server")},
		"rel cwd":       {cfg.Upstreams["rel"].Cwd, filepath.Join(dir, "data")},
		"sub command":   {cfg.Upstreams["sub"].Command, filepath.Join(dir, "tools/srv")},
		"plain command": {cfg.Upstreams["plain"].Command, "node"},
		"abs cwd":       {cfg.Upstreams["plain"].Cwd, "/abs/dir"},
		"abs command":   {cfg.Upstreams["abs"].Command, "/usr/bin/srv"},
		"session_log":   {cfg.Telemetry.SessionLog, filepath.Join(dir, "logs/s.jsonl")},
	}
	for name, c := range checks {
		if c[0] != c[1] {
			t.Errorf("%s = %q, want %q", name, c[0], c[1])
		}
	}
	// Without a path, relative paths stay as written.
	noPath, err := Parse([]byte("[upstreams.x]\ncommand = \"./x\"\ncwd = \"d\"\n"), "", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if noPath.Upstreams["x"].Command != "./x" || noPath.Upstreams["x"].Cwd != "d" {
		t.Errorf("no path: %+v", noPath.Upstreams["x"])
	}
}

func mustParseAt(t *testing.T, path, src string) *Config {
	t.Helper()
	cfg, err := Parse([]byte(src), path, env(nil))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return cfg
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.toml")
	if err := os.WriteFile(path, []byte("[upstreams.x]\ncomand = \"a\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	if err == nil || !strings.Contains(err.Error(), path+":2: unknown key") {
		t.Errorf("Load error = %v", err)
	}
	if _, err := Load(filepath.Join(dir, "missing.toml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	if err := os.WriteFile(path, []byte("[upstreams.x]\ncommand = \"a\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path)
	if err != nil || cfg.Path != path {
		t.Errorf("Load = %v, %v", cfg, err)
	}
}

func TestSummary(t *testing.T) {
	cfg := mustParse(t, `
[server]
transport = "http"
bearer_token = "${BEARER}"
[tool_search]
enabled = true
mode = "tools"
[upstreams.fs]
command = "node"
args = ["server.js", "${ROOT}"]
env = { TOKEN = "${TOK}", LEVEL = "debug", MODE = "fast" }
public = ["LEVEL"]
trusted = true
[upstreams.gh]
url = "https://h/mcp"
prefix = "github"
headers = { Authorization = "Bearer ${GH}", X-Team = "core" }
public = ["x-team"]
[upstreams.old]
command = "x"
enabled = false
`, map[string]string{"BEARER": "b-secret", "ROOT": "/root-secret", "TOK": "t-secret", "GH": "g-secret"})
	s := cfg.Summary()
	for _, secret := range []string{"b-secret", "root-secret", "t-secret", "g-secret"} {
		if strings.Contains(s, secret) {
			t.Errorf("summary leaks %q:\n%s", secret, s)
		}
	}
	for _, want := range []string{
		"server: transport=http listen=127.0.0.1:8080",
		"bearer_token=***",
		"tool_search: mode=tools",
		"upstreams: 3 configured, 2 enabled",
		`fs: stdio command="node" args=["server.js" ***] trusted=true prefix="fs"`,
		`env LEVEL="debug"`,
		"env TOKEN=***",
		"env MODE=***",
		`gh: streamable-http url="https://h/mcp" trusted=false prefix="github"`,
		"header Authorization: ***",
		`header X-Team: "core"`,
		"old: DISABLED",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
}

func TestKeyLines(t *testing.T) {
	src := `# c
a = 1
[t]
'lit key' = "x # not a comment"
"q.k" = """
multi "" line
"""
dotted . sub = { x = 1, y = [ 1,
  2 ], z = { w = 'q' } }
arr = [
  "a", # comment
  'b',
]
[[aot]]
k = 1
[t . "u v"]
after = true
`
	kl := scanKeyLines(src)
	want := map[string]int{
		"a": 2, "t": 3, "t\x00lit key": 4, "t\x00q.k": 5, "t\x00dotted": 8, "t\x00dotted\x00sub": 8,
		"t\x00dotted\x00sub\x00y": 8, "t\x00dotted\x00sub\x00z\x00w": 9, "t\x00arr": 10,
		"aot": 14, "aot\x00k": 15, "t\x00u v": 16, "t\x00u v\x00after": 17,
	}
	for k, l := range want {
		if kl[k] != l {
			t.Errorf("line of %q = %d, want %d", strings.ReplaceAll(k, "\x00", "."), kl[k], l)
		}
	}
	if got := kl.line([]string{"t", "u v", "missing"}); got != 16 {
		t.Errorf("fallback to parent: %d", got)
	}
	if got := kl.line([]string{"nothing"}); got != 0 {
		t.Errorf("absent key: %d", got)
	}
}

func TestSuggest(t *testing.T) {
	cands := []string{"command", "args", "env", "cwd", "url", "transport"}
	for in, want := range map[string]string{"comand": "command", "ARGS": "args", "transprot": "transport", "xyzzy": "", "urls": "url"} {
		if got := suggest(in, cands); got != want {
			t.Errorf("suggest(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDurationText(t *testing.T) {
	var d Duration
	if err := d.UnmarshalText([]byte("1m30s")); err != nil || d.Duration != 90*time.Second {
		t.Errorf("UnmarshalText: %v %v", d, err)
	}
	if err := d.UnmarshalText([]byte("30")); err == nil {
		t.Error("a number without unit must be rejected")
	}
	if b, _ := (Duration{1500 * time.Millisecond}).MarshalText(); string(b) != "1.5s" {
		t.Errorf("MarshalText = %s", b)
	}
}

// referenceEnv defines every variable examples/config.reference.toml uses.
var referenceEnv = map[string]string{
	"MCP_TOOLSEARCH_TOKEN": "ref-bearer", "HOME": "/home/ref", "FS_API_KEY": "ref-fs-key",
	"GITHUB_TOKEN": "ref-gh", "TEAM_A_TOKEN": "ref-team",
	"GITHUB_CLIENT_SECRET": "ref-gh-secret", "OTLP_API_KEY": "ref-otlp", "MCPTS_TOKEN_KEY": "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=",
}

func TestReferenceFileLoads(t *testing.T) {
	path := filepath.Join("..", "examples", "config.reference.toml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := Parse(data, path, env(referenceEnv))
	if err != nil {
		t.Fatalf("reference config does not load:\n%v", err)
	}
	if len(cfg.Warnings) != 0 {
		t.Errorf("reference config has warnings: %q", cfg.Warnings)
	}
	// Every key of the schema appears in the file.
	lines := scanKeyLines(string(data))
	var missing []string
	var walk func(t reflect.Type, prefixes [][]string, name string)
	walk = func(typ reflect.Type, prefixes [][]string, name string) {
		for typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		for _, f := range tableFields(typ) {
			var found [][]string
			for _, p := range prefixes {
				k := appendKey(p, f.name)
				if _, ok := lines[joinKey(k)]; ok {
					found = append(found, k)
				}
			}
			if len(found) == 0 && !retiredKeys[name+"."+f.name] {
				missing = append(missing, name+"."+f.name)
				continue
			}
			ft := f.typ
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			switch {
			case ft.Kind() == reflect.Struct && ft != durationType:
				walk(ft, found, name+"."+f.name)
			case ft.Kind() == reflect.Map && ft.Elem().Kind() == reflect.Pointer:
				var entries [][]string
				for _, k := range found {
					for key := range lines {
						parts := strings.Split(key, "\x00")
						if len(parts) == len(k)+1 && joinKey(parts[:len(k)]) == joinKey(k) {
							entries = append(entries, parts)
						}
					}
				}
				if len(entries) == 0 {
					missing = append(missing, name+"."+f.name+".<entry>")
					continue
				}
				walk(ft.Elem(), entries, name+"."+f.name+".*")
			}
		}
	}
	walk(reflect.TypeOf(Config{}), [][]string{nil}, "")
	if len(missing) > 0 {
		t.Errorf("examples/config.reference.toml lacks keys: %v", missing)
	}
}

func FuzzParse(f *testing.F) {
	if data, err := os.ReadFile(filepath.Join("..", "examples", "config.reference.toml")); err == nil {
		f.Add(string(data))
	}
	f.Add(minimal + "args = [\"${X}\", '''a\nb''']\n[tools]\nallow = [\"group:fs\"]\n")
	f.Add("a = { b = { c = [1, {d = 2}] } }\n[[x]]\ny = \"\"\"\n\"\"\"\"\n")
	f.Fuzz(func(t *testing.T, src string) {
		cfg, err := Parse([]byte(src), "f.toml", env(map[string]string{"X": "secretvalue"}))
		if err != nil && strings.Contains(err.Error(), "secretvalue") {
			t.Errorf("error leaks secret: %v", err)
		}
		if cfg != nil {
			// A secret is never shown by check, in any
			// escaping (only when ${X} made "secretvalue" a secret).
			if sum := cfg.Summary(); slices.Contains(cfg.Secrets(), "secretvalue") && strings.Contains(sum, "secretvalue") {
				t.Errorf("summary shows the secret:\n%s", sum)
			}
		}
	})
}

func BenchmarkParseReference(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("..", "examples", "config.reference.toml"))
	if err != nil {
		b.Fatal(err)
	}
	getenv := env(referenceEnv)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Parse(data, "config.reference.toml", getenv); err != nil {
			b.Fatal(err)
		}
	}
}

func TestConfigDirBuiltin(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/c.toml"
	data := []byte("[upstreams.m]\ncommand = \"node\"\nenv = { F = \"${CONFIG_DIR}/mem.jsonl\" }\n")
	cfg, err := Parse(data, path, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Upstreams["m"].Env["F"]; got != dir+"/mem.jsonl" {
		t.Fatalf("CONFIG_DIR expanded to %q, want %q", got, dir+"/mem.jsonl")
	}
	if red := cfg.Redact(dir); red != dir {
		t.Fatalf("the config folder is not a secret, but Redact gave %q", red)
	}
}

// TestListenExpanded: ${VAR} in server.listen and
// telemetry.metrics_listen is expanded, so one file serves several replicas
// on one host; the values are not secrets (a port is not redacted in logs);
// an unset variable is an error naming the key.
func TestListenExpanded(t *testing.T) {
	data := []byte("[server]\ntransport = \"http\"\nlisten = \"127.0.0.1:${PORT}\"\n[telemetry]\nmetrics_listen = \"127.0.0.1:${METRICS_PORT}\"\n[upstreams.m]\ncommand = \"node\"\n")
	cfg, err := Parse(data, "c.toml", env(map[string]string{"PORT": "18081", "METRICS_PORT": "19091"}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Server.Listen != "127.0.0.1:18081" || cfg.Telemetry.MetricsListen != "127.0.0.1:19091" {
		t.Fatalf("listen = %q, metrics_listen = %q; want 127.0.0.1:18081 and 127.0.0.1:19091", cfg.Server.Listen, cfg.Telemetry.MetricsListen)
	}
	if red := cfg.Redact("listening on 127.0.0.1:18081"); red != "listening on 127.0.0.1:18081" {
		t.Errorf("a listen port is not a secret, but Redact gave %q", red)
	}
	_, err = Parse(data, "c.toml", env(map[string]string{"METRICS_PORT": "19091"}))
	if err == nil || !strings.Contains(err.Error(), "server.listen") || !strings.Contains(err.Error(), `"PORT" is not set`) {
		t.Fatalf("want an error naming server.listen and PORT, got %v", err)
	}
}

// TestBadURLFromSecretNotEchoed: a url made invalid by a substituted
// secret is reported without quoting any part of it.
func TestBadURLFromSecretNotEchoed(t *testing.T) {
	data := []byte("[upstreams.r]\nurl = \"https://example.com:${PORT}/mcp\"\n")
	_, err := Parse(data, "c.toml", func(string) (string, bool) { return `s3cr"etXYZ`, true })
	if err == nil || !strings.Contains(err.Error(), "upstreams.r.url") {
		t.Fatalf("want an error naming upstreams.r.url, got %v", err)
	}
	if strings.Contains(err.Error(), "etXYZ") || strings.Contains(err.Error(), "s3cr") {
		t.Fatalf("the error shows part of the secret: %v", err)
	}
}

// An explicit mode implies enabled; with enabled = false
// it has no effect and a warning says so.
func TestModeImpliesEnabled(t *testing.T) {
	c := mustParse(t, minimal+"[tool_search]\nmode = \"tools\"\n", nil)
	if !c.ToolSearch.Enabled || c.ToolSearch.Mode != "tools" || len(c.Warnings) != 0 {
		t.Errorf("mode alone: enabled %v mode %q warnings %q", c.ToolSearch.Enabled, c.ToolSearch.Mode, c.Warnings)
	}
	c = mustParse(t, minimal+"[tool_search]\nenabled = false\nmode = \"tools\"\n", nil)
	if c.ToolSearch.Enabled || len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "tool_search.mode") || !strings.Contains(c.Warnings[0], "has no effect with tool_search.enabled = false") {
		t.Errorf("enabled = false with a mode: enabled %v warnings %q", c.ToolSearch.Enabled, c.Warnings)
	}
	if c := mustParse(t, minimal, nil); c.ToolSearch.Enabled || len(c.Warnings) != 0 {
		t.Errorf("no [tool_search]: enabled %v warnings %q (direct mode is the default)", c.ToolSearch.Enabled, c.Warnings)
	}
}

// retiredKeys are read only so that older configs keep starting (each
// warns that it changes nothing); the reference config leaves them out.
var retiredKeys = map[string]bool{}

// tool_search.dense is read as given, without a warning; absent, it is nil
// (the catalog's default).
func TestDenseKey(t *testing.T) {
	for _, v := range []bool{true, false} {
		c := mustParse(t, minimal+fmt.Sprintf("[tool_search]\ndense = %v\n", v), nil)
		if c.ToolSearch.Dense == nil || *c.ToolSearch.Dense != v || len(c.Warnings) != 0 {
			t.Errorf("dense = %v: read %v, warnings %q", v, c.ToolSearch.Dense, c.Warnings)
		}
	}
	if c := mustParse(t, minimal, nil); c.ToolSearch.Dense != nil {
		t.Errorf("no dense key: read %v, want nil", *c.ToolSearch.Dense)
	}
}
