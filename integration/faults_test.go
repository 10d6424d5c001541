//go:build unix

package integration

// Issue 13 end to end: the real proxy binary in front of a raw fake
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

// Item 3: in direct mode the TypeScript SDK client lists every tool whose
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

// Item 13 (front): a request id the go-sdk cannot give back exactly (1.5,
// 2^70, null) is refused with -32600 and the id written back as sent, over
// stdio and over Streamable HTTP; string and integer ids work. Item 7
// (front): a POST without a session id that is not initialize gets HTTP
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
