//go:build unix

package integration

// Broken and hostile upstream servers end to end: the real proxy binary in front of a raw fake
// upstream (integration/fakeupstream) that produces one kind of fault,
// with real clients.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func fakeUpstreamBin(t testing.TB) string {
	t.Helper()
	return goBinary(t, "fakeupstream", "./integration/fakeupstream")
}

// fakeStdioConfig is a direct-mode config with the fake upstream "NAME"
// running scenario, plus extra TOML.
func fakeStdioConfig(t *testing.T, name, scenario, extra string) string {
	t.Helper()
	return writeConfig(t, `
[tool_search]
enabled = false

[upstreams.`+name+`]
command = `+tomlString(fakeUpstreamBin(t))+`
args = ["-scenario", "`+scenario+`"]
`+extra)
}

// In direct mode the TypeScript SDK client lists every tool whose
// schema could be repaired, plus the healthy one; the string-root tool is
// quarantined and named by `list`; describe shows the schema as received.
func TestFaultOddSchemasTypeScriptClient(t *testing.T) {
	requireNode(t)
	cfg := fakeStdioConfig(t, "odd", "oddschemas", "")
	doc := nodeClient(t, append([]string{"--quiet", "--"}, proxyCmd(t, cfg)...)...)
	step := stepByOp(t, doc, 0)
	if e, ok := step["error"]; ok {
		t.Fatalf("tools/list failed in the TypeScript client: %v", e)
	}
	tools, _ := jpath(t, step, "result", "tools").([]any)
	var names []string
	for _, tl := range tools {
		m := tl.(map[string]any)
		names = append(names, m["name"].(string))
		if typ := jpath(t, m, "inputSchema", "type"); typ != "object" {
			t.Errorf("%s: inputSchema.type = %v", m["name"], typ)
		}
	}
	got := strings.Join(names, ",")
	for _, want := range []string{"odd__healthy", "odd__draft7", "odd__anyvalue", "odd__oneof", "odd__emptyschema"} {
		if !strings.Contains(got, want) {
			t.Errorf("tools/list %s lacks %s", got, want)
		}
	}
	if strings.Contains(got, "stringroot") {
		t.Errorf("the string-root tool is exposed: %s", got)
	}

	out, err := exec.Command(buildProxy(t), "list", "--config", cfg).CombinedOutput()
	if err != nil {
		t.Fatalf("list: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "upstream odd: tool stringroot quarantined (schema): inputSchema: root type is \"string\"") {
		t.Errorf("list does not show the quarantine:\n%s", out)
	}
	out, err = exec.Command(buildProxy(t), "check", "--config", cfg).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "5 tools (1 quarantined, 4 normalised)") {
		t.Errorf("check: %v\n%s", err, out)
	}
	out, err = exec.Command(buildProxy(t), "describe", "--config", cfg, "mcp:odd:draft7").Output()
	if err != nil {
		t.Fatalf("describe: %v\n%s", err, out)
	}
	var d map[string]json.RawMessage
	if err := json.Unmarshal(out, &d); err != nil {
		t.Fatal(err)
	}
	var in struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(d["inputSchema"], &in)
	if !strings.Contains(string(d["originalInputSchema"]), "draft-07") || in.Type != "object" {
		t.Errorf("describe: inputSchema %s originalInputSchema %s", d["inputSchema"], d["originalInputSchema"])
	}
}

// Front side: a request id the go-sdk cannot give back exactly (1.5,
// 2^70, null) is refused with -32600 and the id written back as sent, over
// stdio and over Streamable HTTP; string and integer ids work. A
// POST without a session id that is not initialize gets HTTP
// 400 (an unknown session id keeps getting 404).
func TestFaultFrontRequestIDs(t *testing.T) {
	cfg := fakeStdioConfig(t, "plain", "plain", "")
	cmd := exec.Command(proxyCmd(t, cfg)[0], proxyCmd(t, cfg)[1:]...)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stdin.Close(); _ = cmd.Wait() }()
	r := bufio.NewReader(stdout)
	roundTrip := func(line string) string {
		t.Helper()
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			t.Fatal(err)
		}
		type got struct {
			s   string
			err error
		}
		ch := make(chan got, 1)
		go func() { s, err := r.ReadString('\n'); ch <- got{s, err} }()
		select {
		case g := <-ch:
			if g.err != nil {
				t.Fatalf("%s: %v", line, g.err)
			}
			return strings.TrimSpace(g.s)
		case <-time.After(30 * time.Second): // liveness bound: no answer at all
			_ = cmd.Process.Kill()
			t.Fatalf("%s: no answer", line)
			return ""
		}
	}
	initLine := `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	if got := roundTrip(initLine); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":"init","result"`) {
		t.Fatalf("initialize: %s", got)
	}
	_, _ = io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	for _, id := range []string{`1.5`, `1180591620717411303424`, `null`} {
		got := roundTrip(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)
		if !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32600,"message":"invalid request id `+id) {
			t.Errorf("stdio id %s: %s", id, got)
		}
	}
	for _, id := range []string{`7`, `"abc"`, `-9007199254740992`} {
		if got := roundTrip(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`); got != `{"jsonrpc":"2.0","id":`+id+`,"result":{}}` {
			t.Errorf("stdio id %s: %s", id, got)
		}
	}

	// Streamable HTTP.
	port := freePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	startHTTPServer(t, proxyCmd(t, cfg, "--transport", "http", "--listen", addr), nil, "http://"+addr+"/healthz")
	post := func(sid, body string) (int, string, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), string(b)
	}
	status, _, body := post("", `{"jsonrpc":"2.0","id":1.5,"method":"initialize","params":{}}`)
	if status != http.StatusBadRequest || !strings.Contains(body, `"id":1.5,"error":{"code":-32600`) {
		t.Errorf("HTTP id 1.5: %d %s", status, body)
	}
	status, _, body = post("", `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	if status != http.StatusBadRequest || !strings.Contains(body, `"code":-32600`) || !strings.Contains(body, "Mcp-Session-Id") {
		t.Errorf("POST without a session id: %d %s", status, body)
	}
	status, _, body = post("no-such-session", `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	if status != http.StatusNotFound {
		t.Errorf("POST with an unknown session id: %d %s", status, body)
	}
	status, sid, body := post("", initLine)
	if status != http.StatusOK || sid == "" {
		t.Fatalf("initialize over HTTP: %d %q %s", status, sid, body)
	}
	status, _, body = post(sid, `{"jsonrpc":"2.0","id":1180591620717411303424,"method":"ping"}`)
	if status != http.StatusBadRequest || !strings.Contains(body, `"id":1180591620717411303424,"error"`) {
		t.Errorf("HTTP id 2^70: %d %s", status, body)
	}
}

// An upstream that never answers initialize does not hold
// the proxy: with startup_wait 500ms (--startup-wait) the client lists the
// healthy upstream's tool at once (the client's 60 s request timeout is a
// liveness bound: the hung upstream's startup_timeout is 10 minutes); an
// upstream that is merely slow shows up afterwards with
// notifications/tools/list_changed.
func TestFaultSlowUpstreamsDoNotHoldStart(t *testing.T) {
	requireNode(t)
	bin := fakeUpstreamBin(t)
	cfg := writeConfig(t, `
[upstreams.healthy]
command = `+tomlString(bin)+`

[upstreams.slow]
command = `+tomlString(bin)+`
args = ["-init-delay", "3s"]

[upstreams.hung]
command = `+tomlString(bin)+`
args = ["-init-delay", "1h"]
startup_timeout = "10m"
`)
	steps := scriptArg(t,
		map[string]any{"op": "list"},
		map[string]any{"op": "wait", "notification": "notifications/tools/list_changed", "timeoutMs": 60000},
		map[string]any{"op": "list"},
	)
	doc := nodeClient(t, append([]string{"--quiet", "--timeout", "60000", "--script", steps, "--"}, proxyCmd(t, cfg, "--startup-wait", "500ms")...)...)
	names := func(i int) string {
		var out []string
		for _, tl := range jpath(t, stepByOp(t, doc, i), "result", "tools").([]any) {
			out = append(out, tl.(map[string]any)["name"].(string))
		}
		return strings.Join(out, ",")
	}
	if got := names(0); !strings.Contains(got, "healthy__echo") || strings.Contains(got, "hung__") {
		t.Fatalf("first tools/list: %s", got)
	}
	if e := stepByOp(t, doc, 1)["error"]; e != nil {
		t.Fatalf("no list_changed for the slow upstream: %v", e)
	}
	if got := names(2); !strings.Contains(got, "slow__echo") || !strings.Contains(got, "healthy__echo") {
		t.Fatalf("tools/list after list_changed: %s", got)
	}
}

// An upstream's list_changed that changes nothing reaches no
// client; one that changes the direct-mode surface reaches it once (in
// code mode the search tool's description counts the catalog, so only
// the no-op is checked there).
func TestFaultListChangedOnlyWhenSurfaceChanges(t *testing.T) {
	waitsMostly(t)
	requireNode(t)
	for _, c := range []struct {
		mode string
		want float64
	}{{"direct", 1}, {"code", 0}} {
		toolSearch := "[tool_search]\nenabled = false\n"
		call := func(name string) map[string]any {
			return map[string]any{"op": "call", "name": "ch__" + name, "args": map[string]any{}}
		}
		if c.mode == "code" {
			toolSearch = "[tool_search]\nenabled = true\nmode = \"code\"\n"
			call = func(name string) map[string]any {
				return map[string]any{"op": "call", "name": "tool_search_code", "args": map[string]any{"code": "return await openclaw.tools.call('mcp:ch:" + name + "', {})"}}
			}
		}
		cfg := writeConfig(t, toolSearch+`
[upstreams.ch]
command = `+tomlString(fakeUpstreamBin(t))+`
args = ["-scenario", "listchanges"]
`)
		script := []map[string]any{{"op": "list"}, call("poke"), {"op": "sleep", "ms": 1500}}
		if c.mode == "direct" {
			script = append(script, call("drop"), map[string]any{"op": "sleep", "ms": 1500}, map[string]any{"op": "list"})
		}
		// Code mode answers tools/list at once: while ch starts, the
		// description says so, and its start changes the surface (one
		// list_changed, which the go-sdk sends 10 ms after the change,
		// around the time the first tool_search_code call, which waits for
		// the start, returns). Counted from half a second after that call.
		count := func(doc map[string]any) float64 {
			n, _ := jpath(t, doc, "notifications").(map[string]any)["notifications/tools/list_changed"].(float64)
			return n
		}
		if c.mode == "code" {
			snapshot := map[string]any{"op": "wait", "notification": "notifications/tools/list_changed", "count": 0}
			script = []map[string]any{call("a"), {"op": "sleep", "ms": 500}, snapshot, {"op": "list"}, call("poke"), {"op": "sleep", "ms": 1500}, snapshot}
			count = func(doc map[string]any) float64 {
				at := func(i int) float64 {
					n, _ := jpath(t, doc, "steps", i, "result").(map[string]any)["count"].(float64) // absent: none yet
					return n
				}
				return at(6) - at(2)
			}
		}
		steps := scriptArg(t, script...)
		doc := nodeClient(t, append([]string{"--quiet", "--script", steps, "--"}, proxyCmd(t, cfg)...)...)
		if n := count(doc); n != c.want {
			t.Errorf("%s mode: %v list_changed notifications, want %v (%v)", c.mode, n, c.want, jpath(t, doc, "notifications"))
		}
	}
}

// With server.client_prefix_room = 17 (Claude Code's
// "mcp__toolsearch__"), exposed names stay within 47 characters, and each
// shortened name is logged with its original.
func TestFaultNamesLeaveRoomForClientPrefix(t *testing.T) {
	const up = "billing-cost-management-mcp-server"
	cfg := writeConfig(t, `
[server]
client_prefix_room = 17

[upstreams.`+up+`]
command = `+tomlString(fakeUpstreamBin(t))+`
args = ["-scenario", "longname"]
`)
	cmd := exec.Command(buildProxy(t), "list", "--config", cfg, "--log-level", "info")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("list: %v\n%s", err, stderr.String())
	}
	n := 0
	for _, l := range lines(string(out)) {
		f := strings.Fields(l)
		if len(f) > 1 && strings.HasPrefix(f[0], "mcp:"+up+":") {
			n++
			if len(f[1]) > 47 {
				t.Errorf("%s exposed as %s (%d characters, room for 17 left: 47)", f[0], f[1], len(f[1]))
			}
		}
	}
	if n != 2 {
		t.Fatalf("%d tools listed:\n%s", n, out)
	}
	if !strings.Contains(stderr.String(), "tool name shortened to fit") || !strings.Contains(stderr.String(), "full="+up+"__free-tier-usage") {
		t.Errorf("the shortened names are not logged with their originals:\n%s", stderr.String())
	}
}
