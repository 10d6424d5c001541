package cli

import (
	"fmt"
	"io"

	"github.com/mcp-toolsearch/mcp-toolsearch/pins"
)

func init() { extraCommands["approve"] = runApprove }

// runApprove is `mcp-toolsearch approve ID`: accept the changed definition
// of a tool that security.on_tool_change = "block" (or "approve") holds
// back. It writes only the approvals file next to the
// pins file; a running proxy applies it within seconds and lists the
// tool's upstream again, otherwise the next start does.
func runApprove(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	c := newFlags("approve", "mcp-toolsearch approve ID [--config FILE]: accept the changed definition of a tool held back by security.on_tool_change (ID as in `list`, e.g. mcp:github:create_issue).", stderr)
	pos, err := c.parse(args)
	if err != nil {
		return parseExit(err)
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "approve: want exactly one ID (mcp:<upstream>:<tool>, as in `mcp-toolsearch list`)")
		return exitUsage
	}
	cfg, _, ok := c.load(stderr)
	if !ok {
		return exitUsage
	}
	hash, err := pins.Approve(cfg.Security.PinsFile, pos[0])
	if err != nil {
		fmt.Fprintln(stderr, "approve:", err)
		return exitFail
	}
	fmt.Fprintf(stdout, "approved %s (%s…): a running proxy lists it again within a few seconds; otherwise the next start does\n", pos[0], pins.Short(hash))
	return exitOK
}
