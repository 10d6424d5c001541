//go:build unix

package integration

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"testing"
)

// TestDirectModeToolsMatchEverything (issue 12 item 6, issue 17 "Tasks"):
// in direct mode every tool object reaches the client with every member
// server-everything sent, "execution" included (go-sdk v1.8.0's mcp.Tool
// drops it; the proxy keeps it at ingest). The same TypeScript SDK client
// lists server-everything directly and through the proxy (prefix "", over
// stdio and Streamable HTTP): each tool object is deep-equal.
func TestDirectModeToolsMatchEverything(t *testing.T) {
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
}
