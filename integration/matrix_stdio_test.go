//go:build unix

package integration

import (
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"testing"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestProtocolMatrixStdio (issue 17): the stdio front at both protocol
// generations. Each cell runs `mcp-toolsearch serve` as a child over stdio
// (one client per process) in direct mode with one upstream,
// examples/catalogserver -interactive, at 2025-11-25 or at its default
// (2026-07-28 first), and makes the round trip of TestProtocolMatrix:
// tools/list, a tools/call, the "confirm" call whose upstream asks a
// question (the answer must come back in the result), and "toggle"
// followed by notifications/tools/list_changed at the client. Clients: the
// go-sdk v1.8.0 client at its default (2026-07-28: server/discover, then
// requests that carry the version; questions as input_required results,
// list changes through subscriptions/listen) and pinned to 2025-11-25
// (initialize; questions as elicitation/create requests). The modes share
// the call path with the HTTP matrix, so one mode keeps this test short.
func TestProtocolMatrixStdio(t *testing.T) {
	bin := buildProxy(t)
	srv := catalogServer(t)
	upstreams := []struct{ name, versions string }{
		{"2025-11-25", "2025-11-25,2025-06-18,2025-03-26,2024-11-05"},
		{"2026-07-28", ""},
	}
	const mode = "direct"
	var (
		mu    sync.Mutex // guards rows
		rows  []string
		cells = 0
	)
	t.Run("cells", func(t *testing.T) {
		for _, up := range upstreams {
			for _, v := range []string{"", "2025-11-25"} {
				cells++
				client := "go-sdk@" + map[string]string{"": "2026-07-28", "2025-11-25": "2025-11-25"}[v]
				t.Run(up.name+"/"+client, func(t *testing.T) {
					t.Parallel()
					args := fmt.Sprintf(`["-tools", %s, "-limit", "3", "-interactive"`, tomlString(catalogFile(t, "github-like.jsonl")))
					if up.versions != "" {
						args += `, "-protocol-versions", ` + tomlString(up.versions)
					}
					args += "]"
					cfg := writeConfig(t, fmt.Sprintf("[tool_search]\nenabled = false\n[upstreams.u]\ncommand = %s\nargs = %s\n", tomlString(srv), args))
					cmd := exec.Command(bin, "serve", "--config", cfg, "--log-level", "warn")
					answer := answerOf(client, mode)
					r := goMatrixCell(t, &gosdk.CommandTransport{Command: cmd}, mode, v, answer)
					want := map[string]string{"": "2026-07-28", "2025-11-25": "2025-11-25"}[v]
					var problems []string
					if r.Error != "" {
						problems = append(problems, "error: "+firstLine(r.Error))
					}
					if r.Version != want {
						problems = append(problems, fmt.Sprintf("negotiated %q, want %q", r.Version, want))
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
						t.Errorf("%s over stdio × upstream %s × %s: %s", client, up.name, mode, strings.Join(problems, "; "))
					}
					mu.Lock()
					rows = append(rows, fmt.Sprintf("%-20s %-12s %-7s %-12s %v", client, up.name, mode, r.Version, len(problems) == 0))
					mu.Unlock()
				})
			}
		}
	})
	sort.Strings(rows)
	t.Logf("\n%-20s %-12s %-7s %-12s %s\n%s", "client (stdio)", "upstream", "mode", "negotiated", "round trip ok", strings.Join(rows, "\n"))
	if len(rows) != cells {
		t.Errorf("%d of %d cells ran", len(rows), cells)
	}
}
