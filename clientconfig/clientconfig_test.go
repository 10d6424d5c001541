package clientconfig

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
)

// secrets are the literal credentials in testdata: none may appear in an
// imported config.
var secrets = []string{
	"ghp_R2d2C3poXwingT1eF1ghterL0ngT0ken99", "BSAq1w2e3r4t5y6u7i8o9p0",
	"ctx7sk-8f2e1c7a-93b4-4d1e-a6f0-5b9c2d7e1f30", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
	"xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "sk_test_51Hxyzabcdefghijklmnop",
}

// importFile parses a testdata file, renders it, and loads the TOML with the
// real config loader, every variable the result names set to "v-NAME".
func importFile(t *testing.T, rel string) (*Result, string, *config.Config) {
	t.Helper()
	path := filepath.Join("testdata", rel)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Parse(path, data)
	if err != nil {
		t.Fatal(err)
	}
	out := string(r.TOML())
	for _, s := range secrets {
		if strings.Contains(out, s) || strings.Contains(r.Summary(), s) {
			t.Fatalf("%s: a literal secret is in the output:\n%s", rel, out)
		}
	}
	vars := map[string]string{}
	for _, v := range r.Vars {
		vars[v.Name] = "v-" + v.Name
		if strings.HasSuffix(v.Where, ".url") {
			vars[v.Name] = "https://" + strings.ToLower(v.Name) + ".example"
		}
	}
	cfg, err := config.Parse([]byte(out), filepath.Join(t.TempDir(), "config.toml"), func(k string) (string, bool) { v, ok := vars[k]; return v, ok })
	if err != nil {
		t.Fatalf("%s: the imported config does not load: %v\n%s", rel, err, out)
	}
	t.Logf("%s →\n%s", rel, out)
	// An imported config starts without warnings: none from the loader, and
	// none from the proxy's start, whose code-mode budget check warns when an
	// upstream's call may outlast a code run (code_timeout_ms).
	if len(cfg.Warnings) > 0 {
		t.Errorf("%s: the imported config loads with warnings: %q", rel, cfg.Warnings)
	}
	for _, u := range cfg.EnabledUpstreams() {
		ct := u.CallTimeout.Duration
		if ct <= 0 {
			ct = config.DefaultCallTimeout
		}
		if run := time.Duration(cfg.ToolSearch.CodeTimeoutMS) * time.Millisecond; ct > run {
			t.Errorf("%s: upstream %s: call_timeout %s outlasts code_timeout_ms %s (the proxy warns at start)", rel, u.Name, ct, run)
		}
	}
	return r, out, cfg
}

func up(t *testing.T, cfg *config.Config, name string) *config.Upstream {
	t.Helper()
	u := cfg.Upstreams[name]
	if u == nil {
		t.Fatalf("no upstream %q (have %v)", name, keys(cfg.Upstreams))
	}
	return u
}

func keys(m map[string]*config.Upstream) []string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	return k
}

func eq(t *testing.T, what string, got, want any) {
	t.Helper()
	if g, w := strings.TrimSpace(strings.ReplaceAll(fmtAny(got), "\n", " ")), fmtAny(want); g != w {
		t.Errorf("%s = %s, want %s", what, g, w)
	}
}

func fmtAny(v any) string {
	switch x := v.(type) {
	case []string:
		return "[" + strings.Join(x, "|") + "]"
	default:
		return strings.TrimSpace(strings.ReplaceAll(strings.ReplaceAll(strings.TrimPrefix(strings.TrimSpace(sprint(x)), "map"), "\n", " "), "  ", " "))
	}
}

func TestClaudeDesktop(t *testing.T) {
	r, _, cfg := importFile(t, "claude-desktop/claude_desktop_config.json")
	eq(t, "format", string(r.Format), "Claude Desktop")
	fs := up(t, cfg, "filesystem")
	eq(t, "filesystem args", fs.Args, []string{"-y", "@modelcontextprotocol/server-filesystem", "/Users/alex/Desktop", "/Users/alex/Downloads"})
	gh := up(t, cfg, "github")
	eq(t, "github env", gh.Env["GITHUB_PERSONAL_ACCESS_TOKEN"], "v-GITHUB_PERSONAL_ACCESS_TOKEN")
	eq(t, "brave env", up(t, cfg, "Brave-Search").Env["BRAVE_API_KEY"], "v-BRAVE_API_KEY")
	eq(t, "literal $ kept", up(t, cfg, "price-tracker").Args, []string{"--currency", "US$"})
	eq(t, "servers", len(cfg.Upstreams), 5)
	// npx and uvx download the server on the first start: more than the
	// default startup_timeout; a local binary keeps it.
	for _, n := range []string{"filesystem", "github", "sqlite", "Brave-Search"} {
		eq(t, n+" startup_timeout", up(t, cfg, n).StartupTimeout.Duration.String(), "3m0s")
	}
	eq(t, "price-tracker startup_timeout", up(t, cfg, "price-tracker").StartupTimeout.Duration.String(), "30s")
}

// TestRunnersImported: a Claude Desktop file with less common
// runners (npm exec, bun x, uv tool run, uv --directory D run,
// yarn dlx, deno run npm:, docker with an option before run) gets
// startup_timeout = "3m" for each; a local deno script and a node server
// keep the default.
func TestRunnersImported(t *testing.T) {
	r, out, cfg := importFile(t, "runners/claude_desktop_config.json")
	if len(r.Skipped) > 0 {
		t.Fatalf("skipped: %+v", r.Skipped)
	}
	for _, n := range []string{"memory-npm-exec", "memory-bun", "fetch-uv-tool", "weather", "everything-pnpm", "everything-yarn", "memory-deno", "github-docker"} {
		eq(t, n+" startup_timeout", up(t, cfg, n).StartupTimeout.Duration.String(), "3m0s")
	}
	for _, n := range []string{"local-deno", "local-node"} {
		eq(t, n+" startup_timeout", up(t, cfg, n).StartupTimeout.Duration.String(), "30s")
	}
	if c := strings.Count(out, `startup_timeout = "3m"`); c != 8 {
		t.Errorf("the TOML sets startup_timeout = \"3m\" %d times, want 8:\n%s", c, out)
	}
}

func TestInstallsOnFirstStart(t *testing.T) {
	for _, c := range []struct {
		cmd  string
		args []string
		want bool
	}{
		{"npx", []string{"-y", "x"}, true},
		{`C:\Program Files\nodejs\npx.cmd`, nil, true},
		{"/opt/homebrew/bin/uvx", []string{"mcp-server-fetch"}, true},
		{"docker", []string{"run", "-i", "--rm", "img"}, true},
		{"docker", []string{"exec", "-i", "c"}, false},
		{"pnpm", []string{"dlx", "x"}, true},
		{"cmd", []string{"/c", "npx", "-y", "x"}, true},
		{"cmd", []string{"/c", "node", "server.js"}, false},
		{"cmd.exe", []string{"/C", "npx -y @modelcontextprotocol/server-github"}, true}, // one string
		{"cmd", []string{"/c", "node server.js"}, false},
		{"cmd", []string{"/c", "  "}, false},
		{"node", []string{"server.js"}, false},
		// Less common runner forms.
		{"npm", []string{"exec", "-y", "--", "@modelcontextprotocol/server-memory"}, true},
		{"npm", []string{"--yes", "x", "pkg"}, true},
		{"npm", []string{"run", "start"}, false},
		{"npm", []string{"--prefix", "/srv/app", "start"}, false},
		{"bun", []string{"x", "pkg"}, true},
		{"bun", []string{"server.ts"}, false},
		{"uv", []string{"tool", "run", "mcp-server-fetch"}, true},
		{"uv", []string{"tool", "install", "mcp-server-fetch"}, false},
		{"uv", []string{"--directory", "/home/sam/weather", "run", "weather.py"}, true},
		{"uv", []string{"pip", "list"}, false},
		{"yarn", []string{"dlx", "pkg"}, true},
		{"yarn", []string{"start"}, false},
		{"deno", []string{"run", "-A", "npm:@modelcontextprotocol/server-memory"}, true},
		{"deno", []string{"run", "--allow-net", "jsr:@std/http/file-server"}, true},
		{"deno", []string{"run", "--allow-net", "https://deno.land/x/mcp/server.ts"}, true},
		{"deno", []string{"run", "--allow-read", "server.ts"}, false},
		{"docker", []string{"--context", "remote", "run", "-i", "--rm", "img"}, true},
		{"docker", []string{"container", "run", "-i", "img"}, true},
		{"docker", []string{"-H", "unix:///var/run/docker.sock", "exec", "-i", "c"}, false},
		{"podman", []string{"run", "--rm", "-i", "-e", "X", "ghcr.io/x/y"}, true},
		{`C:\Program Files\Docker\docker.exe`, []string{"run", "-i", "img"}, true},
		{"cmd", []string{"/c", "npm", "exec", "pkg"}, true},
		{"/usr/local/bin/tracker", nil, false},
	} {
		if got := installsOnFirstStart(c.cmd, c.args); got != c.want {
			t.Errorf("installsOnFirstStart(%q, %q) = %v, want %v", c.cmd, c.args, got, c.want)
		}
	}
}

func TestCursor(t *testing.T) {
	r, out, cfg := importFile(t, "cursor/.cursor/mcp.json")
	eq(t, "format", string(r.Format), "Cursor")
	eq(t, "linear transport", up(t, cfg, "linear").Transport, "sse")
	eq(t, "context7 header", up(t, cfg, "context7").Headers["CONTEXT7_API_KEY"], "v-CONTEXT7_API_KEY") // not CONTEXT7_CONTEXT7_…
	eq(t, "notion env", up(t, cfg, "notion").Env["NOTION_TOKEN"], "v-NOTION_TOKEN")
	ws, _ := filepath.Abs("testdata/cursor")
	eq(t, "docs args", up(t, cfg, "docs").Args, []string{ws + "/tools/docs-server.js"})
	if !strings.Contains(out, `"envFile" not imported`) {
		t.Errorf("envFile not named as not imported")
	}
}

func TestClaudeCode(t *testing.T) {
	r, out, cfg := importFile(t, "claude-code/.mcp.json")
	eq(t, "format", string(r.Format), "Claude Code")
	eq(t, "sentry url", up(t, cfg, "sentry").URL, "https://mcp.sentry.dev/mcp")
	eq(t, "asana transport", up(t, cfg, "asana").Transport, "sse")
	eq(t, "airtable env", up(t, cfg, "airtable").Env["AIRTABLE_API_KEY"], "v-AIRTABLE_API_KEY")
	api := up(t, cfg, "api-server")
	eq(t, "api url", api.URL, "https://api_base_url.example/mcp")
	eq(t, "api auth", api.Headers["Authorization"], "Bearer v-API_KEY")
	if len(r.Skipped) != 1 || r.Skipped[0].Name != "local-ws" || !strings.Contains(out, `"local-ws": "type": "ws" is not http or sse`) {
		t.Errorf("local-ws not named as not imported: %+v", r.Skipped)
	}
}

func TestVSCode(t *testing.T) {
	r, out, cfg := importFile(t, "vscode/.vscode/mcp.json")
	eq(t, "format", string(r.Format), "VS Code")
	eq(t, "perplexity env", up(t, cfg, "Perplexity").Env["PERPLEXITY_API_KEY"], "v-PERPLEXITY_KEY")
	if !strings.Contains(out, `PERPLEXITY_KEY`) || !strings.Contains(out, `VS Code prompted for input "perplexity-key" (Perplexity API Key)`) {
		t.Errorf("the input variable is not explained")
	}
	eq(t, "github auth", up(t, cfg, "github").Headers["Authorization"], "Bearer v-GITHUB_TOKEN")
	ws, _ := filepath.Abs("testdata/vscode")
	eq(t, "python command", up(t, cfg, "my-python-server").Command, ws+"/.venv/bin/python")
	for _, f := range []string{`"envFile" not imported`, `"dev" not imported`} {
		if !strings.Contains(out, f) {
			t.Errorf("missing note %s", f)
		}
	}
}

func TestWindsurf(t *testing.T) {
	r, _, cfg := importFile(t, "windsurf/mcp_config.json")
	eq(t, "format", string(r.Format), "Windsurf")
	eq(t, "git disabled", up(t, cfg, "git").IsEnabled(), false)
	eq(t, "figma url", up(t, cfg, "figma").URL, "https://mcp.figma.com/mcp")
	eq(t, "figma auth", up(t, cfg, "figma").Headers["Authorization"], "Bearer v-FIGMA_TOKEN")
	sl := up(t, cfg, "slack")
	eq(t, "slack token", sl.Env["SLACK_BOT_TOKEN"], "v-SLACK_BOT_TOKEN")
	eq(t, "slack team id kept", sl.Env["SLACK_TEAM_ID"], "T01234567")
	eq(t, "stripe args", up(t, cfg, "stripe").Args, []string{"-y", "@stripe/mcp", "--tools=all", "--api-key=v-STRIPE_API_KEY"})
}

func TestBadInput(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`[1]`, "not a JSON object"},
		{`{"other": {}}`, `no "mcpServers"`},
		{`{"mcpServers": {"a": {"command": "x", "url": "http://y"}}}`, ""},
		{`{"mcpServers": /* x`, "unterminated"},
	} {
		r, err := Parse("f.json", []byte(c.in))
		if c.want == "" {
			if err != nil || len(r.Skipped) != 1 || !strings.Contains(r.Skipped[0].Reason, `both "command" and "url"`) {
				t.Errorf("%s: %v %+v", c.in, err, r)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", c.in, err, c.want)
		}
	}
}

func sprint(v any) string { return fmt.Sprint(v) }

// own is a server whose url holds the client's own references (clients
// other than Claude Desktop expand ${env:…}).
func own(path string) string {
	if path == "claude_desktop_config.json" {
		return ""
	}
	return `,
			"own": {"url": "https://${env:USERNAME_WITH_LONG_NAME}@mcp.example.com/mcp?api_key=${env:MYKEY}"}`
}

// TestURLSecrets: a literal secret in an HTTP
// server's url (a secret query parameter, a userinfo password) becomes a
// ${VAR} reference like env and header secrets, in every client format;
// the rest of the url is kept, and the imported config loads with the url
// the variables make.
func TestURLSecrets(t *testing.T) {
	for _, path := range []string{"claude_desktop_config.json", ".cursor/mcp.json"} {
		data := []byte(`{"mcpServers": {
			"remote": {"url": "https://mcp.example.com/mcp?region=eu&api_key=SECRET123&access_token=T%2BOK#frag"},
			"basic": {"url": "https://alice:PA55word@mcp.example.com/sse"},
			"tok": {"url": "https://ghp_R2d2C3poXwingT1eF1ghterL0ngT0ken99@mcp.example.com/mcp?token=LITERAL77&region=${env:REGION}"},
			"zap": {"url": "https://actions.example.com/mcp/sk-ak-3f9aB7c2D4e6F8g0H1i3/sse"},
			"pd": {"url": "https://mcp.example.net/7f3c2a9e-1b4d-4e8f-9a6b-2c5d8e1f0a3b/gmail"},
			"jwt": {"url": "https://mcp.example.org/t/eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhIn0.c2lnbmF0dXJlMTIz/mcp"},
			"b64": {"url": "https://mcp.example.org/k/q1Zx+3Rt%2F9LmNpQ2w8YvKa==/sse"}` + own(path) + `
		}}`)
		r, err := Parse(path, data)
		if err != nil {
			t.Fatal(err)
		}
		out := string(r.TOML())
		for _, s := range []string{"SECRET123", "T%2BOK", "T+OK", "PA55word", "ghp_R2d2", "LITERAL77", "sk-ak-3f9a", "7f3c2a9e", "eyJhbGci", "q1Zx"} {
			if strings.Contains(out, s) || strings.Contains(r.Summary(), s) {
				t.Fatalf("%s: literal secret %q in the output:\n%s", path, s, out)
			}
		}
		vars := map[string]string{}
		for _, v := range r.Vars {
			vars[v.Name] = "s3cr3t"
		}
		cfg, err := config.Parse([]byte(out), filepath.Join(t.TempDir(), "config.toml"), func(k string) (string, bool) { v, ok := vars[k]; return v, ok })
		if err != nil {
			t.Fatalf("%s: %v\n%s", path, err, out)
		}
		eq(t, path+" remote url", up(t, cfg, "remote").URL, "https://mcp.example.com/mcp?region=eu&api_key=s3cr3t&access_token=s3cr3t#frag")
		eq(t, path+" basic url", up(t, cfg, "basic").URL, "https://alice:s3cr3t@mcp.example.com/sse")
		eq(t, path+" path key url", up(t, cfg, "zap").URL, "https://actions.example.com/mcp/s3cr3t/sse")
		eq(t, path+" uuid url", up(t, cfg, "pd").URL, "https://mcp.example.net/s3cr3t/gmail")
		eq(t, path+" jwt url", up(t, cfg, "jwt").URL, "https://mcp.example.org/t/s3cr3t/mcp") // a JWT path segment
		eq(t, path+" base64 url", up(t, cfg, "b64").URL, "https://mcp.example.org/k/s3cr3t/sse")
		tok := "https://s3cr3t@mcp.example.com/mcp?token=s3cr3t&region=s3cr3t" // Cursor: ${env:REGION} → ${REGION}
		if path == "claude_desktop_config.json" {
			tok = "https://s3cr3t@mcp.example.com/mcp?token=s3cr3t&region=${env:REGION}" // Claude Desktop expands nothing
		}
		eq(t, path+" tok url", up(t, cfg, "tok").URL, tok)
		if path != "claude_desktop_config.json" { // the client's own variables keep their names
			if !strings.Contains(out, `url = "https://${USERNAME_WITH_LONG_NAME}@mcp.example.com/mcp?api_key=${MYKEY}"`) {
				t.Errorf("%s: the client's own references in a url:\n%s", path, out)
			}
		}
	}
}

// TestRenameReason: a name renamed for a clash that differs only in case
// says so; one renamed for its characters says that.
func TestRenameReason(t *testing.T) {
	r, err := Parse(".cursor/mcp.json", []byte(`{"mcpServers": {"fs": {"command": "a"}, "Fs": {"command": "b"}, "my server": {"command": "c"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	notes := map[string]string{}
	for _, s := range r.Servers {
		notes[s.Original] = strings.Join(s.Notes, "; ")
	}
	if n := notes["Fs"]; !strings.Contains(n, `renamed from "Fs" (another server has this name already`) {
		t.Errorf("Fs: %q", n)
	}
	if n := notes["my server"]; !strings.Contains(n, `renamed from "my server" (upstream names are letters`) {
		t.Errorf("my server: %q", n)
	}
}

// TestVSCodeWindowsPaths: a .vscode/mcp.json written on
// Windows ("${workspaceFolder}\\tools\\server.js") imported on Linux or
// macOS names the same file with "/" (before: "/ws\tools\server.js", a
// name no file has here, and no note); ${pathSeparator} and
// ${workspaceFolderBasename} are resolved as VS Code documents them; a
// backslash not after a folder variable (a regular expression) is kept.
func TestVSCodeWindowsPaths(t *testing.T) {
	_, out, cfg := importFile(t, "vscode-windows/.vscode/mcp.json")
	ws, _ := filepath.Abs("testdata/vscode-windows")
	lt := up(t, cfg, "local-tools")
	eq(t, "args", lt.Args, []string{filepath.Join(ws, "tools", "server.js"), "--root", ws, "--name", "vscode-windows"})
	eq(t, "cwd", lt.Cwd, filepath.Join(ws, "tools"))
	py := up(t, cfg, "py-server")
	eq(t, "command", py.Command, filepath.Join(ws, ".venv", "Scripts", "python.exe"))
	eq(t, "args", py.Args, []string{filepath.Join(ws, "server.py"), "--pattern", `a\d+`})
	if filepath.Separator == '/' && !strings.Contains(out, `written with Windows separators`) {
		t.Errorf("no note about the converted separators:\n%s", out)
	}
}

// The mcp-toolsearch entry of a client file (README "Add it to a client")
// is not imported as an upstream of its own config.
func TestToolsearchEntryNotImported(t *testing.T) {
	for _, command := range []string{"mcp-toolsearch", "/usr/local/bin/mcp-toolsearch", `C:\Tools\MCP-Toolsearch.exe`} {
		data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
			"toolsearch": map[string]any{"command": command, "args": []string{"serve", "--config", "/path/to/config.toml"}},
			"memory":     map[string]any{"command": "npx", "args": []string{"-y", "@modelcontextprotocol/server-memory"}},
		}})
		r, err := Parse("claude_desktop_config.json", data)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Servers) != 1 || r.Servers[0].Name != "memory" {
			t.Errorf("%s: imported %+v, want memory only", command, r.Servers)
		}
		if len(r.Skipped) != 1 || r.Skipped[0].Name != "toolsearch" || !strings.Contains(r.Skipped[0].Reason, "mcp-toolsearch itself") {
			t.Errorf("%s: skipped %+v, want toolsearch named", command, r.Skipped)
		}
	}
}

// TestArgSecrets: literal secrets in a stdio server's
// arguments — a url's password or secret query parameter (server-postgres'
// postgresql://user:PASS@host, mcp-remote's url) and a secret header given
// as "--header" "Name: value" (mcp-remote) — become ${VAR} references like
// the url and header secrets of an HTTP server; the config loads back to
// the same arguments.
func TestArgSecrets(t *testing.T) {
	for _, path := range []string{"claude_desktop_config.json", ".cursor/mcp.json"} {
		data := []byte(`{"mcpServers": {
			"pg": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-postgres", "postgresql://admin:hunter2pass@localhost:5432/mydb"]},
			"remote": {"command": "npx", "args": ["-y", "mcp-remote", "https://mcp.example.com/sse?region=eu&api_key=abcdef0123456789", "--header", "Authorization: Bearer sk-proj-abcdefghijklmnop1234", "-H", "X-Api-Key:k3y-v4lue-1234"]},
			"plain": {"command": "node", "args": ["https://example.com/docs", "--header", "Accept: text/plain", "file:///tmp/x y"]}
		}}`)
		r, err := Parse(path, data)
		if err != nil {
			t.Fatal(err)
		}
		out := string(r.TOML())
		for _, s := range []string{"hunter2pass", "abcdef0123456789", "sk-proj-abcdefghijklmnop1234", "k3y-v4lue"} {
			if strings.Contains(out, s) || strings.Contains(r.Summary(), s) {
				t.Fatalf("%s: literal secret %q in the output:\n%s", path, s, out)
			}
		}
		vars := map[string]string{"PG_PASSWORD": "hunter2pass", "REMOTE_API_KEY": "abcdef0123456789", "REMOTE_TOKEN": "sk-proj-abcdefghijklmnop1234", "REMOTE_X_API_KEY": "k3y-v4lue-1234"}
		if len(r.Vars) != len(vars) {
			t.Errorf("%s: vars %+v, want the names %v", path, r.Vars, vars)
		}
		cfg, err := config.Parse([]byte(out), filepath.Join(t.TempDir(), "config.toml"), func(k string) (string, bool) { v, ok := vars[k]; return v, ok })
		if err != nil {
			t.Fatalf("%s: %v\n%s", path, err, out)
		}
		eq(t, path+" pg args", up(t, cfg, "pg").Args, []string{"-y", "@modelcontextprotocol/server-postgres", "postgresql://admin:hunter2pass@localhost:5432/mydb"})
		eq(t, path+" remote args", up(t, cfg, "remote").Args, []string{"-y", "mcp-remote", "https://mcp.example.com/sse?region=eu&api_key=abcdef0123456789", "--header", "Authorization: Bearer sk-proj-abcdefghijklmnop1234", "-H", "X-Api-Key:k3y-v4lue-1234"})
		eq(t, path+" plain args", up(t, cfg, "plain").Args, []string{"https://example.com/docs", "--header", "Accept: text/plain", "file:///tmp/x y"})
		if !strings.Contains(out, `args[2]: literal secret moved out of the file`) {
			t.Errorf("%s: the header should name the argument:\n%s", path, out)
		}
	}
}

// TestVSCodeSettingsAndBOM: VS Code's user settings.json keeps
// its servers in "mcp": {"servers", "inputs"} among the editor's settings,
// and a file saved with a UTF-8 byte order mark (Windows editors) is read.
func TestVSCodeSettingsAndBOM(t *testing.T) {
	settings := "\xef\xbb\xbf" + `{
	// editor settings
	"editor.fontSize": 14,
	"mcp": {
		"inputs": [{"type": "promptString", "id": "gh-token", "description": "GitHub PAT", "password": true}],
		"servers": {
			"github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/", "headers": {"Authorization": "Bearer ${input:gh-token}"}},
			"fetch": {"command": "uvx", "args": ["mcp-server-fetch"],},
		},
	},
}`
	r, err := Parse("settings.json", []byte(settings))
	if err != nil {
		t.Fatal(err)
	}
	if r.Format != VSCode || len(r.Servers) != 2 || r.Servers[0].Name != "github" || r.Servers[1].Command != "uvx" {
		t.Fatalf("format %q, servers %+v", r.Format, r.Servers)
	}
	if len(r.Vars) != 1 || r.Vars[0].Name != "GH_TOKEN" {
		t.Errorf("vars %+v, want GH_TOKEN from the input", r.Vars)
	}
	if _, err := Parse("mcp.json", []byte("\xef\xbb\xbf"+`{"mcpServers": {"a": {"command": "x"}}}`)); err != nil {
		t.Errorf("a file with a byte order mark: %v", err)
	}
}

// TestErrorsNamePlaceAndField: a syntax error names its line
// and column, a file cut short is refused (it was imported as if whole),
// and a field of the wrong type is named in JSON's terms, not Go's.
func TestErrorsNamePlaceAndField(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"{\"mcpServers\": {\n  \"a\": {\"command\": \"x\" \"args\": []}}}", "f.json: line 2, column 24: invalid character"},
		{`{"mcpServers": {"a": {"command": "x",}, }`, "f.json: line 1: the JSON ends before it is complete"},
	} {
		if _, err := Parse("f.json", []byte(c.in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", c.in, err, c.want)
		}
	}
	r, err := Parse("f.json", []byte(`{"mcpServers": {"a": {"command": "node", "args": "x.js --port 3"}, "b": {"command": ["node"]}, "c": {"command": "n", "args": ["x", 42]}, "d": {"command": "n", "disabled": "yes"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`"args" is a string, want an array of strings`, `"command" is an array, want a string`, `"args" holds a number, want only strings`, `"disabled" is a string, want true or false`}
	if len(r.Skipped) != len(want) {
		t.Fatalf("skipped %+v", r.Skipped)
	}
	for i, w := range want {
		if r.Skipped[i].Reason != w {
			t.Errorf("%s: reason %q, want %q", r.Skipped[i].Name, r.Skipped[i].Reason, w)
		}
	}
}

// TestHomeResolved: the home folder written as an environment
// variable (Claude Code's ${HOME}, VS Code's ${env:HOME}) is resolved at
// import like ${userHome}, with a note: as a ${VAR} it would be a secret
// to the proxy, hidden in every log line that names a path.
func TestHomeResolved(t *testing.T) {
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip(err)
	}
	for path, in := range map[string]string{
		".mcp.json":        `{"mcpServers": {"s": {"command": "${HOME}/bin/srv", "args": ["${DATA}"]}}}`,
		".vscode/mcp.json": `{"servers": {"s": {"command": "${env:HOME}/bin/srv", "args": ["${env:DATA}"]}}}`,
		".cursor/mcp.json": `{"mcpServers": {"s": {"command": "${env:HOME}/bin/srv", "args": ["${env:DATA}"]}}}`,
	} {
		r, err := Parse(path, []byte(in))
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Servers[0].Command; got != home+"/bin/srv" {
			t.Errorf("%s: command %q, want %q", path, got, home+"/bin/srv")
		}
		if len(r.Vars) != 1 || r.Vars[0].Name != "DATA" {
			t.Errorf("%s: vars %+v, want only DATA", path, r.Vars)
		}
		if !strings.Contains(strings.Join(r.Servers[0].Notes, "\n"), "resolved to "+home) {
			t.Errorf("%s: no note: %v", path, r.Servers[0].Notes)
		}
	}
}
