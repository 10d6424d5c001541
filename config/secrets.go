package config

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/mcp-toolsearch/mcp-toolsearch/redact"
)

// MinLiteralSecret is the shortest value (bytes) that a secret found by
// its key name (not by ${VAR}) is hidden by value in printed text. Shorter
// ones ("1", "yes") are still shown as "***" by `check` where the key is
// printed, but hiding them everywhere would mask unrelated text.
const MinLiteralSecret = 4

// collectLiteralSecrets adds to the secret list the values written
// literally in the config that are secrets by the rule (trust: the
// operator's config holds secrets, every output is read by someone who
// must not see them). The rule is by where a value stands, not by a list
// of names, because names do not tell (DB_PASS, GH_PAT, MYSQL_PWD,
// NPM_CONFIG__AUTH):
//
//   - every value of an upstream's env and headers, unless the upstream
//     lists the variable or header in `public`; also its parts: the
//     credential after a scheme word ("Bearer abc" hides "abc"), the
//     secrets of URLs in it, and the values of secret keys in a connection
//     string ("Server=db;Password=…", "user:pass@tcp(db)/app");
//   - in the url: the userinfo password (or a user name of 16+ bytes with
//     no password, as in https://TOKEN@host), the values of secret query
//     parameters (?api_key=…, &token=…), path segments shaped like a key
//     (redact.LooksLikeToken: …/sse/sk-ak-…, …/<uuid>/…) or following a
//     segment named like a secret (…/token/VALUE), and the fragment
//     (#access_token=…; never sent to a server);
//   - in args: the same secrets of URLs and connection strings, and the
//     argument after a known secret flag (a flag named like a secret,
//     "--token", "--api-key", "--password"; and "-p", the password flag of
//     mysql and its kin), of "--token=VALUE", "TOKEN=VALUE" and
//     "Authorization: Bearer VALUE" (a header passed on a command line),
//     and the password of "-u"/"--user" "name:password" (curl).
//
// A value that is a number or a boolean word (true, false, yes, no, on,
// off) is masked where `check` prints its key but not hidden by value
// (it would mask every such word of every output), nor is one shorter than
// MinLiteralSecret. Keys whose whole value is secret are remembered for
// Summary.
func (p *parser) collectLiteralSecrets() {
	c := p.cfg
	add := func(vs ...string) {
		for _, v := range vs {
			if len(v) >= MinLiteralSecret && !plainValue(v) {
				c.secrets = append(c.secrets, v)
			}
		}
	}
	mark := func(key string) {
		if c.secretKeys == nil {
			c.secretKeys = map[string]bool{}
		}
		c.secretKeys[key] = true
	}
	for _, name := range sortedKeys(c.Upstreams) {
		u := c.Upstreams[name]
		if u == nil {
			continue
		}
		add(urlSecrets(u.URL)...)
		for k, v := range u.Env {
			if !u.IsPublic(k) {
				add(credentialParts(v)...)
				mark(keyString([]string{"upstreams", name, "env", k}))
			}
			add(textURLSecrets(v)...)
			add(connStringSecrets(v)...)
		}
		for k, v := range u.Headers {
			if !u.IsPublic(k) {
				add(credentialParts(v)...)
				mark(keyString([]string{"upstreams", name, "headers", k}))
			}
			add(textURLSecrets(v)...)
			add(connStringSecrets(v)...)
		}
		argsKey := keyString([]string{"upstreams", name, "args"})
		for i, a := range u.Args {
			add(textURLSecrets(a)...)
			add(connStringSecrets(a)...)
			if v, ok := argSecret(a); ok {
				add(credentialParts(v)...)
				mark(argsKey + fmt.Sprintf("[%d]", i))
				continue
			}
			if i+1 >= len(u.Args) {
				continue
			}
			switch next := u.Args[i+1]; {
			case isSecretFlag(a):
				add(credentialParts(next)...)
				mark(argsKey + fmt.Sprintf("[%d]", i+1))
			case a == "-u" || a == "--user":
				if _, pass, ok := strings.Cut(next, ":"); ok && pass != "" {
					add(pass)
					mark(argsKey + fmt.Sprintf("[%d]", i+1))
				}
			}
		}
	}
}

// plainValue reports a value that cannot be told from ordinary text: a
// number or a boolean word.
func plainValue(v string) bool {
	if _, err := strconv.ParseFloat(v, 64); err == nil {
		return true
	}
	switch strings.ToLower(v) {
	case "true", "false", "yes", "no", "on", "off":
		return true
	}
	return false
}

// connStringSecrets returns the secrets of a connection string in s: the
// values of secret keys among "key=value" pairs separated by ';', '&' or
// blanks (ADO.NET, ODBC, JDBC and libpq forms: "Password=…", "pwd=…",
// "password=…"), and the password of a "user:password@" prefix without a
// scheme (a Go MySQL DSN "app:pw@tcp(db)/app"). Quotes around a value are
// dropped.
func connStringSecrets(s string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ';' || r == '&' || r == ' ' || r == '\t' }) {
		k, v, ok := strings.Cut(f, "=")
		if !ok || v == "" || !redact.IsSecretKey(strings.TrimSpace(k)) {
			continue
		}
		out = append(out, strings.Trim(v, `"'{}`))
	}
	if !strings.Contains(s, "://") {
		if ui, _, ok := strings.Cut(s, "@"); ok && !strings.ContainsAny(ui, " /;=") {
			if _, pass, ok := strings.Cut(ui, ":"); ok && pass != "" {
				out = append(out, pass)
			}
		}
	}
	return out
}

// credentialParts returns v, and for "Scheme credential" values (Bearer,
// Basic, token …) the credential alone.
func credentialParts(v string) []string {
	out := []string{v}
	if _, cred, ok := strings.Cut(strings.TrimSpace(v), " "); ok {
		out = append(out, strings.TrimSpace(cred))
	}
	return out
}

// argSecret reports the value of "--name=VALUE", "NAME=VALUE" and
// "Name: VALUE" arguments whose name is secret.
func argSecret(a string) (string, bool) {
	if k, v, ok := strings.Cut(a, "="); ok && !strings.ContainsAny(k, " :/") && redact.IsSecretKey(strings.TrimLeft(k, "-")) {
		return v, true
	}
	if k, v, ok := strings.Cut(a, ":"); ok && !strings.ContainsAny(k, " =/") && redact.IsSecretKey(k) {
		return strings.TrimSpace(v), true
	}
	return "", false
}

// isSecretFlag reports "--token" and the like: a flag whose name is secret
// and that carries no "=value" (its value is the next argument), and "-p"
// (the password flag of mysql, mysqladmin and their kin).
func isSecretFlag(a string) bool {
	if a == "-p" {
		return true
	}
	return strings.HasPrefix(a, "-") && !strings.Contains(a, "=") && redact.IsSecretKey(strings.TrimLeft(a, "-"))
}

// textURLSecrets applies urlSecrets to every whitespace-separated word of
// s that looks like a URL ("scheme://…").
func textURLSecrets(s string) []string {
	if !strings.Contains(s, "://") {
		return nil
	}
	var out []string
	for _, w := range strings.Fields(s) {
		if i := strings.Index(w, "://"); i > 0 {
			out = append(out, urlSecrets(w)...)
		}
	}
	return out
}

// urlSecrets returns the secrets a URL carries: its userinfo password (or
// a long user name standing alone, as in https://TOKEN@host) and the
// values of query parameters whose names are secret. A URL that does not
// parse yields its userinfo as written, if any.
func urlSecrets(raw string) []string {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		// Best effort: "scheme://user:pass@host…" that net/url refuses.
		if _, rest, ok := strings.Cut(raw, "://"); ok {
			if ui, _, ok := strings.Cut(rest, "@"); ok && !strings.Contains(ui, "/") {
				_, pass, _ := strings.Cut(ui, ":")
				return []string{ui, pass}
			}
		}
		return nil
	}
	var out []string
	if u.User != nil {
		if pass, ok := u.User.Password(); ok {
			out = append(out, pass)
		} else if len(u.User.Username()) >= 16 {
			out = append(out, u.User.Username())
		}
	}
	for k, vs := range u.Query() {
		if redact.IsSecretKey(k) {
			out = append(out, vs...)
		}
	}
	// Path segments shaped like a key (…/sse/sk-ak-3f9a…, …/<uuid>/gmail)
	// and any segment after one named like a secret (…/token/abc1).
	// Split as written: a base64 key's "/" is written %2F inside a
	// segment; each segment is judged decoded and hidden in both
	// forms (Forms adds the other escapings).
	segs := strings.Split(u.EscapedPath(), "/")
	for i, seg := range segs {
		dec, err := url.PathUnescape(seg)
		if err != nil {
			dec = seg
		}
		prevSecret := false
		if i > 0 {
			p, _ := url.PathUnescape(segs[i-1])
			prevSecret = redact.IsSecretKey(p)
		}
		if redact.LooksLikeToken(dec) || prevSecret && len(dec) >= MinLiteralSecret {
			out = append(out, dec)
			if seg != dec {
				out = append(out, seg)
			}
		}
	}
	// A fragment is never sent to the server: in an upstream's url it can
	// only be a credential a client keeps there (#access_token=…). All of
	// it, as written and decoded, and each secret-named value in it.
	if u.Fragment != "" {
		out = append(out, u.EscapedFragment(), u.Fragment)
		if q, err := url.ParseQuery(u.Fragment); err == nil {
			for k, vs := range q {
				if redact.IsSecretKey(k) {
					out = append(out, vs...)
				}
			}
		}
	}
	return out
}
