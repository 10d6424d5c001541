//go:build unix

package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReleaseVersionStamp: the ldflags of .goreleaser.yaml, with a version
// put in for {{ .Version }}, stamp that version into `mcp-toolsearch
// version` (the release archives' stamping path, without running
// GoReleaser).
func TestReleaseVersionStamp(t *testing.T) {
	waitsMostly(t)
	root := repoRoot(t)
	y, err := os.ReadFile(filepath.Join(root, ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*- (-s -w -X \S+=)\{\{ \.Version \}\}\s*$`).FindSubmatch(y)
	if m == nil {
		t.Fatalf(".goreleaser.yaml has no ldflags line '- -s -w -X …={{ .Version }}'")
	}
	const version = "9.8.7-stamp+abc1234"
	bin := filepath.Join(t.TempDir(), "mcp-toolsearch")
	build := exec.Command("go", "build", "-mod=readonly", "-ldflags", string(m[1])+version, "-o", bin, ".")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got != "mcp-toolsearch "+version {
		t.Fatalf("version printed %q, want %q", got, "mcp-toolsearch "+version)
	}
}
