//go:build unix

package integration

//lint:file-ignore SA1019 sampling, roots and logging are deprecated from protocol 2026-07-28 on; clients and servers of earlier protocols still use them

// Concurrent server-to-client requests on shared upstream sessions reach
// the client whose call caused them, or nobody: never another client.
// 8 and 32 clients (go-sdk clients at 2025-11-25 and at 2026-07-28, over
// the proxy's Streamable HTTP front) call the same tool of one upstream at
// the same moment; each answers sampling and elicitation with its own tag,
// and the tool's result says whose answer it got. Per row and client count:
// relayed (the caller's own answer), refused by the proxy (it cannot tell
// whose the request is), failed otherwise (the server itself refuses, or
// something else), misrouted (another client's answer; must be 0).
//
// Where the caller is knowable the proxy must relay every request:
//   - Streamable HTTP upstream: the request arrives on the call's POST
//     response stream (request identity, proxy/relay_route.go);
//   - session = "per-client": the upstream session is the client's;
//   - protocol = "2026-07-28" and a tool that asks through an
//     input_required result: the question comes back as the call's result.
// Where it is not, refusals are expected: a shared stdio session at the
// initialize era carries nothing that ties sampling/createMessage or
// elicitation/create to the tools/call that caused it (go-sdk v1.8.0,
// TypeScript SDK server-everything and mcp-go v1.2.1 each send a fresh id
// and no reference; checked on the wire), so with calls of several client
// sessions in flight the proxy refuses (relay_route.go).
//
//	go test ./integration -run TestConcurrentClientsRouting -v

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// tagOf is client i's tag: it occurs in no other client's tag.
func tagOf(i int) string { return fmt.Sprintf("who%02dwho", i) }

var tagRE = regexp.MustCompile(`who[0-9]{2}who`)

// taggingClient answers every question with its tag: sampling with
// "sampled by TAG", elicitation by filling each string property without
// choices with TAG (the others as fillValue does).
func taggingClient(tag string) *gosdk.Client {
	return gosdk.NewClient(&gosdk.Implementation{Name: "route-" + tag, Version: "1"}, &gosdk.ClientOptions{
		CreateMessageHandler: func(context.Context, *gosdk.CreateMessageRequest) (*gosdk.CreateMessageResult, error) {
			return &gosdk.CreateMessageResult{Content: &gosdk.TextContent{Text: "sampled by " + tag}, Model: "m", Role: "assistant"}, nil
		},
		ElicitationHandler: func(_ context.Context, r *gosdk.ElicitRequest) (*gosdk.ElicitResult, error) {
			var s struct {
				Properties map[string]map[string]any `json:"properties"`
			}
			b, _ := json.Marshal(r.Params.RequestedSchema)
			_ = json.Unmarshal(b, &s)
			out := map[string]any{}
			for name, p := range s.Properties {
				_, choice := p["enum"]
				_, one := p["oneOf"]
				switch {
				case p["type"] == "string" && !choice && !one && p["format"] == nil:
					out[name] = tag
				case p["format"] == "email":
					out[name] = tag + "@example.com"
				case p["format"] == "uri":
					out[name] = "https://example.com/" + tag
				case p["format"] == "date":
					out[name] = "2024-01-02"
				default:
					out[name] = fillValue(p)
				}
			}
			return &gosdk.ElicitResult{Action: "accept", Content: out}, nil
		},
	})
}

type routeRow struct {
	up, tool string
	args     map[string]any
	feature  string // sampling | elicitation
	knowable string // why the caller is knowable; "" when it is not
}

type routeCount struct{ relayed, refused, failed, misrouted int }

func TestConcurrentClientsRouting(t *testing.T) {
	waitsMostly(t)
	requireNode(t)
	conf := goBinary(t, "gosdk-conformance", "github.com/modelcontextprotocol/go-sdk/conformance/everything-server")
	mgSampling := goBinary(t, "mcpgo-sampling", "github.com/mark3labs/mcp-go/examples/sampling_server")
	mgElicit := goBinary(t, "mcpgo-elicitation", "github.com/mark3labs/mcp-go/examples/elicitation")
	ts := npmServer(t, "everything")
	httpAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	startHTTPServer(t, []string{conf, "-http", httpAddr, "-stateless=false"}, nil, "http://"+httpAddr+"/mcp")
	cfg := fmt.Sprintf(`[tool_search]
enabled = false
[server]
max_sessions = 200
max_sessions_per_subject = 200
[upstreams.gostdio]
command = %[1]q
[upstreams.gostdio2026]
command = %[1]q
protocol = "2026-07-28"
[upstreams.gohttp]
url = "http://%[2]s/mcp"
[upstreams.ts]
command = %[3]q
args = [%[4]q]
[upstreams.mgs]
command = %[5]q
[upstreams.mge]
command = %[6]q
`, conf, httpAddr, ts[0], ts[1], mgSampling, mgElicit)
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	startHTTPServer(t, proxyCmd(t, writeConfig(t, cfg), "--transport", "http", "--listen", addr), nil, "http://"+addr+"/mcp")
	// The per-client upstream on a proxy of its own: with one configured,
	// Streamable HTTP offers clients up to 2025-11-25 (docs/config.md).
	pcAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	startHTTPServer(t, proxyCmd(t, writeConfig(t, fmt.Sprintf("[tool_search]\nenabled = false\n[server]\nmax_sessions = 200\nmax_sessions_per_subject = 200\n[upstreams.gopc]\ncommand = %q\nsession = \"per-client\"\n", conf)), "--transport", "http", "--listen", pcAddr), nil, "http://"+pcAddr+"/mcp")

	const exact2026 = "protocol 2026-07-28: input_required comes back on the call"
	rows := []routeRow{
		{"gostdio", "test_sampling", map[string]any{"prompt": "q"}, "sampling", ""},
		{"gostdio", "test_input_required_result_sampling", nil, "sampling", ""},
		{"gostdio2026", "test_input_required_result_sampling", nil, "sampling", exact2026},
		{"gostdio2026", "test_sampling", map[string]any{"prompt": "q"}, "sampling", ""},
		{"gopc", "test_sampling", map[string]any{"prompt": "q"}, "sampling", "per-client session"},
		{"gohttp", "test_sampling", map[string]any{"prompt": "q"}, "sampling", "Streamable HTTP: the call's POST stream"},
		{"ts", "trigger-sampling-request", map[string]any{"prompt": "q"}, "sampling", ""},
		{"mgs", "ask_llm", map[string]any{"question": "q"}, "sampling", ""},
		{"gostdio", "test_elicitation", map[string]any{"message": "m"}, "elicitation", ""},
		{"gostdio", "test_input_required_result_elicitation", nil, "elicitation", ""},
		{"gostdio2026", "test_input_required_result_elicitation", nil, "elicitation", exact2026},
		{"gostdio2026", "test_elicitation", map[string]any{"message": "m"}, "elicitation", ""},
		{"gopc", "test_elicitation", map[string]any{"message": "m"}, "elicitation", "per-client session"},
		{"gohttp", "test_elicitation", map[string]any{"message": "m"}, "elicitation", "Streamable HTTP: the call's POST stream"},
		{"ts", "trigger-elicitation-request", nil, "elicitation", ""},
		{"mge", "create_project", nil, "elicitation", ""},
	}
	var table strings.Builder
	fmt.Fprintf(&table, "%-10s %-12s %-40s %-11s %-3s  %-29s  %-29s\n", "client", "upstream", "tool", "feature", "", "8 clients rel/ref/fail/mis", "32 clients rel/ref/fail/mis")
	for _, gen := range []string{"2025-11-25", "2026-07-28"} {
		sessions := make([]*gosdk.ClientSession, 32)
		pcSessions := make([]*gosdk.ClientSession, 32)
		var wg sync.WaitGroup
		for i := range sessions {
			wg.Add(2)
			go func() {
				defer wg.Done()
				sessions[i] = connectAt(t, taggingClient(tagOf(i)), &gosdk.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp"}, gen)
			}()
			go func() {
				defer wg.Done()
				pcSessions[i] = connectAt(t, taggingClient(tagOf(i)), &gosdk.StreamableClientTransport{Endpoint: "http://" + pcAddr + "/mcp"}, "2025-11-25")
			}()
		}
		wg.Wait()
		if v := sessions[0].InitializeResult().ProtocolVersion; v != gen {
			t.Fatalf("clients of %s negotiated %s with the proxy", gen, v)
		}
		for _, r := range rows {
			var cells []routeCount
			for _, n := range []int{8, 32} {
				ss := sessions
				if r.up == "gopc" {
					ss = pcSessions // 2025-11-25 (per-client upstreams: see above)
				}
				c := concurrentRound(t, ss[:n], r)
				cells = append(cells, c)
				if c.misrouted != 0 {
					t.Errorf("%s %s/%s, %d clients: %d answers reached another client", gen, r.up, r.tool, n, c.misrouted)
				}
				knowable := r.knowable
				if gen >= "2026-07-28" && r.up == "gostdio" && strings.HasPrefix(r.tool, "test_input_required_result_") {
					knowable = "a 2026-07-28 client's call takes a 2026-07-28 session (protocol auto): input_required comes back on the call"
				}
				if knowable != "" && c.relayed != n {
					t.Errorf("%s %s/%s, %d clients: the caller is knowable (%s) but only %d of %d relayed (%+v)", gen, r.up, r.tool, n, knowable, c.relayed, n, c)
				}
			}
			mark := ""
			if r.knowable != "" || (gen >= "2026-07-28" && r.up == "gostdio" && strings.HasPrefix(r.tool, "test_input_required_result_")) {
				mark = "(k)"
			}
			fmt.Fprintf(&table, "%-10s %-12s %-40s %-11s %-3s  %-29s  %-29s\n", gen, r.up, r.tool, r.feature, mark,
				fmt.Sprintf("%d/%d/%d/%d", cells[0].relayed, cells[0].refused, cells[0].failed, cells[0].misrouted),
				fmt.Sprintf("%d/%d/%d/%d", cells[1].relayed, cells[1].refused, cells[1].failed, cells[1].misrouted))
		}
	}
	t.Logf("concurrent clients on one upstream each, (k) = caller knowable:\n%s", table.String())
}

// concurrentRound has every session call r at once and classifies what
// each got.
func concurrentRound(t *testing.T, sessions []*gosdk.ClientSession, r routeRow) routeCount {
	var mu sync.Mutex
	var c routeCount
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, cs := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			res, err := cs.CallTool(ctx, &gosdk.CallToolParams{Name: r.up + "__" + r.tool, Arguments: r.args})
			text := ""
			if err != nil {
				text = "error: " + err.Error()
			} else {
				for _, ct := range res.Content {
					if tc, ok := ct.(*gosdk.TextContent); ok {
						text += tc.Text
					}
				}
			}
			mu.Lock()
			defer mu.Unlock()
			tags := tagRE.FindAllString(text, -1)
			switch {
			case len(tags) > 0 && tags[0] == tagOf(i) && len(tags) == strings.Count(text, tagOf(i)):
				c.relayed++
			case len(tags) > 0:
				c.misrouted++
				t.Logf("%s/%s: client %s got %.200q", r.up, r.tool, tagOf(i), text)
			case strings.Contains(text, "not relayed"):
				c.refused++
			default:
				c.failed++
				if testing.Verbose() && c.failed == 1 {
					t.Logf("%s/%s: failed: %.300s", r.up, r.tool, text)
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	return c
}

// TestLogsReachOnlyTheirCaller: the log messages a tool sends during a
// call (go-sdk conformance server's test_tool_with_logging: three) reach
// the client whose call it is, and no other client, on a shared upstream
// session: over stdio with one caller at a time every caller gets its 3
// and the 7 idle clients none; over Streamable HTTP with 8 callers at once
// each gets exactly its 3 (the call's POST stream); over stdio with 8 at
// once no client gets more than its 3 (a message sent while several
// clients' calls run says nothing of whose it is, and goes to nobody).
func TestLogsReachOnlyTheirCaller(t *testing.T) {
	waitsMostly(t)
	conf := goBinary(t, "gosdk-conformance", "github.com/modelcontextprotocol/go-sdk/conformance/everything-server")
	httpAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	startHTTPServer(t, []string{conf, "-http", httpAddr, "-stateless=false"}, nil, "http://"+httpAddr+"/mcp")
	cfg := fmt.Sprintf("[tool_search]\nenabled = false\n[upstreams.gostdio]\ncommand = %q\n[upstreams.gohttp]\nurl = \"http://%s/mcp\"\n", conf, httpAddr)
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	startHTTPServer(t, proxyCmd(t, writeConfig(t, cfg), "--transport", "http", "--listen", addr), nil, "http://"+addr+"/mcp")
	const n = 8
	fcs := make([]*featureClient, n)
	css := make([]*gosdk.ClientSession, n)
	ctx := context.Background()
	for i := range css {
		fcs[i] = &featureClient{}
		css[i] = connectAt(t, fcs[i].client(tagOf(i)), &gosdk.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp"}, "2025-11-25")
		if err := css[i].SetLoggingLevel(ctx, &gosdk.SetLoggingLevelParams{Level: "debug"}); err != nil {
			t.Fatal(err)
		}
	}
	call := func(i int, up string) {
		if _, err := css[i].CallTool(ctx, &gosdk.CallToolParams{Name: up + "__test_tool_with_logging"}); err != nil {
			t.Errorf("%s: %v", up, err)
		}
	}
	counts := func() []int {
		time.Sleep(300 * time.Millisecond)
		out := make([]int, n)
		for i, fc := range fcs {
			out[i] = len(fc.takeLogs())
		}
		return out
	}
	counts() // the setLevel round's messages, if any
	for i := 0; i < n; i++ {
		call(i, "gostdio")
		got := counts()
		for j, c := range got {
			if want := map[bool]int{true: 3, false: 0}[i == j]; c != want {
				t.Errorf("stdio, client %d alone: client %d got %d log messages, want %d", i, j, c, want)
			}
		}
	}
	for _, up := range []string{"gohttp", "gostdio"} {
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() { defer wg.Done(); call(i, up) }()
		}
		wg.Wait()
		got := counts()
		t.Logf("%s, %d clients at once: log messages per client %v", up, n, got)
		for j, c := range got {
			if c > 3 || (up == "gohttp" && c != 3) {
				t.Errorf("%s, %d at once: client %d got %d log messages (its own call sends 3)", up, n, j, c)
			}
		}
	}
}
