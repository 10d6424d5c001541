package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
)

// startProxies starts n proxies over one test upstream with config base
// (%[1]s is the upstream URL) and serves them behind one URL that sends
// each HTTP request to the next proxy in turn (round robin, no affinity),
// like a load balancer. It returns the URL.
func startProxies(t *testing.T, n int, base string) (string, *testUpstream) {
	t.Helper()
	up := startTestUpstream(t)
	text := fmt.Sprintf(base, tomlQuote(up.URL))
	var hs []http.Handler
	for range n {
		hs = append(hs, startProxyText(t, text).Handler(nil))
	}
	var next atomic.Uint64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hs[next.Add(1)%uint64(n)].ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, up
}

const statelessConfig = `
[server]
transport = "http"
stateless = true
[upstreams.t]
url = %[1]s
`

// TestStatelessAnyReplica: with server.stateless = true, clients of both
// protocol generations (go-sdk at 2026-07-28 and at 2025-11-25, mcp-go at
// its default) list and call through two proxies that answer alternate
// HTTP requests: no request needs the process that saw the previous one.
func TestStatelessAnyReplica(t *testing.T) {
	url, up := startProxies(t, 2, statelessConfig)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, version := range []string{"", "2025-11-25"} {
		c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url + "/mcp", MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatalf("connect (version %q): %v", version, err)
		}
		want := version
		if want == "" {
			want = modernVersion
		}
		if got := cs.InitializeResult().ProtocolVersion; got != want {
			t.Errorf("negotiated %q, want %q", got, want)
		}
		for i := range 4 {
			lt, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatalf("%s tools/list %d: %v", want, i, err)
			}
			if len(lt.Tools) == 0 || !strings.HasPrefix(lt.Tools[0].Name, "t__") {
				t.Fatalf("%s tools/list: %v", want, lt.Tools)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "t__echo", Arguments: map[string]any{"i": i}})
			if err != nil || res.IsError {
				t.Fatalf("%s tools/call %d: %v %v", want, i, err, res)
			}
		}
		_ = cs.Close()
	}
	if got := up.count("echo"); got != 8 {
		t.Errorf("upstream saw %d echo calls, want 8", got)
	}

	mc, err := mcpgoclient.NewStreamableHttpClient(url + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	defer mc.Close()
	if err := mc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := mc.Initialize(ctx, mcpgo.InitializeRequest{Params: mcpgo.InitializeParams{ClientInfo: mcpgo.Implementation{Name: "mcpgo", Version: "1"}}}); err != nil {
		t.Fatalf("mcp-go initialize: %v", err)
	}
	if v := mc.ProtocolVersion(); v != modernVersion {
		t.Errorf("mcp-go negotiated %q, want %q", v, modernVersion)
	}
	for i := range 4 {
		r, err := mc.CallTool(ctx, mcpgo.CallToolRequest{Params: mcpgo.CallToolParams{Name: "t__echo", Arguments: map[string]any{"i": i}}})
		if err != nil || r.IsError {
			t.Fatalf("mcp-go tools/call %d: %v %v", i, err, r)
		}
	}
}

// TestStatefulFront2026Routing: the default (stateful) front with
// route2026 off (today) offers up to 2025-11-25 and mcp-go v1.2.1 (which
// starts with server/discover) falls back to initialize; with route2026 on
// it is served at 2026-07-28 on the stateless path. Legacy
// clients keep their sessions either way.
func TestStatefulFront2026Routing(t *testing.T) {
	for _, on := range []bool{false, true} {
		t.Run(fmt.Sprintf("route2026=%v", on), func(t *testing.T) {
			old := route2026
			route2026 = on
			defer func() { route2026 = old }()
			p, up := testProxy(t, `
[server]
transport = "http"
[upstreams.t]
url = %[1]s
`)
			url := frontURL(t, p)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()

			mc, err := mcpgoclient.NewStreamableHttpClient(url)
			if err != nil {
				t.Fatal(err)
			}
			defer mc.Close()
			if err := mc.Start(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := mc.Initialize(ctx, mcpgo.InitializeRequest{Params: mcpgo.InitializeParams{ClientInfo: mcpgo.Implementation{Name: "mcpgo", Version: "1"}}}); err != nil {
				t.Fatalf("mcp-go initialize: %v", err)
			}
			want := "2025-11-25"
			if on {
				want = modernVersion
			}
			if v := mc.ProtocolVersion(); v != want {
				t.Errorf("mcp-go negotiated %q, want %q", v, want)
			}
			if _, err := mc.ListTools(ctx, mcpgo.ListToolsRequest{}); err != nil {
				t.Fatalf("mcp-go tools/list at %s: %v", want, err)
			}
			if r, err := mc.CallTool(ctx, mcpgo.CallToolRequest{Params: mcpgo.CallToolParams{Name: "t__echo", Arguments: map[string]any{}}}); err != nil || r.IsError {
				t.Fatalf("mcp-go tools/call: %v %v", err, r)
			}

			c := mcp.NewClient(&mcp.Implementation{Name: "legacy", Version: "1"}, nil)
			cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if cs.ID() == "" {
				t.Error("a 2025-11-25 client of the stateful front got no Mcp-Session-Id")
			}
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "t__echo", Arguments: map[string]any{}}); err != nil {
				t.Fatal(err)
			}
			if got := up.count("echo"); got != 2 {
				t.Errorf("upstream saw %d calls, want 2", got)
			}
		})
	}
}

// TestStatelessRefusals: what server.stateless = true does not serve is
// refused with the reason: SSE (404), GET and DELETE on /mcp (405, no
// session to stream or end), resources/subscribe; and configs that need
// per-client state do not load.
func TestStatelessRefusals(t *testing.T) {
	url, _ := startProxies(t, 1, statelessConfig)
	resp, err := http.Get(url + "/sse")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "server.stateless = true") {
		t.Errorf("GET /sse: %d %q, want 404 naming server.stateless", resp.StatusCode, body)
	}
	for _, m := range []string{http.MethodGet, http.MethodDelete} {
		req, _ := http.NewRequest(m, url+"/mcp", nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", "abc")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s /mcp: %d, want 405", m, resp.StatusCode)
		}
	}

	for _, tc := range []struct{ extra, want string }{
		{"[upstreams.t]\ncommand = \"x\"\nsession = \"per-client\"\n", "upstreams.t.session"},
		{"[upstreams.t]\ncommand = \"x\"\n[tools.by_client.\"claude*\"]\ndeny = [\"t\"]\n", "by_client"},
		{"", ""},
	} {
		text := "[server]\ntransport = \"http\"\nstateless = true\n" + tc.extra
		if tc.extra == "" {
			text = "[server]\nstateless = true\n[upstreams.t]\ncommand = \"x\"\n"
			tc.want = "server.stateless"
		}
		_, err := config.Parse([]byte(text), "", func(string) (string, bool) { return "", false })
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("config %q: error %v, want one naming %s", text, err, tc.want)
		}
	}
}

// BenchmarkFrontHTTP: one tools/call of tool_describe (answered by the
// proxy itself, no upstream call) over Streamable HTTP, per front: a
// stateful session at 2025-11-25, a stateless replica at 2025-11-25, and a
// stateless replica at 2026-07-28. The difference is what a request costs
// without a session (the go-sdk connects a temporary ServerSession per
// request).
//
//	go test ./proxy -run XXX -bench FrontHTTP -benchmem
func BenchmarkFrontHTTP(b *testing.B) {
	for _, tc := range []struct{ name, stateless, version string }{
		{"stateful-2025-11-25", "false", "2025-11-25"},
		{"stateless-2025-11-25", "true", "2025-11-25"},
		{"stateless-2026-07-28", "true", ""},
	} {
		b.Run(tc.name, func(b *testing.B) {
			up := startTestUpstream(&testing.T{})
			p := startProxyText(b, fmt.Sprintf("[server]\ntransport = \"http\"\nstateless = %s\n[tool_search]\nenabled = true\nmode = \"tools\"\n[upstreams.t]\nurl = %s\n", tc.stateless, tomlQuote(up.URL)))
			ctx := context.Background()
			c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
			cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: frontURL(b, p)}, &mcp.ClientSessionOptions{ProtocolVersion: tc.version})
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			params := &mcp.CallToolParams{Name: "tool_describe", Arguments: map[string]any{"id": "t__echo"}}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if r, err := cs.CallTool(ctx, params); err != nil || r.IsError {
					b.Fatal(err, r)
				}
			}
		})
	}
}

// TestStatelessListChanged: a 2026-07-28 client of a stateless replica
// that asks for tools/list_changed (the go-sdk opens subscriptions/listen
// when it has a ToolListChangedHandler) is told when an upstream adds a
// tool, and its next tools/list has it.
func TestStatelessListChanged(t *testing.T) {
	upSrv := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "1"}, nil)
	upSrv.AddTool(&mcp.Tool{Name: "one", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "1"}}}, nil
	})
	uh := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return upSrv }, nil))
	t.Cleanup(uh.Close)
	url := frontURL(t, startProxyText(t, fmt.Sprintf(statelessConfig, tomlQuote(uh.URL))))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	changed := make(chan struct{}, 4)
	c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != modernVersion {
		t.Fatalf("negotiated %q", v)
	}
	upSrv.AddTool(&mcp.Tool{Name: "two", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "2"}}}, nil
	})
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("no notifications/tools/list_changed through subscriptions/listen")
	}
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range lt.Tools {
		names = append(names, tool.Name)
	}
	if !slices.Contains(names, "t__two") {
		t.Errorf("tools after the change: %v, want t__two among them", names)
	}
}

// TestListenNoListChangedForNothing: a 2026-07-28 client's
// subscriptions/listen stream, on the default front and on a stateless
// one, is told notifications/tools/list_changed only when its tools/list
// answer changes. Before, its proxy session had no surface mark and every
// catalog event reached it: an upstream that re-listed the same tools
// (every restart of a killed upstream did, three times) made the client
// re-list for nothing, while a 2025 session was told nothing.
func TestListenNoListChangedForNothing(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		upSrv := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "1"}, nil)
		one := &mcp.Tool{Name: "one", InputSchema: json.RawMessage(`{"type":"object"}`)}
		h := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "1"}}}, nil
		}
		upSrv.AddTool(one, h)
		uh := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return upSrv }, nil))
		t.Cleanup(uh.Close)
		cfg := fmt.Sprintf("[server]\ntransport = \"http\"\nstateless = %v\n[upstreams.t]\nurl = %s\n", stateless, tomlQuote(uh.URL))
		url := frontURL(t, startProxyText(t, cfg))
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()

		changed := make(chan struct{}, 16)
		c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
		})
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if v := cs.InitializeResult().ProtocolVersion; v != modernVersion {
			t.Fatalf("negotiated %q", v)
		}
		// The same tool again: the upstream says its list changed, the
		// proxy re-lists it, and nothing the client sees changed.
		upSrv.AddTool(one, h)
		time.Sleep(time.Second) // room for a wrong notification to arrive first
		upSrv.AddTool(&mcp.Tool{Name: "two", InputSchema: json.RawMessage(`{"type":"object"}`)}, h)
		n := 0
		for {
			select {
			case <-changed:
			case <-ctx.Done():
				t.Fatal("no notifications/tools/list_changed for the new tool")
			}
			n++
			lt, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if slices.ContainsFunc(lt.Tools, func(tl *mcp.Tool) bool { return tl.Name == "t__two" }) {
				break
			}
		}
		if n != 1 {
			t.Errorf("stateless=%v: %d notifications/tools/list_changed before the one for the new tool, want none", stateless, n-1)
		}
		cs.Close()
	}
}
