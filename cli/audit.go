package cli

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/mcp-toolsearch/mcp-toolsearch/audit"
)

func init() { extraCommands["audit"] = runAudit }

// runAudit is `mcp-toolsearch audit verify FILE`: checks the hash chain of
// an audit log ([audit] file). Exit 0 when every line verifies (printing
// the line count and the last hash, worth keeping elsewhere: a cut tail
// cannot show otherwise), 1 naming the first bad line, 2 on usage.
func runAudit(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) != 2 || args[0] != "verify" {
		fmt.Fprintln(stderr, "usage: mcp-toolsearch audit verify FILE: check the hash chain of an audit log ([audit] file); exit 0 when intact, 1 naming the first bad line.")
		return exitUsage
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
	return exitOK
}
