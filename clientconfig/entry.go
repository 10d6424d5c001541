package clientconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
)

// The other direction of import: the proxy's own entry in a client's MCP
// configuration (`mcp-toolsearch init --client NAME`), in each client's
// format, and its merge into the client's existing file.

// Client is one client whose MCP configuration file `init --client`
// writes the proxy's entry into.
type Client struct {
	Name  string // as given to --client
	Title string
	// Key is the JSON object holding the servers ("mcpServers",
	// "servers"); "" for Codex, whose file is TOML.
	Key string
	// File is where the client reads its servers (see ClientFile).
	File func(env Env) string
	// Where says in words which file that is, for the help text.
	Where string
	// Entry is the server entry, without the name, its members in the
	// order they are written.
	Entry func(command string, args []string) []Member
	// Notes are told with the snippet: what the entry's settings do, and
	// what else to know for this client.
	Notes []string
}

// Env is what ClientFile needs of the machine.
type Env struct {
	GOOS   string
	Home   string
	Dir    string // the current folder (project-scoped files)
	Getenv func(string) string
}

// Member is one member of a JSON object.
type Member struct {
	Key   string
	Value any
}

func stdioEntry(command string, args []string) []Member {
	return []Member{{"command", command}, {"args", args}}
}

// entryJSON is entry as a compact JSON object, members in order.
func entryJSON(entry []Member) (json.RawMessage, error) {
	m := map[string]json.RawMessage{}
	var order []string
	for _, mb := range entry {
		b, err := json.Marshal(mb.Value)
		if err != nil {
			return nil, err
		}
		m[mb.Key] = b
		order = append(order, mb.Key)
	}
	return orderedObject(m, order), nil
}

// Clients lists the clients `init --client` knows, by name.
var Clients = []*Client{
	{
		Name: "claude-code", Title: "Claude Code", Key: "mcpServers",
		File:  func(e Env) string { return filepath.Join(e.Dir, ".mcp.json") },
		Where: ".mcp.json in the project folder (project scope; Claude Code asks once before using it)",
		Entry: func(command string, args []string) []Member {
			return []Member{{"type", "stdio"}, {"command", command}, {"args", args}, {"alwaysLoad", true}}
		},
		Notes: []string{
			`"alwaysLoad": true (Claude Code 2.1.121 and later) keeps the proxy's tools loaded when Claude Code's own tool search defers MCP tools, and has it connect the proxy before the first turn; the proxy's tools also carry _meta "anthropic/alwaysLoad".`,
			"For every project instead: claude mcp add-json --scope user NAME 'ENTRY' (the entry is the object under the server's name).",
		},
	},
	{
		Name: "claude-desktop", Title: "Claude Desktop", Key: "mcpServers",
		File: func(e Env) string {
			switch e.GOOS {
			case "darwin":
				return filepath.Join(e.Home, "Library", "Application Support", "Claude", "claude_desktop_config.json")
			case "windows":
				if d := e.Getenv("APPDATA"); d != "" {
					return filepath.Join(d, "Claude", "claude_desktop_config.json")
				}
				return filepath.Join(e.Home, "AppData", "Roaming", "Claude", "claude_desktop_config.json")
			}
			return filepath.Join(configHome(e), "Claude", "claude_desktop_config.json")
		},
		Where: "claude_desktop_config.json: macOS ~/Library/Application Support/Claude/, Windows %APPDATA%\\Claude\\",
		Entry: stdioEntry,
		Notes: []string{"Quit Claude Desktop completely and start it again to load the change."},
	},
	{
		Name: "cursor", Title: "Cursor", Key: "mcpServers",
		File:  func(e Env) string { return filepath.Join(e.Home, ".cursor", "mcp.json") },
		Where: "~/.cursor/mcp.json (every project; .cursor/mcp.json in a project for that project only)",
		Entry: stdioEntry,
	},
	{
		Name: "vscode", Title: "VS Code", Key: "servers",
		File:  func(e Env) string { return filepath.Join(e.Dir, ".vscode", "mcp.json") },
		Where: ".vscode/mcp.json in the workspace folder",
		Entry: func(command string, args []string) []Member {
			return []Member{{"type", "stdio"}, {"command", command}, {"args", args}}
		},
	},
	{
		Name: "copilot-cli", Title: "GitHub Copilot CLI", Key: "mcpServers",
		File: func(e Env) string {
			if d := e.Getenv("COPILOT_HOME"); d != "" {
				return filepath.Join(d, "mcp-config.json")
			}
			return filepath.Join(e.Home, ".copilot", "mcp-config.json")
		},
		Where: "~/.copilot/mcp-config.json ($COPILOT_HOME/mcp-config.json when set)",
		Entry: func(command string, args []string) []Member {
			return []Member{{"type", "local"}, {"command", command}, {"args", args}, {"tools", []string{"*"}}, {"deferTools", "never"}}
		},
		Notes: []string{`"deferTools": "never" keeps the proxy's tools loaded when Copilot CLI's own tool search holds MCP tools back (above about 30 tools).`},
	},
	{
		Name: "gemini-cli", Title: "Gemini CLI", Key: "mcpServers",
		File:  func(e Env) string { return filepath.Join(e.Home, ".gemini", "settings.json") },
		Where: "~/.gemini/settings.json (every project; .gemini/settings.json in a project for that project only)",
		Entry: stdioEntry,
		Notes: []string{"Gemini CLI starts MCP servers only in a folder it trusts."},
	},
	{
		Name: "codex", Title: "Codex", Key: "",
		File: func(e Env) string {
			if d := e.Getenv("CODEX_HOME"); d != "" {
				return filepath.Join(d, "config.toml")
			}
			return filepath.Join(e.Home, ".codex", "config.toml")
		},
		Where: "~/.codex/config.toml ($CODEX_HOME/config.toml when set)",
		Entry: stdioEntry,
		Notes: []string{"Codex shows the proxy's instructions as the description of its tools' namespace (mcp__NAME)."},
	},
}

func configHome(e Env) string {
	if d := e.Getenv("XDG_CONFIG_HOME"); d != "" {
		return d
	}
	return filepath.Join(e.Home, ".config")
}

// ClientNamed returns the client called name, or an error listing them.
func ClientNamed(name string) (*Client, error) {
	var names []string
	for _, c := range Clients {
		if c.Name == name {
			return c, nil
		}
		names = append(names, c.Name)
	}
	return nil, fmt.Errorf("unknown client %q: want one of %s", name, strings.Join(names, ", "))
}

// validServerName is what every client accepts as a server's name.
var validServerName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// Snippet returns the client's configuration holding only the proxy's
// entry, named name, that starts command with args: the whole file for a
// client that has none yet.
func (c *Client) Snippet(name, command string, args []string) ([]byte, error) {
	if !validServerName.MatchString(name) {
		return nil, fmt.Errorf("server name %q: use letters, digits, '-' and '_' (at most 64)", name)
	}
	if c.Key == "" {
		return codexTable(name, command, args), nil
	}
	entry, err := entryJSON(c.Entry(command, args))
	if err != nil {
		return nil, err
	}
	return indent(orderedObject(map[string]json.RawMessage{c.Key: orderedObject(map[string]json.RawMessage{name: entry}, nil)}, nil))
}

// indent is compact JSON with two-space indentation and a final newline,
// the way the clients write their own files.
func indent(compact json.RawMessage) ([]byte, error) {
	var buf bytes.Buffer
	if err := json.Indent(&buf, compact, "", "  "); err != nil {
		return nil, err
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

// codexTable is the [mcp_servers.NAME] table of Codex's config.toml.
func codexTable(name, command string, args []string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "[mcp_servers.%s]\ncommand = %s\n", name, tomlString(command))
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = tomlString(a)
	}
	fmt.Fprintf(&b, "args = [%s]\n", strings.Join(q, ", "))
	return []byte(b.String())
}

// ErrHasComments is returned by Merge for a JSON file with comments,
// which rewriting it would drop.
var ErrHasComments = errors.New("the file has comments, which rewriting it would drop")

// Merge returns the client's file existing (nil or empty: no file yet)
// with the proxy's entry added under name, every other member kept in its
// order; replaced reports that an entry of that name was there and is
// replaced. A Codex config.toml gets the table appended; one that already
// has [mcp_servers.NAME] is an error (its other settings would be lost).
func (c *Client) Merge(existing []byte, name, command string, args []string) (out []byte, replaced bool, err error) {
	snippet, err := c.Snippet(name, command, args)
	if err != nil {
		return nil, false, err
	}
	existing = bytes.TrimPrefix(existing, []byte("\xef\xbb\xbf"))
	if len(bytes.TrimSpace(existing)) == 0 {
		return snippet, false, nil
	}
	if c.Key == "" {
		var doc struct {
			Servers map[string]any `toml:"mcp_servers"`
		}
		if _, err := toml.Decode(string(existing), &doc); err != nil {
			return nil, false, fmt.Errorf("not valid TOML: %v", err)
		}
		if _, ok := doc.Servers[name]; ok {
			return nil, false, fmt.Errorf("it already has [mcp_servers.%s]: edit that table (command and args below), or choose another name with --name", name)
		}
		out := append([]byte(nil), existing...)
		if !bytes.HasSuffix(out, []byte("\n")) {
			out = append(out, '\n')
		}
		out = append(append(out, '\n'), snippet...)
		if _, err := toml.Decode(string(out), &doc); err != nil {
			return nil, false, fmt.Errorf("appending [mcp_servers.%s] would not be valid TOML (%v)", name, err)
		}
		return out, false, nil
	}
	clean, err := stripJSONC(existing)
	if err != nil {
		return nil, false, err
	}
	if !bytes.Equal(clean, existing) && hasComment(existing) {
		return nil, false, ErrHasComments
	}
	if err := syntaxAt(clean); err != nil {
		return nil, false, err
	}
	top, keys, err := objectInOrder(clean)
	if err != nil {
		return nil, false, fmt.Errorf("want a JSON object at the top: %v", err)
	}
	entry, err := entryJSON(c.Entry(command, args))
	if err != nil {
		return nil, false, err
	}
	servers := map[string]json.RawMessage{}
	var order []string
	if raw, ok := top[c.Key]; ok && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		if servers, order, err = objectInOrder(raw); err != nil {
			return nil, false, fmt.Errorf("%q: want an object of servers: %v", c.Key, err)
		}
	} else if !ok {
		keys = append(keys, c.Key)
	}
	if _, replaced = servers[name]; !replaced {
		order = append(order, name)
	}
	servers[name] = entry
	top[c.Key] = orderedObject(servers, order)
	out, err = indent(orderedObject(top, keys))
	return out, replaced, err
}

// hasComment reports whether JSON text b has a // or /* comment outside
// strings (a trailing comma alone is dropped silently).
func hasComment(b []byte) bool {
	in := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case in && c == '\\':
			i++
		case c == '"':
			in = !in
		case !in && c == '/' && i+1 < len(b) && (b[i+1] == '/' || b[i+1] == '*'):
			return true
		}
	}
	return false
}

// orderedObject writes m's members as a compact JSON object, keys in
// order (members not in order follow, sorted).
func orderedObject(m map[string]json.RawMessage, order []string) json.RawMessage {
	seen := map[string]bool{}
	var keys []string
	for _, k := range order {
		if _, ok := m[k]; ok && !seen[k] {
			keys = append(keys, k)
			seen[k] = true
		}
	}
	var rest []string
	for k := range m {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	keys = append(keys, rest...)
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		buf.Write(kb)
		buf.WriteByte(':')
		var c bytes.Buffer
		if json.Compact(&c, m[k]) == nil {
			buf.Write(c.Bytes())
		} else {
			buf.Write(m[k])
		}
	}
	buf.WriteByte('}')
	return buf.Bytes()
}

// WriteFile writes data to path atomically (a temporary file in the same
// folder, renamed over it), creating the folder, keeping an existing
// file's mode (0600 for a new one: client files may hold secrets).
func WriteFile(path string, data []byte) error {
	mode := os.FileMode(0o600)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
