//go:build unix

package integration

// Every form of an upstream's "session not found" (HTTP 404, HTTP 400, an
// HTTP 200 event stream whose event says so) makes the proxy initialize
// again on the first call that meets it, and that call is sent again: no
// call is lost after an upstream restart.
//
// The upstreams are real servers restarted for real where one sends that
// form: go-sdk v1.8.0's everything example over Streamable HTTP (404) and
// the TypeScript SDK's server-everything (400 "Bad Request: No valid
// session ID provided"). No real server found sends the third form (an
// event stream with {"error":"Session not found"}, reported against other
// proxies), so it comes from internal/fakeupstream, whose Forget drops its
// sessions as a restart does.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/fakeupstream"
)

// TestSessionLostFormsAfterRestart restarts each upstream once and counts
// the calls that fail after it is back, until the first success (at most
// 70 s: two failed pings at the default ping_interval take 60 s).
func TestSessionLostFormsAfterRestart(t *testing.T) {
	requireNode(t)
	ev := gosdkEverything(t)
	goPort, tsPort := freePort(t), freePort(t)
	goURL := fmt.Sprintf("http://127.0.0.1:%d", goPort)
	tsURL := fmt.Sprintf("http://127.0.0.1:%d/mcp", tsPort)
	startGo := func() *Proc {
		return startHTTPServer(t, []string{ev, "-http", fmt.Sprintf("127.0.0.1:%d", goPort)}, nil, goURL)
	}
	startTS := func() *Proc {
		return startHTTPServer(t, append(npmServer(t, "everything"), "streamableHttp"), []string{fmt.Sprintf("PORT=%d", tsPort)}, tsURL)
	}
	fake := &fakeupstream.HTTP{Scenario: fakeupstream.Named("plain"), SSE: true, Lost: "sse-bare"}
	fs := httptest.NewServer(fake)
	t.Cleanup(fs.Close)
	procs := map[string]*Proc{"go404": startGo(), "ts400": startTS()}
	cfg := writeConfig(t, fmt.Sprintf("[tool_search]\nenabled = false\n[upstreams.go404]\nurl = %q\n[upstreams.ts400]\nurl = %q\n[upstreams.sse200]\nurl = %q\n", goURL, tsURL, fs.URL))
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	startHTTPServer(t, proxyCmd(t, cfg, "--transport", "http", "--listen", addr), nil, "http://"+addr+"/mcp")
	cs := gosdkClientHTTP(t, "http://"+addr+"/mcp", nil)
	calls := map[string]*gosdk.CallToolParams{
		"go404":  {Name: "go404__greet", Arguments: map[string]any{"name": "x"}},
		"ts400":  {Name: "ts400__echo", Arguments: map[string]any{"message": "x"}},
		"sse200": {Name: "sse200__echo", Arguments: map[string]any{}},
	}
	call := func(up string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		res, err := cs.CallTool(ctx, calls[up])
		if err == nil && res.IsError {
			var b strings.Builder
			for _, c := range res.Content {
				if tc, ok := c.(*gosdk.TextContent); ok {
					b.WriteString(tc.Text)
				}
			}
			err = fmt.Errorf("isError: %s", b.String())
		}
		return err
	}
	for _, up := range []string{"go404", "ts400", "sse200"} {
		t.Run(up, func(t *testing.T) {
			if err := call(up); err != nil {
				t.Fatalf("before the restart: %v", err)
			}
			switch up {
			case "go404":
				procs[up].Stop()
				procs[up] = startGo()
			case "ts400":
				procs[up].Stop()
				procs[up] = startTS()
			case "sse200":
				fake.Forget()
			}
			start := time.Now()
			lost := 0
			var first error
			for {
				err := call(up)
				if err == nil {
					break
				}
				if first == nil {
					first = err
				}
				lost++
				if time.Since(start) > 70*time.Second {
					t.Fatalf("no call succeeded within 70 s of the restart: %d failed, the first with: %v", lost, first)
				}
				time.Sleep(250 * time.Millisecond)
			}
			t.Logf("%s: %d calls lost after the restart; first success %.1f s after it (first error: %v)", up, lost, time.Since(start).Seconds(), first)
			if lost != 0 {
				t.Errorf("%d calls lost after the restart (want 0: initialize again on the first failed call and send it again); the first failed with: %v", lost, first)
			}
		})
	}
}

// TestListChangedBurstOneNotification: an upstream (internal/fakeupstream
// scenario "burst", a raw stdio server) that adds five tools with a
// notifications/tools/list_changed after each, 1 to 13 ms apart, makes
// the client through the proxy get one notifications/tools/list_changed
// per burst, in each of 19 bursts, and the list it then gets holds all
// five.
func TestListChangedBurstOneNotification(t *testing.T) {
	fake := goBinary(t, "fakeupstream", "./integration/fakeupstream")
	cfg := writeConfig(t, fmt.Sprintf("[tool_search]\nenabled = false\n[upstreams.b]\ncommand = %q\nargs = [\"-scenario\", \"burst\"]\n", fake))
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	startHTTPServer(t, proxyCmd(t, cfg, "--transport", "http", "--listen", addr), nil, "http://"+addr+"/mcp")
	notes := make(chan struct{}, 100)
	c := gosdk.NewClient(&gosdk.Implementation{Name: "burst-client", Version: "1"}, &gosdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *gosdk.ToolListChangedRequest) { notes <- struct{}{} },
	})
	cs := connectAt(t, c, &gosdk.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp"}, "2025-11-25")
	ctx := context.Background()
	var counts []int
	for burst := 1; burst <= 19; burst++ {
		if _, err := cs.CallTool(ctx, &gosdk.CallToolParams{Name: "b__burst", Arguments: map[string]any{}}); err != nil {
			t.Fatal(err)
		}
		n := 0
		quiet := time.NewTimer(3 * time.Second)
	wait:
		for {
			select {
			case <-notes:
				n++
				quiet.Reset(500 * time.Millisecond) // a second one would come within a re-listing or two
			case <-quiet.C:
				break wait
			}
		}
		counts = append(counts, n)
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Tools) != 1+5*burst {
			t.Errorf("burst %d: %d tools listed, want %d", burst, len(res.Tools), 1+5*burst)
		}
	}
	t.Logf("notifications/tools/list_changed per burst of 5: %v", counts)
	for i, n := range counts {
		if n != 1 {
			t.Errorf("burst %d: %d notifications, want 1", i+1, n)
		}
	}
}

// TestReusedIDSameErrorEveryFront: a request that reuses the id of the
// client's call still in flight gets the same answer on the stdio front
// and on the Streamable HTTP front: -32600 "duplicate in-flight request
// ID 7" (over HTTP with status 400); the call in flight still answers.
func TestReusedIDSameErrorEveryFront(t *testing.T) {
	waitsMostly(t)
	ev := npmServer(t, "everything")
	cfg := writeConfig(t, fmt.Sprintf("[tool_search]\nenabled = false\n[upstreams.ev]\ncommand = %q\nargs = [%q]\n", ev[0], ev[1]))
	const slow = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"ev__trigger-long-running-operation","arguments":{"duration":2,"steps":2}}}`
	const again = `{"jsonrpc":"2.0","id":7,"method":"ping"}`
	const want = `{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"duplicate in-flight request ID 7"}}`

	// stdio
	cmd := exec.Command(proxyCmd(t, cfg)[0], proxyCmd(t, cfg)[1:]...)
	in, _ := cmd.StdinPipe()
	outPipe, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); _ = cmd.Wait() })
	out := bufio.NewScanner(outPipe)
	out.Buffer(nil, 1<<20)
	send := func(l string) { _, _ = io.WriteString(in, l+"\n") }
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if !out.Scan() {
		t.Fatal("no initialize answer")
	}
	send(slow)
	time.Sleep(300 * time.Millisecond)
	send(again)
	var stdioDup, stdioCall string
	for (stdioDup == "" || stdioCall == "") && out.Scan() {
		l := out.Text()
		switch {
		case strings.Contains(l, `"id":7,"error"`):
			stdioDup = l
		case strings.Contains(l, `"id":7,"result"`):
			stdioCall = l
		}
	}
	if stdioDup != want {
		t.Errorf("stdio: the reused id got %s, want %s", stdioDup, want)
	}
	if !strings.Contains(stdioCall, "Long running operation completed") {
		t.Errorf("stdio: the call in flight answered %s", stdioCall)
	}

	// Streamable HTTP
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	startHTTPServer(t, proxyCmd(t, cfg, "--transport", "http", "--listen", addr), nil, "http://"+addr+"/mcp")
	post := func(sid, body string) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}
	resp, _ := post("", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	callDone := make(chan string, 1)
	go func() { _, b := post(sid, slow); callDone <- b }()
	time.Sleep(300 * time.Millisecond)
	resp, body := post(sid, again)
	if resp.StatusCode != http.StatusBadRequest || strings.TrimSpace(body) != want {
		t.Errorf("HTTP: the reused id got %d %q, want 400 %s", resp.StatusCode, body, want)
	}
	if b := <-callDone; !strings.Contains(b, "Long running operation completed") {
		t.Errorf("HTTP: the call in flight answered %s", b)
	}
}
