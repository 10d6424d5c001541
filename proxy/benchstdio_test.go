//go:build unix

package proxy

// BenchmarkStdioFront drives the proxy's real stdio path in-process:
// raw JSON-RPC lines over OS pipes into runStdio (the
// front's own transport and its tools/call fast path), the proxy's own
// stdio transport to an examples/catalogserver child, and the answer lines
// back. The client is a line writer and a line reader, so nearly all of
// what a profile or an instruction count sees is the proxy's. It is what
// the integration bench's stdio cells measure (BenchmarkOverhead), without
// a second process, so that
//
//	go test -c -o /tmp/proxy.test ./proxy
//	GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.out \
//	  /tmp/proxy.test -test.run XXX -test.bench 'StdioFront/direct/2026/c1' -test.benchtime 2000x
//
// counts the instructions of a proxied call (the child is not traced), and
// the proxy ends cleanly (callgrind writes its file at exit). With
// MCPTS_BENCH_CALLGRIND=1 the benchmark zeroes the counts after its
// warm-up and dumps them after the b.N calls (callgrind_control), so
// /tmp/cg.out.1 holds the calls alone: its total over b.N is the
// instructions per call. With
// MCPTS_BENCH_CATALOGSERVER naming a prebuilt examples/catalogserver no
// `go build` runs in the process.
//
// Sub-benchmarks: mode (direct: gh__list_issues; tool_call: tools mode,
// trusted upstream, as the integration bench), client protocol version
// (2026: the _meta triple on every request; 2025: initialize first),
// concurrency (c1: one call at a time; c16: up to 16 in flight).

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/front"
	"github.com/mcp-toolsearch/mcp-toolsearch/internal/linewrite"
)

func BenchmarkStdioFront(b *testing.B) {
	cs := os.Getenv("MCPTS_BENCH_CATALOGSERVER") // a prebuilt examples/catalogserver (callgrind: no go build child)
	if cs == "" {
		cs = benchCatalogServer(b)
	} else {
		// Under valgrind: the children's SIGCHLD trips callgrind
		// (vgCallgrind_post_signal assertion, valgrind 3.19); ignored, the
		// kernel reaps them.
		signal.Ignore(syscall.SIGCHLD)
	}
	cat, err := filepath.Abs("../examples/catalogs/github-like.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	for _, mode := range []string{"direct", "tool_call"} {
		for _, version := range []string{"2026", "2025"} {
			for _, conc := range []int{1, 16} {
				b.Run(fmt.Sprintf("%s/%s/c%d", mode, version, conc), func(b *testing.B) {
					benchStdioFront(b, cs, cat, mode == "tool_call", version == "2026", conc)
				})
			}
		}
	}
}

func benchStdioFront(b *testing.B, cs, cat string, toolCall, modern bool, conc int) {
	search := "[tool_search]\nenabled = false\n"
	trusted := ""
	if toolCall {
		search, trusted = "[tool_search]\nenabled = true\nmode = \"tools\"\n", "trusted = true\n"
	}
	p := startProxyText(b, fmt.Sprintf("%s\n[upstreams.gh]\ncommand = %q\nargs = [\"-tools\", %q]\n%s", search, cs, cat, trusted))
	inR, inW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	fs := front.NewStdio(inR, linewrite.New(outW), 1<<20)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.runStdio(ctx, fs) }()
	defer func() { cancel(); inW.Close(); <-done; outW.Close(); outR.Close() }()
	answers := bufio.NewReaderSize(outR, 64<<10)
	// answer reads lines until the answer to a request (skipping
	// notifications); ok is false for an error answer.
	answer := func() (line []byte, ok bool) {
		for {
			l, err := answers.ReadSlice('\n')
			if err != nil {
				b.Fatalf("reading the proxy's answers: %v", err)
			}
			if !bytes.Contains(l, []byte(`"id":`)) {
				continue
			}
			return l, !bytes.Contains(l, []byte(`"error":`)) && !bytes.Contains(l, []byte(`"isError":true`))
		}
	}
	readAnswer := func() {
		if l, ok := answer(); !ok {
			b.Fatalf("error answer: %s", l)
		}
	}
	const trip = `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench","version":"0"},"io.modelcontextprotocol/clientCapabilities":{}`
	args := `{"owner":"octo","repo":"hello","state":"open"}`
	params := `{"name":"gh__list_issues","arguments":` + args + `}`
	if toolCall {
		params = `{"name":"tool_call","arguments":{"id":"mcp:gh:list_issues","args":` + args + `}}`
	}
	if modern {
		params = `{"_meta":{` + trip + `},` + params[1:]
	} else {
		fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}`+"\n", legacyVersion)
		readAnswer()
		fmt.Fprintln(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	}
	w := bufio.NewWriterSize(inW, 64<<10)
	id := 0
	send := func() {
		id++
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`+"\n", id, params)
	}
	// The upstream's tools are listed once it is up (slow under valgrind).
	for deadline := time.Now().Add(2 * time.Minute); ; {
		send()
		w.Flush()
		l, ok := answer()
		if ok {
			break
		}
		if time.Now().After(deadline) || !bytes.Contains(l, []byte("unknown tool")) {
			b.Fatalf("first call: %s", l)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for i := 0; i < 200; i++ { // warm-up: sessions, pools, warm goroutines
		send()
		w.Flush()
		readAnswer()
	}
	b.ReportAllocs()
	callgrind(b, "-z") // zero the counts: start-up and warm-up not counted
	b.ResetTimer()
	inFlight := 0
	for sent := 0; sent < b.N; {
		for inFlight < conc && sent < b.N {
			send()
			sent++
			inFlight++
		}
		w.Flush()
		readAnswer()
		inFlight--
	}
	for ; inFlight > 0; inFlight-- {
		readAnswer()
	}
	b.StopTimer()
	callgrind(b, "-d") // dump the counts of the b.N calls
}

// callgrind runs callgrind_control with op on this process when
// MCPTS_BENCH_CALLGRIND is set (the benchmark runs under callgrind): -z
// zeroes the counts, -d dumps them into a file of their own
// (<callgrind-out-file>.<n>), so a dump holds the calls alone.
func callgrind(b *testing.B, op string) {
	if os.Getenv("MCPTS_BENCH_CALLGRIND") == "" || b.N < 2 {
		return
	}
	// SIGCHLD is ignored under callgrind (above): the kernel reaps the
	// child, so its wait fails with ECHILD after it ran.
	if out, err := exec.Command("callgrind_control", op, strconv.Itoa(os.Getpid())).CombinedOutput(); err != nil && !errors.Is(err, syscall.ECHILD) {
		b.Fatalf("callgrind_control %s: %v\n%s", op, err, out)
	}
}
