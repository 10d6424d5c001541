package cli

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/mcp-toolsearch/mcp-toolsearch/audit"
)

func init() { extraCommands["audit"] = runAudit }

// runAudit is `mcp-toolsearch audit verify FILE...`: checks the hash chain
// of an audit log ([audit] file). Exit 0 when every line verifies (printing
// the line count and the last hash, worth keeping elsewhere: a cut tail
// cannot show otherwise), 1 naming the first bad line, 2 on usage. Several
// files (rotated ones, oldest first) are checked as one chain: each later
// file must start with the "rotate" line continuing the one before.
func runAudit(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	const help = "usage: mcp-toolsearch audit verify FILE...: check the hash chain of an audit log ([audit] file; rotated files oldest first); exit 0 when intact, 1 naming the first bad line."
	for _, a := range args {
		if a == "-h" || a == "-help" || a == "--help" { // not a file to open
			fmt.Fprintln(stdout, help)
			return exitOK
		}
	}
	if len(args) < 2 || args[0] != "verify" {
		fmt.Fprintln(stderr, help)
		return exitUsage
	}
	if len(args) > 2 {
		res, err := audit.VerifyFiles(args[1:]...)
		if err != nil {
			fmt.Fprintf(stdout, "FAILED: %v\n", err)
			return exitFail
		}
		fmt.Fprintf(stdout, "%d files: OK, one chain intact; last seq %d, last hash %s\n", len(args)-1, res.LastSeq, res.LastHash)
		return exitOK
	}
	f, err := os.Open(args[1])
	if err != nil {
		fmt.Fprintln(stderr, "audit verify:", err)
		return exitFail
	}
	defer f.Close()
	res, err := audit.Verify(f)
	var ve *audit.VerifyError
	switch {
	case errors.As(err, &ve):
		fmt.Fprintf(stdout, "%s: FAILED at %v (%d lines before it verify)\n", args[1], err, res.Lines)
		return exitFail
	case err != nil:
		fmt.Fprintln(stderr, "audit verify:", err)
		return exitFail
	}
	fmt.Fprintf(stdout, "%s: OK, %d lines, chain intact; last seq %d, last hash %s\n", args[1], res.Lines, res.LastSeq, res.LastHash)
	if res.FirstSeq > 1 { // a rotated file: say what it continues
		fmt.Fprintf(stdout, "  continues a previous file that ends at seq %d, hash %s (verify both: audit verify OLD %s)\n", res.FirstSeq-1, res.FirstPrev, args[1])
	}
	return exitOK
}
