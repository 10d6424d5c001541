//go:build unix

package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigThatStartsItselfFails: a config with an upstream that runs
// mcp-toolsearch on this same config (a client file re-imported after the
// proxy's own entry was added to it, or written by hand). The child proxy
// refuses to serve it, so `check` names the upstream as failed with the
// reason; without the guard every level started one more, a new one every
// fraction of a second for as long as the first ran.
func TestConfigThatStartsItselfFails(t *testing.T) {
	bin := buildProxy(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.toml")
	cat := []string{catalogServer(t), "-tools", catalogFile(t, "github-like.jsonl")}
	text := fmt.Sprintf(`[tool_search]
enabled = false
[upstreams.catalog]
command = %s
args = [%s, %s]
[upstreams.self]
command = %s
args = ["serve", "--config", %s]
`, tomlString(cat[0]), tomlString(cat[1]), tomlString(cat[2]), tomlString(bin), tomlString(cfg))
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "check", "--config", cfg).CombinedOutput()
	if err == nil {
		t.Fatalf("check passed:\n%s", out)
	}
	var self, catalog string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "upstream self ") {
			self = l
		}
		if strings.HasPrefix(l, "upstream catalog ") {
			catalog = l
		}
	}
	if !strings.Contains(self, "FAILED") || !strings.Contains(self, "starts itself") {
		t.Errorf("upstream self: %q, want FAILED ... starts itself\n%s", self, out)
	}
	if !strings.Contains(catalog, " ok ") {
		t.Errorf("upstream catalog: %q, want ok", catalog)
	}
}
