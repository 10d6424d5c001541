//go:build unix

package integration

//lint:file-ignore SA1019 sampling, roots and logging are deprecated from protocol 2026-07-28 on; clients and servers of earlier protocols still use them

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

	mcpgotransport "github.com/mark3labs/mcp-go/client/transport"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestProtocolMatrix: every client generation × upstream
// generation × mode is a real round trip through the proxy's Streamable
// HTTP front: tools/list, a tools/call, a call whose upstream asks the user
// a question (elicitation), and a call that changes the upstream's tool
// list followed by notifications/tools/list_changed at the client.
//
// Clients: the official TypeScript SDK v1 (1.32.2, up to 2025-11-25) and v2
// (@modelcontextprotocol/client 2.4.0, 2026-07-28 by server/discover), the
// go-sdk v1.8.0 client and mark3labs/mcp-go v1.2.1 each at 2026-07-28 and
// at 2025-11-25. Upstreams:
// examples/catalogserver -interactive (a go-sdk server) limited to the
// initialize-era versions, and at its default (2026-07-28 first): its
// "confirm" tool asks through an input_required result, which the go-sdk
// turns into elicitation/create on older connections; "toggle" adds or
// removes a tool. So the question crosses every pair of generations:
// request → request, request → input_required, input_required → request,
// input_required → input_required.
func TestProtocolMatrix(t *testing.T) {
	waitsMostly(t)
	requireNode(t)
	if _, err := exec.LookPath("node"); err != nil {
		missingDep(t, "node not found")
	}
	bin := buildProxy(t)
	srv := catalogServer(t)
	script := filepath.Join(integrationDir(t), "matrix-client.mjs")
	upstreams := []struct{ name, versions string }{
		{"2025-11-25", "2025-11-25,2025-06-18,2025-03-26,2024-11-05"},
		{"2026-07-28", ""},
	}
	type cell struct{ client, upstream, mode, version, detail string }
	var cells []cell
	var mu sync.Mutex // guards cells
	t.Run("cells", func(t *testing.T) {
		for _, up := range upstreams {
			for _, mode := range []string{"direct", "tools", "code"} {
				t.Run(up.name+"/"+mode, func(t *testing.T) {
					t.Parallel() // six proxies at once: the waits overlap
					args := fmt.Sprintf(`["-tools", %s, "-limit", "3", "-interactive"`, tomlString(catalogFile(t, "github-like.jsonl")))
					if up.versions != "" {
						args += `, "-protocol-versions", ` + tomlString(up.versions)
					}
					args += "]"
					ts := "[tool_search]\nenabled = false\n"
					if mode != "direct" {
						ts = fmt.Sprintf("[tool_search]\nenabled = true\nmode = %q\n", mode)
					}
					proto := "" // a stdio leg's default is 2025-11-25; the 2026-07-28 upstream is reached at it
					if up.versions == "" {
						proto = "protocol = \"2026-07-28\"\n"
					}
					cfg := writeConfig(t, fmt.Sprintf("[server]\ntransport = \"http\"\n%s[upstreams.u]\ncommand = %s\nargs = %s\n%s", ts, tomlString(srv), args, proto))
					port := freePort(t)
					base := fmt.Sprintf("http://127.0.0.1:%d", port)
					p := startHTTPServer(t, []string{bin, "serve", "--config", cfg, "--listen", fmt.Sprintf("127.0.0.1:%d", port)}, nil, base+"/mcp")
					waitHealthy(t, replica{name: "proxy", port: port, proc: p})
					url := base + "/mcp"

					check := func(client string, r matrixResult) {
						t.Helper()
						name := fmt.Sprintf("%s × upstream %s × %s", client, up.name, mode)
						wantTools := []string{"u__confirm", "u__list_issues", "u__toggle"}
						if mode != "direct" {
							wantTools = []string{map[string]string{"tools": "tool_call", "code": "tool_search_code"}[mode]}
						}
						var problems []string
						if r.Error != "" {
							problems = append(problems, "error: "+firstLine(r.Error))
						}
						for _, w := range wantTools {
							if !contains(r.Tools, w) {
								problems = append(problems, fmt.Sprintf("tools/list %v lacks %s", r.Tools, w))
							}
						}
						if !strings.Contains(r.Call, "list_issues") {
							problems = append(problems, fmt.Sprintf("call answered %q", r.Call))
						}
						if wantAns := "confirmed: " + answerOf(client, mode); !strings.Contains(r.Elicit, wantAns) {
							problems = append(problems, fmt.Sprintf("elicitation call answered %q, want %q", r.Elicit, wantAns))
						}
						if r.Changed < 1 {
							problems = append(problems, "no notifications/tools/list_changed after the upstream's list changed")
						}
						want := map[string]string{"ts-v1": "2025-11-25", "ts-v2": "2026-07-28"}[client]
						if _, v, ok := strings.Cut(client, "@"); ok {
							want = v
						}
						if r.Version != want {
							problems = append(problems, fmt.Sprintf("negotiated %q, want %q", r.Version, want))
						}
						if len(problems) > 0 {
							t.Errorf("%s (client at %s): %s", name, r.Version, strings.Join(problems, "; "))
						}
						mu.Lock()
						cells = append(cells, cell{client, up.name, mode, r.Version, fmt.Sprint(len(problems) == 0)})
						mu.Unlock()
					}
					for _, sdk := range []string{"v1", "v2"} {
						client := "ts-" + sdk
						out, err := exec.Command("node", script, "--sdk", sdk, "--mode", mode, "--answer", answerOf(client, mode), url).Output()
						var r matrixResult
						if jerr := json.Unmarshal(out, &r); jerr != nil {
							t.Errorf("%s × %s × %s: no result (%v, %v): %s", client, up.name, mode, err, jerr, out)
							continue
						}
						check(client, r)
					}
					for _, v := range []string{"", "2025-11-25"} {
						client := "go-sdk@" + map[string]string{"": "2026-07-28", "2025-11-25": "2025-11-25"}[v]
						check(client, goMatrixCell(t, &gosdk.StreamableClientTransport{Endpoint: url}, mode, v, answerOf(client, mode)))
					}
					for _, v := range []string{"", "2025-11-25"} {
						client := "mcp-go@" + map[string]string{"": "2026-07-28", "2025-11-25": "2025-11-25"}[v]
						// The standalone GET stream carries list_changed to a
						// 2025-11-25 client; mcp-go stays on 2025-11-25 with it
						// (RequiresLegacyProtocol), so only the pinned client opens it.
						var opts []mcpgotransport.StreamableHTTPCOption
						if v != "" {
							opts = append(opts, mcpgotransport.WithContinuousListening())
						}
						tr, err := mcpgotransport.NewStreamableHTTP(url, opts...)
						if err != nil {
							t.Fatal(err)
						}
						check(client, mcpgoMatrixCell(t, tr, mode, v, answerOf(client, mode)))
					}
				})
			}
		}
	})
	sort.Slice(cells, func(i, j int) bool {
		a, b := cells[i], cells[j]
		return a.upstream+a.mode+a.client < b.upstream+b.mode+b.client
	})
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-20s %-12s %-7s %-12s %s\n", "client", "upstream", "mode", "negotiated", "round trip ok")
	for _, c := range cells {
		fmt.Fprintf(&b, "%-20s %-12s %-7s %-12s %s\n", c.client, c.upstream, c.mode, c.version, c.detail)
	}
	t.Log(b.String())
}

type matrixResult struct {
	Version string   `json:"version"`
	Tools   []string `json:"tools"`
	Call    string   `json:"call"`
	Elicit  string   `json:"elicit"`
	Changed int      `json:"changed"`
	Error   string   `json:"error"`
}

func answerOf(client, mode string) string {
	return strings.NewReplacer("@", "-", ".", "").Replace(client) + "-" + mode
}

func firstLine(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }

func contains(xs []string, x string) bool {
	for _, e := range xs {
		if e == x {
			return true
		}
	}
	return false
}

// goMatrixCell is one matrix cell with the go-sdk client at version ("" =
// its newest, 2026-07-28), connected by tr (Streamable HTTP, or a stdio
// command).
func goMatrixCell(t *testing.T, tr gosdk.Transport, mode, version, answer string) matrixResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	changed := make(chan struct{}, 8)
	c := gosdk.NewClient(&gosdk.Implementation{Name: "matrix-go", Version: "1"}, &gosdk.ClientOptions{
		ElicitationHandler: func(context.Context, *gosdk.ElicitRequest) (*gosdk.ElicitResult, error) {
			return &gosdk.ElicitResult{Action: "accept", Content: map[string]any{"answer": answer}}, nil
		},
		ToolListChangedHandler: func(context.Context, *gosdk.ToolListChangedRequest) { changed <- struct{}{} },
	})
	var r matrixResult
	cs, err := c.Connect(ctx, tr, &gosdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		r.Error = err.Error()
		return r
	}
	defer cs.Close()
	r.Version = cs.InitializeResult().ProtocolVersion
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	for _, tool := range lt.Tools {
		r.Tools = append(r.Tools, tool.Name)
	}
	call := func(tool string, args map[string]any) (string, error) {
		id := "mcp:u:" + tool
		var p gosdk.CallToolParams
		switch mode {
		case "direct":
			p = gosdk.CallToolParams{Name: "u__" + tool, Arguments: args}
		case "tools":
			p = gosdk.CallToolParams{Name: "tool_call", Arguments: map[string]any{"id": id, "args": args}}
		default:
			a, _ := json.Marshal(args)
			p = gosdk.CallToolParams{Name: "tool_search_code", Arguments: map[string]any{"code": fmt.Sprintf("const r = await openclaw.tools.call(%q, %s); return r.result.content[0].text;", id, a)}}
		}
		res, err := cs.CallTool(ctx, &p)
		if err != nil {
			return "", err
		}
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*gosdk.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String(), nil
	}
	return matrixSteps(r, call, changed)
}

// matrixSteps runs the steps every Go client's cell shares after its list:
// a call, an elicitation answered into the result, and a list_changed seen
// after the toggle tool (within 5 s) — call is the client's own tools/call.
func matrixSteps(r matrixResult, call func(name string, args map[string]any) (string, error), changed <-chan struct{}) matrixResult {
	var err error
	if r.Call, err = call("list_issues", map[string]any{"owner": "o", "repo": "r"}); err != nil {
		r.Error = err.Error()
		return r
	}
	if r.Elicit, err = call("confirm", map[string]any{}); err != nil {
		r.Error = err.Error()
		return r
	}
	for len(changed) > 0 {
		<-changed
	}
	if _, err = call("toggle", map[string]any{}); err != nil {
		r.Error = err.Error()
		return r
	}
	select {
	case <-changed:
		r.Changed = 1
	case <-time.After(5 * time.Second):
	}
	return r
}
