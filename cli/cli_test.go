package cli

import (
	"bytes"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
	"github.com/mcp-toolsearch/mcp-toolsearch/upstream"
)

func run(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Main(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestUsageErrors(t *testing.T) {
	// A missing config file is named by its absolute path (on Windows "/x" is
	// rooted on the current drive: "Z:\\x").
	abs := func(p string) string { a, _ := filepath.Abs(p); return a }
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"nosuch"}, exitUsage, `unknown command "nosuch"`},
		{[]string{"describe"}, exitUsage, "want exactly one ID"},
		{[]string{"call", "x", "--args", "[1,2]"}, exitUsage, "call: --args must be an object with the tool's arguments by name, e.g. {\"path\": \"/tmp/a.txt\"}; got an array"},
		{[]string{"call", "x", "--args", `"hi"`}, exitUsage, "--args must be an object with the tool's arguments by name, e.g. {\"path\": \"/tmp/a.txt\"}; got a string"},
		{[]string{"call", "x", "--args", "{hi"}, exitUsage, "call: --args is not valid JSON: invalid character 'h' looking for beginning of object key string"},
		{[]string{"serach", "x"}, exitUsage, `unknown command "serach" (did you mean "search"?)`},
		{[]string{"lsit"}, exitUsage, `unknown command "lsit" (did you mean "list"?)`},
		{[]string{"benchmark"}, exitUsage, `unknown command "benchmark" (did you mean "bench"?)`},
		{[]string{"imp"}, exitUsage, `unknown command "imp" (did you mean "import"?)`},
		{[]string{"serve", "--config", "/nonexistent/config.toml"}, exitUsage, abs("/nonexistent/config.toml")},
		{[]string{"bench", "what"}, exitUsage, `unknown benchmark "what"`},
		{[]string{"bench", "search", "--tools", "x"}, exitUsage, "--tools and --queries are required"},
		{[]string{"stats"}, exitUsage, "session log"},
		// Config file mistakes: a missing file (named by its absolute path,
		// with the working directory), two files, a bad --log-level.
		{[]string{"check", "/nonexistent/my.toml"}, exitUsage, "config file not found: " + abs("/nonexistent/my.toml") + " (working directory "},
		{[]string{"list", "/nonexistent/my.toml"}, exitUsage, "config file not found: " + abs("/nonexistent/my.toml")},
		{[]string{"list", "/nonexistent/my.toml"}, exitUsage, "or write a starter config there with: mcp-toolsearch init -o "},
		{[]string{"serve", "/nonexistent/my.toml"}, exitUsage, "config file not found: " + abs("/nonexistent/my.toml")},
		{[]string{"/nonexistent/my.toml"}, exitUsage, "config file not found: " + abs("/nonexistent/my.toml")},
		{[]string{"bench", "surface", "/nonexistent/my.toml"}, exitUsage, "config file not found: " + abs("/nonexistent/my.toml")},
		{[]string{"check", "a.toml", "b.toml"}, exitUsage, `unexpected arguments ["a.toml" "b.toml"]: give one config file`},
		{[]string{"check", "a.toml", "--config", "b.toml"}, exitUsage, `the config file is given twice ("a.toml" and --config "b.toml")`},
		{[]string{"check", "--config", "/nonexistent/c.toml", "--log-level", "verbose"}, exitUsage, `--log-level "verbose": want debug, info, warn or error`},
		{[]string{"check", "--config", "/nonexistent/c.toml"}, exitUsage, "config file not found: " + abs("/nonexistent/c.toml")},
		// Bad numbers and extra arguments are refused, naming
		// the flag or argument (checked before any config is read).
		{[]string{"search", "x", "--limit", "0", "--config", "/nonexistent/c.toml"}, exitUsage, "search: --limit 0: want a number of hits, 1 or more (leave --limit out for the default)"},
		{[]string{"search", "x", "--limit", "-3", "--config", "/nonexistent/c.toml"}, exitUsage, "search: --limit -3: want a number of hits, 1 or more"},
		{[]string{"bench", "surface", "--tools", "x", "--limit", "0"}, exitUsage, "bench surface: --limit 0: want a number of tools, 1 or more"},
		{[]string{"bench", "search", "--tools", "x", "--queries", "y", "--k", "0"}, exitUsage, "bench search: --k 0: want a cut-off of 1 or more"},
		{[]string{"bench", "search", "--tools", "x", "--queries", "y", "extra"}, exitUsage, `mcp-toolsearch bench search: unexpected argument "extra" (bench search takes no arguments)`},
		{[]string{"version", "extra"}, exitUsage, `mcp-toolsearch version: unexpected argument "extra" (version takes no arguments)`},
		{[]string{"healthcheck", "extra"}, exitUsage, `mcp-toolsearch healthcheck: unexpected argument "extra" (healthcheck takes no arguments)`},
		{[]string{"healthcheck", "--timeout", "-1s"}, exitUsage, "mcp-toolsearch healthcheck: --timeout -1s: want a duration above 0, such as 3s"},
		{[]string{"healthcheck", "--timeout", "0s"}, exitUsage, "--timeout 0s: want a duration above 0"},
		{[]string{"init", "--print", "extra"}, exitUsage, `unexpected argument "extra"`},
		{[]string{"help", "a", "b"}, exitUsage, `mcp-toolsearch help: unexpected arguments ["a" "b"]`},
		{[]string{"help", "nosuch"}, exitUsage, `unknown command "nosuch"`},
	}
	for _, c := range cases {
		code, out, errs := run(c.args...)
		if code != c.code || !strings.Contains(out+errs, c.want) {
			t.Errorf("%v: exit %d, output %q; want exit %d mentioning %q", c.args, code, out+errs, c.code, c.want)
		}
	}
}

// TestCheckWarnsOnce: check says a config warning (a clamped value) once,
// in its log, not again in its report.
func TestCheckWarnsOnce(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "c.toml")
	if err := os.WriteFile(cfg, []byte("[upstreams.x]\ncommand = \"true\"\n[tool_search]\nmax_search_limit = 500\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, out, errs := run("check", "--config", cfg)
	if n := strings.Count(out+errs, "tool_search.max_search_limit: 500 is outside 1..50; using 50"); n != 1 {
		t.Errorf("the clamp warning is said %d times:\n%s%s", n, out, errs)
	}
}

func TestModeOverrideValidated(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "c.toml")
	if err := os.WriteFile(cfg, []byte("[upstreams.x]\ncommand = \"true\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := run("list", "--config", cfg, "--mode", "turbo")
	if code != exitUsage || !strings.Contains(out+errs, `--mode "turbo"`) {
		t.Fatalf("exit %d, output %q", code, out+errs)
	}
}

// TestEveryCommandHelp: `COMMAND --help` (and -h) is the command's help on
// stdout with exit 0, for every command and subcommand (import, init and
// healthcheck exited 2; version refused it as an argument).
func TestEveryCommandHelp(t *testing.T) {
	for _, name := range commandNames() {
		for _, args := range [][]string{{name, "--help"}, {name, "-h"}} {
			if name == "bench" || name == "audit" {
				args = append([]string{name, map[string]string{"bench": "search", "audit": "verify"}[name]}, args[1:]...)
			}
			code, out, errs := run(args...)
			if code != exitOK || len(strings.TrimSpace(out)) == 0 || errs != "" {
				t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 0 and the help on stdout", args, code, out, errs)
			}
		}
	}
	// An unknown command with --help is still an error.
	if code, _, errs := run("nosuch", "--help"); code != exitUsage || !strings.Contains(errs, `unknown command "nosuch"`) {
		t.Errorf("nosuch --help: exit %d, stderr %q", code, errs)
	}
}

func TestVersionAndHelp(t *testing.T) {
	if code, out, _ := run("version"); code != exitOK || !strings.HasPrefix(out, "mcp-toolsearch ") {
		t.Fatalf("version: %d %q", code, out)
	}
	if code, out, _ := run("--help"); code != exitOK || !strings.Contains(out, "Exit codes") {
		t.Fatalf("--help: %d %q", code, out)
	}
	// --version; help of stats and bench exits 0 on stdout.
	for _, v := range []string{"--version", "-version", "-V"} {
		if code, out, _ := run(v); code != exitOK || !strings.HasPrefix(out, "mcp-toolsearch ") {
			t.Errorf("%s: %d %q", v, code, out)
		}
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"stats", "--help"}, []string{"mcp-toolsearch stats LOG"}},
		{[]string{"bench", "--help"}, []string{"bench search", "bench surface"}},
		{[]string{"bench", "search", "--help"}, []string{"examples/catalogs/github-like.jsonl", "examples/catalogs/github-like.queries.jsonl", `"relevant"`, "-distractors"}},
		{[]string{"check", "--help"}, []string{"check [FILE | --config FILE]"}},
	} {
		code, out, errs := run(c.args...)
		for _, w := range c.want {
			if code != exitOK || !strings.Contains(out+errs, w) {
				t.Errorf("%v: exit %d, output %q; want exit 0 mentioning %q", c.args, code, out+errs, w)
			}
		}
	}
	// help COMMAND is COMMAND --help.
	if code, out, errs := run("help", "search"); code != exitOK || !strings.Contains(out+errs, "mcp-toolsearch search QUERY [--limit N]") {
		t.Errorf("help search: exit %d, %q", code, out+errs)
	}
	// The -1 "not set" sentinel showed as "(default -1ns)".
	if code, out, errs := run("serve", "--help"); code != exitOK || !strings.Contains(out+errs, "-startup-wait duration") || strings.Contains(out+errs, "-1ns") {
		t.Errorf("serve --help: exit %d, %q; want -startup-wait with no made-up default", code, out+errs)
	}
	if _, out, _ := run("bench", "search", "--help"); !strings.Contains(out, "github-like.queries.jsonl") {
		t.Errorf("bench search --help does not print to stdout")
	}
}

// The example of `bench search --help` runs as written (from the repo root).
func TestBenchSearchHelpExampleRuns(t *testing.T) {
	code, out, errs := run("bench", "search", "--tools", "../examples/catalogs/github-like.jsonl", "--queries", "../examples/catalogs/github-like.queries.jsonl")
	if code != exitOK || !strings.Contains(out, "recall@") {
		t.Fatalf("exit %d: %s %s", code, out, errs)
	}
}

// `serve --listen ADDR` on a config whose front is stdio
// served stdio and ignored the address; now it is refused (exit 2), naming
// the flag, the config's transport and file, and what to do.
func TestServeListenNeedsHTTP(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "c.toml")
	if err := os.WriteFile(cfg, []byte("[upstreams.x]\ncommand = \"true\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := run("serve", "--config", cfg, "--listen", "127.0.0.1:0")
	want := `--listen "127.0.0.1:0" is the HTTP front's address, but server.transport is "stdio" (` + cfg + `): add --transport http`
	if code != exitUsage || !strings.Contains(out+errs, want) {
		t.Fatalf("exit %d, output %q; want exit 2 mentioning %q", code, out+errs, want)
	}
}

// TestServeHTTPOverrideNoStdioWarning: a bearer token in a stdio config
// is warned about by check, but not by serve --transport http, whose HTTP
// front the token guards (the warning was logged at start and at every
// reload while the token was enforced).
func TestServeHTTPOverrideNoStdioWarning(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "c.toml")
	if err := os.WriteFile(cfg, []byte("[server]\nbearer_token = \"s3cret-token\"\n[upstreams.x]\ncommand = \"true\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const warn = `server.bearer_token: has no effect with server.transport`
	if _, out, errs := run("check", "--config", cfg); !strings.Contains(out+errs, warn) {
		t.Errorf("check does not warn %q:\n%s%s", warn, out, errs)
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0") // serve stops at its bind, after loading the config
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	code, out, errs := run("serve", "--config", cfg, "--transport", "http", "--listen", busy.Addr().String())
	if code != exitUsage || !strings.Contains(out+errs, "server.listen") {
		t.Fatalf("exit %d, output %q; want exit 2 at the bind", code, out+errs)
	}
	if strings.Contains(out+errs, "has no effect") {
		t.Errorf("serve --transport http warns about the token it enforces:\n%s%s", out, errs)
	}
}

// The config file as the argument of check and list.
func TestPositionalConfig(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "my.toml")
	// An upstream that exits at once: check reads the file, then reports it.
	if err := os.WriteFile(cfg, []byte("[upstreams.gone]\ncommand = \"true\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := run("check", cfg)
	if code != exitFail || !strings.Contains(out, "config "+cfg+": valid") || !strings.Contains(out, "upstream gone") {
		t.Errorf("check FILE: exit %d, %q %q", code, out, errs)
	}
	if code, out, errs := run("list", cfg); code != exitOK || !strings.Contains(out, "upstream gone:") {
		t.Errorf("list FILE: exit %d, %q %q", code, out, errs)
	}
}

// TestShippedConfigsLoad keeps config.toml and every example config valid.
func TestShippedConfigsLoad(t *testing.T) {
	files, _ := filepath.Glob("../examples/*/*.toml")
	files = append(files, "../config.toml")
	files = append(files, must(filepath.Glob("../examples/*.toml"))...)
	if len(files) < 3 {
		t.Fatalf("found only %v", files)
	}
	for _, f := range files {
		if filepath.ToSlash(f) == "../examples/clients/codex-config.toml" {
			continue // Codex's own config.toml (the proxy's entry in it), not a proxy config
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		getenv := func(string) (string, bool) { return "value-for-test", true }
		if _, err := config.Parse(data, f, getenv); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func must(s []string, err error) []string {
	if err != nil {
		panic(err)
	}
	return s
}

// list --endpoint with a name the config does not have is a usage error
// naming the endpoints (it listed every tool as denied
// and exited 0).
func TestListUnknownEndpoint(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "ep.toml")
	if err := os.WriteFile(cfg, []byte("[server]\ntransport = \"http\"\n[endpoints.ci]\npath = \"/ci/mcp\"\n[upstreams.gone]\ncommand = \"true\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for ep, want := range map[string]string{
		"nosuch": `list: unknown endpoint "nosuch" (endpoints: ci;`,
		"CI":     `list: unknown endpoint "CI" (did you mean "ci"?)`,
	} {
		if code, out, errs := run("list", "--config", cfg, "--endpoint", ep); code != exitUsage || !strings.Contains(errs, want) || out != "" {
			t.Errorf("--endpoint %s: exit %d, stdout %q, stderr %q; want exit %d and %q", ep, code, out, errs, exitUsage, want)
		}
	}
	if code, out, errs := run("list", "--config", cfg, "--endpoint", "ci"); code != exitOK || !strings.Contains(out, "upstream gone:") {
		t.Errorf("--endpoint ci: exit %d, %q %q", code, out, errs)
	}
}

// The starter config of `init` does not warn about itself at the first
// `check` (code mode warns when a run, code_timeout_ms, 10 s by default,
// ends before one call of an upstream such as memory may end). The warning (proxy
// codeBudgetWarning) is said when some upstream's call_timeout outlives
// code_timeout_ms; the sandbox worker does not start inside a test
// binary, so the condition is checked on the parsed file.
func TestInitStarterHasNoOwnWarning(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "starter.toml")
	if code, _, errs := run("init", "-o", cfg); code != exitOK {
		t.Fatalf("init: exit %d: %s", code, errs)
	}
	c, err := config.Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	run := time.Duration(c.ToolSearch.CodeTimeoutMS) * time.Millisecond
	for _, u := range c.EnabledUpstreams() {
		ct := u.CallTimeout.Duration
		if ct <= 0 {
			ct = config.DefaultCallTimeout
		}
		if c.ToolSearch.Mode == "code" && ct > run {
			t.Errorf("starter config: mode code, code_timeout_ms %s, but upstream %s may take %s (call_timeout)", run, u.Name, ct)
		}
	}
}

// init -o into a folder that does not exist names the folder, for the
// starter config of `init` and of `init --client`, and creates nothing.
func TestInitMissingFolderNamed(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sub", "dir")
	cfg := filepath.Join(dir, "config.toml")
	for _, args := range [][]string{{"init", "-o", cfg}, {"init", "--client", "codex", "-o", cfg}} {
		code, _, errs := run(args...)
		if code != exitFail {
			t.Errorf("%v: exit %d, want %d: %s", args, code, exitFail, errs)
		}
		if want := "the folder " + dir + " does not exist"; !strings.Contains(errs, want) {
			t.Errorf("%v: stderr does not say %q:\n%s", args, want, errs)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "..")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("init created a folder: %v", err)
	}
}

// The starter config's npx upstream gets time for npx's first download
// (into an empty npx cache server-memory took 50 s; the
// default 30 s startup_timeout stopped npx halfway and left its cache
// broken, so `check` failed on every later run too).
func TestInitStarterGivesNpxTimeToDownload(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "starter.toml")
	if code, _, errs := run("init", "-o", cfg); code != exitOK {
		t.Fatalf("init: exit %d: %s", code, errs)
	}
	c, err := config.Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	u := c.Upstreams["memory"]
	if u == nil || u.Command != "npx" {
		t.Fatalf("starter config: no npx upstream memory: %+v", u)
	}
	if got := u.StartupTimeout.Duration; got < 3*time.Minute {
		t.Errorf("starter config: memory (npx) startup_timeout %s, want at least 3m", got)
	}
}

// TestInitStarterShowsWhatConfigShows: an env variable the shipped
// config.toml marks public (a path, not a secret) is public in the
// starter config too, for the upstream of the same name: check shows its
// value, not "***".
func TestInitStarterShowsWhatConfigShows(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "starter.toml")
	if code, _, errs := run("init", "-o", cfg); code != exitOK {
		t.Fatalf("init: exit %d: %s", code, errs)
	}
	starter, err := config.Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	shipped, err := config.Load(filepath.Join("..", "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for name, su := range starter.Upstreams {
		u := shipped.Upstreams[name]
		if u == nil {
			continue
		}
		for k, v := range su.Env {
			if !u.IsPublic(k) {
				continue
			}
			checked++
			if !su.IsPublic(k) || strings.Contains(starter.Summary(), "***") || starter.Redact(v) != v {
				t.Errorf("starter upstream %s: env %s is public in config.toml, not in the starter (check shows %q)", name, k, starter.Redact(v))
			}
		}
	}
	if checked == 0 {
		t.Error("no env variable of the starter is public in config.toml: the test checks nothing")
	}
}

// TestDeadlinesEndBeforeClientTimeout: the shipped
// config.toml, `init`'s starter and the default call_timeout end a code run
// and a tools/call before 60 s, the TypeScript SDK's default request
// timeout (DEFAULT_REQUEST_TIMEOUT_MSEC, Claude Desktop, Inspector), so the
// client gets the proxy's timeout message instead of giving up first.
func TestDeadlinesEndBeforeClientTimeout(t *testing.T) {
	const client = 60 * time.Second
	starter := filepath.Join(t.TempDir(), "starter.toml")
	if code, _, errs := run("init", "-o", starter); code != exitOK {
		t.Fatalf("init: exit %d: %s", code, errs)
	}
	for _, path := range []string{starter, filepath.Join("..", "config.toml")} {
		c, err := config.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Duration(c.ToolSearch.CodeTimeoutMS) * time.Millisecond; d >= client {
			t.Errorf("%s: code_timeout_ms %s, want below the client's %s", path, d, client)
		}
		for _, u := range c.EnabledUpstreams() {
			if d := u.CallTimeout.Duration; d >= client {
				t.Errorf("%s: upstream %s call_timeout %s, want below the client's %s", path, u.Name, d, client)
			}
		}
	}
	if config.DefaultCallTimeout >= client {
		t.Errorf("default call_timeout %s, want below the client's %s", config.DefaultCallTimeout, client)
	}
}

// The "ready" log line counts upstreams still starting apart from those
// that failed: in the search modes serve is ready before its upstreams,
// and one still on its first attempt is not unavailable.
func TestNotReadyCounts(t *testing.T) {
	sts := []upstream.Status{
		{Name: "a", State: upstream.StateStarting},
		{Name: "b", State: upstream.StateStarting},
		{Name: "c", State: upstream.StateReady},
		{Name: "d", State: upstream.StateFailed},
	}
	if s, f := notReady(sts); s != 2 || f != 1 {
		t.Errorf("notReady = %d starting, %d failed; want 2, 1", s, f)
	}
	if s, f := notReady(nil); s != 0 || f != 0 {
		t.Errorf("notReady(nil) = %d, %d", s, f)
	}
}
