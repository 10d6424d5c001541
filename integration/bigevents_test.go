//go:build unix

package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// One huge server-sent event from an HTTP upstream (the attack: an
// upstream server, which is not trusted, answering a tools/call with an
// SSE event of hundreds of megabytes, or writing one on its standing GET
// stream with no client traffic at all). server.max_message_bytes (32 MiB
// by default) must hold while the event is read: the proxy's memory stays
// within a small multiple of the cap, the call fails with an error naming
// the cap, and the proxy keeps serving.
//
// The upstream is hand-written here (bigEventUpstream): a real HTTP server
// on loopback speaking just enough Streamable HTTP, as an attacker would.
//
// Sizes: BIG_EVENT_MB (comma-separated megabytes, default "50"); the
// figures in docs/performance.md are
//
//	BIG_EVENT_MB=50,200,400 go test ./integration -run TestBigSSEEventBounded -v
//
// and, for the binary before the cap held while reading,
// MCP_TOOLSEARCH_BIN=<old build> with the same command (the bounds are
// then reported, not asserted: BIG_EVENT_NO_BOUND=1).
func TestBigSSEEventBounded(t *testing.T) {
	sizes := []int{50}
	if v := os.Getenv("BIG_EVENT_MB"); v != "" {
		sizes = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n <= 0 {
				t.Fatalf("BIG_EVENT_MB: %q is not a positive number of megabytes", f)
			}
			sizes = append(sizes, n)
		}
	}
	assert := os.Getenv("BIG_EVENT_NO_BOUND") == ""
	type row struct {
		path               string
		mb                 int
		base, peak, retain int // KiB
		outcome            string
	}
	var rows []row
	for _, mb := range sizes {
		for _, path := range []string{"call", "get"} {
			t.Run(fmt.Sprintf("%s-%dMB", path, mb), func(t *testing.T) {
				up := newBigEventUpstream(t, int64(mb)<<20, path == "get")
				cfg := writeConfig(t, fmt.Sprintf(`
[tool_search]
enabled = false

[upstreams.big]
url = %s
`, tomlString(up.url)))
				addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
				p := startHTTPServer(t, []string{buildProxy(t), "serve", "--config", cfg, "--log-level", "info", "--transport", "http", "--listen", addr}, nil, "http://"+addr+"/mcp")
				waitOutput(t, p, "msg=ready")
				cs := gosdkClientHTTP(t, "http://"+addr+"/mcp", nil)
				time.Sleep(500 * time.Millisecond)
				r := row{path: path, mb: mb, base: rssKB(p.PID())}
				if path == "call" {
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
					res, err := cs.CallTool(ctx, &gosdk.CallToolParams{Name: "big__blob", Arguments: map[string]any{}})
					cancel()
					switch {
					case err != nil:
						r.outcome = "error: " + err.Error()
					case res.IsError && len(res.Content) > 0:
						r.outcome = "isError: " + res.Content[0].(*gosdk.TextContent).Text
					default:
						r.outcome = "result (no error)"
					}
				} else {
					up.release()
					select {
					case <-up.sent:
					case <-time.After(5 * time.Minute):
						t.Fatal("the upstream never finished writing the event on its GET stream")
					}
					// The last bytes sit in socket buffers until the proxy
					// has read them: its log says when it skipped the event.
					deadline := time.Now().Add(2 * time.Minute)
					logged := func() bool {
						for _, s := range []string{"skipped a message", "too large", "cut off"} {
							if strings.Contains(p.Output(), s) {
								return true
							}
						}
						return false
					}
					for !logged() && time.Now().Before(deadline) {
						time.Sleep(50 * time.Millisecond)
					}
					r.outcome = "GET stream: " + lastLineWith(p.Output(), "skipped a message", "too large", "cut off")
				}
				r.peak = peakRSSKB(p.PID())
				time.Sleep(3 * time.Second)
				r.retain = rssKB(p.PID())
				rows = append(rows, r)
				t.Logf("%s %d MB event: RSS before %d MB, peak %d MB, 3 s after %d MB; %s", path, mb, r.base>>10, r.peak>>10, r.retain>>10, r.outcome)

				// The proxy still serves: another call of the same session.
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				small, err := cs.CallTool(ctx, &gosdk.CallToolParams{Name: "big__small", Arguments: map[string]any{}})
				if err != nil || small.IsError {
					t.Fatalf("a small call after the big event failed: %v %+v\n%s", err, small, tail(p.Output(), 3000))
				}
				if !assert {
					return
				}
				if path == "call" && !strings.Contains(r.outcome, "max_message_bytes") {
					t.Errorf("the big call's outcome does not name the cap: %s", r.outcome)
				}
				if path == "get" && !strings.Contains(r.outcome, "max_message_bytes") {
					t.Errorf("the proxy's log does not say it skipped the big event naming the cap: %s", r.outcome)
				}
				// 32 MiB cap: the data is not kept past it; the bound (8
				// times the cap) leaves room for the reading buffers and
				// the collector's slack (GOGC=400). Before the cap held
				// while reading: +335 MB for 50 MB, +2 GB for 400 MB.
				if r.peak > 0 && r.peak-r.base > 256<<10 {
					t.Errorf("peak RSS grew by %d MB for a %d MB event (cap 32 MiB)", (r.peak-r.base)>>10, mb)
				}
			})
		}
	}
	t.Log("path | event | RSS before | peak | 3 s after | outcome")
	for _, r := range rows {
		t.Logf("%s | %d MB | %d MB | %d MB | %d MB | %s", r.path, r.mb, r.base>>10, r.peak>>10, r.retain>>10, r.outcome)
	}
}

func lastLineWith(out string, subs ...string) string {
	ls := strings.Split(out, "\n")
	for i := len(ls) - 1; i >= 0; i-- {
		for _, s := range subs {
			if strings.Contains(ls[i], s) {
				return ls[i]
			}
		}
	}
	return "(nothing in the log)"
}

// bigEventUpstream is a hostile Streamable HTTP upstream: tools/call of
// "blob" answers with one SSE event of size bytes (a text result); with
// onGET, the standing GET stream carries one notifications/message event
// of size bytes once release is called. The bytes are generated while
// written, never held.
type bigEventUpstream struct {
	url      string
	size     int64
	onGET    bool
	go_      chan struct{}
	sent     chan struct{}
	relOnce  sync.Once
	sentOnce sync.Once
	gets     atomic.Int32
}

func (u *bigEventUpstream) release() { u.relOnce.Do(func() { close(u.go_) }) }

func newBigEventUpstream(t *testing.T, size int64, onGET bool) *bigEventUpstream {
	t.Helper()
	u := &bigEventUpstream{size: size, onGET: onGET, go_: make(chan struct{}), sent: make(chan struct{})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: u}
	go srv.Serve(ln)
	t.Cleanup(func() { u.release(); srv.Close() })
	u.url = "http://" + ln.Addr().String() + "/mcp"
	return u
}

// writeBig writes prefix, size bytes of 'a', then suffix, flushing as it goes.
func writeBig(w http.ResponseWriter, prefix string, size int64, suffix string) error {
	fl := w.(http.Flusher)
	bw := bufio.NewWriterSize(w, 1<<20)
	if _, err := bw.WriteString(prefix); err != nil {
		return err
	}
	chunk := []byte(strings.Repeat("a", 1<<20))
	for left := size; left > 0; {
		n := int64(len(chunk))
		if left < n {
			n = left
		}
		if _, err := bw.Write(chunk[:n]); err != nil {
			return err
		}
		left -= n
	}
	if _, err := bw.WriteString(suffix); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	fl.Flush()
	return nil
}

func (u *bigEventUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodDelete:
		w.WriteHeader(http.StatusOK)
		return
	case http.MethodGet:
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		if !u.onGET {
			<-r.Context().Done()
			return
		}
		select {
		case <-u.go_:
		case <-r.Context().Done():
			return
		}
		if u.gets.Add(1) == 1 { // once: a stream cut off is opened again
			_ = writeBig(w, `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"`, u.size, "\"}}\n\n")
			u.sentOnce.Do(func() { close(u.sent) })
		}
		<-r.Context().Done()
		return
	case http.MethodPost:
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	if err := json.NewDecoder(r.Body).Decode(&msg); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if len(msg.ID) == 0 { // a notification or an answer
		w.WriteHeader(http.StatusAccepted)
		return
	}
	answer := func(result string) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Mcp-Session-Id", "big-session")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, msg.ID, result)
	}
	switch msg.Method {
	case "initialize":
		answer(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"big","version":"1"}}`)
	case "tools/list":
		answer(`{"tools":[{"name":"blob","description":"Returns a huge result.","inputSchema":{"type":"object"}},{"name":"small","description":"Returns a small result.","inputSchema":{"type":"object"}}]}`)
	case "tools/call":
		if msg.Params.Name != "blob" {
			answer(`{"content":[{"type":"text","text":"small"}]}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_ = writeBig(w, `data: {"jsonrpc":"2.0","id":`+string(msg.ID)+`,"result":{"content":[{"type":"text","text":"`, u.size, "\"}]}}\n\n")
	default:
		answer(`{}`)
	}
}
