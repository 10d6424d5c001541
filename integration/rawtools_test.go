//go:build unix

package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// TestDirectModeToolsMatchEverything:
// in direct mode every tool object reaches the client with every member
// server-everything sent, "execution" included (go-sdk v1.8.0's mcp.Tool
// drops it; the proxy keeps it at ingest). The same TypeScript SDK client
// lists server-everything directly and through the proxy (prefix "", over
// stdio and Streamable HTTP): each tool object is deep-equal; so is each
// tool of a 2026-07-28 tools/list sent as raw JSON-RPC over HTTP.
func TestDirectModeToolsMatchEverything(t *testing.T) {
	waitsMostly(t)
	cfg := everythingTransparent(t, "shared")
	script := scriptArg(t, map[string]any{"op": "sleep", "ms": 1500}, map[string]any{"op": "list"})
	args := []string{"--quiet", "--caps", "all", "--script", script}
	direct := nodeClient(t, append(append(args, "--"), npmServer(t, "everything")...)...)
	viaStdio := nodeClient(t, append(append(args, "--"), proxyCmd(t, cfg)...)...)
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	startHTTPServer(t, proxyCmd(t, cfg, "--transport", "http", "--listen", addr), nil, "http://"+addr+"/healthz")
	viaHTTP := nodeClient(t, append(args, "--http", "http://"+addr+"/mcp")...)

	byName := func(doc map[string]any) map[string]any {
		out := map[string]any{}
		for _, tl := range jpath(t, doc, "steps", 1, "result", "tools").([]any) {
			out[jpath(t, tl, "name").(string)] = tl
		}
		return out
	}
	want := byName(direct)
	if len(want) < 10 {
		t.Fatalf("server-everything listed %d tools directly", len(want))
	}
	if got := jpath(t, want["simulate-research-query"], "execution", "taskSupport"); got != "required" {
		t.Fatalf("server-everything's simulate-research-query has execution.taskSupport %v, want required (kit changed?)", got)
	}
	for what, doc := range map[string]map[string]any{"stdio": viaStdio, "http": viaHTTP} {
		got := byName(doc)
		var names []string
		for n := range want {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			if got[n] == nil {
				t.Errorf("%s: %s missing through the proxy", what, n)
				continue
			}
			if jpath(t, got[n], "execution") == nil {
				t.Errorf("%s: %s has no execution through the proxy", what, n)
			}
			if !reflect.DeepEqual(got[n], want[n]) {
				gb, _ := json.Marshal(got[n])
				wb, _ := json.Marshal(want[n])
				t.Errorf("%s: tool %s differs through the proxy\n got: %s\nwant: %s", what, n, gb, wb)
			}
		}
		if len(got) != len(want) {
			t.Errorf("%s: %d tools through the proxy, %d directly", what, len(got), len(want))
		}
	}

	// A 2026-07-28 request (no session; raw JSON-RPC over the proxy's
	// Streamable HTTP) gets the same tool objects, in the answer the
	// go-sdk stamps for that protocol (resultType, server identity).
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/mcp", bytes.NewReader([]byte(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/list")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if i := bytes.Index(raw, []byte("data: ")); i >= 0 { // an SSE answer: its one event
		raw = raw[i+len("data: "):]
		if j := bytes.IndexByte(raw, '\n'); j >= 0 {
			raw = raw[:j]
		}
	}
	var answer struct {
		Result struct {
			ResultType string           `json:"resultType"`
			Tools      []map[string]any `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(raw, &answer); err != nil || answer.Result.ResultType != "complete" {
		t.Fatalf("2026-07-28 tools/list: %v, answer %.300s", err, raw)
	}
	for _, tl := range answer.Result.Tools {
		n, _ := tl["name"].(string)
		if w := want[n]; w == nil || !reflect.DeepEqual(any(tl), w) {
			gb, _ := json.Marshal(tl)
			t.Errorf("2026-07-28: tool %s differs from directly: %s", n, gb)
		}
	}
	if len(answer.Result.Tools) != len(want) || !strings.Contains(string(raw), `"taskSupport":"required"`) {
		t.Errorf("2026-07-28: %d tools (want %d), answer %.200s", len(answer.Result.Tools), len(want), raw)
	}
}

// TestDescribeShowsExecution: tool_describe (tools
// mode), openclaw.tools.describe (code mode) and the CLI describe show
// server-everything's execution member, with title and annotations; those
// modes offer no tasks capability (their catalog tools are not listed).
func TestDescribeShowsExecution(t *testing.T) {
	waitsMostly(t)
	ev := npmServer(t, "everything")
	cfgFor := func(mode string) string {
		return writeConfig(t, fmt.Sprintf(`
[tool_search]
enabled = true
mode = %q

[upstreams.everything]
command = %s
args = [%s]
`, mode, tomlString(ev[0]), quoteArgs(ev[1:])))
	}
	const id = "mcp:everything:simulate-research-query"
	check := func(what, text string) {
		t.Helper()
		for _, want := range []string{`"execution":{"taskSupport":"required"}`, `"title":"Simulate Research Query"`, `"idempotentHint":false`} {
			if !strings.Contains(strings.ReplaceAll(text, `\"`, `"`), want) {
				t.Errorf("%s lacks %s: %.600s", what, want, text)
			}
		}
	}
	tools := nodeClient(t, "--quiet", "--script", scriptArg(t, map[string]any{"op": "call", "name": "tool_describe", "args": map[string]any{"id": id}}), "--", proxyCmd(t, cfgFor("tools"))[0], "serve", "--config", cfgFor("tools"), "--log-level", "warn")
	check("tool_describe", fmt.Sprint(jpath(t, tools, "steps", 0, "result", "content", 0, "text")))
	code := nodeClient(t, "--quiet", "--script", scriptArg(t, map[string]any{"op": "call", "name": "tool_search_code", "args": map[string]any{"code": fmt.Sprintf("return JSON.stringify(await openclaw.tools.describe(%q));", id)}}), "--", proxyCmd(t, cfgFor("code"))[0], "serve", "--config", cfgFor("code"), "--log-level", "warn")
	check("openclaw.tools.describe", fmt.Sprint(jpath(t, code, "steps", 0, "result", "content", 0, "text")))
	// Tools reached through tool_call or the bridge are not called as
	// tasks: the search modes do not offer tasks (no direct_only tools).
	for what, doc := range map[string]map[string]any{"tools": tools, "code": code} {
		if caps := jpath(t, doc, "initialize", "capabilities").(map[string]any); caps["tasks"] != nil {
			t.Errorf("%s mode offers tasks: %v", what, caps)
		}
	}
	out, err := exec.Command(buildProxy(t), "describe", "--config", cfgFor("tools"), "--log-level", "warn", id).Output()
	if err != nil {
		t.Fatalf("describe: %v", err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, out); err != nil {
		t.Fatalf("describe printed no JSON: %v: %.300s", err, out)
	}
	check("CLI describe", compact.String())
}
