package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

// `init --client NAME` prints the proxy's entry for the client, starting
// the config by its absolute path (written first as the starter config
// when missing); with --write it adds it to the client's file.
func TestInitClient(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.toml")
	code, out, errs := run("init", "--client", "claude-code", "-o", cfg, "--command", "/opt/mts")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if _, err := os.Stat(cfg); err != nil {
		t.Errorf("starter config not written: %v", err)
	}
	cfgJSON, _ := json.Marshal(cfg) // the path as a JSON string (Windows backslashes escaped)
	for _, want := range []string{`"command": "/opt/mts"`, `"--config",`, string(cfgJSON), `"alwaysLoad": true`} {
		if !strings.Contains(out, want) {
			t.Errorf("snippet lacks %s:\n%s", want, out)
		}
	}
	if !strings.Contains(errs, ".mcp.json") || !strings.Contains(errs, "--write") {
		t.Errorf("stderr: %s", errs)
	}
	// The config is kept when it exists; a broken one is named.
	if err := os.WriteFile(cfg, []byte("[server]\nbogus = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	codexHome := filepath.Join(dir, "codex")
	t.Setenv("CODEX_HOME", codexHome)
	code, out, errs = run("init", "--client", "codex", "-o", cfg, "--command", "/opt/mts", "--write")
	if code != exitOK || out != "" {
		t.Fatalf("exit %d: %s%s", code, out, errs)
	}
	if !strings.Contains(errs, "warning:") || !strings.Contains(errs, "bogus") {
		t.Errorf("broken config not named: %s", errs)
	}
	b, err := os.ReadFile(filepath.Join(codexHome, "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Servers map[string]struct {
			Command string
			Args    []string
		} `toml:"mcp_servers"`
	}
	if _, err := toml.Decode(string(b), &doc); err != nil || doc.Servers["toolsearch"].Command != "/opt/mts" || strings.Join(doc.Servers["toolsearch"].Args, " ") != "serve --config "+cfg {
		t.Errorf("codex config %v:\n%s", err, b)
	}
	if code, _, errs := run("init", "--client", "codex", "-o", cfg, "--write"); code != exitFail || !strings.Contains(errs, "already has [mcp_servers.toolsearch]") {
		t.Errorf("second write: exit %d: %s", code, errs)
	}
	// --client-file chooses the file.
	vs := filepath.Join(dir, "ws", ".vscode", "mcp.json")
	if code, _, errs := run("init", "--client", "vscode", "-o", cfg, "--write", "--client-file", vs, "--name", "ts"); code != exitOK {
		t.Fatalf("vscode: exit %d: %s", code, errs)
	}
	if b, _ := os.ReadFile(vs); !strings.Contains(string(b), `"servers"`) || !strings.Contains(string(b), `"ts"`) {
		t.Errorf("vscode file:\n%s", b)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"init", "--client", "windsurf"}, `unknown client "windsurf": want one of claude-code,`},
		{[]string{"init", "--client", "vscod"}, `unknown client "vscod": want one of claude-code, claude-desktop, cursor, vscode, copilot-cli, gemini-cli, codex (did you mean "vscode"?)`},
		{[]string{"init", "--write"}, "go with --client NAME"},
		{[]string{"init", "--client", "cursor", "--print"}, "--client takes no --print"},
		{[]string{"init", "--client", "cursor", "-o", cfg, "--name", "a b"}, `server name "a b"`},
	} {
		if code, _, errs := run(tc.args...); code != exitUsage || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d: %s", tc.args, code, errs)
		}
	}
}
