package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// pipeConn is a stdioConn whose "stdout" the test writes and whose
// "stdin" the test reads.
type pipeConn struct {
	*stdioConn
	out   *io.PipeWriter // the upstream's stdout
	in    *io.PipeReader // the upstream's stdin
	log   *logBuffer
	lines chan string
}

func newPipeConn(t *testing.T, maxBytes int) *pipeConn {
	t.Helper()
	outR, outW := io.Pipe()
	inR, inW := io.Pipe()
	log := &logBuffer{}
	tr := &stdioTransport{r: outR, w: inW, log: slog.New(slog.NewTextHandler(log, nil)), maxBytes: maxBytes}
	mc, err := tr.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	pc := &pipeConn{stdioConn: mc.(*stdioConn), out: outW, in: inR, log: log, lines: make(chan string, 16)}
	go func() {
		buf := make([]byte, 0, 1024)
		b := make([]byte, 1)
		for {
			if _, err := inR.Read(b); err != nil {
				return
			}
			if b[0] == '\n' {
				pc.lines <- string(buf)
				buf = buf[:0]
				continue
			}
			buf = append(buf, b[0])
		}
	}()
	t.Cleanup(func() { _ = pc.Close(); _ = outW.Close() })
	return pc
}

func (p *pipeConn) send(t *testing.T, lines ...string) {
	t.Helper()
	go func() {
		for _, l := range lines {
			_, _ = io.WriteString(p.out, l+"\n")
		}
	}()
}

func (p *pipeConn) read(t *testing.T) jsonrpc.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m, err := p.Read(ctx)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	return m
}

func (p *pipeConn) call(t *testing.T, id int64, method string, params string) {
	t.Helper()
	req := &jsonrpc.Request{ID: intID(id), Method: method, Params: json.RawMessage(params)}
	go func() { _ = p.Write(context.Background(), req) }()
	<-p.lines
}

func (p *pipeConn) writeLine(t *testing.T, msg jsonrpc.Message) string {
	t.Helper()
	go func() {
		if err := p.Write(context.Background(), msg); err != nil {
			t.Errorf("Write: %v", err)
		}
	}()
	select {
	case l := <-p.lines:
		return l
	case <-time.After(30 * time.Second):
		t.Fatal("no line written")
		return ""
	}
}

// Log lines on stdout, whatever their first character, are
// skipped; the session goes on; the warnings are rate-limited.
func TestStdioSkipsNonJSONRPCLines(t *testing.T) {
	p := newPipeConn(t, MaxMessageBytes)
	p.call(t, 1, "ping", `{}`)
	noise := []string{"[WebSocket] Closed", "[INFO] starting", `{"level":30,"msg":"ready"}`, "{not json}", "[1,2,3]", "plain text", "", "   "}
	var lines []string
	for range 20 {
		lines = append(lines, noise...)
	}
	p.send(t, append(lines, `{"jsonrpc":"2.0","id":1,"result":{}}`)...)
	m := p.read(t)
	if r, ok := m.(*jsonrpc.Response); !ok || r.Error != nil || r.ID.Raw() != int64(1) {
		t.Fatalf("got %#v", m)
	}
	logged := strings.Count(p.log.String(), "skipped a line from the upstream")
	if logged != skipLogFirst {
		t.Errorf("%d skipped-line warnings, want %d (rate-limited)\n%s", logged, skipLogFirst, p.log.String())
	}
	if !strings.Contains(p.log.String(), "[WebSocket] Closed") {
		t.Errorf("the first skipped line is not named:\n%s", p.log.String())
	}
}

// An answer without "jsonrpc" fails that request with the cause;
// the next request on the same connection works.
func TestStdioMalformedAnswerFailsOneRequest(t *testing.T) {
	p := newPipeConn(t, MaxMessageBytes)
	p.call(t, 7, "tools/call", `{"name":"x"}`)
	p.send(t, `{"id":7,"result":{"content":[]}}`)
	r := p.read(t).(*jsonrpc.Response)
	if r.ID.Raw() != int64(7) || r.Error == nil || !strings.Contains(r.Error.Error(), `invalid JSON-RPC from upstream: the answer has no "jsonrpc":"2.0"`) {
		t.Fatalf("got id %v error %v", r.ID.Raw(), r.Error)
	}
	p.call(t, 8, "tools/call", `{"name":"x"}`)
	p.send(t, `{"jsonrpc":"2.0","id":8,"result":{"content":[]}}`)
	if r := p.read(t).(*jsonrpc.Response); r.ID.Raw() != int64(8) || r.Error != nil {
		t.Fatalf("second call: %v %v", r.ID.Raw(), r.Error)
	}
	p.call(t, 9, "tools/call", `{"name":"x"}`)
	p.send(t, `{"jsonrpc":"2.0","id":9,"result":{"content":[}`)
	if r := p.read(t).(*jsonrpc.Response); r.Error == nil || !strings.Contains(r.Error.Error(), "invalid JSON-RPC from upstream") {
		t.Fatalf("broken JSON: %v", r.Error)
	}
}

// An answer past the cap fails its request (tools/call: an
// isError result naming the size and the cap), the connection stays.
func TestStdioOversizedAnswer(t *testing.T) {
	p := newPipeConn(t, 1<<16)
	p.call(t, 3, "tools/call", `{"name":"big"}`)
	big := `{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 1<<18) + `"}]},"id":3}`
	p.send(t, big)
	r := p.read(t).(*jsonrpc.Response)
	if r.ID.Raw() != int64(3) || r.Error != nil || !strings.Contains(string(r.Result), `"isError":true`) || !strings.Contains(string(r.Result), "exceeds the cap of 65536 bytes") {
		t.Fatalf("got %v %v %s", r.ID.Raw(), r.Error, r.Result)
	}
	p.call(t, 4, "tools/list", `{}`)
	p.send(t, `{"jsonrpc":"2.0","id":4,"result":{"tools":[`+strings.Repeat(`{"name":"t","inputSchema":{"type":"object","description":"`+strings.Repeat("d", 1000)+`"}},`, 100)+`{"name":"z"}]}}`)
	if r := p.read(t).(*jsonrpc.Response); r.Error == nil || !strings.Contains(r.Error.Error(), "too large") {
		t.Fatalf("tools/list: %v", r.Error)
	}
	p.call(t, 5, "ping", `{}`)
	p.send(t, `{"jsonrpc":"2.0","id":5,"result":{}}`)
	if r := p.read(t).(*jsonrpc.Response); r.ID.Raw() != int64(5) || r.Error != nil {
		t.Fatalf("after: %v %v", r.ID.Raw(), r.Error)
	}
}

// TestStdioMessageAtTheCap: max_message_bytes = N admits an upstream
// message of N bytes; the line's end ("\n" or "\r\n") does not count.
// N-1 and N bytes answer the call; N+1 fails it (an isError result naming
// the cap). With a cap past the read buffer (64 KiB) and below it, so that
// a line end split across reads is counted right too. Before, a message
// of exactly N bytes was refused: its newline was counted.
func TestStdioMessageAtTheCap(t *testing.T) {
	for _, max := range []int{1 << 16, 3 << 16} {
		p := newPipeConn(t, max)
		for i, c := range []struct {
			n   int
			end string
			ok  bool
		}{{max - 1, "", true}, {max, "", true}, {max, "\r", true}, {max + 1, "", false}, {max + 1, "\r", false}} {
			id := int64(10 + i)
			head := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"`, id)
			tail := `"}]}}`
			msg := head + strings.Repeat("x", c.n-len(head)-len(tail)) + tail
			p.call(t, id, "tools/call", `{"name":"x"}`)
			p.send(t, msg+c.end) // send adds "\n"
			r := p.read(t).(*jsonrpc.Response)
			capped := strings.Contains(string(r.Result), fmt.Sprintf("exceeds the cap of %d bytes", max))
			if r.ID.Raw() != id || r.Error != nil || capped == c.ok {
				t.Errorf("cap %d: a message of %d bytes (line end %q): id %v error %v result %.200s; want it passed %v", max, c.n, c.end+"\n", r.ID.Raw(), r.Error, r.Result, c.ok)
			}
		}
	}
}

// Upstream side: ids of the upstream's requests come back
// exactly as sent, whatever the go-sdk can represent.
func TestStdioRequestIDsEchoedExactly(t *testing.T) {
	p := newPipeConn(t, MaxMessageBytes)
	for _, id := range []string{`1.5`, `1180591620717411303424`, `"abc"`, `7`, `null`, `-0`, `1e3`, `"` + surrogatePrefix + `1"`} {
		p.send(t, `{"jsonrpc":"2.0","id":`+id+`,"method":"ping"}`)
		req, ok := p.read(t).(*jsonrpc.Request)
		if !ok || req.Method != "ping" {
			t.Fatalf("id %s: not a request", id)
		}
		line := p.writeLine(t, &jsonrpc.Response{ID: req.ID, Result: json.RawMessage(`{}`)})
		if want := `{"jsonrpc":"2.0","id":` + id + `,"result":{}}`; line != want {
			t.Errorf("id %s: answered %s, want %s", id, line, want)
		}
	}
	// An upstream that echoes our id 12 as "12" still answers the call.
	p.call(t, 12, "ping", `{}`)
	p.send(t, `{"jsonrpc":"2.0","id":"12","result":{}}`)
	if r := p.read(t).(*jsonrpc.Response); r.ID.Raw() != int64(12) || r.Error != nil {
		t.Fatalf("echoed as string: %v %v", r.ID.Raw(), r.Error)
	}
}

func TestSniffer(t *testing.T) {
	for _, c := range []struct{ in, id string }{
		{`{"jsonrpc":"2.0","result":{"id":9,"x":[1,{"id":4}]},"id":3}`, `3`},
		{`{"id" : "a\"b", "method":"x"}`, `"a\"b"`},
		{`{"result":"}{\"id\":5","id":-17}`, `-17`},
		{`{"result":{}}`, ``},
	} {
		var s idSniffer
		for i := 0; i < len(c.in); i += 3 {
			s.feed([]byte(c.in[i:min(i+3, len(c.in))]))
		}
		if string(s.id()) != c.id {
			t.Errorf("%s: id %q, want %q", c.in, s.id(), c.id)
		}
	}
}

// An answer to a call the proxy cancelled (notifications/cancelled) is
// dropped without a warning: MCP lets the server send it and asks the
// sender to ignore it. An answer to an id never asked for is still
// reported.
func TestStdioLateAnswerToCancelledCallDropped(t *testing.T) {
	p := newPipeConn(t, MaxMessageBytes)
	p.call(t, 2, "tools/list", `{}`)
	p.writeLine(t, &jsonrpc.Request{Method: "notifications/cancelled", Params: json.RawMessage(`{"reason":"context canceled","requestId":2}`)})
	p.call(t, 3, "ping", `{}`)
	p.send(t, `{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`, `{"jsonrpc":"2.0","id":3,"result":{}}`)
	if r, ok := p.read(t).(*jsonrpc.Response); !ok || r.ID.Raw() != int64(3) || r.Error != nil {
		t.Fatalf("got %#v, want the answer to 3 (the one to the cancelled 2 dropped)", r)
	}
	if strings.Contains(p.log.String(), "skipped a line") {
		t.Errorf("the late answer to a cancelled call was reported:\n%s", p.log.String())
	}
	if n, _ := p.skippedFrames(); n != 0 {
		t.Errorf("%d frames counted as skipped, want 0", n)
	}
	p.call(t, 4, "ping", `{}`)
	p.send(t, `{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`, `{"jsonrpc":"2.0","id":44,"result":{}}`, `{"jsonrpc":"2.0","id":4,"result":{}}`)
	if r, ok := p.read(t).(*jsonrpc.Response); !ok || r.ID.Raw() != int64(4) {
		t.Fatalf("got %#v, want the answer to 4", r)
	}
	if n := strings.Count(p.log.String(), "an answer to no pending request"); n != 2 {
		t.Errorf("%d answers to no pending request reported, want 2 (a second answer to 2, and 44):\n%s", n, p.log.String())
	}
}
