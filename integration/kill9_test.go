//go:build unix

package integration

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestKill9LeavesNoGrandchild: `kill -9` of the real binary leaves no
// process of its stdio children's trees. Each upstream is a shell that runs
// the real server as ITS child (as npx runs node) and a `sleep` on the side:
// Linux's Pdeathsig reaches only the shell (macOS has none); the rest must go through the reaper
// (package proc). The test counts the processes of the children's groups
// and of the proxy's tree before and after.
func TestKill9LeavesNoGrandchild(t *testing.T) {
	srv := catalogServer(t)
	cat := catalogFile(t, "github-like.jsonl")
	var cfg strings.Builder
	for _, name := range []string{"one", "two"} {
		script := fmt.Sprintf("sleep 1000 & %s -tools %s", srv, cat) // no exec: the server is a grandchild
		fmt.Fprintf(&cfg, "[upstreams.%s]\ncommand = \"/bin/sh\"\nargs = [\"-c\", %s]\ntrusted = true\n\n", name, tomlString(script))
	}
	path := writeConfig(t, cfg.String())
	argv := proxyCmd(t, path)
	cmd := exec.Command(argv[0], argv[1:]...)
	c := gosdkConnect(t, &gosdk.CommandTransport{Command: cmd})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := c.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	proxy := cmd.Process.Pid
	tree := childPIDs(proxy)
	groups := map[int]bool{}
	for _, p := range tree {
		if g := procGroup(p); g > 0 && g != proxy {
			groups[g] = true
		}
	}
	inGroups := liveInGroups(groups)
	// Two upstream groups of three (sh, sleep, server), and the reaper.
	if len(inGroups) < 6 || len(tree) < 6 {
		t.Fatalf("want 2×(sh, sleep, server) and the reaper under the proxy, found tree %v groups %v:\n%s", tree, inGroups, describeProcs(tree))
	}
	t.Logf("before kill -9 of proxy %d: %d processes in its tree, %d in %d child groups", proxy, len(tree), len(inGroups), len(groups))
	if err := syscall.Kill(proxy, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	left := waitGone(append(tree, inGroups...), 30*time.Second)
	if len(left) > 0 {
		for _, p := range left {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		t.Fatalf("processes left after kill -9 of the proxy:\n%s", describeProcs(left))
	}
	t.Logf("after: 0 processes of the tree and the groups alive")
}
