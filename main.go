// Command mcp-toolsearch is an MCP catalog proxy: it connects to many
// upstream MCP servers and presents them to any MCP client as one server
// with a compact tool surface. main only wires packages; see README.md.
package main

import (
	"os"

	"github.com/mcp-toolsearch/mcp-toolsearch/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
