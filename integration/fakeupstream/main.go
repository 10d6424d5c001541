// Command fakeupstream runs one scenario of the deliberately broken MCP
// server of internal/fakeupstream over stdio (the end-to-end tests of
// issue 13 use it as an upstream).
//
//	fakeupstream -scenario NAME
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/fakeupstream"
)

func main() {
	scenario := flag.String("scenario", "plain", "scenario name (internal/fakeupstream.Named)")
	flag.Parse()
	sc := fakeupstream.Named(*scenario)
	if sc == nil {
		fmt.Fprintf(os.Stderr, "fakeupstream: unknown scenario %q\n", *scenario)
		os.Exit(2)
	}
	fakeupstream.Serve(sc, os.Stdin, os.Stdout)
}
