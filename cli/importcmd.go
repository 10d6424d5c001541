package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcp-toolsearch/mcp-toolsearch/clientconfig"
)

func init() {
	extraCommands["import"] = runImport
	extraCommands["init"] = runInit
}

const importHelp = `mcp-toolsearch import FILE [-o config.toml] [--print] [--force]: turn an MCP client's server list
into an mcp-toolsearch config. FILE is Claude Desktop's claude_desktop_config.json, Cursor's mcp.json,
Claude Code's .mcp.json, VS Code's .vscode/mcp.json ("servers") or settings.json ("mcp"), or Windsurf's
mcp_config.json. Literal secrets in env, headers, secret flags, --header arguments and urls (secret query
parameters, a password; in url and in arguments) become ${VAR} references (the config's header lists the
variables to set); entries that cannot be mapped are named, never dropped. Check the result with
mcp-toolsearch check --config FILE. Exit 0 written, 1 cannot write, 2 usage or unreadable FILE.`

// oneFileArgs parses flags around at most one positional argument.
func oneFileArgs(fs *flag.FlagSet, args []string) (string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return "", err
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
	if len(pos) > 1 {
		return "", fmt.Errorf("one FILE expected, got %d: %s", len(pos), strings.Join(pos, " "))
	}
	if len(pos) == 0 {
		return "", nil
	}
	return pos[0], nil
}

func runImport(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "config.toml", "write the config to this file")
	print := fs.Bool("print", false, "write the config to stdout instead of a file")
	force := fs.Bool("force", false, "overwrite the -o file if it exists")
	fs.Usage = func() { fmt.Fprintf(stderr, "%s\n\nFlags:\n", importHelp); fs.PrintDefaults() }
	file, err := oneFileArgs(fs, args)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stderr, "mcp-toolsearch import: %v\n", err)
		}
		return parseExit(err)
	}
	if file == "" {
		fmt.Fprintf(stderr, "mcp-toolsearch import: FILE is missing\n\n%s\n", importHelp)
		return exitUsage
	}
	data, err := os.ReadFile(file)
	if err != nil {
		fmt.Fprintf(stderr, "mcp-toolsearch import: %v\n", err)
		return exitUsage
	}
	r, err := clientconfig.Parse(file, data)
	if err != nil {
		fmt.Fprintf(stderr, "mcp-toolsearch import: %v\n", err)
		return exitUsage
	}
	toml := r.TOML()
	fmt.Fprint(stderr, r.Summary())
	if *print {
		_, _ = stdout.Write(toml)
		return exitOK
	}
	if code := writeNew(*out, toml, *force, "import", stderr); code != exitOK {
		return code
	}
	fmt.Fprintf(stderr, "wrote %s; check it with: mcp-toolsearch check --config %s\n", *out, *out)
	return exitOK
}

// writeNew writes data to path, refusing to replace an existing file
// unless force.
func writeNew(path string, data []byte, force bool, cmd string, stderr io.Writer) int {
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0o600)
	if errors.Is(err, os.ErrExist) {
		fmt.Fprintf(stderr, "mcp-toolsearch %s: %s exists; use --force to overwrite it or -o to write elsewhere\n", cmd, path)
		return exitUsage
	}
	if dir := filepath.Dir(path); errors.Is(err, os.ErrNotExist) {
		if _, serr := os.Stat(dir); errors.Is(serr, os.ErrNotExist) {
			fmt.Fprintf(stderr, "mcp-toolsearch %s: cannot write %s: the folder %s does not exist; create it first or choose another -o\n", cmd, path, dir)
			return exitFail
		}
	}
	if err == nil {
		_, err = f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "mcp-toolsearch %s: %v\n", cmd, err)
		return exitFail
	}
	return exitOK
}

const initHelp = `mcp-toolsearch init [-o config.toml] [--print] [--force]: write a commented starter config
(one upstream: the reference memory server via npx; code mode on).
mcp-toolsearch init --client NAME [-o config.toml] [--write [--client-file FILE]] [--name toolsearch]:
print the proxy's entry for a client's MCP configuration (with --write, add it to the client's file),
starting -o (written first as the starter config when missing). Exit 0 done, 1 cannot write, 2 usage.`

func runInit(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("init", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "config.toml", "write the config to this file")
	print := fs.Bool("print", false, "write the config to stdout instead of a file")
	force := fs.Bool("force", false, "overwrite the -o file if it exists")
	client := fs.String("client", "", "print the proxy's entry for this client's MCP configuration, starting the -o config (written first if missing): "+clientNames())
	write := fs.Bool("write", false, "with --client: add the entry to the client's file instead of printing it")
	clientFile := fs.String("client-file", "", "with --client --write: the client's file (default: where the client reads it)")
	name := fs.String("name", "toolsearch", "with --client: the server's name in the client")
	command := fs.String("command", "", "with --client: the command the client starts (default: this binary's absolute path)")
	fs.Usage = func() { fmt.Fprintf(stderr, "%s\n\nFlags:\n", initHelp); fs.PrintDefaults() }
	extra, err := oneFileArgs(fs, args)
	if err != nil || extra != "" {
		if err == nil {
			err = fmt.Errorf("unexpected argument %q (the file is given with -o)", extra)
		}
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stderr, "mcp-toolsearch init: %v\n", err)
		}
		return parseExit(err)
	}
	if *client != "" {
		if *print || *force {
			fmt.Fprintln(stderr, "mcp-toolsearch init: --client takes no --print or --force (it prints the client's entry; the config is written only when missing)")
			return exitUsage
		}
		return runInitClient(initClientOpts{client: *client, config: *out, name: *name, command: *command, file: *clientFile, write: *write}, stdout, stderr)
	}
	if *write || *clientFile != "" || *command != "" {
		fmt.Fprintln(stderr, "mcp-toolsearch init: --write, --client-file and --command go with --client NAME")
		return exitUsage
	}
	if *print {
		fmt.Fprint(stdout, starterConfig)
		return exitOK
	}
	if code := writeNew(*out, []byte(starterConfig), *force, "init", stderr); code != exitOK {
		return code
	}
	fmt.Fprintf(stderr, "wrote %s; next: mcp-toolsearch check --config %s, then add it to your client (README \"Add it to a client\")\n", *out, *out)
	return exitOK
}

// starterConfig is what init writes: valid as it is, every line explained.
const starterConfig = `# mcp-toolsearch starter config (written by ` + "`mcp-toolsearch init`" + `).
# Every key: docs/config.md and examples/config.reference.toml. Check a config with
#   mcp-toolsearch check --config config.toml
# To bring in the servers you already use in a client:
#   mcp-toolsearch import ~/Library/Application\ Support/Claude/claude_desktop_config.json -o imported.toml
#
# "${VAR}" in url, args, env and header values is the environment variable VAR
# (a missing one is an error; "$$" is a literal "$"). Relative paths are
# resolved against this file's folder, also available as ${CONFIG_DIR}.

[server]
# "stdio": the client starts this binary (Claude Desktop, Cursor, VS Code, Claude Code).
# "http": Streamable HTTP at http://LISTEN/mcp and SSE at /sse.
transport = "stdio"
# listen = "127.0.0.1:8080"
# bearer_token = "${MCP_TOOLSEARCH_TOKEN}"   # HTTP clients must send it

[tool_search]
# true: the model sees one tool (tool_search_code, a JavaScript sandbox) and finds
# upstream tools by search; false: every upstream tool is exposed directly.
enabled = true
# "code" (default), "tools" (tool_search / tool_describe / tool_call) or "directory".
mode = "code"
# A tool_search_code run (and every call it makes) ends after this many ms (1000..60000;
# default 10000). 55000 lets a tool take as long as an upstream's default call_timeout (55 s),
# and both end before the 60 s after which TypeScript SDK clients give up on a request.
code_timeout_ms = 55000

# One [upstreams.NAME] table per MCP server. NAME prefixes its tools (memory__create_entities).
[upstreams.memory]
# A stdio server: command, args, env, cwd.
command = "npx"
args = ["-y", "@modelcontextprotocol/server-memory"]
env = { MEMORY_FILE_PATH = "${CONFIG_DIR}/memory.jsonl" }
public = ["MEMORY_FILE_PATH"]  # a path, not a secret: shown by check and in logs
# npx downloads the server on its first start, which can take longer than the
# default 30 s; a start stopped halfway leaves npx's cache broken (every later
# start fails with ERR_MODULE_NOT_FOUND until ~/.npm/_npx is removed).
startup_timeout = "3m"

# An HTTP server (Streamable HTTP; transport = "sse" for the older SSE transport):
# [upstreams.github]
# url = "https://api.githubcopilot.com/mcp/"
# headers = { Authorization = "Bearer ${GITHUB_TOKEN}" }
`
