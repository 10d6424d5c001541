package config

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// literalSecrets is a config with secrets written literally, in every
// place a secret can be written: env values, an Authorization header, a
// password in a URL's userinfo, a key in its query, a flag on the command
// line. Two of them contain `"` and `\`.
const literalSecrets = `
[upstreams.fs]
command = "node"
args = ["server.js", "--api-key", "flag-secret-111", "--token=flag-secret-222", "--header", "Authorization: Bearer hdr-arg-333", "https://bob:arg-url-pass-444@db.example.com/x"]
env = { GITHUB_TOKEN = "env-tok-555", DB_PASSWORD = 'pw"with\quote-666', LOG_LEVEL = "debug", DATABASE_URL = "postgres://app:db-url-pass-777@db:5432/app" }
public = ["LOG_LEVEL"]
[upstreams.gh]
url = "https://user:p%22ss%5Cword-888@api.example.com/mcp?api_key=query-999&page=2"
headers = { Authorization = "Bearer hdr-tok-aaa", X-Api-Key = "xkey-bbb", X-Trace = "not-secret" }
public = ["X-Trace"]
`

var literalSecretValues = []string{
	"flag-secret-111", "flag-secret-222", "hdr-arg-333", "arg-url-pass-444", "env-tok-555",
	`pw"with\quote-666`, "db-url-pass-777", `p"ss\word-888`, "query-999", "hdr-tok-aaa", "xkey-bbb",
}

// TestLiteralSecretsHidden: every literal secret is hidden by `check`'s
// summary and by Redact, in every escaping (raw, JSON, %q, URL-encoded);
// values that are not secrets stay visible.
func TestLiteralSecretsHidden(t *testing.T) {
	cfg := mustParse(t, literalSecrets, nil)
	sum := cfg.Summary()
	for _, s := range literalSecretValues {
		q := strconv.Quote(s)
		forms := []string{s, jsonInnerForTest(s), q[1 : len(q)-1], url.QueryEscape(s), url.PathEscape(s)}
		for _, f := range forms {
			if strings.Contains(sum, f) {
				t.Errorf("check summary shows secret form %q:\n%s", f, sum)
			}
			text := fmt.Sprintf("before %s after", f)
			if got := cfg.Redact(text); got != "before *** after" {
				t.Errorf("Redact(%q) = %q", text, got)
			}
		}
	}
	for _, visible := range []string{"LOG_LEVEL=\"debug\"", "X-Trace: \"not-secret\"", "server.js", "api.example.com"} {
		if !strings.Contains(sum, visible) {
			t.Errorf("summary lost %q:\n%s", visible, sum)
		}
	}
	for _, masked := range []string{"env GITHUB_TOKEN=***", "header Authorization: ***", "header X-Api-Key: ***", "env DB_PASSWORD=***"} {
		if !strings.Contains(sum, masked) {
			t.Errorf("summary should show %q:\n%s", masked, sum)
		}
	}
}

// TestLiteralSecretEscapedInErrors: a JSON-escaped URL secret (with `"`
// and `\`) inside an error message, as a client would get it, is hidden.
func TestLiteralSecretEscapedInErrors(t *testing.T) {
	cfg := mustParse(t, literalSecrets, nil)
	b, _ := json.Marshal(map[string]string{"error": `GET https://user:p"ss\word-888@api.example.com failed; env pw"with\quote-666`})
	got := cfg.Redact(string(b))
	if strings.Contains(got, "888") || strings.Contains(got, "666") {
		t.Errorf("escaped secret leaked: %s", got)
	}
	twice, _ := json.Marshal(string(b)) // a JSON document inside a JSON string
	if got := cfg.Redact(string(twice)); strings.Contains(got, "888") || strings.Contains(got, "666") {
		t.Errorf("twice-escaped secret leaked: %s", got)
	}
}

// TestShortLiteralSecretMaskedByKeyOnly: a 3-byte secret value is masked
// where check prints its key but is not hidden in unrelated text.
func TestShortLiteralSecretMaskedByKeyOnly(t *testing.T) {
	cfg := mustParse(t, minimal+`env = { API_KEY = "abc" }`+"\n", nil)
	if sum := cfg.Summary(); !strings.Contains(sum, "env API_KEY=***") {
		t.Errorf("summary: %s", sum)
	}
	if got := cfg.Redact("abcdef"); got != "abcdef" {
		t.Errorf("Redact hid a short literal inside other text: %q", got)
	}
}

func jsonInnerForTest(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// TestURLPathAndFragmentSecrets: a url's path segments shaped like a key
// (or after a segment named like a secret) and its fragment are secrets;
// ordinary path words, dates and hosts are not.
func TestURLPathAndFragmentSecrets(t *testing.T) {
	got := strings.Join(urlSecrets("https://mcp.example.com/api/mcp/s/sk-ak-3f9aB7c2D4e6F8g0H1i3/sse?x=1#access_token=fragTok3nValue99"), " ")
	for _, want := range []string{"sk-ak-3f9aB7c2D4e6F8g0H1i3", "access_token=fragTok3nValue99", "fragTok3nValue99"} {
		if !strings.Contains(got, want) {
			t.Errorf("urlSecrets lacks %q: %s", want, got)
		}
	}
	if got := urlSecrets("https://mcp.pipedream.net/7f3c2a9e-1b4d-4e8f-9a6b-2c5d8e1f0a3b/gmail"); len(got) != 1 || got[0] != "7f3c2a9e-1b4d-4e8f-9a6b-2c5d8e1f0a3b" {
		t.Errorf("a UUID path key: %q", got)
	}
	if got := urlSecrets("https://example.com/v1/token/abcd/mcp"); len(got) != 1 || got[0] != "abcd" {
		t.Errorf("a segment after /token/: %q", got)
	}
	for _, plain := range []string{"https://api.githubcopilot.com/mcp/", "https://server.smithery.ai/@modelcontextprotocol/server-everything/mcp", "https://example.com/2025-11-25/mcp/sse",
		"https://cdn.example.com/npm/jquery-3.7.1.min.js/openapi.json", "https://example.com/Tips+And+Tricks+2024/v1.2.3/mcp"} {
		if got := urlSecrets(plain); len(got) > 0 {
			t.Errorf("urlSecrets(%q) = %q, want none", plain, got)
		}
	}
}

// TestJWTAndBase64PathKeysHidden: a JWT or a standard base64
// key in a URL path segment ('.', '+', '/' written %2F, '=') was not seen
// as a key, so Go's transport error, which quotes the url, showed it in the
// log and `check`. Now both are secrets of the config and the log line is
// redacted, in the escaped form the url was written in; ordinary segments
// stay.
func TestJWTAndBase64PathKeysHidden(t *testing.T) {
	const jwt = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	const b64 = "q1Zx+3Rt%2F9LmNpQ2w8YvKa=="
	u1 := "https://mcp.example.com/t/" + jwt + "/mcp"
	u2 := "https://hooks.example.com/v1.2.3/k/" + b64 + "/sse"
	cfg := mustParse(t, fmt.Sprintf("[upstreams.a]\nurl = %q\n[upstreams.b]\nurl = %q\n", u1, u2), nil)
	for _, u := range []string{u1, u2} {
		line := fmt.Sprintf(`upstream failed: Post %q: dial tcp: lookup mcp.example.com: no such host`, u)
		got := cfg.Redact(line)
		for _, leak := range []string{"SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c", "eyJhbGci", "q1Zx", "9LmNpQ2w8YvKa"} {
			if strings.Contains(got, leak) {
				t.Errorf("log line shows %q: %s", leak, got)
			}
		}
		for _, keep := range []string{"/mcp", "/sse", "/v1.2.3/k/", "/t/"} {
			if strings.Contains(u, keep) && !strings.Contains(got, keep) {
				t.Errorf("log line lost %q: %s", keep, got)
			}
		}
	}
	if got := cfg.Redact("decoded q1Zx+3Rt/9LmNpQ2w8YvKa== too"); got != "decoded *** too" {
		t.Errorf("decoded form: %q", got)
	}
}

// TestSecretsByRule: values whose names do not say "secret" are secrets
// by where they stand (every env and header value, the argument after
// -p, a password inside a connection string, the password of -u
// user:password), in check and in every printed text, unless public;
// numbers and boolean words are masked in check only.
func TestSecretsByRule(t *testing.T) {
	cfg := mustParse(t, `
[upstreams.db]
command = "mysql-mcp"
args = ["-h", "db.internal", "-u", "app", "-p", "Hunter2-args", "--conn", "Server=db;User Id=sa;Password=conn-pw-1;Encrypt=true", "-u", "bob:curl-pw-2", "--dsn", "app:dsn-pw-3@tcp(db:3306)/app"]
env = { DB_PASS = "db-pass-4", SMTP_PASS = "smtp-pass-5", MYSQL_PWD = "mysql-pwd-6", GH_PAT = "ghp_0123456789abcdefABCDEF0123456789abcd", NPM_CONFIG__AUTH = "bnBtOm5wbS1hdXRoLTc=", CONN = "Driver={ODBC};Uid=x;Pwd=odbc-pw-8;", PORT = "5432", DEBUG = "true", REGION = "eu-west-1" }
public = ["REGION"]
[upstreams.api]
url = "https://api.example.com/mcp"
headers = { X-Customer = "cust-secret-9", Accept-Language = "de-DE" }
public = ["accept-language"]
`, nil)
	sum := cfg.Summary()
	secrets := []string{"Hunter2-args", "conn-pw-1", "curl-pw-2", "dsn-pw-3", "db-pass-4", "smtp-pass-5", "mysql-pwd-6",
		"ghp_0123456789abcdefABCDEF0123456789abcd", "bnBtOm5wbS1hdXRoLTc=", "odbc-pw-8", "cust-secret-9"}
	for _, s := range secrets {
		if strings.Contains(sum, s) {
			t.Errorf("check shows %q:\n%s", s, sum)
		}
		if got := cfg.Redact("log: " + s + " end"); got != "log: *** end" {
			t.Errorf("Redact hides %q as %q", s, got)
		}
	}
	for _, want := range []string{`env REGION="eu-west-1"`, "env PORT=***", "env DEBUG=***", "env GH_PAT=***", `header Accept-Language: "de-DE"`, "header X-Customer: ***"} {
		if !strings.Contains(sum, want) {
			t.Errorf("check lacks %q:\n%s", want, sum)
		}
	}
	// Numbers and boolean words are not hidden in other text; public
	// values are not hidden at all.
	for _, plain := range []string{"port 5432 open", "isError:true", "region eu-west-1", "de-DE"} {
		if got := cfg.Redact(plain); got != plain {
			t.Errorf("Redact(%q) = %q", plain, got)
		}
	}
}

// TestPublicNamesKnownKeys: a public entry that names no env variable or
// header of its upstream is refused, with a suggestion.
func TestPublicNamesKnownKeys(t *testing.T) {
	_, err := Parse([]byte(`
[upstreams.a]
command = "x"
env = { LOG_LEVEL = "debug" }
public = ["LOG_LEVL"]
`), "config.toml", env(nil))
	if err == nil || !strings.Contains(err.Error(), `upstreams.a.public[0]: "LOG_LEVL" names no env variable or header`) || !strings.Contains(err.Error(), `did you mean "LOG_LEVEL"`) {
		t.Fatalf("err = %v", err)
	}
}

// TestUpstreamNamesDifferingInCase: two upstream names that differ only
// in case are refused (policy rules, group:NAME and exposed names compare
// them without case); prefixes that differ only in case are refused as
// equal; nested prefixes are warned about naming both upstreams.
func TestUpstreamNamesDifferingInCase(t *testing.T) {
	_, err := Parse([]byte(`
[upstreams.github]
command = "x"
[upstreams.GitHub]
command = "y"
prefix = "gh"
`), "config.toml", env(nil))
	if err == nil || !strings.Contains(err.Error(), `upstreams "GitHub" and "github" differ only in case`) {
		t.Fatalf("err = %v", err)
	}
	_, err = Parse([]byte(`
[upstreams.a]
command = "x"
prefix = "GH"
[upstreams.b]
command = "y"
prefix = "gh"
`), "config.toml", env(nil))
	if err == nil || !strings.Contains(err.Error(), `both use the prefix`) {
		t.Fatalf("err = %v", err)
	}
	cfg := mustParse(t, `
[upstreams.alpha]
command = "x"
[upstreams.alpha__x]
command = "y"
`, nil)
	if w := strings.Join(cfg.Warnings, "\n"); !strings.Contains(w, `the prefix of upstream "alpha__x" starts with upstream "alpha"'s prefix`) {
		t.Fatalf("warnings = %q", cfg.Warnings)
	}
}
