//go:build unix

package integration

//lint:file-ignore SA1019 sampling, roots and logging are deprecated from protocol 2026-07-28 on; clients and servers of earlier protocols still use them

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// An upstream that writes notifications/message and
// notifications/tools/list_changed in a tight loop (testdata/
// flood_upstream.py) while a client listens at logging level debug made the
// proxy's memory grow without bound (909 MB RSS in 60 s) — the go-sdk
// queued the notifications faster than the proxy's handlers took them.
// Now, with that flood running for flood duration (a load, not a timed
// assertion): the proxy's heap stays under a generous bound, calls to
// another upstream (the catalog server) keep working, the flood upstream's
// tools are still listed, the client gets log messages (rate-limited, not
// all), and the log has no INFO line per re-list.
func TestNotificationFloodBounded(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		missingDep(t, "python3 (the flooding upstream)")
	}
	const (
		heapBound = 150 << 20 // bytes; before the fix the heap passed 370 MB in 30 s
		flood     = 12 * time.Second
	)
	script := filepath.Join(integrationDir(t), "testdata", "flood_upstream.py")
	cfg := writeConfig(t, fmt.Sprintf(`
[tool_search]
enabled = false

[upstreams.github]
command = %s
args = ["-tools", %s, "-server", "github", "-demo"]

[upstreams.flood]
command = "python3"
args = [%s]
`, tomlString(catalogServer(t)), tomlString(catalogFile(t, "github-like.jsonl")), tomlString(script)))
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	p := startHTTPServer(t, []string{buildProxy(t), "serve", "--config", cfg, "--log-level", "info", "--transport", "http", "--listen", addr}, nil, "http://"+addr+"/mcp")
	waitOutput(t, p, "msg=ready")

	var logs atomic.Int64
	ctx, cancel := context.WithTimeout(context.Background(), goClientTimeout)
	defer cancel()
	c := gosdk.NewClient(&gosdk.Implementation{Name: "flood-listener", Version: "1"}, &gosdk.ClientOptions{
		LoggingMessageHandler: func(context.Context, *gosdk.LoggingMessageRequest) { logs.Add(1) },
	})
	// 2025-11-25: a session with logging/setLevel (2026-07-28 has none).
	cs, err := c.Connect(ctx, &gosdk.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp"}, &gosdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	if err := cs.SetLoggingLevel(ctx, &gosdk.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatalf("logging/setLevel debug: %v", err)
	}

	heap := func() float64 {
		t.Helper()
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			t.Fatalf("GET /metrics: %v", err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		v := metricValue(string(b), "go_memstats_heap_alloc_bytes")
		if v < 0 {
			t.Fatalf("no go_memstats_heap_alloc_bytes in /metrics")
		}
		return v
	}
	maxHeap, calls := 0.0, 0
	for end := time.Now().Add(flood); time.Now().Before(end); {
		cctx, ccancel := context.WithTimeout(context.Background(), goClientTimeout)
		res, err := cs.CallTool(cctx, &gosdk.CallToolParams{Name: "github__list_issues", Arguments: map[string]any{"owner": "o", "repo": "r"}})
		ccancel()
		if err != nil || res.IsError {
			t.Fatalf("call of the other upstream's tool during the flood: err=%v result=%+v\n%s", err, res, tail(p.Output(), 3000))
		}
		calls++
		maxHeap = max(maxHeap, heap())
		time.Sleep(500 * time.Millisecond)
	}
	if maxHeap >= heapBound {
		t.Errorf("heap_alloc reached %.0f MB during the flood, want < %d MB", maxHeap/(1<<20), heapBound>>20)
	}

	lctx, lcancel := context.WithTimeout(context.Background(), goClientTimeout)
	defer lcancel()
	tl, err := cs.ListTools(lctx, nil)
	if err != nil {
		t.Fatalf("tools/list during the flood: %v", err)
	}
	var names []string
	for _, tool := range tl.Tools {
		names = append(names, tool.Name)
	}
	for _, want := range []string{"flood__ok", "flood__do_it", "github__list_issues"} {
		if !strings.Contains(strings.Join(names, " "), want) {
			t.Errorf("tools/list during the flood lacks %s: %v", want, names)
		}
	}
	if logs.Load() == 0 {
		t.Errorf("the client at logging level debug got no notifications/message from the flood upstream")
	}

	out := p.Output()
	if n := strings.Count(out, `msg="tools re-listed" upstream=flood`); n > 2 {
		t.Errorf("%d INFO lines \"tools re-listed\" for the flood upstream, want one (plus a per-minute summary):\n%s", n, tail(out, 3000))
	}
	if n := strings.Count(out, `msg="upstream tools listed" upstream=flood`); n > 3 {
		t.Errorf("%d INFO lines \"upstream tools listed\" for the flood upstream, want at most the first listing and one re-list:\n%s", n, tail(out, 3000))
	}
	if !strings.Contains(out, "dropping the excess") {
		t.Errorf("no warning that the flood upstream's notifications are dropped:\n%s", tail(out, 3000))
	}
	t.Logf("%d calls of the other upstream, max heap_alloc %.1f MB, %d log messages relayed", calls, maxHeap/(1<<20), logs.Load())
}
