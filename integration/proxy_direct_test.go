//go:build unix

package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

var exposedNameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// proxyCmd is the command line that serves cfg over stdio.
func proxyCmd(t testing.TB, cfg string, extra ...string) []string {
	return append([]string{buildProxy(t), "serve", "--config", cfg, "--log-level", "warn"}, extra...)
}

// fourUpstreams writes a config with four real upstreams: the npm
// reference servers everything and memory, the go-sdk everything server
// and the catalog server. It returns the config path and the memory file.
func fourUpstreams(t *testing.T) (string, string) {
	requireNode(t)
	mem := filepath.Join(t.TempDir(), "memory.jsonl")
	cfg := fmt.Sprintf(`
[upstreams.everything]
command = %s
args = [%s]

[upstreams.memory]
command = %s
args = [%s]
env = { MEMORY_FILE_PATH = %s }

[upstreams.gosdk]
command = %s

[upstreams.catalog]
command = %s
args = ["-tools", %s]
trusted = true
`, tomlString(npmServer(t, "everything")[0]), quoteArgs(npmServer(t, "everything")[1:]),
		tomlString(npmServer(t, "memory")[0]), quoteArgs(npmServer(t, "memory")[1:]), tomlString(mem),
		tomlString(gosdkEverything(t)), tomlString(catalogServer(t)), tomlString(catalogFile(t, "github-like.jsonl")))
	return writeConfig(t, cfg), mem
}

func quoteArgs(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = tomlString(a)
	}
	return strings.Join(q, ", ")
}

// directCalls are one call per upstream: [proxy name, upstream tool, args].
var directCalls = []struct {
	upstream, tool string
	args           map[string]any
}{
	{"everything", "echo", map[string]any{"message": "hello through the proxy"}},
	{"everything", "get-tiny-image", map[string]any{}},
	{"everything", "get-structured-content", map[string]any{"location": "New York"}},
	{"memory", "read_graph", map[string]any{}},
	{"gosdk", "greet", map[string]any{"name": "proxy"}},
	{"catalog", "create_issue", map[string]any{"owner": "o", "repo": "r", "title": "t"}},
}

// TestDirectModeMatchesUpstreams: a real client (the official TypeScript SDK, over
// stdio and over Streamable HTTP) lists the tools of four real upstreams
// through the proxy and calls a tool of each; every result equals what the
// same client gets from the upstream directly, content blocks (an image
// among them) and structuredContent included.
func TestDirectModeMatchesUpstreams(t *testing.T) {
	waitsMostly(t)
	cfg, _ := fourUpstreams(t)

	steps := []map[string]any{{"op": "list"}}
	for _, c := range directCalls {
		steps = append(steps, map[string]any{"op": "call", "name": c.upstream + "__" + c.tool, "args": c.args})
	}
	viaStdio := nodeClient(t, append([]string{"--quiet", "--script", scriptArg(t, steps...), "--"}, proxyCmd(t, cfg)...)...)

	port := freePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	startHTTPServer(t, proxyCmd(t, cfg, "--transport", "http", "--listen", addr), nil, "http://"+addr+"/healthz")
	viaHTTP := nodeClient(t, "--script", scriptArg(t, steps...), "--http", "http://"+addr+"/mcp")

	for _, doc := range []map[string]any{viaStdio, viaHTTP} {
		tools := jpath(t, doc, "steps", 0, "result", "tools").([]any)
		names := toolNames(t, tools)
		for _, want := range []string{"everything__echo", "memory__read_graph", "gosdk__greet", "catalog__create_issue"} {
			if !slices.Contains(names, want) {
				t.Errorf("%s: tools/list lacks %s (got %d tools)", jpath(t, doc, "transport", "type"), want, len(names))
			}
		}
		for _, n := range names {
			if !exposedNameRE.MatchString(n) {
				t.Errorf("exposed name %q breaks %s", n, exposedNameRE)
			}
		}
	}

	direct := map[string]map[string]any{}
	mem2 := filepath.Join(t.TempDir(), "memory.jsonl")
	for _, up := range []struct {
		name string
		cmd  []string
		env  []string
	}{
		{"everything", npmServer(t, "everything"), nil},
		{"memory", npmServer(t, "memory"), []string{"MEMORY_FILE_PATH=" + mem2}},
		{"gosdk", []string{gosdkEverything(t)}, nil},
		{"catalog", []string{catalogServer(t), "-tools", catalogFile(t, "github-like.jsonl")}, nil},
	} {
		var st []map[string]any
		for _, c := range directCalls {
			if c.upstream == up.name {
				st = append(st, map[string]any{"op": "call", "name": c.tool, "args": c.args})
			}
		}
		args := []string{"--quiet", "--script", scriptArg(t, st...)}
		for _, e := range up.env {
			args = append(args, "--env", e)
		}
		doc := nodeClient(t, append(append(args, "--"), up.cmd...)...)
		for i, s := range jpath(t, doc, "steps").([]any) {
			direct[up.name+"/"+fmt.Sprint(st[i]["name"])] = s.(map[string]any)
		}
	}

	sawImage := false
	for i, c := range directCalls {
		want := direct[c.upstream+"/"+c.tool]["result"]
		if want == nil {
			t.Fatalf("direct call %s/%s failed: %v", c.upstream, c.tool, direct[c.upstream+"/"+c.tool])
		}
		for _, doc := range []map[string]any{viaStdio, viaHTTP} {
			got := jpath(t, doc, "steps", i+1, "result")
			if !reflect.DeepEqual(got, want) {
				gb, _ := json.Marshal(got)
				wb, _ := json.Marshal(want)
				t.Errorf("%s: %s__%s through the proxy differs from the upstream directly\n got: %.600s\nwant: %.600s", jpath(t, doc, "transport", "type"), c.upstream, c.tool, gb, wb)
			}
		}
		for _, b := range jpath(t, want, "content").([]any) {
			if jpath(t, b, "type") == "image" {
				sawImage = true
			}
		}
	}
	if !sawImage {
		t.Error("no image block among the compared results")
	}
}

// TestDirectModeWithMCPGoClient drives the proxy with the second SDK
// (mark3labs/mcp-go) over stdio: list, call with null arguments (sent to the
// upstream as {}), and an isError result from an upstream's own argument
// validation, passed through unchanged.
func TestDirectModeWithMCPGoClient(t *testing.T) {
	cfg, _ := fourUpstreams(t)
	c := mcpgoClientStdio(t, proxyCmd(t, cfg))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	lt, err := c.ListTools(ctx, mcpgo.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range lt.Tools {
		names = append(names, tl.Name)
	}
	if !slices.Contains(names, "gosdk__greet") || !slices.Contains(names, "everything__get-sum") {
		t.Fatalf("mcp-go client sees %v", names)
	}
	req := mcpgo.CallToolRequest{}
	req.Params.Name = "memory__read_graph" // no arguments at all
	res, err := c.CallTool(ctx, req)
	if err != nil || res.IsError {
		t.Fatalf("read_graph without arguments: %v %+v", err, res)
	}
	req.Params.Name = "everything__get-sum"
	req.Params.Arguments = map[string]any{"a": "not a number", "b": 2}
	res, err = c.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("an upstream isError result must stay a result, got error %v", err)
	}
	if !res.IsError {
		t.Fatalf("want isError from the upstream's own validation, got %+v", res)
	}
	req.Params.Name = "nosuch__tool"
	if _, err = c.CallTool(ctx, req); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Fatalf("unknown tool: want a JSON-RPC error naming it, got %v", err)
	}
}

// TestDirectModeUpstreamJSONRPCError: a JSON-RPC error from an upstream
// reaches the client as a JSON-RPC error with the same code, its message
// naming the upstream (README "Behaviour you can rely on").
func TestDirectModeUpstreamJSONRPCError(t *testing.T) {
	cfg := writeConfig(t, fmt.Sprintf(`
[upstreams.cat]
command = %s
args = ["-tools", %s, "-rpc-error-tool", "list_issues"]
`, tomlString(catalogServer(t)), tomlString(catalogFile(t, "github-like.jsonl"))))
	doc := nodeClient(t, append([]string{"--quiet", "--script", scriptArg(t,
		map[string]any{"op": "call", "name": "cat__list_issues", "args": map[string]any{}},
		map[string]any{"op": "call", "name": "cat__create_issue", "args": map[string]any{}},
	), "--"}, proxyCmd(t, cfg)...)...)
	code := jpath(t, doc, "steps", 0, "error", "code")
	msg := fmt.Sprint(jpath(t, doc, "steps", 0, "error", "message"))
	if code != float64(-32603) || !strings.Contains(msg, `upstream "cat"`) {
		t.Fatalf("want JSON-RPC error -32603 naming upstream cat, got code %v message %q", code, msg)
	}
	if jpath(t, doc, "steps", 1, "result") == nil {
		t.Fatalf("the next call must work: %v", jpath(t, doc, "steps", 1))
	}
}

// TestSameToolNameTwoUpstreams: two upstreams serving the same tool names
// stay callable under distinct names; every name matches the provider rule;
// names are the same after a restart with the upstreams started in the
// other order (one delayed, then the other).
func TestSameToolNameTwoUpstreams(t *testing.T) {
	waitsMostly(t)
	srv, file := catalogServer(t), catalogFile(t, "github-like.jsonl")
	mk := func(delayA, delayB string) string {
		return writeConfig(t, fmt.Sprintf(`
[upstreams.alpha]
command = "sh"
args = ["-c", "sleep %s; exec \"$0\" \"$@\"", %s, "-tools", %s]
prefix = ""

[upstreams.beta]
command = "sh"
args = ["-c", "sleep %s; exec \"$0\" \"$@\"", %s, "-tools", %s]
prefix = ""

[upstreams.gamma]
command = %s
args = ["-tools", %s]
`, delayA, tomlString(srv), tomlString(file), delayB, tomlString(srv), tomlString(file), tomlString(srv), tomlString(file)))
	}
	run := func(cfg string) (map[string]bool, map[string]any) {
		doc := nodeClient(t, append([]string{"--quiet", "--script", scriptArg(t, map[string]any{"op": "list"}), "--"}, proxyCmd(t, cfg)...)...)
		names := map[string]bool{}
		for _, n := range toolNames(t, jpath(t, doc, "steps", 0, "result", "tools").([]any)) {
			if !exposedNameRE.MatchString(n) {
				t.Errorf("name %q breaks the rule", n)
			}
			if names[strings.ToLower(n)] {
				t.Errorf("name %q listed twice", n)
			}
			names[strings.ToLower(n)] = true
		}
		return names, doc
	}
	first, _ := run(mk("0.8", "0"))
	second, _ := run(mk("0", "0.8"))
	if !reflect.DeepEqual(first, second) {
		t.Fatalf("names changed with the start order:\nfirst:  %v\nsecond: %v", keys(first), keys(second))
	}
	if len(first) != 36 {
		t.Fatalf("want 36 distinct names (3 upstreams x 12 tools), got %d: %v", len(first), keys(first))
	}
	// alpha and beta clash on every name (prefix ""): both get hashed names;
	// both must be callable and reach the right upstream.
	var alphaName, betaName string
	cfg := mk("0", "0")
	c := gosdkClientStdio(t, proxyCmd(t, cfg))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	lt, err := c.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range lt.Tools {
		if strings.HasPrefix(tl.Name, "create_issue_") && len(tl.Name) == len("create_issue_")+6 {
			if alphaName == "" {
				alphaName = tl.Name
			} else {
				betaName = tl.Name
			}
		}
	}
	if alphaName == "" || betaName == "" || !slices.ContainsFunc(lt.Tools, func(tl *gosdk.Tool) bool { return tl.Name == "gamma__create_issue" }) {
		t.Fatalf("want two hashed create_issue names and gamma__create_issue, got %v", toolNamesGo(lt.Tools))
	}
	for _, n := range []string{alphaName, betaName, "gamma__create_issue"} {
		res, err := c.CallTool(ctx, &gosdk.CallToolParams{Name: n, Arguments: map[string]any{"title": n}})
		if err != nil || res.IsError {
			t.Fatalf("call %s: %v %+v", n, err, res)
		}
		// The upstream always receives its exact original name.
		if txt := res.Content[0].(*gosdk.TextContent).Text; !strings.Contains(txt, `"tool":"create_issue"`) {
			t.Fatalf("call %s reached the upstream as %s", n, txt)
		}
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func toolNamesGo(ts []*gosdk.Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

// TestUpstreamKilledMidRun: an upstream killed while the proxy runs makes
// its calls fail with an error naming it, the other upstreams keep working,
// and its tools work again once it has been restarted.
func TestUpstreamKilledMidRun(t *testing.T) {
	srv, file := catalogServer(t), catalogFile(t, "github-like.jsonl")
	cfg := writeConfig(t, fmt.Sprintf(`
[upstreams.victim]
command = %s
args = ["-tools", %s, "-name", "victim-server"]

[upstreams.other]
command = %s
args = ["-tools", %s]
`, tomlString(srv), tomlString(file), tomlString(srv), tomlString(file)))
	cmd := exec.Command(proxyCmd(t, cfg)[0], proxyCmd(t, cfg)[1:]...)
	c := gosdkConnect(t, &gosdk.CommandTransport{Command: cmd})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	call := func(name string) (*gosdk.CallToolResult, error) {
		return c.CallTool(ctx, &gosdk.CallToolParams{Name: name, Arguments: map[string]any{}})
	}
	if _, err := call("victim__list_issues"); err != nil {
		t.Fatalf("before the kill: %v", err)
	}
	killChild(t, cmd.Process.Pid, "victim-server")
	sawDown := false
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		_, err := call("victim__list_issues")
		if err != nil {
			if !strings.Contains(err.Error(), `upstream "victim" is unavailable`) {
				t.Fatalf("the error must name the upstream: %v", err)
			}
			var je *jsonrpc.Error
			if !errors.As(err, &je) || je.Code != jsonrpc.CodeInternalError {
				t.Fatalf("want JSON-RPC error -32603, got %#v", err)
			}
			sawDown = true
			if _, err := call("other__list_issues"); err != nil {
				t.Fatalf("the other upstream must keep working: %v", err)
			}
		} else if sawDown {
			return // back: its tools work again
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !sawDown {
		t.Fatal("calls to the killed upstream never failed")
	}
	t.Fatal("the killed upstream did not come back within 60 s")
}

// TestCheckBadConfig: `check` names a misspelt key and its line, names a
// missing ${VAR}, and never prints a secret value.
func TestCheckBadConfig(t *testing.T) {
	bin := buildProxy(t)
	run := func(cfg string, env ...string) (string, int) {
		cmd := exec.Command(bin, "check", "--config", cfg)
		cmd.Env = append(os.Environ(), env...)
		out, _ := cmd.CombinedOutput()
		return string(out), cmd.ProcessState.ExitCode()
	}
	cfg := writeConfig(t, "[server]\ntransport = \"stdio\"\n\n[upstreams.fs]\ncomand = \"node\"\n")
	out, code := run(cfg)
	if code != 2 || !strings.Contains(out, `upstreams.fs.comand`) || !strings.Contains(out, ":5:") {
		t.Fatalf("misspelt key: exit %d, output:\n%s", code, out)
	}
	cfg = writeConfig(t, "[upstreams.gh]\nurl = \"http://127.0.0.1:9/mcp\"\nheaders = { Authorization = \"Bearer ${MCPTS_TEST_NOT_SET}\" }\n")
	out, code = run(cfg)
	if code != 2 || !strings.Contains(out, "MCPTS_TEST_NOT_SET") {
		t.Fatalf("missing variable: exit %d, output:\n%s", code, out)
	}
	const secret = "s3cr3t-Value-4711"
	cfg = writeConfig(t, fmt.Sprintf(`
[upstreams.gh]
url = "http://127.0.0.1:%d/mcp"
headers = { Authorization = "Bearer ${MCPTS_TEST_SECRET}" }
startup_timeout = "2s"

[upstreams.child]
command = %s
args = ["-tools", "/nonexistent/${MCPTS_TEST_SECRET}.jsonl"]
env = { TOKEN = "${MCPTS_TEST_SECRET}" }
startup_timeout = "2s"
`, freePort(t), tomlString(catalogServer(t))))
	out, code = run(cfg, "MCPTS_TEST_SECRET="+secret)
	if code != 1 {
		t.Fatalf("failing upstreams: want exit 1, got %d:\n%s", code, out)
	}
	if strings.Contains(out, secret) {
		t.Fatalf("check printed the secret:\n%s", out)
	}
	if !strings.Contains(out, "gh") || !strings.Contains(out, "FAILED") {
		t.Fatalf("check must name the failing upstreams:\n%s", out)
	}
}

// TestNoChildrenRemainAfterExit: after the proxy exits (its stdio client
// closed the connection, or it got SIGTERM while serving HTTP), none of its
// child processes remain.
func TestNoChildrenRemainAfterExit(t *testing.T) {
	cfg, _ := fourUpstreams(t)
	cmd := exec.Command(proxyCmd(t, cfg)[0], proxyCmd(t, cfg)[1:]...)
	c := gosdkConnect(t, &gosdk.CommandTransport{Command: cmd})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := c.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	kids := childPIDs(cmd.Process.Pid)
	if len(kids) < 4 {
		t.Fatalf("want at least 4 upstream processes under the proxy, found %v", kids)
	}
	_ = c.Close()
	if left := waitGone(append(kids, cmd.Process.Pid), 30*time.Second); len(left) > 0 {
		t.Fatalf("processes left after the stdio client closed: %v", left)
	}

	port := freePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	p := startHTTPServer(t, proxyCmd(t, cfg, "--transport", "http", "--listen", addr), nil, "http://"+addr+"/healthz")
	// /healthz answers before every upstream was started: wait (bounded)
	// for all four and the process reaper (package proc).
	deadline := time.Now().Add(30 * time.Second)
	for kids = childPIDs(p.PID()); len(kids) < 5 && time.Now().Before(deadline); kids = childPIDs(p.PID()) {
		time.Sleep(50 * time.Millisecond)
	}
	if len(kids) < 5 {
		t.Fatalf("want at least 4 upstream processes under the HTTP proxy, found %v", kids)
	}
	if err := syscall.Kill(p.PID(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if left := waitGone(append(kids, p.PID()), 30*time.Second); len(left) > 0 {
		t.Fatalf("processes left after SIGTERM: %v", left)
	}
}

// TestDirectMode2026ResultWire: a go-sdk client at 2026-07-28 (its
// default) calls a tool of the catalog server (over stdio, itself a
// 2026-07-28 go-sdk server) through the proxy's stdio and Streamable HTTP
// fronts. The result the client reads off the wire is the upstream's
// (content, structuredContent equal to a direct call's) with the shape of
// the client's protocol: resultType "complete" and the proxy's own
// serverInfo in _meta (the upstream's identity does not pass, meta.go).
// The proxy passes such results on as the upstream's bytes, stamped
// (proxy/rawresult.go); this is what the client must see.
func TestDirectMode2026ResultWire(t *testing.T) {
	cfg := writeConfig(t, fmt.Sprintf("[tool_search]\nenabled = false\n[upstreams.catalog]\ncommand = %s\nargs = [\"-tools\", %s]\n",
		tomlString(catalogServer(t)), tomlString(catalogFile(t, "github-like.jsonl"))))
	args := map[string]any{"owner": "octo", "repo": "hello", "state": "open"}
	ctx, cancel := context.WithTimeout(context.Background(), goClientTimeout)
	defer cancel()
	direct := gosdkClientStdio(t, []string{catalogServer(t), "-tools", catalogFile(t, "github-like.jsonl")})
	want, err := direct.CallTool(ctx, &gosdk.CallToolParams{Name: "list_issues", Arguments: args})
	if err != nil {
		t.Fatalf("direct call: %v", err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	startHTTPServer(t, proxyCmd(t, cfg, "--transport", "http", "--listen", addr), nil, "http://"+addr+"/healthz")
	for _, front := range []string{"stdio", "http"} {
		var tr gosdk.Transport = &gosdk.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp"}
		if front == "stdio" {
			cmd := proxyCmd(t, cfg)
			tr = &gosdk.CommandTransport{Command: exec.Command(cmd[0], cmd[1:]...)}
		}
		var wire lockedBuffer
		cs := gosdkConnect(t, &gosdk.LoggingTransport{Transport: tr, Writer: &wire})
		if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
			t.Fatalf("%s: negotiated %q, want 2026-07-28", front, v)
		}
		for i := 0; i < 2; i++ { // the second call reuses pooled buffers
			got, err := cs.CallTool(ctx, &gosdk.CallToolParams{Name: "catalog__list_issues", Arguments: args})
			if err != nil {
				t.Fatalf("%s: call through the proxy: %v", front, err)
			}
			if !reflect.DeepEqual(got.Content, want.Content) || !reflect.DeepEqual(got.StructuredContent, want.StructuredContent) || got.IsError != want.IsError {
				t.Errorf("%s: result differs from the upstream's\n got: %+v\nwant: %+v", front, got, want)
			}
			if si, _ := got.Meta["io.modelcontextprotocol/serverInfo"].(map[string]any); si["name"] != "mcp-toolsearch" {
				t.Errorf("%s: _meta serverInfo %v, want the proxy's", front, got.Meta["io.modelcontextprotocol/serverInfo"])
			}
		}
		n := 0
		for _, l := range lines(wire.String()) {
			if !strings.Contains(l, `"content"`) || !strings.HasPrefix(l, "read: ") {
				continue
			}
			var msg struct {
				Result map[string]json.RawMessage `json:"result"`
			}
			if err := json.Unmarshal([]byte(strings.TrimPrefix(l, "read: ")), &msg); err != nil {
				t.Fatalf("%s: wire line %q: %v", front, l, err)
			}
			n++
			if string(msg.Result["resultType"]) != `"complete"` {
				t.Errorf("%s: resultType %s on the wire, want \"complete\": %.300s", front, msg.Result["resultType"], l)
			}
		}
		if n != 2 {
			t.Errorf("%s: %d tools/call results on the wire, want 2:\n%s", front, n, tail(wire.String(), 2000))
		}
	}
}
