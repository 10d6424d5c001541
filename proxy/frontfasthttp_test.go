package proxy

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// httpAnswer is what a client sees of an HTTP answer: the status, the
// headers the go-sdk sets, and the body. framing is how an event stream's
// body was delimited (Content-Length, chunked), kept apart: the fast paths
// declare the length of an answer they write whole (one write)
// where the go-sdk flushes a chunked stream; the message is the same.
type httpAnswer struct {
	status  int
	header  string
	body    string
	framing string
}

func (a httpAnswer) String() string {
	return fmt.Sprintf("%d %s %s\n%s", a.status, a.header, a.framing, a.body)
}

// answerOf reads resp into an httpAnswer (headers listed in keys).
func answerOf(t *testing.T, resp *http.Response, keys ...string) httpAnswer {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var h, f strings.Builder
	stream := resp.Header.Get("Content-Type") == "text/event-stream"
	for _, k := range keys {
		w := &h
		if stream && (k == "Content-Length" || k == "Transfer-Encoding") {
			w = &f
		}
		fmt.Fprintf(w, "%s=%q ", k, resp.Header.Values(k))
	}
	w := &h
	if stream {
		w = &f
	}
	fmt.Fprintf(w, "TE=%q CL=%d", resp.TransferEncoding, resp.ContentLength)
	return httpAnswer{status: resp.StatusCode, header: h.String(), body: string(b), framing: f.String()}
}

// post2026 POSTs body to url with the headers of a 2026-07-28 tools/call
// of tool name (Content-Type, Accept, MCP-Protocol-Version, Mcp-Method,
// Mcp-Name); hdr overrides them ("" removes one).
func post2026(t *testing.T, url, name, body string, hdr map[string]string) httpAnswer {
	t.Helper()
	resp, err := http.DefaultClient.Do(request2026(t, url, "tools/call", name, []byte(body), hdr))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	return answerOf(t, resp, "Content-Type", "Cache-Control", "Connection", "Content-Length", "Transfer-Encoding", "Mcp-Session-Id", "Allow")
}

// TestFrontFastHTTPCancel: a 2026-07-28 client of the Streamable HTTP
// front (go-sdk client) whose tools/call takes the fast path cancels it
// by closing the request (MCP 2026-07-28 Cancellation): the upstream
// tool's context ends, and the client's next calls are answered. The
// first call of the client teaches the fast path its _meta triple (it
// goes the go-sdk's way); the cancelled one is served by the fast path.
func TestFrontFastHTTPCancel(t *testing.T) {
	url, started, cancelled := slowUpstream(t)
	for _, stateless := range []bool{false, true} {
		t.Run(fmt.Sprintf("stateless=%v", stateless), func(t *testing.T) {
			p := startProxyText(t, fmt.Sprintf("[server]\ntransport = \"http\"\nstateless = %v\n[tool_search]\nenabled = false\n[upstreams.slowup]\nurl = %s\n", stateless, tomlQuote(url)))
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "canceller", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: frontURL(t, p)}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if v := cs.InitializeResult().ProtocolVersion; v != modernVersion {
				t.Fatalf("negotiated %q, want %s", v, modernVersion)
			}
			quick := func() {
				t.Helper()
				r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slowup__quick", Arguments: map[string]any{}})
				if err != nil || r.IsError || len(r.Content) != 1 {
					t.Fatalf("quick: %v %+v", err, r)
				}
			}
			quick() // teaches the triple
			before := p.stateless.Calls.Load()
			cctx, ccancel := context.WithCancel(ctx)
			errc := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "slowup__slow", Arguments: map[string]any{}})
				errc <- err
			}()
			waitSignal(t, started, "the upstream tool did not start")
			if n := p.stateless.Calls.Load() - before; n != 1 {
				t.Fatalf("the fast path served %d calls, want 1", n)
			}
			ccancel()
			if err := <-errc; err == nil {
				t.Error("the cancelled call returned a result")
			}
			waitSignal(t, cancelled, "closing the request did not reach the upstream tool")
			quick()
			if n := p.stateless.Calls.Load() - before; n != 2 {
				t.Errorf("the fast path served %d calls, want 2", n)
			}
			if n := exchangesLeft(p); n != 0 {
				t.Errorf("%d exchanges left after the calls were cancelled or answered", n)
			}
		})
	}
}

// TestFrontFastHTTPSessionPool: fast-path calls of one _meta triple run
// one after another on one kept ServerSession (sessionPool); a call
// answered input_required (its exchange parked with the session) does not
// give its session back, and the next call connects a new one. Answers are
// unchanged: the echo result each time, input_required for the call that
// needs approval.
func TestFrontFastHTTPSessionPool(t *testing.T) {
	const trip = `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"pooled","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}`
	call := func(id int, name string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{},"_meta":{%s}}}`, id, name, trip)
	}
	up := startTestUpstream(t)
	p := startProxyText(t, fmt.Sprintf("[server]\ntransport = \"http\"\nstateless = true\n[tool_search]\nenabled = false\n[upstreams.up]\nurl = %s\n[upstreams.a]\nurl = %s\n[tools]\nrequire_approval = [\"a__roots\"]\n",
		tomlQuote(up.URL), tomlQuote(askingUpstream(t))))
	url := frontURL(t, p)
	sessions := func() int {
		n := 0
		for range p.Server("", transportStateless).Sessions() {
			n++
		}
		return n
	}
	if a := post2026(t, url, "up__echo", call(1, "up__echo"), nil); a.status != http.StatusOK { // teaches the triple
		t.Fatalf("first call: %s", a)
	}
	before := p.stateless.Calls.Load()
	for i := 2; i < 6; i++ {
		if a := post2026(t, url, "up__echo", call(i, "up__echo"), nil); !strings.Contains(a.body, `"text":"echo {}"`) {
			t.Fatalf("call %d: %s", i, a)
		}
		if n := p.stateless.Idle(); n != 1 {
			t.Fatalf("after call %d: %d idle sessions, want 1", i, n)
		}
		if n := sessions(); n != 1 {
			t.Fatalf("after call %d: the server has %d sessions, want 1 (reused)", i, n)
		}
	}
	if a := post2026(t, url, "a__roots", call(6, "a__roots"), nil); !strings.Contains(a.body, `"resultType":"input_required"`) {
		t.Fatalf("approval call: %s", a)
	}
	if n := p.stateless.Idle(); n != 0 {
		t.Errorf("after an input_required answer: %d idle sessions, want 0 (its session is not reused)", n)
	}
	if a := post2026(t, url, "up__echo", call(7, "up__echo"), nil); !strings.Contains(a.body, `"text":"echo {}"`) {
		t.Fatalf("call 7: %s", a)
	}
	if n := p.stateless.Idle(); n != 1 {
		t.Errorf("after call 7: %d idle sessions, want 1", n)
	}
	if n := p.stateless.Calls.Load() - before; n != 6 {
		t.Errorf("the fast path served %d calls, want 6", n)
	}

	// Closing the proxy closes the idle session and ends its jsonrpc2
	// reading goroutine (none may be left running).
	if n := goroutinesIn("(*fastHTTPConn).Read"); n != 1 {
		t.Fatalf("%d goroutines read an idle fast-path session's connection, want 1", n)
	}
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := p.stateless.Idle(); n != 0 {
		t.Errorf("after Close: %d idle sessions, want 0", n)
	}
	if n := sessions(); n != 0 {
		t.Errorf("after Close: the server has %d sessions, want 0", n)
	}
	if n := goroutinesIn("(*fastHTTPConn).Read"); n != 0 {
		t.Errorf("after Close: %d goroutines still read a fast-path session's connection", n)
	}
}

// goroutinesIn counts the goroutines whose stack holds fn.
func goroutinesIn(fn string) int {
	buf := make([]byte, 4<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, fn) {
			n++
		}
	}
	return n
}
