package redact

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestIsSecretKey(t *testing.T) {
	for _, k := range []string{"token", "GITHUB_TOKEN", "api_key", "X-Api-Key", "apiKey", "password", "DB_PASSWD",
		"client_secret", "Authorization", "Proxy-Authorization", "Cookie", "private-key", "--token", "auth", "sig", "AWS_SECRET_ACCESS_KEY", "credentials"} {
		if !IsSecretKey(k) {
			t.Errorf("IsSecretKey(%q) = false", k)
		}
	}
	for _, k := range []string{"keyword", "author", "name", "path", "query", "keys_count", "LOG_LEVEL", "", "monkey_business"} {
		if IsSecretKey(k) {
			t.Errorf("IsSecretKey(%q) = true", k)
		}
	}
}

func TestReplacerEveryForm(t *testing.T) {
	const s = `a"b\c d&e<f`
	r := NewReplacer([]string{s, "", "other-secret"})
	for _, f := range Forms(s) {
		if got := r.Replace("x " + f + " y"); got != "x *** y" {
			t.Errorf("form %q: Replace = %q", f, got)
		}
	}
	if got := r.Replace("no secret here"); got != "no secret here" {
		t.Errorf("Replace changed clean text: %q", got)
	}
	var nilR *Replacer
	if nilR.Replace("a") != "a" || !nilR.Empty() || !NewReplacer(nil).Empty() {
		t.Error("nil/empty Replacer must hide nothing")
	}
	// Longest first: a secret containing another is hidden whole.
	r2 := NewReplacer([]string{"abc", "abcdef"})
	if got := r2.Replace("abcdef abc"); got != "*** ***" {
		t.Errorf("nested secrets: %q", got)
	}
}

func TestJSON(t *testing.T) {
	r := NewReplacer([]string{"s3cr3t-value"})
	in := json.RawMessage(`{"path":"/x","apiKey":"k-1","nested":{"password":{"deep":1},"list":["s3cr3t-value",2]},"note":"has s3cr3t-value in it","n":1.50}`)
	out := string(JSON(in, r.Replace))
	for _, leak := range []string{"k-1", `"deep"`, "s3cr3t-value"} {
		if strings.Contains(out, leak) {
			t.Errorf("JSON kept %q: %s", leak, out)
		}
	}
	for _, keep := range []string{`"path":"/x"`, `"apiKey":"***"`, `"password":"***"`, `"n":1.50`, `"note":"has *** in it"`} {
		if !strings.Contains(out, keep) {
			t.Errorf("JSON lost %q: %s", keep, out)
		}
	}
	if got := string(JSON(json.RawMessage(`not json s3cr3t-value`), r.Replace)); got != "not json ***" {
		t.Errorf("invalid JSON: %q", got)
	}
}

func TestLooksLikeToken(t *testing.T) {
	for s, want := range map[string]bool{
		"sk-ak-3f9aB7c2D4e6F8g0H1i3":           true,
		"7f3c2a9e-1b4d-4e8f-9a6b-2c5d8e1f0a3b": true,
		"a1b2c3d4e5f6a7b8":                     true,
		"modelcontextprotocol":                 false, // no digit
		"server-everything":                    false,
		"2025-11-25-2025-11-25":                false, // no letter
		"short1a":                              false,
		"@modelcontextprotocol1":               false, // '@'
		"file.name.v1234567.js":                false, // '.'
		// A JWT and standard base64 (decoded segment).
		"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c": true,
		"eyJhbGciOiJub25lIn0.eyJzdWIiOiJhIn0.": true, // unsecured JWT: empty signature
		"q1Zx+3Rt/9LmNpQ2w8YvKa==":             true,
		"Zm9vYmFyMTIzNDU2Nzg5MC+/":             true,
		"jquery-3.7.1.min.js":                  false,
		"v1.2.3":                               false,
		"openapi.json":                         false,
		"eyJustAWord.with.dots":                false, // "eyJ" but no JSON header
		"c++":                                  false,
		"tips+and+tricks2024":                  false, // no upper case, length not a multiple of 4
		"Tips+And+Tricks+2024":                 false, // words: too few case changes
		"index.html":                           false,
		"a=b=c=d=e=f=g=h=i=j=":                 false, // '=' inside
		"eyJ.a.b":                              false, // too short
		"eyJhbGciOiJIUzI1NiJ9.e30.sig.extra":   false, // four parts
	} {
		if got := LooksLikeToken(s); got != want {
			t.Errorf("LooksLikeToken(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestShortSecretOnlyAsWord: a placeholder secret such as
// "x" was replaced inside every word of every log and `check` line
// (`e***ec: "cmd.e***e"`, `np***.cmd`); below ShortSecret bytes a secret is
// now hidden only as a whole word, a longer one still everywhere.
func TestShortSecretOnlyAsWord(t *testing.T) {
	r := NewReplacer([]string{"x", "pw", "ab-12345678", "-q-", "é"})
	for in, want := range map[string]string{
		`GITHUB_PERSONAL_ACCESS_TOKEN=x mcp-toolsearch check`: `GITHUB_PERSONAL_ACCESS_TOKEN=*** mcp-toolsearch check`,
		`exec: "cmd.exe": executable file not found in $PATH`: `exec: "cmd.exe": executable file not found in $PATH`,
		`uvx mcp-server-fetch; npx.cmd -y pkg`:                `uvx mcp-server-fetch; npx.cmd -y pkg`,
		`{"token":"x"} x`:                                     `{"token":"***"} ***`,
		`http://alice:pw@host/api (password pw)`:              `http://alice:***@host/api (password ***)`,
		`pwd x1 x_y x.`:                                       `pwd x1 x_y ***.`,
		`café é`:                                              `café ***`,
		`a-q-b`:                                               `a***b`,
		`/mcp/ab-12345678/sse zzab-12345678zz`:                `/mcp/***/sse zz***zz`,
	} {
		if got := r.Replace(in); got != want {
			t.Errorf("Replace(%q) = %q, want %q", in, got, want)
		}
	}
	if NewReplacer([]string{"x"}).Empty() {
		t.Error("a Replacer with only short secrets reports Empty")
	}
}
