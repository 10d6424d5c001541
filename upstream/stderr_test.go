package upstream

import (
	"log/slog"
	"strings"
	"testing"
)

// TestExitReasonPrefersErrorLine: the exit reason keeps the stderr line
// that explains the exit, not the usage text printed after it.
func TestExitReasonPrefersErrorLine(t *testing.T) {
	for _, c := range []struct {
		lines, want string
	}{
		{"flag provided but not defined: -bogus\nUsage of server:\n  -v\tlog requests\n", "flag provided but not defined: -bogus"},
		{"starting\nlistening on stdio\n", "listening on stdio"},
		{"Error: first\nmore context\nfatal: second\ntrailer\n", "fatal: second"},
	} {
		c0 := &child{log: slog.New(slog.DiscardHandler)}
		for _, l := range strings.Split(c.lines, "\n") {
			c0.stderrLine(l)
		}
		if c0.last != c.want {
			t.Errorf("stderr %q: reason line %q, want %q", c.lines, c0.last, c.want)
		}
	}
}
