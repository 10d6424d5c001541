package proxy

import (
	"log/slog"
	"strings"
	"testing"
)

// An upstream that never started (its command is not on the PATH) is
// not said to keep "its tools listed": it has none in the catalog.
func TestUnavailableNeverListedLog(t *testing.T) {
	var log syncBuffer
	startProxyIn(t, t.TempDir(), `
[upstreams.gone]
command = "mcp-toolsearch-test-no-such-command"
`, nil, Options{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	out := log.String()
	if !strings.Contains(out, "upstream unavailable") || !strings.Contains(out, "upstream=gone") {
		t.Fatalf("no unavailable line for the upstream:\n%s", out)
	}
	if strings.Contains(out, "its tools stay listed") {
		t.Errorf("an upstream that never listed tools is said to keep them listed:\n%s", out)
	}
}
