package upstream

import (
	"compress/gzip"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
)

// gzipWriter compresses what a handler writes; Flush flushes the
// compressor first, so each event of a stream arrives whole.
type gzipWriter struct {
	http.ResponseWriter
	zw *gzip.Writer
}

func (g *gzipWriter) Write(p []byte) (int, error) { return g.zw.Write(p) }

func (g *gzipWriter) Flush() {
	_ = g.zw.Flush()
	if f, ok := g.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// TestHTTPLegGzipAnswers: the Streamable HTTP POSTs ask for gzip
// themselves (no per-request header map of net/http's, issue 16); an
// upstream that compresses its answers, as event streams and as JSON, is
// read decompressed on both answer paths (the go-sdk's requests and the
// proxy's own tools/call), and the connections are still reused (the
// compressed stream is read to its end).
func TestHTTPLegGzipAnswers(t *testing.T) {
	for _, jsonAnswers := range []bool{false, true} {
		for _, path := range []string{"go-sdk", "own"} {
			name := path + "/sse"
			if jsonAnswers {
				name = path + "/json"
			}
			t.Run(name, func(t *testing.T) {
				s := newTestServer("plain", false)
				sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: jsonAnswers})
				var compressed atomic.Int64
				hs := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.Method != http.MethodPost {
						sdk.ServeHTTP(w, r)
						return
					}
					if r.Header.Get("Accept-Encoding") != "gzip" {
						t.Errorf("POST with Accept-Encoding %q, want gzip", r.Header.Get("Accept-Encoding"))
					}
					w.Header().Set("Content-Encoding", "gzip")
					zw := gzip.NewWriter(w)
					sdk.ServeHTTP(&gzipWriter{ResponseWriter: w, zw: zw}, r)
					_ = zw.Close()
					compressed.Add(1)
				}))
				conns := startCounting(t, hs)
				o := Options{}
				if path == "own" {
					o = proxyLikeOptions()
				}
				m, _ := startManager(t, []*config.Upstream{httpUpstream("h", hs.URL, "")}, o)
				waitFor(t, "upstream ready", func() bool { st, _ := m.Status("h"); return st.State == StateReady })
				call := func(text string) {
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					defer cancel()
					res, err := m.CallTool(ctx, "h", &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
					if err != nil {
						t.Fatal(err)
					}
					if got := textOf(t, res); got != text {
						t.Fatalf("echo = %q, want %q", got, text)
					}
				}
				call("hi")
				before := conns.Load()
				long := strings.Repeat("compressible ", 2000)
				for i := range 20 {
					if i%2 == 0 {
						call(long)
					} else {
						call("hi")
					}
				}
				if compressed.Load() < 21 {
					t.Errorf("%d answers compressed, want every call's", compressed.Load())
				}
				if extra := conns.Load() - before; extra > 2 {
					t.Errorf("20 sequential calls opened %d new connections, want them to reuse one", extra)
				}
			})
		}
	}
}
