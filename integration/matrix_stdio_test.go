//go:build unix

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcpgotransport "github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestProtocolMatrixStdio: the stdio front at both protocol
// generations. Each cell runs `mcp-toolsearch serve` as a child over stdio
// (one client per process) in direct mode with one upstream,
// examples/catalogserver -interactive, at 2024-11-05, at 2025-11-25 or at its default
// (2026-07-28 first), over stdio, or over Streamable HTTP at 2026-07-28
// (-http -stateless: the proxy's HTTP leg with 2026-07-28's per-request
// headers, upstream/headers2026.go), and makes the round trip of TestProtocolMatrix:
// tools/list, a tools/call, the "confirm" call whose upstream asks a
// question (the answer must come back in the result), and "toggle"
// followed by notifications/tools/list_changed at the client. Clients, each
// spawning the proxy itself: the TypeScript SDK v1 1.32.2 (initialize,
// 2025-11-25) and v2 2.4.0 (@modelcontextprotocol/client with version
// negotiation "auto": server/discover, 2026-07-28), and the go-sdk v1.8.0
// client at its default (2026-07-28: server/discover, then requests that
// carry the version; questions as input_required results, list changes
// through subscriptions/listen) and pinned to 2025-11-25 and to 2024-11-05
// (initialize; questions as elicitation/create requests), and
// mark3labs/mcp-go v1.2.1
// at its default (server/discover first; list changes after
// subscriptions/listen, which it opens on request) and pinned to
// 2025-11-25. The modes share the call path
// with the HTTP matrix, so one mode keeps this test short.
func TestProtocolMatrixStdio(t *testing.T) {
	waitsMostly(t)
	requireNode(t)
	bin := buildProxy(t)
	srv := catalogServer(t)
	script := filepath.Join(integrationDir(t), "matrix-client.mjs")
	upstreams := []struct {
		name, versions string
		http           bool // Streamable HTTP (a stateless go-sdk handler) instead of stdio
	}{
		{"2024-11-05", "2024-11-05", false},
		{"2025-11-25", "2025-11-25,2025-06-18,2025-03-26,2024-11-05", false},
		{"2026-07-28", "", false},
		{"2026-07-28/http", "", true},
	}
	clients := []struct{ name, want string }{
		{"ts-v1", "2025-11-25"}, {"ts-v2", "2026-07-28"}, {"go-sdk@2026-07-28", "2026-07-28"}, {"go-sdk@2025-11-25", "2025-11-25"},
		{"go-sdk@2024-11-05", "2024-11-05"},
		{"mcp-go@2026-07-28", "2026-07-28"}, {"mcp-go@2025-11-25", "2025-11-25"},
	}
	const mode = "direct"
	var (
		mu    sync.Mutex // guards rows, cells
		rows  []string
		cells = 0
	)
	t.Run("cells", func(t *testing.T) {
		for _, up := range upstreams {
			for _, cl := range clients {
				t.Run(up.name+"/"+cl.name, func(t *testing.T) {
					mu.Lock()
					cells++ // started (-run may select some)
					mu.Unlock()
					t.Parallel()
					args := fmt.Sprintf(`["-tools", %s, "-limit", "3", "-interactive"`, tomlString(catalogFile(t, "github-like.jsonl")))
					if up.versions != "" {
						args += `, "-protocol-versions", ` + tomlString(up.versions)
					}
					args += "]"
					proto := "" // a stdio leg's default is 2025-11-25; the 2026-07-28 upstream is reached at it
					if up.versions == "" {
						proto = "protocol = \"2026-07-28\"\n"
					}
					cfg := writeConfig(t, fmt.Sprintf("[tool_search]\nenabled = false\n[upstreams.u]\ncommand = %s\nargs = %s\n%s", tomlString(srv), args, proto))
					if up.http {
						addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
						startHTTPServer(t, []string{srv, "-tools", catalogFile(t, "github-like.jsonl"), "-limit", "3", "-interactive", "-http", addr, "-stateless"}, nil, "http://"+addr+"/mcp")
						cfg = writeConfig(t, fmt.Sprintf("[tool_search]\nenabled = false\n[upstreams.u]\nurl = %s\n", tomlString("http://"+addr+"/mcp")))
					}
					answer := answerOf(cl.name, mode)
					var r matrixResult
					switch cl.name {
					case "ts-v1", "ts-v2":
						out, err := exec.Command("node", script, "--sdk", strings.TrimPrefix(cl.name, "ts-"), "--mode", mode, "--answer", answer, "--stdio", bin, cfg).Output()
						if jerr := json.Unmarshal(out, &r); jerr != nil {
							r.Error = fmt.Sprintf("no result (%v, %v): %s", err, jerr, out)
						}
					case "mcp-go@2026-07-28", "mcp-go@2025-11-25":
						v := strings.TrimPrefix(cl.name, "mcp-go@")
						if v == "2026-07-28" {
							v = "" // mcp-go's default: server/discover first
						}
						r = mcpgoMatrixCell(t, mcpgotransport.NewStdio(bin, nil, "serve", "--config", cfg, "--log-level", "warn"), mode, v, answer)
					default:
						v := strings.TrimPrefix(cl.name, "go-sdk@")
						if v == "2026-07-28" {
							v = "" // the go-sdk client's default
						}
						cmd := exec.Command(bin, "serve", "--config", cfg, "--log-level", "warn")
						r = goMatrixCell(t, &gosdk.CommandTransport{Command: cmd}, mode, v, answer)
					}
					var problems []string
					if r.Error != "" {
						problems = append(problems, "error: "+firstLine(r.Error))
					}
					if r.Version != cl.want {
						problems = append(problems, fmt.Sprintf("negotiated %q, want %q", r.Version, cl.want))
					}
					for _, w := range []string{"u__confirm", "u__list_issues", "u__toggle"} {
						if !contains(r.Tools, w) {
							problems = append(problems, fmt.Sprintf("tools/list %v lacks %s", r.Tools, w))
						}
					}
					if !strings.Contains(r.Call, "list_issues") {
						problems = append(problems, fmt.Sprintf("call answered %q", r.Call))
					}
					if wantAns := "confirmed: " + answer; !strings.Contains(r.Elicit, wantAns) {
						problems = append(problems, fmt.Sprintf("elicitation call answered %q, want %q", r.Elicit, wantAns))
					}
					if r.Changed < 1 {
						problems = append(problems, "no notifications/tools/list_changed after the upstream's list changed")
					}
					if len(problems) > 0 {
						t.Errorf("%s over stdio × upstream %s × %s: %s", cl.name, up.name, mode, strings.Join(problems, "; "))
					}
					mu.Lock()
					rows = append(rows, fmt.Sprintf("%-20s %-16s %-7s %-12s %v", cl.name, up.name, mode, r.Version, len(problems) == 0))
					mu.Unlock()
				})
			}
		}
	})
	sort.Strings(rows)
	t.Logf("\n%-20s %-16s %-7s %-12s %s\n%s", "client (stdio)", "upstream", "mode", "negotiated", "round trip ok", strings.Join(rows, "\n"))
	if len(rows) != cells {
		t.Errorf("%d of %d cells ran", len(rows), cells)
	}
}

// mcpgoMatrixCell is one cell of the matrix with the mark3labs/mcp-go
// client at version ("" = its default: server/discover first) over tr (the
// proxy as a stdio child, or Streamable HTTP): tools/list, list_issues,
// confirm (the client's elicitation handler answers; on 2026-07-28 mcp-go
// fulfils the input_required result with it), toggle and a
// notifications/tools/list_changed (on 2026-07-28 after
// subscriptions/listen for tool list changes), each reached as mode says.
func mcpgoMatrixCell(t *testing.T, tr mcpgotransport.Interface, mode, version, answer string) matrixResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var r matrixResult
	c := mcpgoclient.NewClient(tr, mcpgoclient.WithElicitationHandler(mcpgoAnswer(answer)))
	if err := c.Start(ctx); err != nil {
		r.Error = err.Error()
		return r
	}
	defer c.Close()
	changed := make(chan struct{}, 8)
	c.OnNotification(func(n mcpgo.JSONRPCNotification) {
		if n.Method == "notifications/tools/list_changed" {
			changed <- struct{}{}
		}
	})
	req := mcpgo.InitializeRequest{}
	req.Params.ProtocolVersion = version
	req.Params.ClientInfo = mcpgo.Implementation{Name: "matrix-mcp-go", Version: "1"}
	req.Params.Capabilities.Elicitation = &mcpgo.ElicitationCapability{}
	ir, err := c.Initialize(ctx, req)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	r.Version = ir.ProtocolVersion
	if r.Version >= "2026-07-28" {
		stop, err := c.ListenAsync(ctx, mcpgo.SubscriptionFilter{ToolsListChanged: true}, nil)
		if err != nil {
			r.Error = err.Error()
			return r
		}
		defer stop()
	}
	lt, err := c.ListTools(ctx, mcpgo.ListToolsRequest{})
	if err != nil {
		r.Error = err.Error()
		return r
	}
	for _, tool := range lt.Tools {
		r.Tools = append(r.Tools, tool.Name)
	}
	call := func(tool string, args map[string]any) (string, error) {
		id := "mcp:u:" + tool
		var p mcpgo.CallToolRequest
		switch mode {
		case "direct":
			p.Params.Name, p.Params.Arguments = "u__"+tool, args
		case "tools":
			p.Params.Name, p.Params.Arguments = "tool_call", map[string]any{"id": id, "args": args}
		default:
			a, _ := json.Marshal(args)
			p.Params.Name, p.Params.Arguments = "tool_search_code", map[string]any{"code": fmt.Sprintf("const r = await openclaw.tools.call(%q, %s); return r.result.content[0].text;", id, a)}
		}
		res, err := c.CallTool(ctx, p)
		if err != nil {
			return "", err
		}
		var b strings.Builder
		for _, ct := range res.Content {
			if tc, ok := ct.(mcpgo.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String(), nil
	}
	return matrixSteps(r, call, changed)
}

// mcpgoAnswer is an mcp-go elicitation handler that accepts with
// {"answer": answer}.
type mcpgoAnswer string

func (a mcpgoAnswer) Elicit(context.Context, mcpgo.ElicitationRequest) (*mcpgo.ElicitationResult, error) {
	return &mcpgo.ElicitationResult{ElicitationResponse: mcpgo.ElicitationResponse{Action: mcpgo.ElicitationResponseActionAccept, Content: map[string]any{"answer": string(a)}}}, nil
}
