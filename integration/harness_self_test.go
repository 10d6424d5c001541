//go:build unix

package integration

// Tests of the harness itself and of the example catalog server against
// real clients (TypeScript SDK via client.mjs, mcp-go, go-sdk) and of the
// reference servers the proxy tests rely on. They do not need the proxy.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// wantCreateIssueEcho is the catalog server's text for create_issue with createIssueArgs.
const wantCreateIssueEcho = `{"arguments":{"labels":["bug"],"owner":"o","repo":"r","title":"Crash"},"tool":"create_issue"}`

var createIssueArgs = map[string]any{"title": "Crash", "owner": "o", "repo": "r", "labels": []any{"bug"}}

func toolNames(t *testing.T, tools []any) []string {
	t.Helper()
	var names []string
	for _, tl := range tools {
		names = append(names, jpath(t, tl, "name").(string))
	}
	return names
}

func TestCatalogServerWithTSClientStdio(t *testing.T) {
	srv := catalogServer(t)
	doc := nodeClient(t, "--client-name", "ts-test", "--script", scriptArg(t,
		map[string]any{"op": "list"},
		map[string]any{"op": "call", "name": "create_issue", "args": createIssueArgs},
		map[string]any{"op": "call", "name": "create_issue_2", "args": map[string]any{}},
	), "--", srv, "-tools", catalogFile(t, "github-like.jsonl"), "-name", "gh-like")

	if got := jpath(t, doc, "initialize", "serverInfo", "name"); got != "gh-like" {
		t.Errorf("serverInfo.name = %v, want gh-like", got)
	}
	if got := jpath(t, doc, "client", "name"); got != "ts-test" {
		t.Errorf("client.name = %v, want ts-test", got)
	}
	tools := jpath(t, doc, "steps", 0, "result", "tools").([]any)
	names := toolNames(t, tools)
	if len(names) != 12 || !slices.Contains(names, "create_issue") || !slices.Contains(names, "create_issue_2") {
		t.Fatalf("listed %d tools %v; want 12 including create_issue and create_issue_2 (GitLab's)", len(names), names)
	}
	for _, tl := range tools {
		if jpath(t, tl, "name") == "create_issue" {
			req := jpath(t, tl, "inputSchema", "required")
			if fmt.Sprint(req) != "[owner repo title]" {
				t.Errorf("create_issue required = %v, want the file's [owner repo title]", req)
			}
		}
	}
	if got := jpath(t, doc, "steps", 1, "result", "content", 0, "text"); got != wantCreateIssueEcho {
		t.Errorf("echo text = %v\nwant %s", got, wantCreateIssueEcho)
	}
	if got := jpath(t, doc, "steps", 1, "result", "structuredContent", "tool"); got != "create_issue" {
		t.Errorf("structuredContent.tool = %v", got)
	}
	if got := jpath(t, doc, "steps", 2, "result", "content", 0, "text"); got != `{"arguments":{},"tool":"create_issue_2"}` {
		t.Errorf("create_issue_2 echo = %v", got)
	}
}

func TestCatalogServerWithMCPGoStdio(t *testing.T) {
	srv := catalogServer(t)
	for _, pv := range []string{"", "2025-06-18"} { // default negotiation, and the classic handshake pinned
		t.Run("protocol="+pv, func(t *testing.T) {
			c := mcpgoStartStdio(t, []string{srv, "-tools", catalogFile(t, "toolsdk-1000.jsonl"), "-page-size", "300"})
			init := mcpgoInitialize(t, c, pv)
			if init.ServerInfo.Name != "catalogserver" {
				t.Errorf("serverInfo.name = %q", init.ServerInfo.Name)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			// ListTools follows nextCursor: 1000 tools in pages of 300.
			res, err := c.ListTools(ctx, mcpgo.ListToolsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Tools) != 1000 {
				t.Fatalf("mcp-go listed %d tools, want 1000", len(res.Tools))
			}
			var req mcpgo.CallToolRequest
			req.Params.Name = res.Tools[7].Name
			req.Params.Arguments = map[string]any{"b": 2, "a": "x"}
			out, err := c.CallTool(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf(`{"arguments":{"a":"x","b":2},"tool":%q}`, res.Tools[7].Name)
			if tc, ok := mcpgo.AsTextContent(out.Content[0]); !ok || tc.Text != want {
				t.Errorf("echo = %+v, want text %s", out.Content, want)
			}
		})
	}
}

func TestCatalogServerOverHTTPWithThreeClients(t *testing.T) {
	srv := catalogServer(t)
	port := freePort(t)
	url := fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
	// Without 2026-07-28 in the list, see TestMCPGoDefaultAgainstStatefulGoSDKHTTP.
	p := startHTTPServer(t, []string{srv, "-tools", catalogFile(t, "github-like.jsonl"),
		"-protocol-versions", legacyVersions, "-http", fmt.Sprintf("127.0.0.1:%d", port)}, nil, url)

	// go-sdk
	cs := gosdkClientHTTP(t, url, map[string]string{"X-Test": "1"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &gosdk.CallToolParams{Name: "create_issue", Arguments: createIssueArgs})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(*gosdk.TextContent).Text; got != wantCreateIssueEcho {
		t.Errorf("go-sdk echo = %s", got)
	}
	// mcp-go
	mc := mcpgoClientHTTP(t, url, nil)
	lr, err := mc.ListTools(ctx, mcpgo.ListToolsRequest{})
	if err != nil {
		t.Fatalf("mcp-go over HTTP: list: %v", err)
	}
	if len(lr.Tools) != 12 {
		t.Errorf("mcp-go over HTTP: %d tools, want 12", len(lr.Tools))
	}
	// TypeScript SDK
	doc := nodeClient(t, "--http", url, "--call", "get_forecast", "--args", `{"city":"北京"}`)
	if got := jpath(t, doc, "steps", 1, "result", "content", 0, "text"); got != `{"arguments":{"city":"北京"},"tool":"get_forecast"}` {
		t.Errorf("TS echo over HTTP = %v", got)
	}
	if !strings.Contains(p.Output(), "12 tools on http://127.0.0.1:") {
		t.Errorf("server did not announce its address; output: %s", p.Output())
	}
}

// legacyVersions are the go-sdk v1.8.0 protocol versions before 2026-07-28.
const legacyVersions = "2025-11-25,2025-06-18,2025-03-26,2024-11-05"

// TestMCPGoDefaultAgainstStatefulGoSDKHTTP pins down an interop gap that any
// go-sdk v1.8.0 Streamable HTTP server with sessions (such as the proxy's
// front) meets: mcp-go v1.2.1's client first tries the 2026-07-28
// server/discover flow, the go-sdk server answers it, and the first request
// after that is refused because the stateful transport only accepts
// 2026-07-28 when stateless (go-sdk mcp/streamable.go,
// SupportsProtocolVersion). A server that leaves 2026-07-28 out of
// ServerOptions.SupportedProtocolVersions makes mcp-go fall back to the
// initialize handshake (2025-11-25), and everything works.
func TestMCPGoDefaultAgainstStatefulGoSDKHTTP(t *testing.T) {
	srv := catalogServer(t)
	for _, tc := range []struct {
		versions    string
		wantVersion string
		wantListErr bool
	}{
		{"", "2026-07-28", true},
		{legacyVersions, "2025-11-25", false},
	} {
		t.Run("versions="+tc.versions, func(t *testing.T) {
			port := freePort(t)
			url := fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
			args := []string{srv, "-tools", catalogFile(t, "github-like.jsonl"), "-http", fmt.Sprintf("127.0.0.1:%d", port)}
			if tc.versions != "" {
				args = append(args, "-protocol-versions", tc.versions)
			}
			startHTTPServer(t, args, nil, url)
			c := mcpgoClientHTTP(t, url, nil)
			if got := c.ProtocolVersion(); got != tc.wantVersion {
				t.Errorf("negotiated %q, want %q", got, tc.wantVersion)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, err := c.ListTools(ctx, mcpgo.ListToolsRequest{})
			if (err != nil) != tc.wantListErr {
				t.Errorf("tools/list error = %v, want error: %v", err, tc.wantListErr)
			}
		})
	}
}

func TestServerEverythingDirect(t *testing.T) {
	waitsMostly(t)
	cmd := npmServer(t, "everything")
	base := []string{"--quiet", "--script", scriptArg(t,
		map[string]any{"op": "list"},
		map[string]any{"op": "call", "name": "echo", "args": map[string]any{"message": "hi"}},
		map[string]any{"op": "call", "name": "get-tiny-image", "args": map[string]any{}},
		map[string]any{"op": "request", "method": "no/such-method"},
	), "--"}
	doc := nodeClient(t, append(base, cmd...)...)
	names := toolNames(t, jpath(t, doc, "steps", 0, "result", "tools").([]any))
	if !slices.Contains(names, "echo") || !slices.Contains(names, "get-tiny-image") {
		t.Fatalf("tools = %v, want echo and get-tiny-image", names)
	}
	if got := jpath(t, doc, "steps", 1, "result", "content", 0, "text"); got != "Echo: hi" {
		t.Errorf("echo = %v", got)
	}
	var image map[string]any
	for _, c := range jpath(t, doc, "steps", 2, "result", "content").([]any) {
		if m := c.(map[string]any); m["type"] == "image" {
			image = m
		}
	}
	if image == nil {
		t.Fatalf("get-tiny-image returned no image block: %v", jpath(t, doc, "steps", 2, "result"))
	}
	png, err := base64.StdEncoding.DecodeString(image["data"].(string))
	if err != nil || !strings.HasPrefix(string(png), "\x89PNG") || image["mimeType"] != "image/png" {
		t.Errorf("image block: mimeType %v, %d bytes, err %v; want a base64 PNG", image["mimeType"], len(png), err)
	}
	if got := jpath(t, doc, "steps", 3, "error", "code"); got != float64(-32601) {
		t.Errorf("unknown method error code = %v, want -32601", got)
	}

	// With every client capability, server-everything adds tools after
	// initialized and announces them with tools/list_changed: the proxy
	// meets this upstream behaviour.
	all := nodeClient(t, "--quiet", "--caps", "all", "--script", scriptArg(t,
		map[string]any{"op": "wait", "notification": "notifications/tools/list_changed"},
		map[string]any{"op": "list"},
	), "--", cmd[0], cmd[1])
	more := toolNames(t, jpath(t, all, "steps", 1, "result", "tools").([]any))
	if len(more) <= len(names) {
		t.Errorf("with caps all: %d tools, without: %d; want more with caps", len(more), len(names))
	}
}

func TestGoReferenceServersWithTSClient(t *testing.T) {
	waitsMostly(t)
	for name, cmd := range map[string][]string{
		"gosdk-everything": {gosdkEverything(t)},
		"mcpgo-everything": {mcpgoEverything(t), "-t", "stdio"},
	} {
		t.Run(name, func(t *testing.T) {
			doc := nodeClient(t, append([]string{"--quiet", "--"}, cmd...)...)
			names := toolNames(t, jpath(t, doc, "steps", 0, "result", "tools").([]any))
			if len(names) < 3 {
				t.Errorf("%s listed %v, want its example tools", name, names)
			}
		})
	}
}

func TestNodeClientReportsConnectFailure(t *testing.T) {
	doc, code, _ := nodeClientRun(t, "--http", fmt.Sprintf("http://127.0.0.1:%d/mcp", freePort(t)))
	if code != 1 || doc["error"] == nil {
		t.Errorf("connect to a closed port: exit %d, error %v; want exit 1 and an error", code, doc["error"])
	}
}

func TestProcessHelpers(t *testing.T) {
	marker := fmt.Sprintf("itest-marker-%d", time.Now().UnixNano())
	// sh's $0 is the marker, so its cmdline carries it; the sleeps are its children.
	p := startProcess(t, []string{"sh", "-c", "sleep 1000 & sleep 1000 & wait", marker}, nil)
	var kids []int
	for range 200 { // until sh has forked both sleeps (fail-safe ~4 s)
		if kids = childPIDs(p.PID()); len(kids) == 2 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(kids) != 2 {
		t.Fatalf("childPIDs(%d) = %v, want the 2 sleeps\n%s", p.PID(), kids, describeProcs(kids))
	}
	if got := processesWithArg(marker); !slices.Equal(got, []int{p.PID()}) {
		t.Errorf("processesWithArg(marker) = %v, want [%d]", got, p.PID())
	}
	p.Stop()
	if left := waitGone(append(kids, p.PID()), 5*time.Second); len(left) > 0 {
		t.Errorf("after Stop, still alive:\n%s", describeProcs(left))
	}
	if got := processesWithArg(marker); len(got) != 0 {
		t.Errorf("processesWithArg after Stop = %v", got)
	}
}

func TestConfigHelpers(t *testing.T) {
	p := writeConfig(t, "[server]\ntransport = \"stdio\"\n")
	if !strings.HasSuffix(p, "config.toml") {
		t.Errorf("writeConfig path = %s", p)
	}
	var back string
	if err := json.Unmarshal([]byte(tomlString(`C:\dir "x"`)), &back); err != nil || back != `C:\dir "x"` {
		t.Errorf("tomlString round trip = %q, %v", back, err)
	}
}

func TestClientMJSAnswersElicitation(t *testing.T) {
	waitsMostly(t)
	cmd := npmServer(t, "everything")
	for mode, want := range map[string]string{"decline": "declined", "accept": "Name: from-test"} {
		t.Run(mode, func(t *testing.T) {
			doc := nodeClient(t, "--quiet", "--caps", "all", "--elicit", mode, "--elicit-content", `{"name":"from-test"}`,
				"--script", scriptArg(t,
					map[string]any{"op": "wait", "notification": "notifications/tools/list_changed"},
					map[string]any{"op": "call", "name": "trigger-elicitation-request", "args": map[string]any{}},
				), "--", cmd[0], cmd[1])
			text := fmt.Sprint(jpath(t, doc, "steps", 1, "result", "content"))
			if !strings.Contains(text, want) {
				t.Errorf("elicitation %s: result %s, want it to contain %q", mode, tail(text, 500), want)
			}
			if got := jpath(t, doc, "serverRequests", 0, "method"); got != "elicitation/create" {
				t.Errorf("first server request = %v, want elicitation/create", got)
			}
		})
	}
}
