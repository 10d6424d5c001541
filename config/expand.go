package config

import (
	"fmt"
	"sort"
	"strings"

	"github.com/mcp-toolsearch/mcp-toolsearch/redact"
)

// expandVars expands ${NAME} in s with getenv(NAME) and "$$" to a literal
// "$"; any other "$" is kept as written. NAME must match
// [A-Za-z_][A-Za-z0-9_]*. It returns the expanded text, the substituted
// values (for the secret list), the names that getenv did not know, and a
// syntax error for an unterminated or malformed reference (the error names
// no value).
func expandVars(s string, getenv func(string) (string, bool)) (out string, values, missing []string, err error) {
	if !strings.Contains(s, "$") {
		return s, nil, nil, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '$' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '{':
			end := strings.IndexByte(s[i+2:], '}')
			if end < 0 {
				return "", nil, nil, fmt.Errorf(`unterminated "${" (write "$$" for a literal "$")`)
			}
			name := s[i+2 : i+2+end]
			if !validVarName(name) {
				return "", nil, nil, fmt.Errorf(`invalid variable reference "${%s}": a name is letters, digits and "_" (write "$$" for a literal "$")`, name)
			}
			v, ok := getenv(name)
			if pv, public := strings.CutPrefix(v, publicPrefix); public {
				v = pv
			} else if !ok {
				missing = append(missing, name)
			} else if v != "" {
				values = append(values, v)
			}
			b.WriteString(v)
			i += 2 + end
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), values, missing, nil
}

func validVarName(n string) bool {
	if n == "" {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9' {
			continue
		}
		return false
	}
	return true
}

// expand expands *s in place; path (+suffix, e.g. "[1]") names the key in
// messages.
func (p *parser) expand(s *string, getenv func(string) (string, bool), path []string, suffix string) {
	out, values, missing, err := expandVars(*s, getenv)
	if err != nil {
		p.errf(path, suffix, "%v", err)
		return
	}
	for _, name := range missing {
		p.errf(path, suffix, "environment variable %q is not set", name)
	}
	if len(values) > 0 { // a secret was substituted (not only ${CONFIG_DIR})
		if p.cfg.fromEnv == nil {
			p.cfg.fromEnv = map[string]bool{}
		}
		p.cfg.fromEnv[keyString(path)+suffix] = true
	}
	p.cfg.secrets = append(p.cfg.secrets, values...)
	*s = out
}

// ConfigDirVar is the built-in variable ${CONFIG_DIR}: the absolute folder
// of the config file (the environment wins if it sets the name). It is not
// a secret and is never redacted.
const ConfigDirVar = "CONFIG_DIR"

// withBuiltins adds ${CONFIG_DIR} to getenv. The returned lookup marks the
// built-in's value as public so expand keeps it off the secret list.
func withBuiltins(getenv func(string) (string, bool), dir string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		if v, ok := getenv(name); ok {
			return v, ok
		}
		if name == ConfigDirVar && dir != "" {
			return publicPrefix + dir, true
		}
		return "", false
	}
}

// publicPrefix marks a looked-up value as not secret; expandVars strips it.
const publicPrefix = "\x00public\x00"

// publicLookup is getenv whose values are all marked public (publicPrefix):
// for keys whose values are not secrets, such as listen addresses.
func publicLookup(getenv func(string) (string, bool)) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := getenv(name)
		if ok && !strings.HasPrefix(v, publicPrefix) {
			v = publicPrefix + v
		}
		return v, ok
	}
}

// expandAll expands ${VAR} in the keys that allow it: server.bearer_token,
// server.listen and telemetry.metrics_listen (not secrets), endpoints.*.token,
// and per upstream command, cwd, url, args, env values,
// header values.
func (p *parser) expandAll(getenv func(string) (string, bool)) {
	c := p.cfg
	p.expand(&c.Server.BearerToken, getenv, []string{"server", "bearer_token"}, "")
	// Listen addresses are not secrets (a port redacted as *** would hide
	// that number in every log line): expanded as public values, so one
	// file serves several replicas on one host.
	p.expand(&c.Server.Listen, publicLookup(getenv), []string{"server", "listen"}, "")
	p.expand(&c.Telemetry.MetricsListen, publicLookup(getenv), []string{"telemetry", "metrics_listen"}, "")
	for _, name := range sortedKeys(c.Endpoints) {
		p.expand(&c.Endpoints[name].Token, getenv, []string{"endpoints", name, "token"}, "")
	}
	for _, name := range sortedKeys(c.Upstreams) {
		u := c.Upstreams[name]
		base := []string{"upstreams", name}
		p.expand(&u.URL, getenv, appendKey(base, "url"), "")
		p.expand(&u.Command, getenv, appendKey(base, "command"), "")
		p.expand(&u.Cwd, getenv, appendKey(base, "cwd"), "")
		for i := range u.Args {
			p.expand(&u.Args[i], getenv, appendKey(base, "args"), fmt.Sprintf("[%d]", i))
		}
		for _, k := range sortedKeys(u.Env) {
			v := u.Env[k]
			p.expand(&v, getenv, []string{"upstreams", name, "env", k}, "")
			u.Env[k] = v
		}
		for _, k := range sortedKeys(u.Headers) {
			v := u.Headers[k]
			p.expand(&v, getenv, []string{"upstreams", name, "headers", k}, "")
			u.Headers[k] = v
		}
	}
	p.expandIdentity(getenv)
	p.expandStateStore(getenv)
}

// Secrets returns every value Redact hides: the values substituted for
// ${VAR} references, server.bearer_token and every endpoints.*.token
// (whether or not they came from ${VAR}), and the literal values that are
// secrets by their key (collectLiteralSecrets: secret env variables and
// headers, URL passwords and secret query parameters, secret flags). Empty values are left out; the
// list is deduplicated and ordered longest first.
func (c *Config) Secrets() []string {
	if c == nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, s := range c.secrets {
		add(s)
	}
	add(c.Server.BearerToken)
	for _, s := range c.identitySecrets() {
		add(s)
	}
	for _, s := range c.stateStoreSecrets() {
		add(s)
	}
	for _, name := range sortedKeys(c.Endpoints) {
		if e := c.Endpoints[name]; e != nil {
			add(e.Token)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if len(out[i]) != len(out[j]) {
			return len(out[i]) > len(out[j])
		}
		return out[i] < out[j]
	})
	return out
}

func (c *Config) buildRedactor() *redact.Replacer {
	return redact.NewReplacer(c.Secrets())
}

// Redact returns s with every value of Secrets() replaced by "***", in
// every escaping the value can take in printed text (raw, JSON-escaped,
// Go-quoted, URL-encoded: redact.Forms), longest first, so a secret
// containing another is hidden whole. Use it on any text that may echo
// config values: logs, errors, the check summary, the session log. A nil
// Config returns s unchanged. The secret set is the one Parse saw; a Config
// built by hand (no Parse) computes it on each call.
func (c *Config) Redact(s string) string {
	if c == nil || s == "" {
		return s
	}
	r := c.redactor
	if r == nil {
		r = c.buildRedactor()
	}
	return r.Replace(s)
}
