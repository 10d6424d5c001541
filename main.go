// Command mcp-toolsearch is an MCP catalog proxy: it connects to many
// upstream MCP servers and presents them to any MCP client as one server
// with a compact tool surface. main only wires packages; see README.md.
package main

import (
	"os"

	"github.com/mcp-toolsearch/mcp-toolsearch/cli"
	"github.com/mcp-toolsearch/mcp-toolsearch/proc"
)

func main() {
	// The hidden reaper role (package proc): kills the process groups of
	// this process's children when it dies, even by SIGKILL.
	if len(os.Args) == 2 && os.Args[1] == proc.ReaperArg {
		os.Exit(proc.ReaperMain())
	}
	proc.EnableReaper()
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
