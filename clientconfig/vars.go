package clientconfig

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/mcp-toolsearch/mcp-toolsearch/redact"
)

// clientRef matches a client's variable reference: ${NAME}, ${env:NAME},
// ${input:ID}, ${NAME:-default}, ${workspaceFolder}, ${userHome},
// ${pathSeparator} (or ${/}), ${workspaceFolderBasename}.
var clientRef = regexp.MustCompile(`\$\{([^{}]*)\}`)

var varName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// value turns a client's string into mcp-toolsearch syntax: references the
// client would expand become ${VAR} (or a resolved path), everything else is
// literal ("$" written "$$"). where names the field for notes.
func (im *importer) value(out *Server, where, s, _ string) string {
	if !strings.Contains(s, "$") {
		return s
	}
	if im.r.Format == ClaudeDesktop { // Claude Desktop expands nothing
		return strings.ReplaceAll(s, "$", "$$")
	}
	var b strings.Builder
	last := 0
	for _, m := range clientRef.FindAllStringSubmatchIndex(s, -1) {
		b.WriteString(strings.ReplaceAll(s[last:m[0]], "$", "$$"))
		last = m[1]
		inner := s[m[2]:m[3]]
		b.WriteString(im.ref(out, where, inner, s[m[0]:m[1]]))
		if pathRefs[inner] && im.vscodeLike() && filepath.Separator == '/' && last < len(s) && s[last] == '\\' {
			// A Windows user's "${workspaceFolder}\\tools"
			// (VS Code resolves the folder and keeps the rest as written:
			// a path only on Windows). Off Windows the path that continues
			// the folder is written with "/" so it names the same file.
			end := last + strings.IndexFunc(s[last:], func(r rune) bool { return r == ' ' || r == '\t' || r == '"' || r == ';' || r == '$' })
			if end < last {
				end = len(s)
			}
			run := s[last:end]
			out.Notes = append(out.Notes, fmt.Sprintf(`%s: %s written with Windows separators: "\\" taken as "/" here`, where, s[m[0]:end]))
			b.WriteString(strings.ReplaceAll(run, "\\", "/"))
			last = end
		}
	}
	b.WriteString(strings.ReplaceAll(s[last:], "$", "$$"))
	return b.String()
}

// vscodeLike: the file's client expands VS Code's variables.
func (im *importer) vscodeLike() bool {
	f := im.r.Format
	return f == VSCode || f == Cursor || f == Windsurf || f == Generic
}

// pathRefs are the VS Code variables that stand for a folder (VS Code's
// "Variables reference": ${workspaceFolder}, ${userHome}; ${workspaceRoot}
// is its deprecated name), after which a Windows-written path may follow.
var pathRefs = map[string]bool{"workspaceFolder": true, "workspaceRoot": true, "userHome": true}

// ref translates the inside of one ${...} reference.
func (im *importer) ref(out *Server, where, inner, whole string) string {
	f := im.r.Format
	vscodeLike := im.vscodeLike()
	switch {
	case strings.HasPrefix(inner, "env:") && vscodeLike && varName.MatchString(inner[4:]) && inner != "env:HOME":
		im.need(inner[4:], out, where, "referenced by the client config")
		return "${" + inner[4:] + "}"
	case strings.HasPrefix(inner, "input:") && f == VSCode:
		id := inner[len("input:"):]
		v := strings.ToUpper(strings.Trim(invalidVar.ReplaceAllString(id, "_"), "_"))
		if v == "" || !varName.MatchString(v) {
			v = "INPUT_" + v
		}
		why := fmt.Sprintf("VS Code prompted for input %q", id)
		if d := im.inputs[id]; d != "" {
			why += " (" + d + ")"
		}
		im.need(v, out, where, why)
		return "${" + v + "}"
	case (inner == "workspaceFolder" || inner == "workspaceRoot") && vscodeLike:
		out.Notes = append(out.Notes, fmt.Sprintf("%s: %s resolved to %s", where, whole, im.workspace))
		return strings.ReplaceAll(im.workspace, "$", "$$")
	case (inner == "pathSeparator" || inner == "/") && vscodeLike:
		// VS Code: "the character used by the operating system to
		// separate components in file paths"; this machine's.
		return string(filepath.Separator)
	case inner == "workspaceFolderBasename" && vscodeLike:
		out.Notes = append(out.Notes, fmt.Sprintf("%s: %s resolved to %s", where, whole, filepath.Base(im.workspace)))
		return strings.ReplaceAll(filepath.Base(im.workspace), "$", "$$")
	case inner == "userHome" && vscodeLike,
		// The home folder as an environment variable (Claude Code's
		// ${HOME}, VS Code's ${env:HOME}) is resolved like ${userHome}:
		// every value substituted for a ${VAR} is a secret to the proxy,
		// and "/home/me" was hidden as *** in every log line and error
		// that names a path (`fork/exec ***/bin/my-server`).
		inner == "HOME" && (f == ClaudeCode || f == Generic),
		inner == "env:HOME" && vscodeLike:
		home, err := os.UserHomeDir()
		if err == nil {
			out.Notes = append(out.Notes, fmt.Sprintf("%s: %s resolved to %s", where, whole, home))
			return strings.ReplaceAll(home, "$", "$$")
		}
		if inner != "userHome" {
			im.need("HOME", out, where, "referenced by the client config")
			return "${HOME}"
		}
	case (f == ClaudeCode || f == Generic) && varName.MatchString(inner):
		im.need(inner, out, where, "referenced by the client config")
		return whole
	case f == ClaudeCode || f == Generic:
		if name, def, ok := strings.Cut(inner, ":-"); ok && varName.MatchString(name) {
			_ = def // the default may be a secret: never shown
			out.Notes = append(out.Notes, fmt.Sprintf("%s: the default of ${%s:-…} was dropped (mcp-toolsearch has no defaults): set %s", where, name, name))
			im.need(name, out, where, "referenced by the client config (its default was dropped)")
			return "${" + name + "}"
		}
	}
	out.Notes = append(out.Notes, fmt.Sprintf("%s: %s is kept literally (the client would expand it; mcp-toolsearch does not know it)", where, whole))
	return strings.ReplaceAll(whole, "$", "$$")
}

var invalidVar = regexp.MustCompile(`[^A-Za-z0-9_]+`)

// need records a variable the config will read.
func (im *importer) need(name string, out *Server, where, why string) {
	w := "upstreams." + out.Name + "." + where
	for _, v := range im.r.Vars {
		if v.Name == name && v.Where == w {
			return
		}
	}
	im.r.Vars = append(im.r.Vars, Var{Name: name, Where: w, Why: why})
}

// secretPrefixes mark a value as a credential whatever its key is called.
var secretPrefixes = []string{"ghp_", "gho_", "ghs_", "github_pat_", "glpat-", "sk-", "sk_live_", "sk_test_", "xoxb-", "xoxp-", "xapp-", "AKIA", "eyJ"}

func looksSecret(v string) bool {
	for _, p := range secretPrefixes {
		if strings.HasPrefix(v, p) && len(v) >= len(p)+8 {
			return true
		}
	}
	return false
}

// secretValue maps an env or header value: a literal secret (by its key or
// its shape) becomes a ${VAR} reference, anything else goes through value.
// table is "env" or "headers".
func (im *importer) secretValue(out *Server, table, key, v string) string {
	where := table + "." + key
	literal := !clientRef.MatchString(v) || im.r.Format == ClaudeDesktop
	if !literal || v == "" || !(redact.IsSecretKey(key) || looksSecret(v)) {
		return im.value(out, where, v, "")
	}
	if table == "headers" {
		return im.headerSecret(out, where, key, v)
	}
	name := key
	if !varName.MatchString(name) {
		name = upperVar(out.Name) + "_" + upperVar(key)
	}
	name = im.varFor(name, v)
	im.need(name, out, where, "literal secret moved out of the file")
	return "${" + name + "}"
}

// headerSecret is the reference that replaces the literal value v of the
// secret header key: "Bearer ${NAME_TOKEN}" for a token after an
// authorization scheme, else "${NAME_KEY}". where names the field in notes.
func (im *importer) headerSecret(out *Server, where, key, v string) string {
	if scheme, tok, ok := strings.Cut(v, " "); ok && (strings.EqualFold(scheme, "Bearer") || strings.EqualFold(scheme, "Basic") || strings.EqualFold(scheme, "token")) && tok != "" {
		name := im.varFor(upperVar(out.Name)+"_TOKEN", tok)
		im.need(name, out, where, "literal secret moved out of the file")
		return scheme + " ${" + name + "}"
	}
	name := upperVar(key)
	if !strings.HasPrefix(name, upperVar(out.Name)+"_") { // a header named after its server keeps its name (CONTEXT7_API_KEY, not CONTEXT7_CONTEXT7_API_KEY)
		name = upperVar(out.Name) + "_" + name
	}
	name = im.varFor(name, v)
	im.need(name, out, where, "literal secret moved out of the file")
	return "${" + name + "}"
}

// urlValue maps an HTTP upstream's url: the literal value of a secret
// query parameter (redact.IsSecretKey: ?api_key=…, ?token=…), a
// userinfo password (https://user:PASS@host) and a path segment shaped like
// a key (redact.LooksLikeToken) become ${VAR} references, as
// env and header secrets do (they were written literally);
// the rest of the url, its parameter order and escaping are kept. The
// variable stands for the text as written in the url (still URL-escaped),
// since ${VAR} expands verbatim. Anything else goes through value. where
// names the field in notes: "url", or "args[N]" for a url given as a
// stdio server's argument (mcp-remote's url, server-postgres'
// postgresql://user:PASS@host, which the config's redaction already hid
// in logs but import wrote literally).
func (im *importer) urlValue(out *Server, where, raw string) string {
	var b strings.Builder
	// Literal pieces go through value (a client's ${…} references in
	// them are translated); the secrets become references of our own.
	lit := func(s string) { b.WriteString(im.value(out, where, s, "")) }
	secret := func(prefix, value string) {
		name := im.varFor(prefix, value)
		im.need(name, out, where, "literal secret moved out of the file")
		b.WriteString("${" + name + "}")
	}
	// hostPath writes "[@]host/path…": a path segment shaped like a key
	// (redact.LooksLikeToken: …/mcp/s/sk-…/sse, …/<uuid>/…, where hosted
	// servers put theirs) becomes a reference, the rule config's redaction
	// uses (config/secrets.go urlSecrets).
	hostPath := func(s string) {
		if clientRef.MatchString(s) {
			lit(s) // a client reference may span "/" (${BASE:-https://h}/mcp)
			return
		}
		host, path, ok := strings.Cut(s, "/")
		lit(host)
		if !ok {
			return
		}
		for _, seg := range strings.Split(path, "/") {
			b.WriteString("/")
			if dec, err := url.PathUnescape(seg); err == nil && redact.LooksLikeToken(dec) || redact.LooksLikeToken(seg) {
				secret(upperVar(out.Name)+"_URL_KEY", seg)
			} else {
				lit(seg)
			}
		}
	}
	base, frag, hasFrag := strings.Cut(raw, "#")
	head, query, hasQuery := strings.Cut(base, "?")
	done := false
	if i := strings.Index(head, "://"); i >= 0 {
		rest := head[i+3:]
		hostEnd := strings.IndexByte(rest, '/')
		if hostEnd < 0 {
			hostEnd = len(rest)
		}
		// A userinfo holding a client reference (https://${env:U}:${env:P}@…)
		// is translated by lit, not taken for a literal secret.
		if at := strings.LastIndex(rest[:hostEnd], "@"); at >= 0 && !(clientRef.MatchString(rest[:at]) && im.r.Format != ClaudeDesktop) {
			if user, pass, ok := strings.Cut(rest[:at], ":"); ok && pass != "" {
				lit(head[:i+3] + user + ":")
				secret(upperVar(out.Name)+"_PASSWORD", pass)
				hostPath(rest[at:])
				done = true
			} else if !ok && (len(user) >= 16 || looksSecret(user)) {
				// A token standing alone (https://TOKEN@host), the rule
				// config's redaction uses (config/secrets.go urlSecrets).
				lit(head[:i+3])
				secret(upperVar(out.Name)+"_TOKEN", user)
				hostPath(rest[at:])
				done = true
			}
		}
		if !done && !clientRef.MatchString(head) {
			lit(head[:i+3])
			hostPath(rest)
			done = true
		}
	}
	if !done {
		lit(head)
	}
	if hasQuery {
		b.WriteString("?")
		for j, kv := range strings.Split(query, "&") {
			if j > 0 {
				b.WriteString("&")
			}
			k, v, ok := strings.Cut(kv, "=")
			key, err := url.QueryUnescape(k)
			if err != nil {
				key = k
			}
			if !ok || v == "" || !redact.IsSecretKey(key) || (clientRef.MatchString(v) && im.r.Format != ClaudeDesktop) {
				lit(kv) // a client reference (?token=${env:MYTOK}) is translated, not a literal secret
				continue
			}
			lit(k + "=")
			secret(upperVar(out.Name)+"_"+upperVar(key), v)
		}
	}
	if hasFrag {
		lit("#" + frag)
	}
	return b.String()
}

// arg maps one argument: a literal value of a secret-looking flag
// ("--api-key=X", or X after "--api-key"), the secret parts of a url
// argument (as urlValue) and the value of a secret header given as
// "--header" "Name: value" (mcp-remote, supergateway) become ${VAR}
// references.
func (im *importer) arg(out *Server, i int, a string, all []string) string {
	where := fmt.Sprintf("args[%d]", i)
	if clientRef.MatchString(a) && im.r.Format != ClaudeDesktop {
		return im.value(out, where, a, "")
	}
	if i > 0 && (all[i-1] == "--header" || all[i-1] == "-H") {
		if k, v, ok := strings.Cut(a, ":"); ok && strings.TrimSpace(v) != "" && redact.IsSecretKey(strings.TrimSpace(k)) {
			pad := v[:len(v)-len(strings.TrimLeft(v, " "))]
			return k + ":" + pad + im.headerSecret(out, where, strings.TrimSpace(k), strings.TrimSpace(v))
		}
	}
	if !strings.HasPrefix(a, "-") && strings.Contains(a, "://") && !strings.ContainsAny(a, " \t") {
		return im.urlValue(out, where, a)
	}
	if strings.HasPrefix(a, "-") {
		if flag, val, ok := strings.Cut(a, "="); ok && val != "" && redact.IsSecretKey(flag) {
			name := im.varFor(upperVar(out.Name)+"_"+upperVar(strings.TrimLeft(flag, "-")), val)
			im.need(name, out, where, "literal secret moved out of the file")
			return flag + "=${" + name + "}"
		}
		return im.value(out, where, a, "")
	}
	if i > 0 && strings.HasPrefix(all[i-1], "-") && !strings.Contains(all[i-1], "=") && redact.IsSecretKey(all[i-1]) || looksSecret(a) {
		flag := "ARG"
		if i > 0 && strings.HasPrefix(all[i-1], "-") {
			flag = upperVar(strings.TrimLeft(all[i-1], "-"))
		}
		name := im.varFor(upperVar(out.Name)+"_"+flag, a)
		im.need(name, out, where, "literal secret moved out of the file")
		return "${" + name + "}"
	}
	return im.value(out, where, a, "")
}

// varFor returns name, or name_2, name_3 … when name already stands for a
// different literal value.
func (im *importer) varFor(name, value string) string {
	n := name
	for i := 2; ; i++ {
		old, taken := im.varValue[n]
		if !taken || old == value {
			im.varValue[n] = value
			return n
		}
		n = fmt.Sprintf("%s_%d", name, i)
	}
}

func upperVar(s string) string {
	return strings.ToUpper(strings.Trim(invalidVar.ReplaceAllString(s, "_"), "_"))
}
