// Command catalogserver is an example MCP server (official go-sdk) that
// serves any tool catalog in the JSON Lines format of the benchmark data:
// one {"id", "server", "name", "description", "inputSchema", ...} object a
// line. Every tool answers with a deterministic echo of its name and
// arguments (see EchoResult), so it stands in for a large real upstream in
// tests, benchmarks and demos. With -demo every result also says, in a
// second text block (DemoNote), that the tool is a stub and nothing was done.
//
// Usage:
//
//	catalogserver -tools FILE [-server NAME] [-limit N] [-name NAME] [-keep-names] [-page-size N]
//	              [-protocol-versions V1,V2] [-http ADDR [-stateless]] [-v] [-output-schema NAME=JSON ...] [-interactive] [-demo] [-list-gate FILE]
//
// With no -http it speaks MCP over stdio. With -http ADDR (e.g.
// 127.0.0.1:0) it serves Streamable HTTP at http://ADDR/mcp and prints one
// line "catalogserver: N tools on http://HOST:PORT/mcp" to stderr once it
// listens (the real port when ADDR ends in :0).
//
// On SIGHUP (Unix) it reads FILE again and serves the tools it now holds
// (changed and new ones added, missing ones removed); connected clients get
// notifications/tools/list_changed.
//
// Exit status: 0 on clean shutdown (stdin EOF, SIGINT/SIGTERM), 2 on bad
// flags or an unreadable catalog, 1 on a serve error.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

// run is main with its arguments and error stream; it returns the exit status.
func run(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("catalogserver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	toolsFile := fs.String("tools", "", "tools.jsonl to serve (required)")
	server := fs.String("server", "", `keep only tools whose "server" field equals NAME`)
	limit := fs.Int("limit", 0, "serve only the first N tools (after -server); 0 = all")
	name := fs.String("name", "catalogserver", "serverInfo.name sent in the initialize result")
	keep := fs.Bool("keep-names", false, "serve names as in the file (made unique only), even if the SDK name rule rejects them")
	pageSize := fs.Int("page-size", 0, "tools per tools/list page (0 = go-sdk default 1000)")
	versions := fs.String("protocol-versions", "", "comma list of MCP protocol versions to support (default: all the go-sdk supports)")
	httpAddr := fs.String("http", "", "serve Streamable HTTP on ADDR at /mcp instead of stdio")
	stateless := fs.Bool("stateless", false, "with -http: a stateless Streamable HTTP handler (no sessions; the go-sdk serves protocol 2026-07-28 on Streamable HTTP only so)")
	verbose := fs.Bool("v", false, "log requests at debug level to stderr")
	rpcErr := fs.String("rpc-error-tool", "", "comma list of tools that answer with the JSON-RPC error -32603 (tests)")
	isErr := fs.String("is-error-tool", "", "comma list of tools whose echo is marked isError (tests)")
	noPing := fs.Bool("no-ping", false, "answer ping with -32601 method not found (tests)")
	demo := fs.Bool("demo", false, "add to every result a text block saying the tool is a demo stub that only echoed its arguments (the default config.toml's catalogs)")
	interactive := fs.Bool("interactive", false, "add the tools confirm (asks the client a question) and toggle (adds/removes the tool extra: tools/list_changed)")
	listGateFile := fs.String("list-gate", "", "answer tools/list only once FILE exists (tests: an upstream slow to list)")
	slow := fs.String("slow-tool", "", "comma list of NAME=DURATION: tools that answer after DURATION unless cancelled (tests)")
	rpcErrors := map[string]*jsonrpc.Error{}
	fs.Func("rpc-error", `NAME=JSON: tool NAME answers every call with the JSON-RPC error JSON, e.g. {"code":-32042,"message":"MCP error -32042: …","data":{…}} (repeatable; tests)`, func(v string) error {
		k, js, ok := strings.Cut(v, "=")
		var e jsonrpc.Error
		if !ok || k == "" || json.Unmarshal([]byte(js), &e) != nil || e.Code == 0 {
			return fmt.Errorf("want NAME={\"code\":N,\"message\":…}, got %q", v)
		}
		rpcErrors[k] = &e
		return nil
	})
	outSchemas := map[string]json.RawMessage{}
	fs.Func("output-schema", "NAME=JSON: declare JSON as the outputSchema of tool NAME (repeatable; the echo is not made to match it: tests)", func(v string) error {
		k, schema, ok := strings.Cut(v, "=")
		if !ok || k == "" || !json.Valid([]byte(schema)) {
			return fmt.Errorf("want NAME=JSON, got %q", v)
		}
		outSchemas[k] = json.RawMessage(schema)
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *toolsFile == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "catalogserver: need -tools FILE and no positional arguments")
		fs.Usage()
		return 2
	}
	f, err := os.Open(*toolsFile)
	if err != nil {
		fmt.Fprintf(stderr, "catalogserver: %v\n", err)
		return 2
	}
	tools, err := LoadTools(f, LoadOptions{Server: *server, Limit: *limit, KeepNames: *keep})
	f.Close()
	if err != nil {
		fmt.Fprintf(stderr, "catalogserver: %s: %v\n", *toolsFile, err)
		return 2
	}
	if len(tools) == 0 {
		fmt.Fprintf(stderr, "catalogserver: %s: no tools selected (server filter %q)\n", *toolsFile, *server)
		return 2
	}
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	var pv []string
	if *versions != "" {
		pv = strings.Split(*versions, ",")
		for _, v := range pv {
			if !slices.Contains(mcp.SupportedProtocolVersions(), v) {
				fmt.Fprintf(stderr, "catalogserver: -protocol-versions: %q is not one of %v\n", v, mcp.SupportedProtocolVersions())
				return 2
			}
		}
	}
	opts := Options{PageSize: *pageSize, ProtocolVersions: pv, Logger: logger, SlowTools: map[string]time.Duration{}, OutputSchemas: outSchemas, NoPing: *noPing, RPCErrors: rpcErrors, Interactive: *interactive, Demo: *demo, ListGate: *listGateFile}
	if *rpcErr != "" {
		opts.RPCErrorTools = strings.Split(*rpcErr, ",")
	}
	if *isErr != "" {
		opts.IsErrorTools = strings.Split(*isErr, ",")
	}
	if *slow != "" {
		for _, kv := range strings.Split(*slow, ",") {
			k, v, ok := strings.Cut(kv, "=")
			d, err := time.ParseDuration(v)
			if !ok || err != nil {
				fmt.Fprintf(stderr, "catalogserver: -slow-tool %q: want NAME=DURATION\n", kv)
				return 2
			}
			opts.SlowTools[k] = d
		}
	}
	s := NewServer(*name, tools, opts)
	reloadOn(reloadSignals, s, *toolsFile, LoadOptions{Server: *server, Limit: *limit, KeepNames: *keep}, opts, tools, stderr) // SIGHUP: re-read -tools

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if *httpAddr == "" {
		if err := s.Run(ctx, &mcp.StdioTransport{}); err != nil && !errors.Is(err, context.Canceled) {
			fmt.Fprintf(stderr, "catalogserver: %v\n", err)
			return 1
		}
		return 0
	}

	ln, err := net.Listen("tcp", *httpAddr)
	if err != nil {
		fmt.Fprintf(stderr, "catalogserver: %v\n", err)
		return 2
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: *stateless}))
	hs := &http.Server{Handler: mux}
	fmt.Fprintf(stderr, "catalogserver: %d tools on http://%s/mcp\n", len(tools), ln.Addr())
	go func() {
		<-ctx.Done()
		hs.Close()
	}()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(stderr, "catalogserver: %v\n", err)
		return 1
	}
	return 0
}
