package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// reloadOn re-reads the tools file on each signal in sigs (SIGHUP, see
// reload_unix.go) and replaces the served tools with it: tools that are new
// or changed are added again, tools that are gone are removed, and the
// go-sdk tells connected clients with notifications/tools/list_changed.
// Tests use it to change a tool's definition after start (a "rug pull"). A file that cannot be read keeps the tools as they are.
func reloadOn(sigs []os.Signal, s *mcp.Server, path string, load LoadOptions, opts Options, served []Tool, stderr io.Writer) {
	if len(sigs) == 0 {
		return
	}
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, sigs...)
	go func() {
		names := map[string]bool{}
		for _, t := range served {
			names[t.Tool.Name] = true
		}
		for range ch {
			f, err := os.Open(path)
			if err != nil {
				fmt.Fprintf(stderr, "catalogserver: reload: %v\n", err)
				continue
			}
			tools, err := LoadTools(f, load)
			f.Close()
			if err != nil {
				fmt.Fprintf(stderr, "catalogserver: reload: %s: %v\n", path, err)
				continue
			}
			now := map[string]bool{}
			for _, t := range tools {
				now[t.Tool.Name] = true
				addTool(s, t, opts.Logger, opts)
			}
			var gone []string
			for n := range names {
				if !now[n] {
					gone = append(gone, n)
				}
			}
			if len(gone) > 0 {
				s.RemoveTools(gone...)
			}
			names = now
			fmt.Fprintf(stderr, "catalogserver: reloaded %d tools from %s\n", len(tools), path)
		}
	}()
}
