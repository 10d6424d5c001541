package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/mcp-toolsearch/mcp-toolsearch/clientconfig"
	"github.com/mcp-toolsearch/mcp-toolsearch/config"
)

// clientNames lists the clients of `init --client`.
func clientNames() string {
	var names []string
	for _, c := range clientconfig.Clients {
		names = append(names, c.Name)
	}
	return strings.Join(names, ", ")
}

// initClientOpts are the flags of `init --client`.
type initClientOpts struct {
	client, config, name, command, file string
	write                               bool
}

// runInitClient prints the proxy's entry for a client (o.client), or with
// o.write adds it to the client's file. The entry starts this binary (or
// o.command) with `serve --config` and the absolute path of o.config,
// which is written as the starter config first when it does not exist.
func runInitClient(o initClientOpts, stdout, stderr io.Writer) int {
	c, err := clientconfig.ClientNamed(o.client)
	if err != nil {
		var names []string
		for _, c := range clientconfig.Clients {
			names = append(names, c.Name)
		}
		if n := config.Suggest(o.client, names); n != "" {
			fmt.Fprintf(stderr, "mcp-toolsearch init: --client: %v (did you mean %q?)\n", err, n)
		} else {
			fmt.Fprintf(stderr, "mcp-toolsearch init: --client: %v\n", err)
		}
		return exitUsage
	}
	cfgPath, err := filepath.Abs(o.config)
	if err != nil {
		fmt.Fprintf(stderr, "mcp-toolsearch init: %v\n", err)
		return exitFail
	}
	if _, err := os.Stat(cfgPath); errors.Is(err, os.ErrNotExist) {
		if code := writeNew(cfgPath, []byte(starterConfig), false, "init", stderr); code != exitOK {
			return code
		}
		fmt.Fprintf(stderr, "wrote the starter config %s (edit its [upstreams]; mcp-toolsearch check --config %s starts each once)\n", cfgPath, cfgPath)
	} else if _, err := config.Load(cfgPath); err != nil {
		fmt.Fprintf(stderr, "warning: %v\n(the client will fail to start the proxy until this is fixed; mcp-toolsearch check --config %s)\n", err, cfgPath)
	}
	command := o.command
	if command == "" {
		command = selfCommand(stderr)
	}
	args := []string{"serve", "--config", cfgPath}
	home, _ := os.UserHomeDir()
	dir, _ := os.Getwd()
	file := o.file
	if file == "" {
		file = c.File(clientconfig.Env{GOOS: runtime.GOOS, Home: home, Dir: dir, Getenv: os.Getenv})
	}
	if !o.write {
		snippet, err := c.Snippet(o.name, command, args)
		if err != nil {
			fmt.Fprintf(stderr, "mcp-toolsearch init: %v\n", err)
			return exitUsage
		}
		_, _ = stdout.Write(snippet)
		fmt.Fprintf(stderr, "%s reads its MCP servers from %s\n(here: %s). Add the entry above to it, or run this again with --write to add it.\n", c.Title, c.Where, file)
		for _, n := range c.Notes {
			fmt.Fprintln(stderr, "note: "+n)
		}
		return exitOK
	}
	existing, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(stderr, "mcp-toolsearch init: %v\n", err)
		return exitFail
	}
	out, replaced, err := c.Merge(existing, o.name, command, args)
	if err != nil {
		fmt.Fprintf(stderr, "mcp-toolsearch init: %s: %v\n", file, err)
		if snippet, serr := c.Snippet(o.name, command, args); serr == nil {
			fmt.Fprintf(stderr, "add this entry by hand:\n%s", snippet)
		}
		return exitFail
	}
	if err := clientconfig.WriteFile(file, out); err != nil {
		fmt.Fprintf(stderr, "mcp-toolsearch init: %v\n", err)
		return exitFail
	}
	verb := "added"
	if replaced {
		verb = "replaced"
	}
	fmt.Fprintf(stderr, "%s the server %q in %s; restart %s (or reload its MCP servers) to use it\n", verb, o.name, file, c.Title)
	for _, n := range c.Notes {
		fmt.Fprintln(stderr, "note: "+n)
	}
	return exitOK
}

// selfCommand is the absolute path of this binary, for a client to start.
// A binary built by `go run` lives in a temporary folder that is gone
// once it exits: then the entry starts "mcp-toolsearch" from the client's
// PATH, and says how to install it.
func selfCommand(stderr io.Writer) string {
	exe, err := os.Executable()
	if err == nil {
		if p, err2 := filepath.EvalSymlinks(exe); err2 == nil {
			exe = p
		}
	}
	if err != nil || strings.Contains(filepath.ToSlash(exe), "/go-build") {
		fmt.Fprintln(stderr, "note: this binary was built by `go run` and is deleted when it exits; the entry starts `mcp-toolsearch` from the client's PATH: install it (go build -o /usr/local/bin/mcp-toolsearch .) or pass --command PATH")
		return "mcp-toolsearch"
	}
	return exe
}
