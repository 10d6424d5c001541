package clientconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

var serveArgs = []string{"serve", "--config", "/srv/mcp/config.toml"}

func client(t *testing.T, name string) *Client {
	t.Helper()
	c, err := ClientNamed(name)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// entryOf decodes a JSON client file and returns the server entry name.
func entryOf(t *testing.T, c *Client, file []byte, name string) map[string]any {
	t.Helper()
	var doc map[string]json.RawMessage
	var servers map[string]map[string]any
	if err := json.Unmarshal(file, &doc); err != nil {
		t.Fatalf("%s: %v\n%s", c.Name, err, file)
	}
	if err := json.Unmarshal(doc[c.Key], &servers); err != nil {
		t.Fatalf("%s: %v\n%s", c.Name, err, file)
	}
	e := servers[name]
	if e == nil {
		t.Fatalf("%s: no %s.%s in\n%s", c.Name, c.Key, name, file)
	}
	return e
}

// Each client's entry has the members its own documentation and source
// name, and the settings that keep the proxy's tools loaded where the
// client has one (integration/agents_test.go runs Claude Code, Codex and
// Gemini CLI with these entries).
func TestSnippets(t *testing.T) {
	want := map[string]string{
		"claude-code":    `{"mcpServers":{"toolsearch":{"type":"stdio","command":"/bin/mts","args":["serve","--config","/srv/mcp/config.toml"],"alwaysLoad":true}}}`,
		"claude-desktop": `{"mcpServers":{"toolsearch":{"command":"/bin/mts","args":["serve","--config","/srv/mcp/config.toml"]}}}`,
		"cursor":         `{"mcpServers":{"toolsearch":{"command":"/bin/mts","args":["serve","--config","/srv/mcp/config.toml"]}}}`,
		"vscode":         `{"servers":{"toolsearch":{"type":"stdio","command":"/bin/mts","args":["serve","--config","/srv/mcp/config.toml"]}}}`,
		"copilot-cli":    `{"mcpServers":{"toolsearch":{"type":"local","command":"/bin/mts","args":["serve","--config","/srv/mcp/config.toml"],"tools":["*"],"deferTools":"never"}}}`,
		"gemini-cli":     `{"mcpServers":{"toolsearch":{"command":"/bin/mts","args":["serve","--config","/srv/mcp/config.toml"]}}}`,
	}
	for _, c := range Clients {
		got, err := c.Snippet("toolsearch", "/bin/mts", serveArgs)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if c.Name == "codex" {
			var doc struct {
				Servers map[string]struct {
					Command string
					Args    []string
				} `toml:"mcp_servers"`
			}
			if _, err := toml.Decode(string(got), &doc); err != nil {
				t.Fatalf("codex: %v\n%s", err, got)
			}
			if s := doc.Servers["toolsearch"]; s.Command != "/bin/mts" || strings.Join(s.Args, " ") != strings.Join(serveArgs, " ") {
				t.Errorf("codex: %+v", doc)
			}
			continue
		}
		// Compare member order too: the snippet is what a person reads.
		var compact bytes.Buffer
		if err := json.Compact(&compact, got); err != nil || compact.String() != want[c.Name] {
			t.Errorf("%s: %v\n got %s\nwant %s", c.Name, err, compact.String(), want[c.Name])
		}
		if !strings.HasSuffix(string(got), "}\n") || !strings.Contains(string(got), "\n  ") {
			t.Errorf("%s: not indented JSON with a final newline:\n%s", c.Name, got)
		}
	}
	if _, err := client(t, "cursor").Snippet("tool search", "x", nil); err == nil {
		t.Error("a name with a space was accepted")
	}
	if _, err := ClientNamed("windsurf"); err == nil || !strings.Contains(err.Error(), "claude-code, claude-desktop, cursor, vscode, copilot-cli, gemini-cli, codex") {
		t.Errorf("unknown client: %v", err)
	}
}

// Merge keeps the other servers and settings of the file, in their
// order, and replaces only an entry of the same name.
func TestMergeJSON(t *testing.T) {
	c := client(t, "claude-desktop")
	existing := []byte("\ufeff{\n  \"globalShortcut\": \"Ctrl+Space\",\n  \"mcpServers\": {\n    \"memory\": {\"command\": \"npx\", \"args\": [\"-y\", \"@modelcontextprotocol/server-memory\"]},\n    \"toolsearch\": {\"command\": \"old\"}\n  },\n  \"zzz\": 1\n}\n")
	out, replaced, err := c.Merge(existing, "toolsearch", "/bin/mts", serveArgs)
	if err != nil || !replaced {
		t.Fatalf("merge: replaced=%v err=%v", replaced, err)
	}
	s := string(out)
	if i, j, k := strings.Index(s, "globalShortcut"), strings.Index(s, `"memory"`), strings.Index(s, "zzz"); i < 0 || j < i || k < j {
		t.Errorf("order lost:\n%s", s)
	}
	if e := entryOf(t, c, out, "toolsearch"); e["command"] != "/bin/mts" {
		t.Errorf("entry %v", e)
	}
	if e := entryOf(t, c, out, "memory"); e["command"] != "npx" {
		t.Errorf("memory entry %v", e)
	}
	// A file without the servers object gets one; an empty file is the snippet.
	out, replaced, err = client(t, "vscode").Merge([]byte(`{"inputs": []}`), "ts", "/bin/mts", serveArgs)
	if err != nil || replaced || !strings.Contains(string(out), `"inputs": []`) {
		t.Fatalf("no servers object: %v %v\n%s", replaced, err, out)
	}
	entryOf(t, client(t, "vscode"), out, "ts")
	snippet, _ := c.Snippet("toolsearch", "/bin/mts", serveArgs)
	if out, _, err := c.Merge([]byte(" \n"), "toolsearch", "/bin/mts", serveArgs); err != nil || string(out) != string(snippet) {
		t.Errorf("empty file: %v\n%s", err, out)
	}
	// Comments would be lost: refused. A syntax error names its line.
	if _, _, err := client(t, "vscode").Merge([]byte("{\n  // mine\n  \"servers\": {}\n}"), "ts", "x", nil); !errors.Is(err, ErrHasComments) {
		t.Errorf("comments: %v", err)
	}
	if _, _, err := c.Merge([]byte("{\n  \"mcpServers\": {\n    \"a\": {}\n  \n"), "ts", "x", nil); err == nil || !strings.Contains(err.Error(), "line ") {
		t.Errorf("cut short: %v", err)
	}
	if _, _, err := c.Merge([]byte(`{"mcpServers": []}`), "ts", "x", nil); err == nil || !strings.Contains(err.Error(), `"mcpServers": want an object`) {
		t.Errorf("servers as an array: %v", err)
	}
}

// Codex: the table is appended; an existing one of that name is refused
// (its other settings would be lost), and the result is valid TOML.
func TestMergeCodex(t *testing.T) {
	c := client(t, "codex")
	existing := []byte("model = \"o3\"\n\n[mcp_servers.docs]\ncommand = \"docs-server\"\n")
	out, replaced, err := c.Merge(existing, "toolsearch", "/bin/mts", serveArgs)
	if err != nil || replaced {
		t.Fatalf("%v %v", replaced, err)
	}
	var doc struct {
		Model   string
		Servers map[string]map[string]any `toml:"mcp_servers"`
	}
	if _, err := toml.Decode(string(out), &doc); err != nil || doc.Model != "o3" || doc.Servers["docs"] == nil || doc.Servers["toolsearch"]["command"] != "/bin/mts" {
		t.Fatalf("%v %+v\n%s", err, doc, out)
	}
	if _, _, err := c.Merge(out, "toolsearch", "/bin/mts", serveArgs); err == nil || !strings.Contains(err.Error(), "already has [mcp_servers.toolsearch]") {
		t.Errorf("second merge: %v", err)
	}
	if _, _, err := c.Merge([]byte("[mcp_servers.toolsearch.env]\nA = \"1\"\n"), "toolsearch", "x", nil); err == nil {
		t.Error("a table of that server's was not noticed")
	}
	if _, _, err := c.Merge([]byte("model = \n"), "toolsearch", "x", nil); err == nil || !strings.Contains(err.Error(), "not valid TOML") {
		t.Errorf("bad TOML: %v", err)
	}
}

// Where each client reads its file.
func TestClientFiles(t *testing.T) {
	env := func(goos string, vars map[string]string) Env {
		return Env{GOOS: goos, Home: "/h", Dir: "/p", Getenv: func(k string) string { return vars[k] }}
	}
	cases := []struct {
		client, goos string
		vars         map[string]string
		want         string
	}{
		{"claude-code", "linux", nil, "/p/.mcp.json"},
		{"claude-desktop", "darwin", nil, "/h/Library/Application Support/Claude/claude_desktop_config.json"},
		{"claude-desktop", "linux", map[string]string{"XDG_CONFIG_HOME": "/x"}, "/x/Claude/claude_desktop_config.json"},
		{"cursor", "linux", nil, "/h/.cursor/mcp.json"},
		{"vscode", "linux", nil, "/p/.vscode/mcp.json"},
		{"copilot-cli", "linux", nil, "/h/.copilot/mcp-config.json"},
		{"copilot-cli", "linux", map[string]string{"COPILOT_HOME": "/c"}, "/c/mcp-config.json"},
		{"gemini-cli", "linux", nil, "/h/.gemini/settings.json"},
		{"codex", "linux", nil, "/h/.codex/config.toml"},
		{"codex", "linux", map[string]string{"CODEX_HOME": "/cx"}, "/cx/config.toml"},
	}
	for _, tc := range cases {
		// The file is on the machine init runs on: its separators are
		// the host's, whichever client OS the case picks the place for.
		if got := client(t, tc.client).File(env(tc.goos, tc.vars)); got != filepath.FromSlash(tc.want) {
			t.Errorf("%s on %s: %s, want %s", tc.client, tc.goos, got, tc.want)
		}
	}
}

// The samples in examples/clients hold the entries init --client prints
// (for the command mcp-toolsearch and /path/to/config.toml).
func TestExampleClientFiles(t *testing.T) {
	files := map[string]string{
		"claude-code": "claude-code-mcp.json", "claude-desktop": "claude_desktop_config.json", "cursor": "cursor-mcp.json",
		"vscode": "vscode-mcp.json", "copilot-cli": "copilot-mcp-config.json", "gemini-cli": "gemini-settings.json", "codex": "codex-config.toml",
	}
	args := []string{"serve", "--config", "/path/to/config.toml"}
	for _, c := range Clients {
		b, err := os.ReadFile(filepath.Join("..", "examples", "clients", files[c.Name]))
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		snippet, _ := c.Snippet("toolsearch", "mcp-toolsearch", args)
		if c.Key == "" {
			var got, want map[string]any
			_, err1 := toml.Decode(string(b), &got)
			_, err2 := toml.Decode(string(snippet), &want)
			if err1 != nil || err2 != nil || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s: %s holds %v (%v), want %v", c.Name, files[c.Name], got, err1, want)
			}
			continue
		}
		got, want := entryOf(t, c, b, "toolsearch"), entryOf(t, c, snippet, "toolsearch")
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: %s holds %v, want %v", c.Name, files[c.Name], got, want)
		}
	}
}
