// Command fakeupstream runs one scenario of the deliberately broken MCP
// server of internal/fakeupstream over stdio (the end-to-end fault tests
// use it as an upstream).
//
//	fakeupstream -scenario NAME [-init-delay DURATION] [-prefix NAME] [-bom]
//
// -bom writes a UTF-8 byte order mark before its first output (as some
// Windows programs do).
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/fakeupstream"
)

func main() {
	scenario := flag.String("scenario", "plain", "scenario name (internal/fakeupstream.Named)")
	initDelay := flag.Duration("init-delay", 0, "answer initialize only after this long (1h: never, in practice)")
	bom := flag.Bool("bom", false, "write a UTF-8 byte order mark (EF BB BF) before the first line")
	flag.Parse()
	sc := fakeupstream.Named(*scenario)
	if sc == nil {
		fmt.Fprintf(os.Stderr, "fakeupstream: unknown scenario %q\n", *scenario)
		os.Exit(2)
	}
	if d := *initDelay; d > 0 {
		before := sc.OnLine
		sc.OnLine = func(s *fakeupstream.Session, m *fakeupstream.Msg) {
			if m.Method == "initialize" {
				time.Sleep(d)
			}
			if before != nil {
				before(s, m)
			}
		}
	}
	if *bom {
		os.Stdout.Write([]byte("\xEF\xBB\xBF"))
	}
	fakeupstream.Serve(sc, os.Stdin, os.Stdout)
}
