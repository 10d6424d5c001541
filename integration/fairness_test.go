//go:build unix

package integration

// A fair sandbox: while one client keeps 16 looping
// bodies (while(true){}) running in tool_search_code (6 slots, at most 3 a
// session: code_max_runs, code_max_runs_per_session), another client's
// `return 1` runs all succeed, and the looping client's surplus runs are
// answered "sandbox busy, retry", not "timed out". Two ways of being
// another client:
//   - two sessions (protocol 2025-11-25) of clients with the same name from
//     the same address: slots are shared per session;
//   - two 2026-07-28 clients (no session) from the same address on two
//     per-user endpoints (each with its own token): the owner of a run
//     without a session is the verified identity (proxy/sandboxowner.go:
//     behind a load balancer every user has its address).
// And the other way round: an anonymous 2026-07-28 client that sends its
// runs under many invented client names is still one owner (its address).
//
// Figures logged; run with -v:
//
//	go test ./integration -run TestSandboxFairBetweenSessions -v

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// gosdkClientNamed connects a go-sdk client named name over Streamable HTTP
// at protocol version ("" = the client's newest).
func gosdkClientNamed(t testing.TB, url, name, version string) *gosdk.ClientSession {
	return gosdkClientNamedToken(t, url, name, version, "")
}

// gosdkClientNamedToken is gosdkClientNamed sending token ("" none) as
// its bearer token.
func gosdkClientNamedToken(t testing.TB, url, name, version, token string) *gosdk.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), goClientTimeout)
	defer cancel()
	c := gosdk.NewClient(&gosdk.Implementation{Name: name, Version: "1"}, nil)
	tr := &gosdk.StreamableClientTransport{Endpoint: url}
	if token != "" {
		tr.HTTPClient = &http.Client{Transport: headerRoundTripper{map[string]string{"Authorization": "Bearer " + token}}}
	}
	cs, err := c.Connect(ctx, tr, &gosdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("go-sdk connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// startCodeProxy starts the proxy over HTTP in code mode in front of the
// github-like catalog, with toolSearch (lines of [tool_search] keys) added,
// and returns its URL and process.
func startCodeProxy(t *testing.T, toolSearch string) (string, *Proc) {
	return startCodeProxyWith(t, toolSearch, "")
}

// startCodeProxyWith is startCodeProxy with extra (more config sections)
// appended to the config.
func startCodeProxyWith(t *testing.T, toolSearch, extra string) (string, *Proc) {
	t.Helper()
	cfg := writeConfig(t, fmt.Sprintf(`
[tool_search]
enabled = true
mode = "code"
%s

[upstreams.gh]
command = %s
args = ["-tools", %s]
%s
`, toolSearch, tomlString(catalogServer(t)), tomlString(catalogFile(t, "github-like.jsonl")), extra))
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	url := "http://" + addr + "/mcp"
	return url, startHTTPServer(t, proxyCmd(t, cfg, "--transport", "http", "--listen", addr), nil, url)
}

func TestSandboxFairBetweenSessions(t *testing.T) {
	url, _ := startCodeProxyWith(t, "code_timeout_ms = 2000\ncode_max_runs = 6\ncode_max_runs_per_session = 3", `
[endpoints.alice]
path = "/u/alice/mcp"
token = "alice-token"

[endpoints.bob]
path = "/u/bob/mcp"
token = "bob-token"
`)
	base := strings.TrimSuffix(url, "/mcp")
	for _, tc := range []struct{ name, version, hog, victim, hogPath, victimPath, hogToken, victimToken string }{
		{"two sessions, same client name", "2025-11-25", "gosdk-test-client", "gosdk-test-client", "/mcp", "/mcp", "", ""},
		{"two 2026-07-28 users, same address and client name", "", "claude-code", "claude-code", "/u/alice/mcp", "/u/bob/mcp", "alice-token", "bob-token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hog := gosdkClientNamedToken(t, base+tc.hogPath, tc.hog, tc.version, tc.hogToken)
			victim := gosdkClientNamedToken(t, base+tc.victimPath, tc.victim, tc.version, tc.victimToken)
			fairRuns(t, hog, victim)
		})
	}
}

// TestSandboxOwnerNotByClientName: an anonymous 2026-07-28
// caller that gives each request another client name does not get more
// than its address's allowance: with 6 slots, at most 3 an owner, 6
// looping runs under 6 names get 3 slots and 3 "sandbox busy" answers.
func TestSandboxOwnerNotByClientName(t *testing.T) {
	url, _ := startCodeProxy(t, "code_timeout_ms = 4000\ncode_max_runs = 6\ncode_max_runs_per_session = 3")
	var wg sync.WaitGroup
	var busy, timedOut atomic.Int32
	for i := 0; i < 6; i++ {
		cs := gosdkClientNamed(t, url, fmt.Sprintf("invented-%d", i), "")
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch loopRun(t, cs) {
			case "busy":
				busy.Add(1)
			case "timed out":
				timedOut.Add(1)
			}
		}()
	}
	wg.Wait()
	if busy.Load() != 3 || timedOut.Load() != 3 {
		t.Errorf("6 looping runs under 6 client names from one address: %d ran (timed out), %d sandbox busy; want 3 and 3 (one owner, 3 slots)", timedOut.Load(), busy.Load())
	}
}

// loopRun runs a body that loops forever with tool_search_code on cs and
// says how it ended: "busy" (sandbox busy: it never ran) or "timed out"
// (it ran until code_timeout_ms); anything else is a test error and "".
func loopRun(t *testing.T, cs *gosdk.ClientSession) string {
	ctx, cancel := context.WithTimeout(context.Background(), goClientTimeout)
	defer cancel()
	res, err := cs.CallTool(ctx, &gosdk.CallToolParams{Name: "tool_search_code", Arguments: map[string]any{"code": "while(true){}"}})
	if err != nil {
		t.Errorf("tools/call: %v", err)
		return ""
	}
	switch text := contentText(res); {
	case strings.Contains(text, "sandbox busy, retry"):
		return "busy"
	case strings.Contains(text, "timed out"):
		return "timed out"
	default:
		t.Errorf("unexpected answer: %s", text)
		return ""
	}
}

func fairRuns(t *testing.T, hog, victim *gosdk.ClientSession) {
	run := func(cs *gosdk.ClientSession, body string) (ok bool, text string) {
		ctx, cancel := context.WithTimeout(context.Background(), goClientTimeout)
		defer cancel()
		res, err := cs.CallTool(ctx, &gosdk.CallToolParams{Name: "tool_search_code", Arguments: map[string]any{"code": body}})
		if err != nil {
			return false, err.Error()
		}
		return !res.IsError, contentText(res)
	}
	if ok, text := run(victim, "return 1"); !ok {
		t.Fatalf("warm-up: %s", text)
	}

	stop := make(chan struct{})
	var hogRuns, hogBusy, hogTimedOut atomic.Int32
	var busyText atomic.Value
	busyText.Store("")
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				_, text := run(hog, "while(true){}")
				hogRuns.Add(1)
				switch {
				case strings.Contains(text, "sandbox busy, retry"):
					hogBusy.Add(1)
					busyText.Store(text)
				case strings.Contains(text, "timed out"):
					hogTimedOut.Add(1)
				}
			}
		}()
	}
	time.Sleep(500 * time.Millisecond) // the looping runs take their slots
	failed := 0
	var kinds []string
	const n = 10
	for i := 0; i < n; i++ {
		if ok, text := run(victim, "return 1"); !ok || strings.TrimSpace(text) != "1" {
			failed++
			kinds = append(kinds, text)
		}
		time.Sleep(200 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	t.Logf("while one client ran %d looping bodies (16 at a time; %d timed out after 2 s, %d answered %q), the other client's `return 1` failed %d times out of %d %v",
		hogRuns.Load(), hogTimedOut.Load(), hogBusy.Load(), busyText.Load(), failed, n, kinds)
	if failed > 0 {
		t.Errorf("the other client's runs failed %d of %d times", failed, n)
	}
	if bt := busyText.Load().(string); bt != "" && !(strings.Contains(bt, "already runs 3 bodies") && strings.Contains(bt, "the sandbox has 6 slots")) {
		t.Errorf("the busy answer does not follow code_max_runs = 6, code_max_runs_per_session = 3: %s", bt)
	}
	if hogBusy.Load() == 0 {
		t.Errorf("no surplus run of the looping client was answered \"sandbox busy, retry\"")
	}
}
