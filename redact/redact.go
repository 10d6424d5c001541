// Package redact finds and hides secrets: by the name of the key that
// holds a value (IsSecretKey), by the value itself in every escaping it can
// take on the way to an output (Forms, Replacer), and inside JSON documents
// (JSON). It depends on nothing of ours; config builds the deployment's
// Replacer from its secrets, proxy and telemetry apply it to every output
// (logs, `check`, `list`, errors to clients, the session log, metrics
// labels).
//
// Trust (docs/security.md): the operator's config is trusted and holds the
// secrets; everything that prints — and clients, upstream servers and
// model-written code that read what is printed — must never see them.
package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Mask is what a hidden value is replaced with.
const Mask = "***"

// secretWords are the key fragments that mark a secret anywhere in a key
// (after lower-casing and dropping '_', '-' and '.').
var secretWords = []string{"token", "password", "passwd", "secret", "authorization", "credential", "cookie", "bearer", "privatekey", "apikey"}

// secretExact are keys that are secrets only as a whole word ("auth", not
// "author").
var secretExact = map[string]bool{"auth": true, "pass": true, "pwd": true, "sig": true, "signature": true, "jwt": true}

// IsSecretKey reports whether a key (an env variable, a header, a URL query
// parameter, a command-line flag, a JSON object key) names a secret: after
// lower-casing and dropping '_', '-' and '.' (and leading dashes of a
// flag), it contains token, password, passwd, secret, authorization,
// credential, cookie, bearer or apikey, ends in "key" (key, api_key,
// private-key, X-Api-Key; not "keyword"), or is exactly auth, pass, pwd,
// sig, signature or jwt.
func IsSecretKey(k string) bool {
	n := strings.NewReplacer("_", "", "-", "", ".", "").Replace(strings.ToLower(k))
	if n == "" {
		return false
	}
	for _, w := range secretWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return secretExact[n] || strings.HasSuffix(n, "key")
}

// LooksLikeToken reports whether s, a part of a URL path (decoded), has
// the shape of a generated key or id rather than a word. Three shapes:
//   - a key: at least 16 bytes of letters, digits, '-', '_' and '~' only,
//     with at least one letter and one digit (sk-ak-3f9aB…, a UUID, a hex
//     or base64url token; not "modelcontextprotocol" or "2025-11-25");
//   - a JWT (RFC 7519 §3, compact JWS RFC 7515 §7.1): "eyJ" (the base64url
//     of `{"`) then three base64url parts joined by two dots, the first two
//     not empty, 16 bytes or more in all, the first decoding to a JSON
//     object (the JOSE header);
//   - standard base64 (RFC 4648 §4): at least 20 bytes of letters, digits,
//     '+' and '/' with at most two '=' at the end, a length that is a
//     multiple of 4, an upper-case letter, a lower-case letter and a digit,
//     a '+', '/' or '=' (without one the first shape applies), and the
//     case changing between adjacent letters at least once per 5 bytes, as
//     in random bytes (not words joined by '+').
//
// Not: file names and versions ("jquery-3.7.1.min.js", "v1.2.3",
// "openapi.json"), words joined with '+' ("c++", "tips+and+tricks2024").
// URLs of hosted MCP servers often carry their key as a path segment
// (…/mcp/sk-…/sse, …/<uuid>/gmail, …/t/<jwt>/mcp). Guarded against: the
// key showing in logs and `check` (the config's secrets rule uses it;
// docs/config.md).
func LooksLikeToken(s string) bool {
	return keyShaped(s) || jwtShaped(s) || base64Shaped(s)
}

func keyShaped(s string) bool {
	if len(s) < 16 {
		return false
	}
	letter, digit := false, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digit = true
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			letter = true
		case c == '-' || c == '_' || c == '~':
		default:
			return false
		}
	}
	return letter && digit
}

func isB64URL(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '_'
}

func jwtShaped(s string) bool {
	if len(s) < 16 || !strings.HasPrefix(s, "eyJ") {
		return false
	}
	parts := strings.Split(s, ".")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" {
		return false
	}
	for _, p := range parts {
		for i := 0; i < len(p); i++ {
			if !isB64URL(p[i]) {
				return false
			}
		}
	}
	h, err := base64.RawURLEncoding.DecodeString(parts[0])
	return err == nil && len(h) > 2 && h[0] == '{' && json.Valid(h) // the JOSE header: a JSON object
}

func base64Shaped(s string) bool {
	if len(s) < 20 || len(s)%4 != 0 {
		return false
	}
	body := strings.TrimRight(s, "=")
	if len(s)-len(body) > 2 {
		return false
	}
	upper, lower, digit, sym := false, false, false, len(body) != len(s)
	flips := 0 // adjacent letters of different case
	for i := 0; i < len(body); i++ {
		switch c := body[i]; {
		case c >= '0' && c <= '9':
			digit = true
		case c >= 'a' && c <= 'z':
			lower = true
			if i > 0 && body[i-1] >= 'A' && body[i-1] <= 'Z' {
				flips++
			}
		case c >= 'A' && c <= 'Z':
			upper = true
			if i > 0 && body[i-1] >= 'a' && body[i-1] <= 'z' {
				flips++
			}
		case c == '+' || c == '/':
			sym = true
		default:
			return false
		}
	}
	// Random bytes in base64 change case between about a third of
	// adjacent characters; words ("Tips+And+Tricks+2024") far fewer.
	return upper && lower && digit && sym && flips*5 >= len(s)
}

// Forms returns the ways a secret s can appear in printed text, s itself
// first: JSON-escaped (with and without HTML escaping, and escaped twice,
// as in a JSON string that carries a JSON document), Go-quoted (%q, also
// ASCII-only), and URL-encoded (query, path and userinfo escaping). Forms
// equal to s or to each other appear once.
func Forms(s string) []string {
	out := []string{s}
	seen := map[string]bool{s: true}
	add := func(f string) {
		if f != "" && !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	j := jsonInner(s, true)
	add(j)
	add(jsonInner(s, false))
	add(jsonInner(j, true))
	add(jsonInner(jsonInner(s, false), false))
	add(unquote(strconv.Quote(s)))
	add(unquote(strconv.QuoteToASCII(s)))
	add(url.QueryEscape(s))
	add(url.PathEscape(s))
	if u := url.UserPassword("", s).String(); strings.HasPrefix(u, ":") {
		add(u[1:])
	}
	return out
}

func jsonInner(s string, escapeHTML bool) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(escapeHTML)
	if enc.Encode(s) != nil {
		return ""
	}
	return unquote(strings.TrimSuffix(b.String(), "\n"))
}

func unquote(q string) string {
	if len(q) >= 2 {
		return q[1 : len(q)-1]
	}
	return ""
}

// Replacer hides a fixed set of secrets in text, in every form of Forms.
// The zero value and a nil *Replacer hide nothing. Safe for concurrent use.
//
// The rule: a form of ShortSecret bytes or more is hidden
// wherever it appears, also inside a longer word (a key in a URL path, a
// token glued to its scheme). A shorter form is hidden only as a whole
// word: where the text before and after it is not a letter, a digit or "_" (a
// side of the form that is itself none of those needs no
// boundary). So a placeholder such as `x` or `test` is still hidden in
// `TOKEN=x` or `"test"`, but `exec` and `npx.cmd` stay readable instead of
// becoming `e***ec`. What it gives up: a short secret written inside a
// longer word of printed text stays visible there — configure secrets of
// ShortSecret bytes or more (every real token is). Guarded against, as for
// every form: whoever reads printed text (clients, upstream servers and
// model-written code through errors and answers; log readers).
type Replacer struct {
	r       *strings.Replacer
	short   []string // forms below ShortSecret bytes, longest first
	secrets []string
}

// ShortSecret is the length in bytes from which a secret's form is hidden
// also inside longer words (Replacer).
const ShortSecret = 8

// NewReplacer returns a Replacer for secrets; empty values are ignored.
// Longer forms are tried first, so a secret that contains another one is
// hidden whole.
func NewReplacer(secrets []string) *Replacer {
	seen := map[string]bool{}
	var forms, kept []string
	for _, s := range secrets {
		if s == "" || seen[s] {
			continue
		}
		kept = append(kept, s)
		for _, f := range Forms(s) {
			if !seen[f] {
				seen[f] = true
				forms = append(forms, f)
			}
		}
	}
	if len(forms) == 0 {
		return &Replacer{}
	}
	sort.SliceStable(forms, func(i, j int) bool {
		if len(forms[i]) != len(forms[j]) {
			return len(forms[i]) > len(forms[j])
		}
		return forms[i] < forms[j]
	})
	rep := &Replacer{secrets: kept}
	pairs := make([]string, 0, 2*len(forms))
	for _, f := range forms {
		if len(f) < ShortSecret {
			rep.short = append(rep.short, f)
		} else {
			pairs = append(pairs, f, Mask)
		}
	}
	// strings.Replacer tries the pairs in argument order at each position,
	// so longest-first makes a secret that contains another vanish whole.
	if len(pairs) > 0 {
		rep.r = strings.NewReplacer(pairs...)
	}
	return rep
}

// Replace returns s with every form of every secret replaced by Mask (the
// rule is Replacer's).
func (r *Replacer) Replace(s string) string {
	if r == nil || s == "" {
		return s
	}
	if r.r != nil {
		s = r.r.Replace(s)
	}
	for _, f := range r.short {
		s = replaceWord(s, f)
	}
	return s
}

// replaceWord replaces each occurrence of f in s that is a whole word (no
// letter, digit or "_" right before or after it, on a side where f itself
// begins or ends with one) by Mask.
func replaceWord(s, f string) string {
	i := strings.Index(s, f)
	if i < 0 {
		return s
	}
	first, _ := utf8.DecodeRuneInString(f)
	last, _ := utf8.DecodeLastRuneInString(f)
	var b strings.Builder
	from := 0
	for i >= 0 {
		at := from + i
		end := at + len(f)
		before, _ := utf8.DecodeLastRuneInString(s[:at])
		after, _ := utf8.DecodeRuneInString(s[end:])
		if (at == 0 || !isWord(first) || !isWord(before)) && (end == len(s) || !isWord(last) || !isWord(after)) {
			b.WriteString(s[from:at])
			b.WriteString(Mask)
			from = end
		} else {
			_, n := utf8.DecodeRuneInString(s[at:])
			b.WriteString(s[from : at+n])
			from = at + n
		}
		i = strings.Index(s[from:], f)
	}
	if from == 0 {
		return s
	}
	b.WriteString(s[from:])
	return b.String()
}

func isWord(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// Empty reports whether the Replacer hides nothing.
func (r *Replacer) Empty() bool { return r == nil || (r.r == nil && len(r.short) == 0) }

// JSON returns doc with the value of every object key that IsSecretKey
// replaced by "***", at any depth, and every other string value (and
// object key) passed through replace (nil: unchanged). A document that is
// not valid JSON is returned as replace(doc) (as text). The output is
// compact JSON; numbers keep their text.
func JSON(doc json.RawMessage, replace func(string) string) json.RawMessage {
	if replace == nil {
		replace = func(s string) string { return s }
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return json.RawMessage(replace(string(doc)))
	}
	out, err := json.Marshal(Value(v, replace))
	if err != nil {
		return json.RawMessage(replace(string(doc)))
	}
	return out
}

// Value is JSON over a decoded value (maps, slices, strings, numbers…):
// it returns a copy in which the values of secret keys are "***" and other
// strings have passed through replace (nil: unchanged).
func Value(v any, replace func(string) string) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			if IsSecretKey(k) {
				out[rep(replace, k)] = Mask
			} else {
				out[rep(replace, k)] = Value(val, replace)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = Value(val, replace)
		}
		return out
	case string:
		return rep(replace, x)
	}
	return v
}

func rep(replace func(string) string, s string) string {
	if replace == nil {
		return s
	}
	return replace(s)
}
