//go:build unix

package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestImportThenCheck: `mcp-toolsearch import` on one file of each client
// format (written as that client's users write them, pointing at real
// servers that run here: the catalog server and the npm memory server over
// stdio, the go-sdk everything server over Streamable HTTP), then `check` on
// the TOML it wrote, with the variables it asks for set: every upstream
// comes up. Literal secrets never reach the TOML.
func TestImportThenCheck(t *testing.T) {
	bin := buildProxy(t)
	port := freePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	startHTTPServer(t, []string{gosdkEverything(t), "-http", addr}, nil, "http://"+addr+"/mcp")
	remote := "http://" + addr
	cat := []string{catalogServer(t), "-tools", catalogFile(t, "github-like.jsonl")}
	mem := npmServer(t, "memory")
	js := func(v any) string { return string(must(json.Marshal(v))) }
	const secret = "ghp_Th1sIsAL1teralT0kenFromTheFile42"

	files := map[string]string{
		"claude-desktop/claude_desktop_config.json": fmt.Sprintf(`{
  "mcpServers": {
    "github catalog": {
      "command": %s,
      "args": %s,
      "env": { "GITHUB_PERSONAL_ACCESS_TOKEN": %q }
    },
    "memory": {
      "command": %s,
      "args": %s,
      "env": { "MEMORY_FILE_PATH": %s }
    }
  },
  "globalShortcut": ""
}`, js(cat[0]), js(cat[1:]), secret, js(mem[0]), js(mem[1:]), js(filepath.Join(t.TempDir(), "memory.jsonl"))),
		"cursor/.cursor/mcp.json": fmt.Sprintf(`{
  "mcpServers": {
    "everything": { "url": "%s/mcp", "headers": { "Authorization": "Bearer %s" } },
    "catalog": { "command": %s, "args": %s, "env": { "TOKEN": "${env:CATALOG_TOKEN}" } }
  }
}`, remote, secret, js(cat[0]), js(cat[1:])),
		"claude-code/.mcp.json": fmt.Sprintf(`{
  "mcpServers": {
    "everything": { "type": "http", "url": "${EVERYTHING_URL}/mcp" },
    "catalog": { "type": "stdio", "command": %s, "args": %s }
  }
}`, js(cat[0]), js(cat[1:])),
		"vscode/.vscode/mcp.json": fmt.Sprintf(`{
  // inputs are prompted by VS Code
  "inputs": [{ "type": "promptString", "id": "catalog-key", "description": "Catalog key", "password": true }],
  "servers": {
    "catalog": { "type": "stdio", "command": %s, "args": %s, "env": { "API_KEY": "${input:catalog-key}" } },
    "everything": { "type": "http", "url": "%s/mcp" },
  }
}`, js(cat[0]), js(cat[1:]), remote),
		"windsurf/mcp_config.json": fmt.Sprintf(`{
  "mcpServers": {
    "everything": { "serverUrl": "%s/mcp", "headers": { "X-Api-Key": %q } },
    "catalog": { "command": %s, "args": %s, "disabled": false, "env": {} }
  }
}`, remote, secret, js(cat[0]), js(cat[1:])),
	}
	setRE := regexp.MustCompile(`set these environment variables before starting: ([A-Z0-9_ ]+)`)
	for rel, text := range files {
		t.Run(strings.Split(rel, "/")[0], func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, rel)
			if err := os.MkdirAll(filepath.Dir(in), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(in, []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "imported.toml")
			imp := exec.Command(bin, "import", in, "-o", out)
			b, err := imp.CombinedOutput()
			if err != nil {
				t.Fatalf("import: %v\n%s", err, b)
			}
			toml, _ := os.ReadFile(out)
			t.Logf("import said:\n%s\nwrote:\n%s", b, toml)
			if strings.Contains(string(toml), secret) || strings.Contains(string(b), secret) {
				t.Fatalf("the literal secret reached the output")
			}
			env := os.Environ()
			if m := setRE.FindStringSubmatch(string(b)); m != nil {
				for _, v := range strings.Fields(m[1]) {
					val := "value-of-" + v
					if v == "EVERYTHING_URL" {
						val = remote
					}
					env = append(env, v+"="+val)
				}
			}
			chk := exec.Command(bin, "check", "--config", out)
			chk.Env = env
			cb, err := chk.CombinedOutput()
			if err != nil {
				t.Fatalf("check failed: %v\n%s", err, tail(string(cb), 3000))
			}
			n := strings.Count(string(cb), " ok ")
			if n != 2 {
				t.Fatalf("want 2 upstreams ok, got %d:\n%s", n, tail(string(cb), 3000))
			}
			t.Logf("check:\n%s", tail(string(cb), 1000))
		})
	}
}
