package proxy

import (
	"fmt"
	"strings"
	"testing"
)

// TestFrontStdioMessageAtTheCap: server.max_message_bytes = N admits a
// client message of N bytes; the line's end ("\n" or "\r\n") does not
// count. N-1 and N bytes are answered, N+1 is refused with -32600 naming
// the cap (the line client's cap is 1 MiB). Before, a message of exactly
// N bytes was refused: its newline was counted.
func TestFrontStdioMessageAtTheCap(t *testing.T) {
	url, _, _ := slowUpstream(t)
	p := startProxyText(t, fmt.Sprintf("[tool_search]\nenabled = false\n[upstreams.slowup]\nurl = %s\n", tomlQuote(url)))
	const max = 1 << 20
	// msg is a tools/call of exactly n bytes.
	msg := func(id, n int) string {
		head := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"slowup__quick","arguments":{"s":"`, id)
		tail := `"}}}`
		return head + strings.Repeat("A", n-len(head)-len(tail)) + tail
	}
	for _, fast := range []bool{false, true} {
		lc := startLineClient(t, p, fast)
		fastInit(lc)
		for i, c := range []struct {
			n   int
			end string
			ok  bool
		}{{max - 1, "", true}, {max, "", true}, {max, "\r", true}, {max + 1, "", false}, {max + 1, "\r", false}, {max + 2, "", false}} {
			id := 10 + i
			m := msg(id, c.n)
			if len(m) != c.n {
				t.Fatalf("built %d bytes, want %d", len(m), c.n)
			}
			lc.send(m + c.end) // send adds "\n"
			l := string(lc.next())
			prefix := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,`, id)
			switch {
			case c.ok && (!strings.HasPrefix(l, prefix) || !strings.Contains(l, `"quick"`)):
				t.Errorf("fast=%v: a message of %d bytes (line end %q) with the cap at %d: %.300s, want it answered", fast, c.n, c.end+"\n", max, l)
			case !c.ok && (!strings.HasPrefix(l, prefix+`"error":{"code":-32600,`) || !strings.Contains(l, "max_message_bytes")):
				t.Errorf("fast=%v: a message of %d bytes (line end %q) with the cap at %d: %.300s, want -32600", fast, c.n, c.end+"\n", max, l)
			}
		}
	}
}
