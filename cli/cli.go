// Package cli is the command line of mcp-toolsearch: serve (default),
// list, describe, call, search, check, version, stats, bench, and the
// hidden sandbox-worker role.
//
// Exit codes: 0 success; 1 a runtime failure (an upstream failed in check,
// a call failed, a tool not found); 2 bad usage or an invalid config;
// 3 `call` reached the tool and it returned isError.
package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
	"github.com/mcp-toolsearch/mcp-toolsearch/ingest"
	"github.com/mcp-toolsearch/mcp-toolsearch/modes"
	"github.com/mcp-toolsearch/mcp-toolsearch/proxy"
	"github.com/mcp-toolsearch/mcp-toolsearch/sandbox"
	"github.com/mcp-toolsearch/mcp-toolsearch/upstream"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/logs"
	"github.com/mcp-toolsearch/mcp-toolsearch/internal/pathq"
)

const (
	exitOK      = 0
	exitFail    = 1
	exitUsage   = 2
	exitIsError = 3
)

// usage is the top-level help. It names every flag of every command
// (per-command flags were only in each command's --help);
// TestUsageNamesEveryFlag runs each command's --help and fails when a flag
// of its flag set is missing from the command's lines here.
var usage = `mcp-toolsearch: one MCP server in front of many, with a compact tool surface.

Usage:
  mcp-toolsearch [serve] [FILE | --config FILE] [--transport stdio|http] [--listen ADDR] [--startup-wait D]
                                                serve MCP clients (stdio or HTTP, per config; --listen needs HTTP)
  mcp-toolsearch list [FILE | --config FILE] [--client NAME] [--endpoint NAME] [--json]
                                                the effective catalog: id, exposed name, upstream, status
  mcp-toolsearch describe ID [--config FILE] [--client NAME]
                                                one tool's hit and exact schemas (JSON)
  mcp-toolsearch call ID [--args JSON] [--config FILE] [--client NAME]
                                                call a tool through the proxy, print its result (JSON)
  mcp-toolsearch search QUERY [--limit N] [--config FILE] [--client NAME]
                                                search the catalog, print hits (JSON)
  mcp-toolsearch check [FILE | --config FILE]   validate the config and try each upstream
  mcp-toolsearch stats LOG                      summarize a session log
  mcp-toolsearch approve ID [--config FILE]     accept a tool's changed definition (security.on_tool_change)
  mcp-toolsearch import FILE [-o config.toml] [--print] [--force]
                                                turn a client's MCP server list (Claude Desktop, Cursor,
                                                Claude Code, VS Code, Windsurf) into a config
  mcp-toolsearch init [-o config.toml] [--print] [--force]
                                                write a commented starter config
  mcp-toolsearch init --client NAME [-o config.toml] [--write [--client-file FILE]] [--name toolsearch] [--command PATH]
                                                the proxy's entry for a client (claude-code, claude-desktop, cursor,
                                                vscode, copilot-cli, gemini-cli, codex); --write adds it to its file
  mcp-toolsearch healthcheck [--url URL] [--timeout D]
                                                GET a running proxy's /healthz (container HEALTHCHECK)
  mcp-toolsearch audit verify FILE...           check the hash chain of an audit log (rotated files oldest first)
  mcp-toolsearch bench search --tools T.jsonl --queries Q.jsonl [--k 10] [--distractors D.jsonl] [--semantic=false] [--dense=false]
  mcp-toolsearch bench search --dir BENCH_DIR [--distractors D.jsonl]   (every labelled set, alone and with D)
  mcp-toolsearch bench search ... [--catalog-size N] [--half tune|held]   (catalogs of N tools; half the queries)
  mcp-toolsearch bench search ... [--semantic-weight W] [--dense-weight W] [--clause-mix W]   (weights, for measuring)
  mcp-toolsearch bench surface [FILE | --config FILE | --tools T.jsonl [--limit N] [--trusted]]
                                                tools/list bytes of each mode
  mcp-toolsearch version | --version

--client NAME evaluates policy ([tools] by_client) as for a client whose clientInfo.name is NAME.
--config defaults to ./config.toml; serve, list, check and bench surface also take the config
file as their argument (mcp-toolsearch check my.toml). On every command that reads a config
(serve, list, describe, call, search, check, approve, bench surface):
--log-level debug|info|warn|error (default info for serve, warn for the others),
--mode off|code|tools|directory (overrides [tool_search]).
mcp-toolsearch COMMAND --help (or help COMMAND) explains a command's flags. Counts and durations
given on the command line must be above 0 (leave the flag out for its default).
Exit codes: 0 ok; 1 runtime failure; 2 usage or config error; 3 the called tool returned isError.
`

// Main runs the command line and returns the exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := "serve"
	switch {
	case len(args) == 1 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help"):
		cmd, args = "help", nil
	case len(args) == 1 && (args[0] == "--version" || args[0] == "-version" || args[0] == "-V"):
		cmd, args = "version", nil
	case len(args) > 0 && strings.HasSuffix(args[0], ".toml"):
		// `mcp-toolsearch my.toml`: serve that config (a positional
		// config file, as `serve my.toml` takes it).
	case len(args) > 0 && !strings.HasPrefix(args[0], "-"):
		cmd, args = args[0], args[1:]
	}
	if slices.Contains(commandNames(), cmd) && cmd != "help" && slices.ContainsFunc(args, isHelp) {
		// COMMAND --help: the command's help is its output, not an
		// error (stdout, exit 0).
		stderr = stdout
	}
	switch cmd {
	case "sandbox-worker": // the code sandbox's worker role (see package sandbox)
		return sandbox.WorkerMain()
	case "serve":
		return runServe(args, stdout, stderr)
	case "list":
		return runList(args, stdout, stderr)
	case "describe":
		return runDescribe(args, stdout, stderr)
	case "call":
		return runCall(args, stdout, stderr)
	case "search":
		return runSearch(args, stdout, stderr)
	case "check":
		return runCheck(args, stdout, stderr)
	case "version":
		if len(args) == 1 && isHelp(args[0]) {
			fmt.Fprintln(stdout, "mcp-toolsearch version (or --version): print the version of this binary.")
			return exitOK
		}
		if len(args) > 0 {
			return noArguments("version", args, stderr)
		}
		fmt.Fprintln(stdout, "mcp-toolsearch", proxy.Version)
		return exitOK
	case "help", "-h", "--help":
		switch {
		case len(args) == 0 || len(args) == 1 && (isHelp(args[0]) || args[0] == "help"):
			fmt.Fprint(stdout, usage)
			return exitOK
		case len(args) == 1 && !strings.HasPrefix(args[0], "-"): // help COMMAND
			return Main([]string{args[0], "--help"}, stdin, stdout, stderr)
		}
		fmt.Fprintf(stderr, "mcp-toolsearch help: unexpected arguments %q: give at most one COMMAND (mcp-toolsearch help search)\n", args)
		return exitUsage
	default:
		if h, ok := extraCommands[cmd]; ok {
			return h(args, stdin, stdout, stderr)
		}
		fmt.Fprintf(stderr, "mcp-toolsearch: unknown command %q%s\n\n%s", cmd, didYouMean(cmd), usage)
		return exitUsage
	}
}

// commandNames are the commands of Main, sorted (not the hidden roles).
func commandNames() []string {
	names := []string{"serve", "list", "describe", "call", "search", "check", "version", "help"}
	for name := range extraCommands {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// didYouMean is ` (did you mean "list"?)` for an unknown command close to
// a known one (a typo, or a known command's prefix), or "".
func didYouMean(cmd string) string {
	names := commandNames()
	var prefixOf []string
	for _, n := range names {
		lc := strings.ToLower(cmd)
		if len(cmd) >= 2 && strings.HasPrefix(n, lc) || strings.HasPrefix(lc, n) {
			prefixOf = append(prefixOf, n)
		}
	}
	if len(prefixOf) == 1 {
		return fmt.Sprintf(" (did you mean %q?)", prefixOf[0])
	}
	if n := config.Suggest(cmd, names); n != "" {
		return fmt.Sprintf(" (did you mean %q?)", n)
	}
	return ""
}

// noArguments is the usage error of a command that takes no positional
// arguments but was given some (`version extra` was taken).
func noArguments(cmd string, args []string, stderr io.Writer) int {
	fmt.Fprintf(stderr, "mcp-toolsearch %s: unexpected argument %q (%s takes no arguments)\n", cmd, args[0], cmd)
	return exitUsage
}

// flagGiven reports whether flag name was on fs's command line (not its
// default).
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// positiveInt checks an int flag that, when given, must be 1 or more
// (`search --limit 0` silently meant the default); what
// says what the number counts.
func positiveInt(fs *flag.FlagSet, name string, v int, what string) error {
	if v < 1 && flagGiven(fs, name) {
		return fmt.Errorf("--%s %d: want %s, 1 or more (leave --%s out for the default)", name, v, what, name)
	}
	return nil
}

// extraCommands are registered by other files of this package (stats,
// bench, sandbox-worker) to keep Main short.
var extraCommands = map[string]func(args []string, stdin io.Reader, stdout, stderr io.Writer) int{}

// common holds the flags every command shares.
type common struct {
	fs       *flag.FlagSet
	config   string
	logLevel string
	mode     string
	// redact hides the secrets of the config in force in every log line
	// (a reload replaces it, reload.go).
	redact atomic.Pointer[func(string) string]
	// serverOverrides applies serve's --transport, --listen and startup
	// wait to a config (nil for other commands); reload.go applies it to
	// the config a reload reads.
	serverOverrides func(*config.Config)
}

// configArg takes a positional config file: `check
// my.toml`, `list my.toml`, `serve my.toml`. pos are the command's
// positional arguments; it returns an error (usage) for more than one, or
// for one given together with --config.
func (c *common) configArg(pos []string) error {
	switch len(pos) {
	case 0:
		return nil
	case 1:
		if flagGiven(c.fs, "config") {
			return fmt.Errorf("the config file is given twice (%s and --config %s): give it once", pathq.Quote(pos[0]), pathq.Quote(c.config))
		}
		c.config = pos[0]
		return nil
	}
	return fmt.Errorf("unexpected arguments %q: give one config file, as FILE or --config FILE", pos)
}

func newFlags(name, help string, stderr io.Writer) *common {
	c := &common{fs: flag.NewFlagSet(name, flag.ContinueOnError)}
	c.fs.SetOutput(stderr)
	c.fs.StringVar(&c.config, "config", "config.toml", "config file (TOML)")
	level := "warn" // one-shot commands: only what needs attention
	if name == "serve" {
		level = "info"
	}
	c.fs.StringVar(&c.logLevel, "log-level", level, "log level: debug, info, warn, error")
	c.fs.StringVar(&c.mode, "mode", "", "override [tool_search]: off | code | tools | directory")
	c.fs.Usage = func() {
		fmt.Fprintf(stderr, "%s\n\nFlags:\n", help)
		c.fs.PrintDefaults()
	}
	return c
}

// parse parses flags allowing positional arguments before and after them.
func (c *common) parse(args []string) ([]string, error) {
	var pos []string
	for {
		if err := c.fs.Parse(args); err != nil {
			return nil, err
		}
		args = c.fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// parseWithConfig parses the flags of a command whose only positional
// argument is a config file. ok is false when the command must stop with
// code (help: 0; a usage error, printed: 2).
func (c *common) parseWithConfig(args []string, stderr io.Writer) (code int, ok bool) {
	pos, err := c.parse(args)
	if err != nil {
		return parseExit(err), false
	}
	if err := c.configArg(pos); err != nil {
		fmt.Fprintf(stderr, "mcp-toolsearch %s: %v\n", c.fs.Name(), err)
		return exitUsage, false
	}
	return 0, true
}

// level parses --log-level: debug, info, warn or error (case-insensitive;
// slog's offsets such as "debug+2" are accepted too). Anything else is an
// error naming the choices ("verbose" used to become info).
func (c *common) level() (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(c.logLevel)); err != nil {
		return 0, fmt.Errorf("--log-level %q: want debug, info, warn or error", c.logLevel)
	}
	return l, nil
}

// load reads the config, applies the command line's overrides (--mode,
// serve's c.serverOverrides) and prints errors and the warnings that hold
// after them. ok is false on error.
func (c *common) load(stderr io.Writer) (*config.Config, *slog.Logger, bool) {
	level, err := c.level()
	if err != nil {
		fmt.Fprintln(stderr, "mcp-toolsearch:", err)
		return nil, nil, false
	}
	if err := enterConfigChain(c.config); err != nil {
		fmt.Fprintf(stderr, "mcp-toolsearch: %v\n", err)
		return nil, nil, false
	}
	cfg, err := config.Load(c.config)
	if errors.Is(err, fs.ErrNotExist) {
		// A desktop client may start the proxy from an unexpected folder:
		// say which file was looked for, from where.
		abs, _ := filepath.Abs(c.config)
		wd, _ := os.Getwd()
		fmt.Fprintf(stderr, "mcp-toolsearch: config file not found: %s (working directory %s); pass --config /absolute/path/config.toml, or write a starter config there with: mcp-toolsearch init -o %s\n", abs, wd, pathq.Quote(abs))
		return nil, nil, false
	}
	if err != nil {
		fmt.Fprintf(stderr, "mcp-toolsearch: invalid config:\n%v\n", err)
		return nil, nil, false
	}
	if err := c.overrideMode(cfg); err != nil {
		fmt.Fprintf(stderr, "mcp-toolsearch: %v\n", err)
		return nil, nil, false
	}
	redact := cfg.Redact
	c.redact.Store(&redact)
	log := logs.New(stderr, level, func(s string) string { return (*c.redact.Load())(s) })
	if c.serverOverrides != nil {
		c.serverOverrides(cfg)
	}
	for _, w := range cfg.AllWarnings() {
		log.Warn(w)
	}
	return cfg, log, true
}

// overrideMode applies --mode to cfg.
func (c *common) overrideMode(cfg *config.Config) error {
	switch c.mode {
	case "":
	case "off", "direct":
		cfg.ToolSearch.Enabled = false
	case "code", "tools", "directory":
		cfg.ToolSearch.Enabled, cfg.ToolSearch.Mode = true, c.mode
	default:
		return fmt.Errorf("--mode %q: want off, code, tools or directory", c.mode)
	}
	return nil
}

// startProxy builds and starts a proxy; callers must Close it.
func startProxy(ctx context.Context, cfg *config.Config, log *slog.Logger, oneShot bool) (*proxy.Proxy, error) {
	p, err := proxy.New(cfg, proxy.Options{Logger: log, OneShot: oneShot})
	if err != nil {
		return nil, err
	}
	if err := p.Start(ctx); err != nil {
		_ = p.Close(context.Background())
		return nil, err
	}
	return p, nil
}

// open loads the config and starts a proxy for a one-shot command. On
// failure (printed to stderr) it returns nil and the exit code: 2 for an
// invalid config, 1 when the proxy cannot start (e.g. policy fails closed).
func (c *common) open(stderr io.Writer) (*proxy.Proxy, int) {
	cfg, log, ok := c.load(stderr)
	if !ok {
		return nil, exitUsage
	}
	p, err := startProxy(context.Background(), cfg, log, true)
	if err != nil {
		fmt.Fprintln(stderr, "mcp-toolsearch:", cfg.Redact(err.Error()))
		return nil, exitFail
	}
	return p, exitOK
}

func closeProxy(p *proxy.Proxy) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	_ = p.Close(ctx)
}

func runServe(args []string, stdout, stderr io.Writer) (code int) {
	c := newFlags("serve", "mcp-toolsearch serve [FILE | --config FILE] [--transport stdio|http] [--listen ADDR] [--startup-wait D] [--mode MODE]: serve MCP clients over stdio or HTTP, as the config's [server] says.", stderr)
	transport := c.fs.String("transport", "", "override server.transport: stdio | http")
	listen := c.fs.String("listen", "", "override server.listen, e.g. 127.0.0.1:8080 (HTTP front only: refused when the transport is stdio)")
	var startupWait optDuration
	c.fs.Var(&startupWait, "startup-wait", "override server.startup_wait (and MCP_TOOLSEARCH_STARTUP_WAIT): a `duration` such as 0s or 2m")
	if code, ok := c.parseWithConfig(args, stderr); !ok {
		return code
	}
	switch *transport {
	case "", "stdio", "http":
	default:
		fmt.Fprintf(stderr, "mcp-toolsearch: --transport %q: want stdio or http\n", *transport)
		return exitUsage
	}
	// server.startup_wait: the flag, else MCP_TOOLSEARCH_STARTUP_WAIT, else
	// the config (test harnesses on loaded machines set the variable).
	wait, waitSet := startupWait.d, startupWait.set
	if v := os.Getenv("MCP_TOOLSEARCH_STARTUP_WAIT"); v != "" && !startupWait.set {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			fmt.Fprintf(stderr, "mcp-toolsearch: MCP_TOOLSEARCH_STARTUP_WAIT=%q: want a duration such as 0s or 2m\n", v)
			return exitUsage
		}
		wait, waitSet = d, true
	}
	// The command line's [server] overrides, applied to every config a
	// reload reads too: without them a reload of a proxy started with
	// --listen or --transport saw [server] "changed" and logged that it
	// needs a restart, every time.
	c.serverOverrides = func(cfg *config.Config) {
		if *transport != "" {
			cfg.Server.Transport = *transport
		}
		if *listen != "" {
			cfg.Server.Listen = *listen
		}
		if waitSet {
			cfg.Server.StartupWait.Duration = wait
		}
	}
	cfg, log, ok := c.load(stderr) // applies c.serverOverrides
	if !ok {
		return exitUsage
	}
	if *listen != "" && cfg.Server.Transport != "http" {
		// The address was ignored and stdio served.
		fmt.Fprintf(stderr, "mcp-toolsearch: --listen %q is the HTTP front's address, but server.transport is %q (%s): add --transport http, or set transport = \"http\" in [server] (a stdio front's /metrics and /healthz: [telemetry] metrics_listen)\n", *listen, cfg.Server.Transport, cfg.Path)
		return exitUsage
	}
	defer startProfiles(log)()
	var ln net.Listener
	if cfg.Server.Transport == "http" { // bind first: a busy or bad address fails before any upstream starts
		var err error
		if ln, err = net.Listen("tcp", cfg.Server.Listen); err != nil {
			fmt.Fprintf(stderr, "mcp-toolsearch: server.listen %q: %v\n", cfg.Server.Listen, err)
			return exitUsage
		}
		defer ln.Close()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The reload signal (SIGHUP on unix) is taken from here on: sent while
	// the upstreams start (a config tool reloading right after a start),
	// it used to end the process, whose handler came only once serving;
	// now it is kept and reloads once the proxy serves.
	hup := make(chan os.Signal, 1)
	if sigs := reloadSignals(); len(sigs) > 0 {
		signal.Notify(hup, sigs...)
		defer signal.Stop(hup)
	}
	// The reopen signal (SIGUSR1 on unix, log rotation) likewise: its
	// default action would end the process.
	reopen := make(chan os.Signal, 1)
	if sigs := reopenSignals(); len(sigs) > 0 {
		signal.Notify(reopen, sigs...)
		defer signal.Stop(reopen)
	}
	start := time.Now()
	// No upstream holds the start longer than server.startup_wait; later
	// ones are announced when they are ready. The search modes answer at
	// once and their searches wait instead (proxy.StartServing).
	p, err := proxy.New(cfg, proxy.Options{Logger: log})
	if err == nil {
		if err = p.StartServing(ctx, cfg.Server.StartupWait.Duration); err != nil {
			_ = p.Close(context.Background())
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "mcp-toolsearch: %v\n", cfg.Redact(err.Error()))
		return exitFail
	}
	defer closeProxy(p)
	var fatal atomic.Bool // the policy check, run late, failed closed
	go func() {
		select {
		case <-p.Fatal():
			fatal.Store(true)
			stop()
		case <-ctx.Done():
		}
	}()
	defer func() {
		if fatal.Load() {
			code = exitFail
		}
	}()
	snap := p.Catalog()
	starting, failed := notReady(p.Statuses())
	log.Info("ready", "mode", p.Mode(), "transport", cfg.Server.Transport, "tools", len(snap.Entries), "starting_upstreams", starting, "unavailable_upstreams", failed, "startup_ms", time.Since(start).Milliseconds())
	if ml := cfg.Telemetry.MetricsListen; ml != "" && cfg.Server.Transport != "http" {
		ms, err := p.StartMetrics(ml) // stdio: /metrics and /healthz on their own listener
		if err != nil {
			log.Error("cannot serve metrics", "err", err)
			return exitFail
		}
		defer ms.Close()
		log.Info("metrics listening", "metrics", "http://"+ms.Addr()+"/metrics", "healthz", "http://"+ms.Addr()+"/healthz")
	} else if ml != "" {
		log.Warn("telemetry.metrics_listen is for stdio deployments; over http /metrics and /healthz are on server.listen", "metrics_listen", ml)
	}
	stopReload := c.watchReload(ctx, p, log, hup)
	defer stopReload()
	stopReopen := reopenLogsOn(ctx, p, log, reopen)
	defer stopReopen()
	if cfg.Server.Transport == "http" {
		addr := ln.Addr().String()
		log.Info("listening", "mcp", "http://"+addr+"/mcp", "sse", "http://"+addr+"/sse")
		err = p.ServeHTTP(ctx, ln, nil)
	} else {
		err = p.ServeStdio(ctx)
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		log.Error("serve failed", "err", err)
		return exitFail
	}
	return exitOK
}

func runList(args []string, stdout, stderr io.Writer) int {
	c := newFlags("list", "mcp-toolsearch list [FILE | --config FILE] [--client NAME] [--endpoint NAME]: the effective catalog a client would get.", stderr)
	client := c.fs.String("client", "", "clientInfo.name of the client to evaluate policy for")
	endpoint := c.fs.String("endpoint", "", "HTTP endpoint name ([endpoints.NAME]); empty is the main endpoint")
	asJSON := c.fs.Bool("json", false, "print JSON instead of a table")
	if code, ok := c.parseWithConfig(args, stderr); !ok {
		return code
	}
	cfg, log, ok := c.load(stderr)
	if !ok {
		return exitUsage
	}
	if err := knownEndpoint(cfg, *endpoint); err != nil {
		// A typo would list every tool as denied and exit 0: an operator
		// checking what an endpoint may call reads "all denied".
		fmt.Fprintln(stderr, "list:", err)
		return exitUsage
	}
	p, err := startProxy(context.Background(), cfg, log, true)
	if err != nil {
		fmt.Fprintln(stderr, "mcp-toolsearch:", cfg.Redact(err.Error()))
		return exitFail
	}
	defer closeProxy(p)
	// The whole output passes through Redact (a status
	// or reason may echo a config secret).
	var out bytes.Buffer
	defer func() { _, _ = io.WriteString(stdout, p.Config().Redact(out.String())) }()
	rows := p.Explain(*client, *endpoint)
	if *asJSON {
		enc := json.NewEncoder(&out)
		enc.SetIndent("", "  ")
		_ = enc.Encode(rows)
		return exitOK
	}
	tw := tabwriter.NewWriter(&out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tEXPOSED NAME\tUPSTREAM\tSTATUS\tPOLICY")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.ID, r.Exposed, r.Upstream, r.Status, r.Rule)
	}
	_ = tw.Flush()
	for _, st := range p.Statuses() {
		if st.Err != "" {
			fmt.Fprintf(&out, "upstream %s: %s: %s\n", st.Name, st.State, st.Err)
		}
	}
	printDiagnostics(stdout, p.IngestDiagnostics())
	return exitOK
}

// knownEndpoint returns an error naming name and the config's endpoints
// when name ("" is the main endpoint) is not an [endpoints.NAME] of cfg.
// Endpoint names are case-sensitive (TOML keys); a case-only difference
// is suggested.
func knownEndpoint(cfg *config.Config, name string) error {
	if name == "" || cfg.Endpoints[name] != nil {
		return nil
	}
	names := make([]string, 0, len(cfg.Endpoints))
	for n := range cfg.Endpoints {
		if strings.EqualFold(n, name) {
			return fmt.Errorf("unknown endpoint %q (did you mean %q?)", name, n)
		}
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return fmt.Errorf("unknown endpoint %q: the config has no [endpoints.NAME] (leave --endpoint out for the main endpoint)", name)
	}
	return fmt.Errorf("unknown endpoint %q (endpoints: %s; leave --endpoint out for the main endpoint)", name, strings.Join(names, ", "))
}

func runDescribe(args []string, stdout, stderr io.Writer) int {
	c := newFlags("describe", "mcp-toolsearch describe ID: a tool's hit and exact schemas as JSON.", stderr)
	client := c.fs.String("client", "", "clientInfo.name to evaluate policy for")
	pos, err := c.parse(args)
	if err != nil {
		return parseExit(err)
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "describe: want exactly one ID")
		return exitUsage
	}
	p, code := c.open(stderr)
	if p == nil {
		return code
	}
	defer closeProxy(p)
	d, err := p.API().Describe(p.Env(*client, ""), pos[0], modes.ViaCLI)
	if err != nil {
		fmt.Fprintln(stderr, "describe:", err)
		return exitFail
	}
	return printJSON(stdout, d)
}

func runSearch(args []string, stdout, stderr io.Writer) int {
	c := newFlags("search", "mcp-toolsearch search QUERY [--limit N]: search the catalog, print hits as JSON.", stderr)
	limit := c.fs.Int("limit", 0, "number of hits, 1 or more; more than [tool_search] max_search_limit gives that many (default: search_default_limit)")
	client := c.fs.String("client", "", "clientInfo.name to evaluate policy for")
	pos, err := c.parse(args)
	if err != nil {
		return parseExit(err)
	}
	if len(pos) == 0 {
		fmt.Fprintln(stderr, "search: want a QUERY")
		return exitUsage
	}
	if err := positiveInt(c.fs, "limit", *limit, "a number of hits"); err != nil {
		fmt.Fprintln(stderr, "search:", err)
		return exitUsage
	}
	p, code := c.open(stderr)
	if p == nil {
		return code
	}
	defer closeProxy(p)
	hits, err := p.API().Search(p.Env(*client, ""), strings.Join(pos, " "), *limit, modes.ViaCLI)
	if err != nil {
		fmt.Fprintln(stderr, "search:", err)
		return exitUsage
	}
	return printJSON(stdout, hits)
}

func runCall(args []string, stdout, stderr io.Writer) int {
	c := newFlags("call", "mcp-toolsearch call ID [--args JSON]: call a tool through the proxy and print its CallToolResult as JSON.", stderr)
	argsJSON := c.fs.String("args", "{}", "tool arguments as a JSON object")
	client := c.fs.String("client", "", "clientInfo.name to evaluate policy for")
	pos, err := c.parse(args)
	if err != nil {
		return parseExit(err)
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "call: want exactly one ID")
		return exitUsage
	}
	if err := json.Unmarshal([]byte(*argsJSON), new(json.RawMessage)); err != nil {
		fmt.Fprintf(stderr, "call: --args is not valid JSON: %v\n", err)
		return exitUsage
	}
	if _, err := modes.ToolArguments(json.RawMessage(*argsJSON), "--args"); err != nil {
		fmt.Fprintf(stderr, "call: %v\n", err)
		return exitUsage
	}
	p, code := c.open(stderr)
	if p == nil {
		return code
	}
	defer closeProxy(p)
	_, res, err := p.CallRef(context.Background(), p.Env(*client, ""), pos[0], json.RawMessage(*argsJSON))
	if err != nil {
		fmt.Fprintln(stderr, "call:", p.Config().Redact(err.Error()))
		return exitFail
	}
	if code := printJSON(stdout, res); code != exitOK {
		return code
	}
	if res.IsError {
		return exitIsError
	}
	return exitOK
}

func runCheck(args []string, stdout, stderr io.Writer) int {
	c := newFlags("check", "mcp-toolsearch check [FILE | --config FILE]: validate the config, then start each upstream and report. Exit 0 all good, 1 an upstream failed or policy fails closed, 2 invalid config.", stderr)
	if code, ok := c.parseWithConfig(args, stderr); !ok {
		return code
	}
	cfg, log, ok := c.load(stderr)
	if !ok {
		return exitUsage
	}
	fmt.Fprintf(stdout, "config %s: valid\n%s\n", cfg.Path, cfg.Summary()) // warnings were logged by load
	p, err := startProxy(context.Background(), cfg, log, true)
	if err != nil {
		fmt.Fprintln(stdout, "FAIL:", cfg.Redact(err.Error()))
		return exitFail
	}
	defer closeProxy(p)
	code := exitOK
	snap := p.Catalog()
	count := map[string]int{}
	for _, e := range snap.Entries {
		count[e.Upstream]++
	}
	for _, st := range p.Statuses() {
		if st.State == "ready" {
			extra := ""
			if q, n := ingest.Counts(st.Diagnostics); q+n > 0 {
				extra = fmt.Sprintf(" (%d quarantined, %d normalised)", q, n)
			}
			fmt.Fprintf(stdout, "upstream %-20s ok      %d tool%s%s\n", st.Name, count[st.Name], plural(count[st.Name]), extra)
		} else {
			fmt.Fprintf(stdout, "upstream %-20s FAILED  %s\n", st.Name, cfg.Redact(st.Err))
			code = exitFail
		}
	}
	printDiagnostics(stdout, p.IngestDiagnostics())
	for _, msg := range p.ToolRefProblems() {
		fmt.Fprintln(stdout, "warning:", msg)
	}
	for _, msg := range p.NameClashes() {
		fmt.Fprintln(stdout, "warning:", msg)
	}
	for _, msg := range p.NameClashNotes() {
		fmt.Fprintln(stdout, "note:", msg)
	}
	// The fail-closed policy check already ran in Start (startProxy).
	return code
}

// printDiagnostics prints the ingest pipeline's decisions, one line each:
// "upstream U: tool T quarantined (step): detail".
func printDiagnostics(w io.Writer, ds []ingest.Diagnostic) {
	for _, d := range ds {
		fmt.Fprintf(w, "upstream %s: tool %s\n", d.Upstream, d.String())
	}
}

func printJSON(w io.Writer, v any) int {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return exitFail
	}
	return exitOK
}

// parseExit is the exit code after a flag parse error: 0 for an explicit
// -h/--help (the usage was printed), 2 otherwise.
func parseExit(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	return exitUsage
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// optDuration is a duration flag that knows whether it was given, so that
// its help line shows no made-up default (a -1 sentinel printed as
// "(default -1ns)"). Negative durations are refused.
type optDuration struct {
	d   time.Duration
	set bool
}

func (o *optDuration) String() string {
	if o == nil || !o.set {
		return ""
	}
	return o.d.String()
}

func (o *optDuration) Set(v string) error {
	d, err := time.ParseDuration(v)
	if err != nil {
		return err
	}
	if d < 0 {
		return fmt.Errorf("negative duration %s", v)
	}
	o.d, o.set = d, true
	return nil
}

// inheritedChain is upstream.ConfigChainEnv as this process got it, before
// enterConfigChain set it (a process may load configs more than once: tests).
var inheritedChain = sync.OnceValue(func() string { return os.Getenv(upstream.ConfigChainEnv) })

// enterConfigChain refuses to load config when a proxy this process runs
// under serves the same file (upstream.ConfigChainEnv holds their config
// paths): the config names mcp-toolsearch with itself as one of its
// upstreams, and every level would start one more. Otherwise it adds
// config to the chain its own children inherit. Nesting a proxy with
// another config stays allowed.
func enterConfigChain(config string) error {
	abs, err := filepath.Abs(config)
	if err != nil {
		return nil // c.load names the problem
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	chain := inheritedChain()
	for _, p := range filepath.SplitList(chain) {
		if p == abs {
			return fmt.Errorf("config %s starts itself: this serve is an upstream of a proxy serving the same file (%s=%s); remove the upstream that runs mcp-toolsearch with this config", abs, upstream.ConfigChainEnv, chain)
		}
	}
	if chain != "" {
		abs = chain + string(os.PathListSeparator) + abs
	}
	return os.Setenv(upstream.ConfigChainEnv, abs)
}

// notReady counts the upstreams still on their first connection attempt
// and those that are down (failed, retrying), for the "ready" log line:
// in the search modes serve is ready before its upstreams are, and an
// upstream still starting is not reported as unavailable.
func notReady(sts []upstream.Status) (starting, failed int) {
	for _, st := range sts {
		switch st.State {
		case upstream.StateStarting:
			starting++
		case upstream.StateFailed:
			failed++
		}
	}
	return starting, failed
}
