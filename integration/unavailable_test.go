//go:build unix

package integration

import (
	"fmt"
	"strings"
	"testing"
)

// TestFailedUpstreamsNamedToModel, with the official
// TypeScript SDK client: an upstream whose command is not on PATH and one
// that exits during initialize are named, with the proxy's reason, in the
// instructions, the catalog summary (tool_search's description), the
// search note of a query without a strong match and the unknown-tool
// answer for one of their tool ids. The upstream's stderr is never quoted
// there, and an upstream the policy hides is never named.
func TestFailedUpstreamsNamedToModel(t *testing.T) {
	requireNode(t)
	cfg := writeConfig(t, fmt.Sprintf(`
[tool_search]
enabled = true
mode = "tools"

[upstreams.github]
command = %s
args = ["-tools", %s, "-server", "github"]
trusted = true

[upstreams.fetch]
command = "trialfix-no-such-command"

[upstreams.crashy]
command = "/bin/sh"
args = ["-c", "echo STDERR-SECRET-LINE >&2; exit 3"]

[upstreams.hiddenup]
command = "trialfix-no-such-command-either"

[tools]
deny = ["group:hiddenup"]
`, tomlString(catalogServer(t)), tomlString(catalogFile(t, "github-like.jsonl"))))
	// The proxy answers initialize and tools/list at once; the first
	// search waits for the start, and the list comes after it.
	doc := nodeClient(t, append([]string{"--quiet", "--script", scriptArg(t,
		map[string]any{"op": "list"},
		callStep("tool_search", map[string]any{"query": "zzqx blorf"}),
		callStep("tool_call", map[string]any{"id": "mcp:fetch:fetch", "args": map[string]any{}}),
		callStep("tool_search", map[string]any{"query": "create an issue"}),
		map[string]any{"op": "list"},
	), "--"}, proxyCmd(t, cfg, "--startup-wait", "10s")...)...)
	const fetchWhy = `exec: \"trialfix-no-such-command\": executable file not found in $PATH`
	const crashWhy = `\"crashy\" (the process exited with status 3 during initialize)`
	check := func(what, got string, want ...string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: want %q in\n%s", what, w, got)
			}
		}
		for _, bad := range []string{"STDERR-SECRET", "hiddenup"} {
			if strings.Contains(got, bad) {
				t.Errorf("%s: names %q:\n%s", what, bad, got)
			}
		}
	}
	// At initialize the failed upstreams may still be on their first
	// attempt: the instructions name them as starting or as unavailable.
	instr, _ := jpath(t, doc, "initialize", "instructions").(string)
	if strings.Contains(instr, "still starting") {
		check("instructions", instr, "fetch", "crashy")
	} else {
		check("instructions", strings.ReplaceAll(instr, `"`, `\"`), "2 MCP servers are unavailable: ", fetchWhy, crashWhy)
	}
	var desc string
	for _, tl := range jpath(t, doc, "steps", 4, "result", "tools").([]any) {
		if tl.(map[string]any)["name"] == "tool_search" {
			desc, _ = tl.(map[string]any)["description"].(string)
		}
	}
	check("tool_search description", strings.ReplaceAll(desc, `"`, `\"`), "2 MCP servers are unavailable: ", fetchWhy, crashWhy)
	check("no-match search", stepOutcome(t, doc, 1), "2 MCP servers are unavailable: ", fetchWhy, crashWhy, "tell them it is unavailable and why")
	check("unknown tool", stepOutcome(t, doc, 2), `upstream \"fetch\" is unavailable: `+fetchWhy)
	if got := stepOutcome(t, doc, 3); strings.Contains(got, "unavailable") {
		t.Errorf("strong match names unavailable upstreams: %s", got)
	}
}
