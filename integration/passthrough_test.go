//go:build unix

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// everythingTransparent writes a transparent-mode config:
// one upstream, server-everything, prefix "", tool search off. session is
// "shared" or "per-client".
func everythingTransparent(t *testing.T, session string) string {
	t.Helper()
	ev := npmServer(t, "everything")
	return writeConfig(t, fmt.Sprintf(`
[tool_search]
enabled = false

[upstreams.everything]
command = %s
args = [%s]
prefix = ""
session = %q
`, tomlString(ev[0]), quoteArgs(ev[1:]), session))
}

// passthroughSteps exercise every MCP feature server-everything has. The
// first sleep lets server-everything finish adding the tools it adds after
// initialized (it then sends tools/list_changed).
func passthroughSteps() []map[string]any {
	return []map[string]any{
		{"op": "sleep", "ms": 1500},
		{"op": "list"},
		{"op": "listResources"},
		{"op": "listResourceTemplates"},
		{"op": "listPrompts"},
		{"op": "call", "name": "echo", "args": map[string]any{"message": "transparent"}},
		{"op": "call", "name": "trigger-sampling-request", "args": map[string]any{"prompt": "say hi", "maxTokens": 20}},
		{"op": "call", "name": "trigger-elicitation-request", "args": map[string]any{}},
		{"op": "call", "name": "get-roots-list", "args": map[string]any{}},
		{"op": "call", "name": "trigger-long-running-operation", "args": map[string]any{"duration": 1, "steps": 5}, "progress": true},
		{"op": "readResource", "uri": "demo://resource/static/document/features.md"},
		{"op": "getPrompt", "name": "simple-prompt", "args": map[string]any{}},
		{"op": "subscribe", "uri": "demo://resource/static/document/features.md"},
		{"op": "call", "name": "toggle-subscriber-updates", "args": map[string]any{}},
		{"op": "wait", "notification": "notifications/resources/updated", "count": 1, "timeoutMs": 20000},
	}
}

// knownDiffs removes the differences the proxy is known to make (to be
// fixed): the go-sdk v1.8.0 result types drop "required":
// false of prompt arguments. ("cacheScope": "" and "ttlMs": 0, which they
// added, are left out of answers to clients before 2026-07-28, so they
// are compared.) The tool
// "execution" member (kept at ingest) and the "tasks"
// capability (relayed) are compared.
func knownDiffs(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			switch {
			case k == "required" && e == false:
				continue
			}
			out[k] = knownDiffs(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = knownDiffs(e)
		}
		return out
	}
	return v
}

func stepByOp(t *testing.T, doc map[string]any, i int) map[string]any {
	t.Helper()
	return jpath(t, doc, "steps", i).(map[string]any)
}

// TestPassthroughTransparentEverything runs the same real client (official
// TypeScript SDK, answering sampling, elicitation and roots) against
// server-everything directly and through the proxy in transparent mode,
// and compares: initialize capabilities, tools, resources, templates,
// prompts, a call result, the number of progress notifications on the
// wire, the sampling / elicitation / roots round trips (the upstream's
// requests reach the client and its answers come back into the results),
// a resource read, a prompt and a subscription that delivers updates.
func TestPassthroughTransparentEverything(t *testing.T) {
	waitsMostly(t)
	cfg := everythingTransparent(t, "shared")
	script := scriptArg(t, passthroughSteps()...)
	direct := nodeClient(t, append([]string{"--quiet", "--caps", "all", "--sample-text", "fake model says hi", "--script", script, "--"}, npmServer(t, "everything")...)...)
	via := nodeClient(t, append([]string{"--quiet", "--caps", "all", "--sample-text", "fake model says hi", "--script", script, "--"}, proxyCmd(t, cfg)...)...)

	for i, s := range jpath(t, via, "steps").([]any) {
		step := s.(map[string]any)
		if step["error"] != nil {
			t.Errorf("through the proxy, step %d (%v %v) failed: %v", i, step["op"], step["name"], step["error"])
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	same := func(what string, path ...any) {
		t.Helper()
		d, v := knownDiffs(jpath(t, direct, path...)), knownDiffs(jpath(t, via, path...))
		if !reflect.DeepEqual(d, v) {
			db, _ := json.Marshal(d)
			vb, _ := json.Marshal(v)
			t.Errorf("%s differs through the proxy\ndirect: %s\n proxy: %s", what, db, vb)
		}
	}
	same("initialize capabilities", "initialize", "capabilities")
	// The proxy lists tools in catalog (id) order; the upstream in its own.
	for _, doc := range []map[string]any{direct, via} {
		tools := jpath(t, doc, "steps", 1, "result", "tools").([]any)
		sort.Slice(tools, func(i, j int) bool {
			return fmt.Sprint(tools[i].(map[string]any)["name"]) < fmt.Sprint(tools[j].(map[string]any)["name"])
		})
	}
	same("tools/list", "steps", 1, "result", "tools")
	same("resources/list", "steps", 2, "result")
	same("resources/templates/list", "steps", 3, "result")
	same("prompts/list", "steps", 4, "result")
	same("echo result", "steps", 5, "result")
	same("resources/read", "steps", 10, "result")
	same("prompts/get", "steps", 11, "result")

	// Sampling, elicitation and roots: the upstream's request reached the
	// client, and the client's answer is in the tool's result.
	methods := map[string]int{}
	for _, r := range jpath(t, via, "serverRequests").([]any) {
		methods[jpath(t, r, "method").(string)]++
	}
	for _, m := range []string{"sampling/createMessage", "elicitation/create", "roots/list"} {
		if methods[m] == 0 {
			t.Errorf("the client never received %s through the proxy (got %v)", m, methods)
		}
	}
	text := func(i int) string {
		b, _ := json.Marshal(jpath(t, via, "steps", i, "result", "content"))
		return string(b)
	}
	if !strings.Contains(text(6), "fake model says hi") {
		t.Errorf("sampling result does not carry the client's answer: %s", text(6))
	}
	if !strings.Contains(text(7), "accept") {
		t.Errorf("elicitation result does not carry the client's accept: %s", text(7))
	}
	if !strings.Contains(text(8), "file:///tmp") {
		t.Errorf("roots result does not carry the client's root file:///tmp: %s", text(8))
	}

	// Progress: as many notifications on the wire as the upstream sends
	// straight to the same client, each with the client's own token.
	pd := jpath(t, direct, "steps", 9, "progress").([]any)
	pv := jpath(t, via, "steps", 9, "progress").([]any)
	if len(pd) == 0 || len(pv) != len(pd) {
		t.Errorf("progress notifications: %d through the proxy, %d directly", len(pv), len(pd))
	}
	for i := range min(len(pd), len(pv)) {
		if jpath(t, pd, i, "progress") != jpath(t, pv, i, "progress") {
			t.Errorf("progress #%d: %v through the proxy, %v directly", i, pv[i], pd[i])
		}
	}
	if n, _ := jpath(t, via, "notifications").(map[string]any)["notifications/resources/updated"].(float64); n < 1 {
		t.Errorf("no notifications/resources/updated after subscribing")
	}
}

// TestPassthroughPerClientToolsFollowClientCaps: with session =
// "per-client", server-everything gets one session per client session,
// initialized with that client's capabilities, so a client with sampling,
// elicitation and roots sees the tools it only lists for such clients,
// and a client without them sees the base list.
func TestPassthroughPerClientToolsFollowClientCaps(t *testing.T) {
	waitsMostly(t)
	cfg := everythingTransparent(t, "per-client")
	steps := scriptArg(t,
		map[string]any{"op": "wait", "notification": "notifications/tools/list_changed", "count": 1, "timeoutMs": 5000},
		map[string]any{"op": "list"},
		map[string]any{"op": "call", "name": "get-roots-list", "args": map[string]any{}},
	)
	count := func(caps string) (int, map[string]any) {
		doc := nodeClient(t, "--quiet", "--caps", caps, "--script", steps, "--", proxyCmd(t, cfg)[0], "serve", "--config", cfg, "--log-level", "warn")
		return len(jpath(t, doc, "steps", 1, "result", "tools").([]any)), doc
	}
	directAll := nodeClient(t, append([]string{"--quiet", "--caps", "all", "--script", steps, "--"}, npmServer(t, "everything")...)...)
	want := len(jpath(t, directAll, "steps", 1, "result", "tools").([]any))
	all, doc := count("all")
	none, _ := count("none")
	t.Logf("per-client tools: %d with all capabilities (%d directly), %d with none", all, want, none)
	if all != want {
		t.Errorf("client with roots+sampling+elicitation sees %d tools through the proxy, %d directly", all, want)
	}
	if none >= all {
		t.Errorf("client without capabilities sees %d tools, want fewer than %d", none, all)
	}
	if s := fmt.Sprint(jpath(t, doc, "steps", 2)); !strings.Contains(s, "file:///tmp") {
		t.Errorf("roots through a per-client session: %s", s)
	}
}

// TestPassthroughCancelReachesUpstream: the client cancels a 30-second
// call and the upstream (catalogserver -slow-tool) logs "call cancelled".
// Two clients:
//   - the TS SDK at 2025-11-25 (it sends notifications/cancelled when its
//     request times out after 1 s) over stdio: the proxy answers at once and
//     the upstream logs the cancel within 1 s of the client's;
//   - the go-sdk at 2026-07-28 (its default), whose call runs as an
//     exchange that outlives the request (proxy/exchange.go), over stdio
//     (notifications/cancelled) and Streamable HTTP (the client closes the
//     request's response stream, the cancellation signal there): the
//     upstream logs the cancel, and the session serves calls afterwards.
//
// A banner line the upstream prints on stdout first is skipped.
func TestPassthroughCancelReachesUpstream(t *testing.T) {
	// slowConfig: the upstream's stderr goes to errLog; verbose adds its
	// "slow call started" line (catalogserver -v).
	slowConfig := func(t *testing.T, verbose bool) (cfg, errLog string) {
		errLog = filepath.Join(t.TempDir(), "upstream.stderr")
		v := ""
		if verbose {
			v = " -v"
		}
		return writeConfig(t, fmt.Sprintf(`
[tool_search]
enabled = false

[upstreams.slow]
command = "sh"
args = ["-c", %s]
`, tomlString(fmt.Sprintf("echo 'banner: not JSON'; exec %s -tools %s -slow-tool create_issue=30s%s 2>>%s",
			catalogServer(t), catalogFile(t, "github-like.jsonl"), v, errLog)))), errLog
	}
	t.Run("ts-sdk-2025-11-25", func(t *testing.T) {
		cfg, errLog := slowConfig(t, false)
		steps := scriptArg(t,
			map[string]any{"op": "call", "name": "slow__list_issues", "args": map[string]any{"owner": "o", "repo": "r"}},
			map[string]any{"op": "call", "name": "slow__create_issue", "args": map[string]any{"owner": "o", "repo": "r", "title": "t"}, "timeoutMs": 1000},
			map[string]any{"op": "ping"},
		)
		start := time.Now()
		doc := nodeClient(t, append([]string{"--quiet", "--script", steps, "--"}, proxyCmd(t, cfg)...)...)
		if e := stepByOp(t, doc, 0)["error"]; e != nil {
			t.Fatalf("a call to an upstream that printed a banner failed: %v", e)
		}
		if e := stepByOp(t, doc, 1)["error"]; e == nil {
			t.Fatalf("the cancelled call returned a result: %v", jpath(t, doc, "steps", 1))
		}
		if e := stepByOp(t, doc, 2)["error"]; e != nil {
			t.Fatalf("ping after the cancel: %v", e)
		}
		// The client process has exited; the upstream must have logged the
		// cancel by now, or within 1 s of the client's 1 s timeout.
		deadline := start.Add(time.Duration(jpath(t, doc, "timings", "connectMs").(float64))*time.Millisecond + 2*time.Second)
		for {
			b, _ := os.ReadFile(errLog)
			if strings.Contains(string(b), "call cancelled") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("upstream never saw the cancel; its stderr:\n%s", tail(string(b), 2000))
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Logf("cancel error as seen by the client: %v", stepByOp(t, doc, 1)["error"])
	})
	// The TS SDK at 2025-11-25 over Streamable HTTP (the go-sdk's session
	// handler on the front) and over the legacy SSE transport: its call
	// times out, it sends notifications/cancelled, and no answer to the
	// call may follow (on the POST stream, resp. the SSE stream) (before: -32603 "context canceled", which
	// the SDK reports as "Received a response for an unknown message ID").
	for _, front := range []string{"http", "sse"} {
		t.Run("ts-sdk-2025-11-25-"+front, func(t *testing.T) {
			cfg, errLog := slowConfig(t, false)
			addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
			startHTTPServer(t, proxyCmd(t, cfg, "--transport", "http", "--listen", addr), nil, "http://"+addr+"/healthz")
			steps := scriptArg(t,
				map[string]any{"op": "call", "name": "slow__list_issues", "args": map[string]any{"owner": "o", "repo": "r"}},
				map[string]any{"op": "call", "name": "slow__create_issue", "args": map[string]any{"owner": "o", "repo": "r", "title": "t"}, "timeoutMs": 1000},
				map[string]any{"op": "wait", "notification": "never/sent", "timeoutMs": 2000}, // time for a stray answer
				map[string]any{"op": "ping"},
			)
			path := map[string]string{"http": "/mcp", "sse": "/sse"}[front]
			doc := nodeClient(t, "--quiet", "--script", steps, "--"+front, "http://"+addr+path)
			if v := jpath(t, doc, "initialize", "protocolVersion"); v != "2025-11-25" {
				t.Fatalf("negotiated %v, want 2025-11-25", v)
			}
			if e := stepByOp(t, doc, 0)["error"]; e != nil {
				t.Fatalf("first call: %v", e)
			}
			if e := stepByOp(t, doc, 1)["error"]; e == nil {
				t.Fatalf("the cancelled call returned a result: %v", jpath(t, doc, "steps", 1))
			}
			if e := stepByOp(t, doc, 3)["error"]; e != nil {
				t.Fatalf("ping after the cancel: %v", e)
			}
			b, _ := os.ReadFile(errLog)
			if !strings.Contains(string(b), "call cancelled") {
				t.Errorf("upstream never saw the cancel; its stderr:\n%s", tail(string(b), 2000))
			}
			for _, e := range doc["clientErrors"].([]any) {
				t.Errorf("the client got an error of its own (the cancelled call was answered?): %v", e)
			}
		})
	}
	for _, front := range []string{"stdio", "http"} {
		t.Run("go-sdk-2026-07-28-"+front, func(t *testing.T) {
			cfg, errLog := slowConfig(t, true)
			var cs *gosdk.ClientSession
			if front == "stdio" {
				cs = gosdkClientStdio(t, proxyCmd(t, cfg))
			} else {
				addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
				startHTTPServer(t, proxyCmd(t, cfg, "--transport", "http", "--listen", addr), nil, "http://"+addr+"/healthz")
				cs = gosdkClientHTTP(t, "http://"+addr+"/mcp", nil)
			}
			if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
				t.Fatalf("negotiated %q, want 2026-07-28", v)
			}
			ctx, cancel := context.WithTimeout(context.Background(), goClientTimeout)
			defer cancel()
			list := &gosdk.CallToolParams{Name: "slow__list_issues", Arguments: map[string]any{"owner": "o", "repo": "r"}}
			if _, err := cs.CallTool(ctx, list); err != nil {
				t.Fatalf("a call to an upstream that printed a banner failed: %v", err)
			}
			// The call is cancelled once the upstream has started it (its
			// stderr says so); the client's own timeout would race the start.
			cctx, ccancel := context.WithCancel(ctx)
			errc := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(cctx, &gosdk.CallToolParams{Name: "slow__create_issue", Arguments: map[string]any{"owner": "o", "repo": "r", "title": "t"}})
				errc <- err
			}()
			waitLog := func(what string) {
				t.Helper()
				for {
					b, _ := os.ReadFile(errLog)
					if strings.Contains(string(b), what) {
						return
					}
					select {
					case <-ctx.Done():
						t.Fatalf("the upstream never logged %q; its stderr:\n%s", what, tail(string(b), 2000))
					case <-time.After(50 * time.Millisecond):
					}
				}
			}
			waitLog("slow call started")
			ccancel()
			if err := <-errc; err == nil {
				t.Fatal("the cancelled call returned a result")
			}
			waitLog("call cancelled")
			if _, err := cs.CallTool(ctx, list); err != nil {
				t.Fatalf("a call after the cancel: %v", err)
			}
		})
	}
}

// TestPassthroughRootsListChanged: a client's notifications/roots/list_changed
// reaches its per-client upstream session, which asks roots/list again
// (relayed back to the client): the client sees as many roots/list
// requests through the proxy as straight from server-everything.
func TestPassthroughRootsListChanged(t *testing.T) {
	waitsMostly(t)
	cfg := everythingTransparent(t, "per-client")
	notify := map[string]any{"op": "notify", "method": "notifications/roots/list_changed", "params": map[string]any{}}
	// The echo call returns only once the client's per-client upstream
	// session is up (on a loaded machine it can take longer than the first
	// sleep): a notification sent before it exists has nothing to reach, and
	// the new session asks roots/list once on its own. The sleep after it
	// gives that new server-everything the same settling time the direct one
	// had: it installs its roots/list_changed handler only 350 ms after
	// initialized (server-everything dist/server/index.js, syncRoots), and
	// drops a notification that comes earlier.
	steps := scriptArg(t,
		map[string]any{"op": "sleep", "ms": 1500},
		map[string]any{"op": "call", "name": "echo", "args": map[string]any{"message": "up"}},
		map[string]any{"op": "sleep", "ms": 1500}, notify,
		map[string]any{"op": "sleep", "ms": 1000}, notify,
		// Room for the last roots/list to come back through the proxy's
		// hop on a loaded machine (-race, other jobs).
		map[string]any{"op": "sleep", "ms": 3000},
	)
	countRoots := func(doc map[string]any) int {
		n := 0
		for _, r := range jpath(t, doc, "serverRequests").([]any) {
			if jpath(t, r, "method") == "roots/list" {
				n++
			}
		}
		return n
	}
	direct := countRoots(nodeClient(t, append([]string{"--quiet", "--caps", "all", "--script", steps, "--"}, npmServer(t, "everything")...)...))
	via := countRoots(nodeClient(t, append([]string{"--quiet", "--caps", "all", "--script", steps, "--"}, proxyCmd(t, cfg)...)...))
	if direct < 3 || via != direct {
		t.Fatalf("roots/list requests: %d through the proxy, %d directly (want equal, at least 3)", via, direct)
	}
}

// TestResourcesOfUpstreamStartingAtInitialize: in code mode initialize is
// answered at once, before the upstreams are ready, so the client of a
// stdio proxy (which connects at start) asks while server-everything (made
// to start 2 s late here) is still starting. The answer still announces
// resources and prompts, with listChanged; a list made at once waits for
// the upstream (up to startup_wait) and has everything's, and when the
// upstream comes up the client is told to list them. Before, that client
// never saw a resource or prompt, which a direct connection shows.
func TestResourcesOfUpstreamStartingAtInitialize(t *testing.T) {
	waitsMostly(t)
	ev := npmServer(t, "everything")
	cfg := writeConfig(t, fmt.Sprintf(`
[tool_search]
mode = "code"

[upstreams.everything]
command = "sh"
args = ["-c", %q]
`, "sleep 2; exec "+ev[0]+" "+ev[1]+" stdio"))
	resChanged, promptChanged := make(chan struct{}, 8), make(chan struct{}, 8)
	c := gosdk.NewClient(&gosdk.Implementation{Name: "early-client", Version: "1"}, &gosdk.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *gosdk.ResourceListChangedRequest) { resChanged <- struct{}{} },
		PromptListChangedHandler:   func(context.Context, *gosdk.PromptListChangedRequest) { promptChanged <- struct{}{} },
	})
	cmd := proxyCmd(t, cfg, "--startup-wait", "30s")
	ctx := context.Background()
	sess, err := c.Connect(ctx, &gosdk.CommandTransport{Command: exec.Command(cmd[0], cmd[1:]...)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	caps := sess.InitializeResult().Capabilities
	if caps.Resources == nil || !caps.Resources.ListChanged || caps.Prompts == nil || !caps.Prompts.ListChanged {
		t.Fatalf("initialize while the upstream starts: resources %+v, prompts %+v; want both with listChanged", caps.Resources, caps.Prompts)
	}
	// Lists made now wait for the upstream still starting (up to
	// startup_wait), as a search does.
	rs, err := sess.ListResources(ctx, nil)
	if err != nil || len(rs.Resources) == 0 {
		t.Fatalf("resources/list at once: %v, %d resources", err, len(rs.Resources))
	}
	ps, err := sess.ListPrompts(ctx, nil)
	if err != nil || len(ps.Prompts) == 0 {
		t.Fatalf("prompts/list at once: %v, %d prompts", err, len(ps.Prompts))
	}
	for what, ch := range map[string]chan struct{}{"resources": resChanged, "prompts": promptChanged} {
		select {
		case <-ch:
		case <-time.After(60 * time.Second): // fail-safe bound
			t.Fatalf("no notifications/%s/list_changed after the upstream came up", what)
		}
	}
}
