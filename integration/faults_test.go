//go:build unix

package integration

// Issue 13 end to end: the real proxy binary in front of a raw fake
// upstream (integration/fakeupstream) that produces one kind of fault,
// with real clients.

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
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
