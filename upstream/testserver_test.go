package upstream

//lint:file-ignore SA1019 sampling, roots and logging are deprecated from protocol 2026-07-28 on; clients and servers of earlier protocols still use them

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/fakeupstream"
)

// testServerEnv selects the test MCP server mode when the test binary is
// re-executed as a stdio upstream. The value is a comma-separated list of
// flags:
//
//	plain        no special behaviour
//	banner       print a non-JSON banner line on stdout before serving
//	repeatcursor tools/list always answers nextCursor "again" (and treats
//	             cursor "again" as the first page)
//	trapterm     ignore SIGTERM and keep running after stdin closes
//	failstart    write "boom: bad config" to stderr and exit 1
//	hang         never answer anything
//	fake:NAME    the raw fake server scenario NAME (internal/fakeupstream)
//	extras       also the tool progress (owntoolcall_test.go)
//	noping       answer ping with -32601 (method not found), as servers
//	             that do not implement it do
const testServerEnv = "UPSTREAM_TESTSERVER"

// testServerRecordEnv, when set, names a file the stdio test server
// appends every line it reads to (the frames the proxy sent).
const testServerRecordEnv = "UPSTREAM_TESTSERVER_RECORD"

func TestMain(m *testing.M) {
	if mode := os.Getenv(testServerEnv); mode != "" {
		runTestServer(mode)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func hasFlag(mode, flag string) bool {
	for _, f := range strings.Split(mode, ",") {
		if f == flag {
			return true
		}
	}
	return false
}

func runTestServer(mode string) {
	var in io.Reader = os.Stdin
	if path := os.Getenv(testServerRecordEnv); path != "" {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		in = io.TeeReader(os.Stdin, f)
	}
	if name, ok := strings.CutPrefix(mode, "fake:"); ok {
		fakeupstream.Serve(fakeupstream.Named(name), in, os.Stdout)
		return
	}
	if hasFlag(mode, "failstart") {
		fmt.Fprintln(os.Stderr, "loading config")
		fmt.Fprintln(os.Stderr, "boom: bad config")
		os.Exit(1)
	}
	if hasFlag(mode, "trapterm") {
		signal.Ignore(syscall.SIGTERM)
	}
	if hasFlag(mode, "garbage") {
		// Not an MCP server: a line of text, a stray answer, then it reads
		// stdin until it is closed and exits 0.
		fmt.Println("hello this is not json")
		fmt.Println(`{"jsonrpc":"2.0","id":999,"result":{}}`)
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}
	if hasFlag(mode, "flood") {
		// Not an MCP server: text lines on stdout until the pipe closes.
		w := bufio.NewWriter(os.Stdout)
		for {
			if _, err := w.WriteString("not json at all\n"); err != nil {
				os.Exit(0)
			}
		}
	}
	if hasFlag(mode, "hang") {
		for {
			time.Sleep(time.Hour)
		}
	}
	if hasFlag(mode, "banner") {
		fmt.Println("test server v1 starting (this banner is not JSON)")
	}
	fmt.Fprintln(os.Stderr, "test server serving on stdio")
	s := newTestServer(mode, true)
	var tr mcp.Transport = &mcp.StdioTransport{}
	if in != os.Stdin {
		tr = &mcp.IOTransport{Reader: io.NopCloser(in), Writer: os.Stdout}
	}
	_ = s.Run(context.Background(), tr)
	if hasFlag(mode, "trapterm") {
		for {
			time.Sleep(time.Hour)
		}
	}
}

// testToolCount is the number of tools newTestServer starts with.
const testToolCount = 5

// newTestServer builds the test MCP server: tools echo, crash (stdio only:
// exits 3 mid-call), add_tool (adds extra_N, which makes the SDK send
// notifications/tools/list_changed), big (a text of N bytes) and sleep (ms,
// honours cancellation); tools/list pages hold 2 tools.
func newTestServer(mode string, stdio bool) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "testserver", Version: "1"}, &mcp.ServerOptions{PageSize: 2, Capabilities: &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}, Tools: &mcp.ToolCapabilities{ListChanged: true}}})
	type echoIn struct {
		Text string `json:"text"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo the text back."}, func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "Exit the server process with status 3."}, func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
		if !stdio {
			return nil, nil, fmt.Errorf("crash is only available over stdio")
		}
		fmt.Fprintln(os.Stderr, "crashing on purpose")
		os.Exit(3)
		return nil, nil, nil
	})
	var added atomic.Int32
	mcp.AddTool(s, &mcp.Tool{Name: "add_tool", Description: "Add a tool extra_N."}, func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
		n := added.Add(1)
		name := fmt.Sprintf("extra_%d", n)
		s.AddTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name}}}, nil
		})
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name}}}, nil, nil
	})
	type bigIn struct {
		Bytes int `json:"bytes"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "big", Description: "Return a text of N bytes."}, func(ctx context.Context, req *mcp.CallToolRequest, in bigIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("x", in.Bytes)}}}, nil, nil
	})
	type sleepIn struct {
		MS int `json:"ms"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "sleep", Description: "Sleep ms milliseconds."}, func(ctx context.Context, req *mcp.CallToolRequest, in sleepIn) (*mcp.CallToolResult, any, error) {
		select {
		case <-time.After(time.Duration(in.MS) * time.Millisecond):
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "slept"}}}, nil, nil
	})
	if hasFlag(mode, "extras") {
		type progressIn struct {
			N int `json:"n"`
		}
		mcp.AddTool(s, &mcp.Tool{Name: "progress", Description: "Send n progress notifications, then answer."}, func(ctx context.Context, req *mcp.CallToolRequest, in progressIn) (*mcp.CallToolResult, any, error) {
			tok := req.Params.GetProgressToken()
			for i := 1; i <= in.N && tok != nil; i++ {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: float64(in.N), Message: fmt.Sprint("step ", i)})
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
		})
	}
	if hasFlag(mode, "slowrelist") {
		// Every listing after the first (a re-listing after list_changed)
		// says so on stderr and is not answered until the client goes.
		var listings atomic.Int32
		s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if method == "tools/list" {
					if p, ok := req.GetParams().(*mcp.ListToolsParams); !ok || p.Cursor == "" {
						if listings.Add(1) > 1 {
							fmt.Fprintln(os.Stderr, "relist held")
							<-ctx.Done()
							return nil, ctx.Err()
						}
					}
				}
				return next(ctx, method, req)
			}
		})
	}
	if hasFlag(mode, "noping") {
		s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if method == "ping" {
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: ping"}
				}
				return next(ctx, method, req)
			}
		})
	}
	if hasFlag(mode, "repeatcursor") {
		s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if method != "tools/list" {
					return next(ctx, method, req)
				}
				if p, ok := req.GetParams().(*mcp.ListToolsParams); ok && p.Cursor == "again" {
					p.Cursor = ""
				}
				res, err := next(ctx, method, req)
				if r, ok := res.(*mcp.ListToolsResult); ok {
					r.NextCursor = "again"
				}
				return res, err
			}
		})
	}
	return s
}
