package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
)

// TestHTTPLegReusesConnections: calls to a Streamable HTTP upstream that
// answers each call as an event stream reuse the leg's connections. The
// caller's context ends as soon as the answer is delivered; reading the
// rest of the stream under it aborted the request, and net/http then
// dialed a new connection for a third of the calls (postCtx).
func TestHTTPLegReusesConnections(t *testing.T) {
	for _, path := range []string{"go-sdk", "own"} { // own: the answer read on the caller's goroutine
		t.Run(path, func(t *testing.T) {
			s := newTestServer("plain", false)
			hs := httptest.NewUnstartedServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}))
			conns := startCounting(t, hs)
			o := Options{}
			if path == "own" {
				o = proxyLikeOptions()
			}
			m, _ := startManager(t, []*config.Upstream{httpUpstream("h", hs.URL, "")}, o)
			waitFor(t, "upstream ready", func() bool { st, _ := m.Status("h"); return st.State == StateReady })
			call := func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel() // the moment the answer is in, as the proxy's call path does
				res, err := m.CallTool(ctx, "h", &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
				if err != nil {
					t.Fatal(err)
				}
				if got := textOf(t, res); got != "hi" {
					t.Fatalf("echo = %q", got)
				}
			}
			call()
			before := conns.Load()
			const n = 60
			for range n {
				call()
			}
			if extra := conns.Load() - before; extra > 2 {
				t.Errorf("%d sequential calls opened %d new connections, want them to reuse one", n, extra)
			}
		})
	}
}

// TestHTTPLegDrainBounded: an upstream that answers a call on its event
// stream and then holds the stream open gets the POST cancelled once the
// rest of the stream has been read for keepDrain; calls whose stream ends
// in time come between them, and every call is answered.
func TestHTTPLegDrainBounded(t *testing.T) {
	s := newTestServer("plain", false)
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
	var hold atomic.Bool
	released := make(chan struct{}, 4)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if r.Method != http.MethodPost || json.Unmarshal(body, &msg) != nil || msg.Method != "tools/call" || !hold.Load() {
			r.Body = io.NopCloser(bytes.NewReader(body))
			sdk.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"held\"}]}}\n\n", msg.ID)
		w.(http.Flusher).Flush()
		<-r.Context().Done() // held open until the proxy gives up on the rest
		released <- struct{}{}
	}))
	t.Cleanup(hs.Close)
	m, _ := startManager(t, []*config.Upstream{httpUpstream("h", hs.URL, "")}, Options{})
	waitFor(t, "upstream ready", func() bool { st, _ := m.Status("h"); return st.State == StateReady })
	for i, held := range []bool{false, true, false, true} {
		hold.Store(held)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		res, err := m.CallTool(ctx, "h", &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
		cancel()
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		want := "hi"
		if held {
			want = "held"
		}
		if got := textOf(t, res); got != want {
			t.Fatalf("call %d: %q, want %q", i, got, want)
		}
		if held {
			select {
			case <-released:
			case <-time.After(30 * time.Second):
				t.Fatalf("call %d: the held answer stream was never closed by the proxy", i)
			}
		}
	}
}

// TestHTTPLegAnswerBeforeStreamEnd: a call past the go-sdk (its answer
// read on the caller's goroutine, httpconn.go) returns as soon as the
// answer event is in, while the upstream still holds the rest of the
// stream; the end is read off the caller's path (the upstream sees the
// caller's signal before the proxy gives up on the stream).
func TestHTTPLegAnswerBeforeStreamEnd(t *testing.T) {
	s := newTestServer("plain", false)
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
	got := make(chan struct{})
	how := make(chan string, 1)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if r.Method != http.MethodPost || json.Unmarshal(body, &msg) != nil || msg.Method != "tools/call" {
			r.Body = io.NopCloser(bytes.NewReader(body))
			sdk.ServeHTTP(w, r)
			return
		}
		if !bytes.HasPrefix(msg.ID, []byte("-")) {
			http.Error(w, "want a call past the go-sdk (an id below zero), got id "+string(msg.ID), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"held\"}]}}\n\n", msg.ID)
		w.(http.Flusher).Flush()
		select {
		case <-got:
			how <- "the caller had its answer"
		case <-r.Context().Done():
			how <- "the proxy ended the stream first"
		}
	}))
	t.Cleanup(hs.Close)
	m, _ := startManager(t, []*config.Upstream{httpUpstream("h", hs.URL, "")}, proxyLikeOptions())
	waitFor(t, "upstream ready", func() bool { st, _ := m.Status("h"); return st.State == StateReady })
	raw := &RawResult{}
	_, err := m.CallToolWith(context.Background(), "h", &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{}`)}, CallOptions{Raw: raw})
	close(got)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(raw.JSON, []byte(`"held"`)) {
		t.Fatalf("result %s, want the held stream's answer", raw.JSON)
	}
	if h := <-how; h != "the caller had its answer" {
		t.Errorf("%s: the call waited for the end of the answer stream", h)
	}
}

// startCounting starts hs and counts the connections it accepts.
func startCounting(t *testing.T, hs *httptest.Server) *atomic.Int64 {
	var conns atomic.Int64
	hs.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	hs.Start()
	t.Cleanup(hs.Close)
	return &conns
}
