// Package clientconfig reads the MCP server lists of MCP clients and turns
// them into mcp-toolsearch upstreams (`mcp-toolsearch import`):
//
//   - Claude Desktop claude_desktop_config.json, Cursor mcp.json, Claude Code
//     .mcp.json and Windsurf mcp_config.json: a top-level "mcpServers" object;
//   - VS Code .vscode/mcp.json: a top-level "servers" object (JSON with
//     comments and trailing commas), an optional "inputs" array; VS Code's
//     user settings.json: the same inside its "mcp" object.
//
// Each server becomes an upstream: stdio "command"/"args"/"env"/"cwd", or a
// "url" (Windsurf: "serverUrl") with "type" http/sse and "headers". The
// clients' variable references become mcp-toolsearch ${VAR} references
// (${env:VAR} → ${VAR}; VS Code ${input:id} → ${ID} with a note); literal
// secret values in env, headers, secret-looking flags and urls become ${VAR}
// references too, and Result.Vars says which variables to set. A server that
// cannot be mapped is kept in Result.Skipped with the reason, never dropped;
// fields that have no equivalent are named in the server's notes.
//
// Trust: the input file is the operator's own (trusted), but it holds secrets:
// no secret value is ever written to the output or a note.
//
// It depends only on redact (which keys and values are secrets).
package clientconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/mcp-toolsearch/mcp-toolsearch/redact"
)

// Format names an input format.
type Format string

const (
	ClaudeDesktop Format = "Claude Desktop"
	Cursor        Format = "Cursor"
	ClaudeCode    Format = "Claude Code"
	VSCode        Format = "VS Code"
	Windsurf      Format = "Windsurf"
	Generic       Format = "mcpServers JSON"
)

// Server is one imported upstream.
type Server struct {
	Name     string // valid upstream name (^[a-zA-Z0-9_-]{1,64}$)
	Original string // the name in the client's file

	Command string
	Args    []string
	Env     [][2]string // in the file's order
	Cwd     string

	URL       string
	Transport string // "" (Streamable HTTP, the default) or "sse"
	Headers   [][2]string

	// StartupTimeout is the upstream's startup_timeout when the default
	// (30 s) is too short: FirstStartTimeout for a command that downloads
	// its server on its first start (installsOnFirstStart), else "".
	StartupTimeout string

	Disabled bool
	Notes    []string // what was changed or not mapped, no secret values
}

// FirstStartTimeout is the startup_timeout written for a stdio server whose
// command fetches the server on its first start (npx, uvx, docker …): the
// download can take longer than the default 30 s, and a start stopped
// halfway can leave the runner's cache broken for every later start (npx:
// `ERR_MODULE_NOT_FOUND` for a dependency until ~/.npm/_npx is removed;
// 50 s for server-memory into an empty npx cache).
const FirstStartTimeout = "3m"

// installsOnFirstStart reports whether command (with args) is a package
// runner or container engine that downloads the server (or its
// dependencies) when it is not cached yet:
//
//   - npx, pnpx, bunx, uvx;
//   - npm exec (npm x), bun x, pnpm dlx, yarn dlx, pipx run;
//   - uv run and uv tool run (uv run makes the project's environment on
//     its first start);
//   - deno run of an npm:, jsr: or http(s) module;
//   - docker, podman or nerdctl run (and container run);
//   - any of these behind Windows' `cmd /c`, also as one string
//     (`cmd /c "npx -y pkg"`).
//
// Options may come before the subcommand (`uv --directory D run`,
// `docker --context C run`, `npm --yes exec`). The name is compared
// without folder and without a Windows extension (.cmd, .exe, .bat).
func installsOnFirstStart(command string, args []string) bool {
	base := strings.ToLower(command)
	if i := strings.LastIndexAny(base, `/\`); i >= 0 {
		base = base[i+1:]
	}
	for _, ext := range []string{".cmd", ".exe", ".bat"} {
		base = strings.TrimSuffix(base, ext)
	}
	switch base {
	case "npx", "pnpx", "bunx", "uvx":
		return true
	case "npm":
		return hasSubcommand(args, "exec") || hasSubcommand(args, "x")
	case "bun":
		return hasSubcommand(args, "x")
	case "pnpm", "yarn":
		return hasSubcommand(args, "dlx")
	case "pipx":
		return hasSubcommand(args, "run")
	case "uv":
		return hasSubcommand(args, "run") || hasSubcommand(args, "tool", "run")
	case "docker", "podman", "nerdctl":
		return hasSubcommand(args, "run") || hasSubcommand(args, "container", "run")
	case "deno":
		if !hasSubcommand(args, "run") {
			return false
		}
		for _, a := range args {
			a = strings.ToLower(a)
			if strings.HasPrefix(a, "npm:") || strings.HasPrefix(a, "jsr:") || strings.HasPrefix(a, "https://") || strings.HasPrefix(a, "http://") {
				return true
			}
		}
	case "cmd":
		if len(args) >= 2 && strings.EqualFold(args[0], "/c") {
			rest := args[1:]
			if len(rest) == 1 {
				// The one-string form: `cmd /c "npx -y pkg"`.
				rest = strings.Fields(rest[0])
				if len(rest) == 0 {
					return false
				}
			}
			return installsOnFirstStart(rest[0], rest[1:])
		}
	}
	return false
}

// hasSubcommand reports whether args start with the subcommand path (e.g.
// "tool", "run"), options skipped: an argument starting with "-" is an
// option, and a word right after an option without "=" may be that
// option's value (`--directory D`), so it is passed over; any other word
// that is not the path's next one means another subcommand. Options stop
// at "--".
func hasSubcommand(args []string, path ...string) bool {
	k := 0
	afterOption := false
	for _, a := range args {
		if a == "--" {
			return false
		}
		if strings.HasPrefix(a, "-") {
			afterOption = !strings.Contains(a, "=")
			continue
		}
		if strings.EqualFold(a, path[k]) {
			k++
			if k == len(path) {
				return true
			}
			afterOption = false
			continue
		}
		if !afterOption || k > 0 {
			return false
		}
		afterOption = false
	}
	return false
}

// Skipped is a server entry that could not be mapped.
type Skipped struct {
	Name   string
	Reason string
	JSON   string // the entry with secret values replaced by "***"
}

// Var is an environment variable the imported config needs.
type Var struct {
	Name  string
	Where string // e.g. upstreams.github.env.GITHUB_TOKEN
	Why   string // "literal secret moved out of the file", "VS Code input …", "referenced by the client config"
}

// Result is one imported file.
type Result struct {
	Path    string
	Format  Format
	Servers []*Server
	Skipped []Skipped
	Vars    []Var
	Notes   []string // file-level notes
}

// Parse reads one client config file's bytes. path is used to tell the
// format apart (claude_desktop_config.json, .mcp.json, .cursor/mcp.json,
// mcp_config.json, .vscode/mcp.json) and to resolve ${workspaceFolder}. It
// returns an error naming the problem when the file is not JSON (comments
// and trailing commas are accepted) or has neither "mcpServers" nor
// "servers".
func Parse(path string, data []byte) (*Result, error) {
	// A UTF-8 byte order mark, which Windows editors may write (Notepad,
	// VS Code with "files.encoding": "utf8bom"), is no part of the JSON
	// ("invalid character 'ï' looking for beginning of value").
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	clean, err := stripJSONC(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := syntaxAt(clean); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	top, _, err := objectInOrder(clean)
	if err != nil {
		return nil, fmt.Errorf("%s: not a JSON object: %w", path, err)
	}
	r := &Result{Path: path}
	if raw := top["mcp"]; raw != nil && top["servers"] == nil && top["mcpServers"] == nil {
		// VS Code's user settings.json: {"mcp": {"servers": …, "inputs": …}}
		// next to the editor's settings (the place before mcp.json).
		if nested, _, err := objectInOrder(raw); err == nil && nested["servers"] != nil {
			top = nested
		}
	}
	var servers json.RawMessage
	switch {
	case top["servers"] != nil && top["mcpServers"] == nil:
		r.Format, servers = VSCode, top["servers"]
	case top["mcpServers"] != nil:
		r.Format, servers = detectFormat(path, top["mcpServers"]), top["mcpServers"]
	default:
		return nil, fmt.Errorf(`%s: no "mcpServers" (Claude Desktop, Cursor, Claude Code, Windsurf), "servers" or "mcp": {"servers"} (VS Code) object`, path)
	}
	if top["projects"] != nil && r.Format == ClaudeCode {
		r.Notes = append(r.Notes, `per-project "projects" entries of ~/.claude.json were not read; import a project's .mcp.json instead`)
	}
	inputs := map[string]string{}
	if raw := top["inputs"]; raw != nil {
		var list []struct {
			ID          string `json:"id"`
			Description string `json:"description"`
		}
		if json.Unmarshal(raw, &list) == nil {
			for _, in := range list {
				inputs[in.ID] = in.Description
			}
		}
	}
	entries, names, err := objectInOrder(servers)
	if err != nil {
		return nil, fmt.Errorf("%s: the servers object: %w", path, err)
	}
	im := &importer{r: r, inputs: inputs, workspace: workspaceOf(path), used: map[string]bool{}, varValue: map[string]string{}}
	for _, name := range names {
		im.server(name, entries[name])
	}
	return r, nil
}

// detectFormat tells the mcpServers formats apart by file name, then by
// fields only one client uses.
func detectFormat(path string, servers json.RawMessage) Format {
	base := filepath.Base(path)
	dir := filepath.Base(filepath.Dir(path))
	switch {
	case base == "claude_desktop_config.json":
		return ClaudeDesktop
	case base == "mcp_config.json" || bytes.Contains(servers, []byte(`"serverUrl"`)):
		return Windsurf
	case base == ".mcp.json" || base == ".claude.json":
		return ClaudeCode
	case dir == ".cursor":
		return Cursor
	}
	return Generic
}

// workspaceOf is the folder ${workspaceFolder} stands for: the parent of a
// .vscode or .cursor folder, else the file's folder.
func workspaceOf(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	dir := filepath.Dir(abs)
	if b := filepath.Base(dir); b == ".vscode" || b == ".cursor" {
		return filepath.Dir(dir)
	}
	return dir
}

type importer struct {
	r         *Result
	inputs    map[string]string
	workspace string
	used      map[string]bool   // upstream names taken (lower case)
	varValue  map[string]string // variable name -> literal secret it stands for (to detect clashes)
}

// rawServer holds every field any client uses.
type rawServer struct {
	Type      string          `json:"type"`
	Command   string          `json:"command"`
	Args      []string        `json:"args"`
	Env       json.RawMessage `json:"env"`
	Cwd       string          `json:"cwd"`
	URL       string          `json:"url"`
	ServerURL string          `json:"serverUrl"`
	Headers   json.RawMessage `json:"headers"`
	Disabled  *bool           `json:"disabled"`
}

// known are the fields mapped (or deliberately meaningless here).
var known = map[string]bool{"type": true, "command": true, "args": true, "env": true, "cwd": true, "url": true, "serverUrl": true, "headers": true, "disabled": true}

func (im *importer) server(name string, raw json.RawMessage) {
	var s rawServer
	fields := map[string]json.RawMessage{}
	if err := json.Unmarshal(raw, &fields); err != nil {
		im.skip(name, raw, "not a JSON object")
		return
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		im.skip(name, raw, wrongType(err))
		return
	}
	out := &Server{Original: name, Name: im.name(name)}
	if out.Name != name {
		why := "upstream names are letters, digits, '_' and '-', at most 64"
		if validName(name) == name {
			why = "another server has this name already; upstream names differ in more than case"
		}
		out.Notes = append(out.Notes, fmt.Sprintf("renamed from %q (%s)", name, why))
	}
	url := s.URL
	if url == "" {
		url = s.ServerURL
	}
	typ := strings.ToLower(s.Type)
	switch {
	case s.Command != "" && url != "":
		im.skip(name, raw, `both "command" and "url": cannot tell stdio from HTTP`)
		return
	case s.Command != "":
		if typ != "" && typ != "stdio" {
			im.skip(name, raw, fmt.Sprintf(`"type": %q with a "command" (want "stdio")`, s.Type))
			return
		}
		if isToolsearch(s.Command) {
			im.skip(name, raw, "this is mcp-toolsearch itself (the entry that fronts the other servers): as an upstream of its own config it would start itself again and again")
			return
		}
		out.Command = im.value(out, "command", s.Command, "")
		for i, a := range s.Args {
			out.Args = append(out.Args, im.arg(out, i, a, s.Args))
		}
		out.Cwd = im.value(out, "cwd", s.Cwd, "")
		env, ok := stringMap(s.Env)
		if !ok {
			im.skip(name, raw, `"env" is not an object of strings`)
			return
		}
		for _, kv := range env {
			out.Env = append(out.Env, [2]string{kv[0], im.secretValue(out, "env", kv[0], kv[1])})
		}
		if installsOnFirstStart(out.Command, out.Args) {
			out.StartupTimeout = FirstStartTimeout
		}
	case url != "":
		switch typ {
		case "", "http", "streamable-http", "streamablehttp", "streamable_http":
			switch {
			case typ == "" && strings.HasSuffix(strings.TrimRight(url, "/"), "/sse"):
				out.Transport = "sse"
				out.Notes = append(out.Notes, `no "type" and the url ends in /sse: transport "sse"`)
			case typ == "":
				out.Notes = append(out.Notes, `no "type": Streamable HTTP is tried first, then the legacy SSE transport if the server refuses it`)
			}
		case "sse":
			out.Transport = "sse"
		default:
			im.skip(name, raw, fmt.Sprintf(`"type": %q is not http or sse`, s.Type))
			return
		}
		out.URL = im.urlValue(out, "url", url) // vars.go
		hdr, ok := stringMap(s.Headers)
		if !ok {
			im.skip(name, raw, `"headers" is not an object of strings`)
			return
		}
		for _, kv := range hdr {
			out.Headers = append(out.Headers, [2]string{kv[0], im.secretValue(out, "headers", kv[0], kv[1])})
		}
	default:
		im.skip(name, raw, `neither "command" (stdio) nor "url" (HTTP)`)
		return
	}
	if s.Disabled != nil && *s.Disabled {
		out.Disabled = true
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		if !known[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		out.Notes = append(out.Notes, fmt.Sprintf("%q not imported: %s", k, unmappedReason(k)))
	}
	im.used[strings.ToLower(out.Name)] = true
	im.r.Servers = append(im.r.Servers, out)
}

// unmappedReason explains a client field with no upstream equivalent.
func unmappedReason(k string) string {
	switch k {
	case "envFile":
		return "set those variables in the environment or copy them into env"
	case "autoApprove", "alwaysAllow":
		return "approval is configured with [tools] require_approval (docs/policy.md)"
	case "disabledTools":
		return "deny tools with [tools] deny (docs/policy.md)"
	case "timeout":
		return "set call_timeout / startup_timeout on the upstream"
	case "dev":
		return "VS Code development mode has no equivalent"
	case "oauth", "auth":
		return "OAuth of an HTTP upstream is not supported; put a token in headers"
	}
	return "no equivalent"
}

// isToolsearch reports whether command starts mcp-toolsearch: the entry
// README's "Add it to a client" puts in a client's file. A client file
// imported again after that holds it next to the servers it fronts
// (imported, the config's proxy started itself, a new level
// every fraction of a second for as long as the first one ran).
func isToolsearch(command string) bool {
	base := command[strings.LastIndexAny(command, `/\`)+1:]
	base = strings.TrimSuffix(strings.ToLower(base), ".exe")
	return base == "mcp-toolsearch"
}

func (im *importer) skip(name string, raw json.RawMessage, reason string) {
	var v any
	shown := "(not JSON)"
	if json.Unmarshal(raw, &v) == nil {
		b, _ := json.Marshal(redact.Value(v, nil))
		shown = string(b)
	}
	im.r.Skipped = append(im.r.Skipped, Skipped{Name: name, Reason: reason, JSON: shown})
}

var invalidName = regexp.MustCompile(`[^a-zA-Z0-9_-]+`)

// validName is orig made a valid upstream name (before any clash).
func validName(orig string) string {
	n := strings.Trim(invalidName.ReplaceAllString(orig, "-"), "-")
	if n == "" {
		n = "server"
	}
	if len(n) > 60 {
		n = n[:60]
	}
	return n
}

// name makes a valid, unused upstream name from a client's server name.
func (im *importer) name(orig string) string {
	n := validName(orig)
	base := n
	for i := 2; im.used[strings.ToLower(n)]; i++ {
		n = fmt.Sprintf("%s-%d", base, i)
	}
	return n
}

// stringMap decodes a JSON object of strings in the file's order; null or
// absent is an empty map.
func stringMap(raw json.RawMessage) ([][2]string, bool) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil, true
	}
	m, keys, err := objectInOrder(raw)
	if err != nil {
		return nil, false
	}
	out := make([][2]string, 0, len(keys))
	for _, k := range keys {
		var v string
		if err := json.Unmarshal(m[k], &v); err != nil {
			// numbers and booleans are written as their text
			var x any
			if json.Unmarshal(m[k], &x) != nil {
				return nil, false
			}
			switch x.(type) {
			case float64, bool:
				v = strings.TrimSpace(string(m[k]))
			default:
				return nil, false
			}
		}
		out = append(out, [2]string{k, v})
	}
	return out, true
}

// objectInOrder decodes a JSON object into its members and their keys in
// the file's order.
func objectInOrder(raw []byte) (map[string]json.RawMessage, []string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, fmt.Errorf("want an object")
	}
	m := map[string]json.RawMessage{}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		k, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		if _, dup := m[k]; !dup {
			keys = append(keys, k)
		}
		m[k] = v
	}
	return m, keys, nil
}

// syntaxAt checks that clean (stripJSONC's output, which keeps every
// offset) is one complete JSON value, and names the line and column of a
// syntax error (`invalid character '"' after object key:value
// pair` named no place, and a file cut short after its last server was
// imported as if whole).
func syntaxAt(clean []byte) error {
	var v any
	err := json.Unmarshal(clean, &v)
	var se *json.SyntaxError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &se):
		before := clean[:min(int(se.Offset), len(clean))]
		line := bytes.Count(before, []byte("\n")) + 1
		col := utf8.RuneCount(before[bytes.LastIndexByte(before, '\n')+1:])
		if se.Offset >= int64(len(clean)) || strings.HasPrefix(se.Error(), "unexpected end") {
			return fmt.Errorf("line %d: the JSON ends before it is complete (a missing '}' or ']'?)", line)
		}
		return fmt.Errorf("line %d, column %d: %s", line, col, se.Error())
	}
	return nil // not a syntax error: the callers name it
}

// wrongType names a field of a server entry whose JSON type is not the
// one its client documents, in the file's terms ("args" is a string, not
// an array of strings), not Go's (`cannot unmarshal string into Go struct
// field rawServer.args of type []string`).
func wrongType(err error) string {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return "a field has the wrong type: " + err.Error()
	}
	jsonType := func(t string) string {
		switch strings.TrimPrefix(t, "*") {
		case "string":
			return "a string"
		case "[]string":
			return "an array of strings"
		case "bool":
			return "true or false"
		}
		return t
	}
	got := strings.Fields(te.Value)[0]
	switch got {
	case "array", "object":
		got = "an " + got
	case "bool":
		got = "true or false"
	default:
		got = "a " + got
	}
	if te.Field == "args" && te.Type != nil && te.Type.String() == "string" { // an element of args
		return fmt.Sprintf("%q holds %s, want only strings", te.Field, got)
	}
	want := "a value of another type"
	if te.Type != nil {
		want = jsonType(te.Type.String())
	}
	return fmt.Sprintf("%q is %s, want %s", te.Field, got, want)
}
