//go:build unix

package integration

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestHealthzStartedWaitsForEveryUpstream: a replica behind a load
// balancer restarts (rolling restart) and one of its upstreams takes
// longer to start than the others. Plain /healthz is 200 as soon as one
// upstream is ready, so the load balancer sent it clients whose calls of
// the slow upstream's tools failed ("unknown tool … still starting") while
// the other replica could have served them. /healthz?started is
// 503 until every upstream of the start has settled its first attempt,
// then as /healthz. The slow upstream here waits for a file the test
// creates, so nothing depends on timing.
func TestHealthzStartedWaitsForEveryUpstream(t *testing.T) {
	cs, gh := catalogServer(t), catalogFile(t, "github-like.jsonl")
	gate := filepath.Join(t.TempDir(), "go")
	cfg := writeConfig(t, fmt.Sprintf(`
[server]
transport = "http"
startup_wait = "0s"
stateless = true

[upstreams.fast]
command = %[1]s
args = ["-tools", %[2]s]

[upstreams.slow]
command = "/bin/sh"
args = ["-c", "while [ ! -e %[3]s ]; do sleep 0.05; done; exec %[4]s -tools %[5]s -server gitlab"]
startup_timeout = "10m"
`, tomlString(cs), tomlString(gh), gate, cs, gh))
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	// --startup-wait wins over the harness's MCP_TOOLSEARCH_STARTUP_WAIT
	// (which wins over the config's startup_wait): the proxy must serve
	// while slow is on its first attempt.
	startHTTPServer(t, proxyCmd(t, cfg, "--listen", addr, "--startup-wait", "0s"), nil, "http://"+addr+"/mcp")
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	waitStatus := func(path string, want int) string {
		deadline := time.Now().Add(readyTimeout)
		for {
			code, body := get(path)
			if code == want {
				return body
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: HTTP %d %s after %v, want %d", path, code, body, readyTimeout, want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	body := waitStatus("/healthz", http.StatusOK) // fast is ready
	if !strings.Contains(body, `"slow":"starting"`) {
		t.Fatalf("/healthz while slow starts: %s", body)
	}
	if code, body := get("/healthz?started"); code != http.StatusServiceUnavailable || !strings.Contains(body, `"started":false`) {
		t.Fatalf("/healthz?started while slow is on its first attempt: HTTP %d %s, want 503 with \"started\":false", code, body)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	body = waitStatus("/healthz?started", http.StatusOK)
	if !strings.Contains(body, `"slow":"ready"`) || strings.Contains(body, `"started"`) {
		t.Fatalf("/healthz?started once every upstream settled: %s", body)
	}
}
