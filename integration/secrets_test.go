//go:build unix

package integration

// Secrets in every form, on every output: secrets written
// literally in the config (a URL password and an API key in the query, one
// with `"` and `\`; an Authorization header; a secret env value; the
// bearer token) and a secret argument a client sends never show on any
// output of the real binary: `check`, `list` (table and JSON), the serve
// log at debug level, the error a client gets when the upstream fails, the
// session log with log_arguments on, and /metrics.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestSecretsNeverPrinted(t *testing.T) {
	const (
		urlPass    = "url-pass-0002"
		querySec   = `q"uo\te-0003`
		headerSec  = "hdr-literal-0004"
		envSec     = "env-literal-0005"
		bearer     = "front-bearer-literal-0001"
		clientPK   = "client-pk-0006"
		notSecret  = "page=1"
		upstreamGH = "gh"
	)
	upAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	up := startHTTPServer(t, []string{catalogServer(t), "-tools", catalogFile(t, "github-like.jsonl"), "-http", upAddr}, nil, "http://"+upAddr+"/mcp")
	sessionLog := filepath.Join(t.TempDir(), "sessions.jsonl")
	cfg := writeConfig(t, fmt.Sprintf(`
[server]
bearer_token = %q

[tool_search]
enabled = false

[telemetry]
session_log = %s
log_arguments = true

[upstreams.gh]
url = 'http://user:%s@%s/mcp?api_key=%s&%s'
headers = { Authorization = "Bearer %s" }
call_timeout = "5s"

[upstreams.bnb]
command = %s
args = ["-tools", %s, "-server", "@bnb-chain/mcp"]
env = { GITHUB_TOKEN = %q }
`, bearer, tomlString(sessionLog), urlPass, upAddr, querySec, notSecret, headerSec,
		tomlString(catalogServer(t)), tomlString(catalogFile(t, "toolsdk-1000.jsonl")), envSec))
	secrets := []string{urlPass, querySec, headerSec, envSec, bearer, clientPK}
	// leaks reports every escaping of every secret found in text.
	leaks := func(text string) []string {
		var found []string
		for _, s := range secrets {
			q := strconv.Quote(s)
			j, _ := json.Marshal(s)
			jj, _ := json.Marshal(string(j))
			for _, f := range []string{s, q[1 : len(q)-1], string(j[1 : len(j)-1]), string(jj[1 : len(jj)-1]), url.QueryEscape(s), url.PathEscape(s)} {
				if strings.Contains(text, f) {
					found = append(found, f)
				}
			}
		}
		return found
	}
	run := func(args ...string) string { return runCLI(t, args...) }

	check := run("check", "--config", cfg)
	if l := leaks(check); len(l) > 0 || !strings.Contains(check, "header Authorization: ***") || !strings.Contains(check, "env GITHUB_TOKEN=***") || !strings.Contains(check, notSecret) {
		t.Errorf("check leaks %q or lost its content:\n%s", l, check)
	}

	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	proc := startHTTPServer(t, proxyCmd(t, cfg, "--transport", "http", "--listen", addr, "--log-level", "debug"), nil, "http://"+addr+"/mcp")
	cs := gosdkClientHTTP(t, "http://"+addr+"/mcp", map[string]string{"Authorization": "Bearer " + bearer})
	if res := callGo(t, cs, "gh__list_issues", map[string]any{"owner": "o", "repo": "r"}); res.IsError {
		t.Fatalf("gh__list_issues while the upstream is up: %v", res.Content)
	}
	if res := callGo(t, cs, "bnb__get_address_from_private_key", map[string]any{"privateKey": clientPK, "chain": "bsc"}); res.IsError {
		t.Fatalf("bnb call: %v", res.Content)
	}

	// The upstream goes away: the transport error names its URL (Go-quoted,
	// so `"` and `\` arrive escaped) and reaches the client.
	up.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), goClientTimeout)
	defer cancel()
	var clientErr string
	res, err := cs.CallTool(ctx, &gosdk.CallToolParams{Name: "gh__list_issues", Arguments: map[string]any{"owner": "o", "repo": "r"}})
	switch {
	case err != nil:
		clientErr = err.Error()
	case res.IsError:
		b, _ := json.Marshal(res)
		clientErr = string(b)
	default:
		t.Fatal("a call to a stopped upstream succeeded")
	}
	if l := leaks(clientErr); len(l) > 0 {
		t.Errorf("the error a client got leaks %q: %s", l, clientErr)
	}
	if !strings.Contains(clientErr, "gh") {
		t.Errorf("the client's error lost its content: %s", clientErr)
	}

	m := scrapeMetricsAuth(t, "http://"+addr+"/metrics", bearer)
	if l := leaks(m); len(l) > 0 {
		t.Errorf("/metrics leaks %q", l)
	}
	cs.Close()
	proc.Stop()
	if l := leaks(proc.Output()); len(l) > 0 {
		t.Errorf("serve log (debug) leaks %q:\n%s", l, tail(proc.Output(), 3000))
	}
	if !strings.Contains(proc.Output(), upstreamGH) {
		t.Errorf("serve log lost its content:\n%s", tail(proc.Output(), 3000))
	}
	logText, err := os.ReadFile(sessionLog)
	if err != nil {
		t.Fatal(err)
	}
	if l := leaks(string(logText)); len(l) > 0 {
		t.Errorf("session log leaks %q:\n%s", l, logText)
	}
	if !strings.Contains(string(logText), `"privateKey":"***"`) || !strings.Contains(string(logText), `"chain":"bsc"`) {
		t.Errorf("session log should keep arguments with secret keys masked:\n%s", logText)
	}

	// The upstream is down now: list shows it unavailable, with the reason.
	for _, args := range [][]string{{"list", "--config", cfg}, {"list", "--json", "--config", cfg}} {
		out := run(args...)
		if l := leaks(out); len(l) > 0 {
			t.Errorf("%v leaks %q:\n%s", args, l, out)
		}
		if !strings.Contains(out, "bnb__get_address_from_private_key") {
			t.Errorf("%v lost its content:\n%s", args, out)
		}
	}
}

// scrapeMetricsAuth GETs a /metrics URL with a bearer token and returns the body.
func scrapeMetricsAuth(t *testing.T, u, token string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", u, resp.Status)
	}
	return string(b)
}

// Secrets by rule, not by name: env values whose names do not say
// "secret" (DB_PASS, SMTP_PASS, MYSQL_PWD, a ghp_ token under GH_PAT,
// NPM_CONFIG__AUTH), a Password= inside a connection string and the value
// after -p in an upstream's arguments never show in `check`, the serve
// log (the upstream itself prints them on its stderr), the errors clients
// get, /metrics or the audit log. A value listed in public is shown.
func TestSecretsByRuleNeverPrinted(t *testing.T) {
	secrets := []string{"db-pass-0101", "smtp-pass-0102", "mysql-pwd-0103", "ghp_0123456789abcdefABCDEF0123456789abcd",
		"bnBtOm5wbS1hdXRoLTc=", "conn-pw-0104", "Hunter2-0105"}
	auditFile := filepath.Join(t.TempDir(), "audit.jsonl")
	script := `echo "upstream sees: $* DB_PASS=$DB_PASS SMTP_PASS=$SMTP_PASS MYSQL_PWD=$MYSQL_PWD GH_PAT=$GH_PAT NPM_CONFIG__AUTH=$NPM_CONFIG__AUTH REGION=$REGION" >&2; exec "$0" -tools "$TOOLS"`
	cfg := writeConfig(t, fmt.Sprintf(`
[tool_search]
enabled = false

[audit]
file = %s
arguments = true

[upstreams.db]
command = "sh"
args = ["-c", %s, %s, "-h", "db.internal", "-p", "Hunter2-0105", "--conn", "Server=db;User Id=sa;Password=conn-pw-0104;"]
env = { DB_PASS = "db-pass-0101", SMTP_PASS = "smtp-pass-0102", MYSQL_PWD = "mysql-pwd-0103", GH_PAT = "ghp_0123456789abcdefABCDEF0123456789abcd", NPM_CONFIG__AUTH = "bnBtOm5wbS1hdXRoLTc=", TOOLS = %s, REGION = "eu-west-1" }
public = ["TOOLS", "REGION"]
`, tomlString(auditFile), tomlString(script), tomlString(catalogServer(t)), tomlString(catalogFile(t, "github-like.jsonl"))))
	leaks := func(text string) []string {
		var found []string
		for _, s := range secrets {
			j, _ := json.Marshal(s)
			for _, f := range []string{s, string(j[1 : len(j)-1]), url.QueryEscape(s)} {
				if strings.Contains(text, f) {
					found = append(found, f)
				}
			}
		}
		return found
	}
	check := runCLI(t, "check", "--config", cfg)
	if l := leaks(check); len(l) > 0 || !strings.Contains(check, "env DB_PASS=***") || !strings.Contains(check, `env REGION="eu-west-1"`) {
		t.Errorf("check leaks %q or lost its content:\n%s", l, check)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	proc := startHTTPServer(t, proxyCmd(t, cfg, "--transport", "http", "--listen", addr, "--log-level", "debug"), nil, "http://"+addr+"/mcp")
	waitOutput(t, proc, "msg=ready")
	cs := gosdkClientHTTP(t, "http://"+addr+"/mcp", nil)
	if res := callGo(t, cs, "db__list_issues", map[string]any{"owner": "o", "repo": "r", "note": "db-pass-0101"}); res.IsError {
		t.Fatalf("db__list_issues: %v", res.Content)
	}
	m := scrapeMetricsAuth(t, "http://"+addr+"/metrics", "")
	if l := leaks(m); len(l) > 0 {
		t.Errorf("/metrics leaks %q", l)
	}
	cs.Close()
	proc.Stop()
	out := proc.Output()
	if !strings.Contains(out, "upstream sees:") || !strings.Contains(out, "REGION=eu-west-1") {
		t.Fatalf("the upstream's stderr line is not in the debug log:\n%s", tail(out, 3000))
	}
	if l := leaks(out); len(l) > 0 {
		t.Errorf("serve log leaks %q:\n%s", l, tail(out, 3000))
	}
	audit, err := os.ReadFile(auditFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(audit), "mcp:db:list_issues") {
		t.Fatalf("the call is not in the audit log:\n%s", audit)
	}
	if l := leaks(string(audit)); len(l) > 0 {
		t.Errorf("audit log leaks %q:\n%s", l, audit)
	}
}
