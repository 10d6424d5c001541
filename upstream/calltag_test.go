package upstream

import (
	"bufio"
	"io"
	"strings"
	"testing"
)

func TestTagReader(t *testing.T) {
	long := strings.Repeat("x", 10000)
	in := "event: message\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"elicitation/create\",\"params\":{\"message\":\"m\"}}\r\n\r\n" +
		": comment\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":2,\n" +
		"data: \"method\":\"roots/list\",\"params\":{\"_meta\":{\"" + MetaKeyCaller + "\":\"forged\",\"k\":1}}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"method\":\"x\"}}\n\n" +
		"id: 7\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n" +
		// An answer with a line longer than the reader's buffer and CRLF
		// line ends: its fields before the data are kept (line ends
		// become "\n"), its data line and the rest pass as they are.
		"event: message\r\nid: 8\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"text\":\"" + long + "\"}}\r\n\r\n" +
		"data: cut at the end"
	read := func(token string) string {
		b, err := io.ReadAll(&tagReader{src: io.NopCloser(nil), st: &tagState{in: bufioReader(in), limit: 1 << 20}, token: token})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	want := "event: message\n" +
		`data: {"id":1,"jsonrpc":"2.0","method":"elicitation/create","params":{"_meta":{"` + MetaKeyCaller + `":"T"},"message":"m"}}` + "\n\n" +
		": comment\n\n" +
		`data: {"id":2,"jsonrpc":"2.0","method":"roots/list","params":{"_meta":{"` + MetaKeyCaller + `":"T","k":1}}}` + "\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"method\":\"x\"}}\n\n" +
		"id: 7\n" + `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"_meta":{"` + MetaKeyCaller + `":"T"}}}` + "\n\n" +
		"event: message\nid: 8\ndata: {\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"text\":\"" + long + "\"}}\r\n\r\n" +
		"data: cut at the end\n"
	if got := read("T"); got != want {
		t.Errorf("with a token:\n got %q\nwant %q", got, want)
	}
	// No call of ours: a forged key is removed, nothing else changes.
	got := read("")
	if strings.Contains(got, "forged") || strings.Contains(got, MetaKeyCaller) || !strings.Contains(got, `"_meta":{"k":1}`) || !strings.Contains(got, `"params":{"message":"m"}`) {
		t.Errorf("without a token: %q", got)
	}
}

func bufioReader(s string) *bufio.Reader { return bufio.NewReader(strings.NewReader(s)) }

// bigEventReader writes prefix, n bytes of 'a', then suffix, generated as
// it is read.
type bigEventReader struct {
	prefix, suffix string
	n              int
}

func (r *bigEventReader) Read(p []byte) (int, error) {
	switch {
	case r.prefix != "":
		k := copy(p, r.prefix)
		r.prefix = r.prefix[k:]
		return k, nil
	case r.n > 0:
		k := min(len(p), r.n)
		for i := range p[:k] {
			p[i] = 'a'
		}
		r.n -= k
		return k, nil
	case r.suffix != "":
		k := copy(p, r.suffix)
		r.suffix = r.suffix[k:]
		return k, nil
	}
	return 0, io.EOF
}

// TestTagReaderBoundsEvents: an event past the bound passes through as it
// is read, without being kept (an upstream is not trusted: one such event
// of hundreds of megabytes once grew the proxy by gigabytes); the events
// after it are tagged again.
func TestTagReaderBoundsEvents(t *testing.T) {
	const limit = 1 << 20
	for _, c := range []struct {
		name           string
		prefix, suffix string
	}{
		{"one long data line", `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"data":"`, "\"}}\n\n"},
		{"many data lines", "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":{\"data\":\"\n", "\ndata: \"}}\r\n\r\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			size := 64 << 20
			var src io.Reader = &bigEventReader{prefix: c.prefix, n: size, suffix: c.suffix}
			if strings.Contains(c.name, "many") {
				// 64 MiB of data lines of 1 KiB each.
				line := "data: " + strings.Repeat("a", 1024) + "\n"
				src = io.MultiReader(strings.NewReader(c.prefix), &repeatReader{s: line, n: size / len(line)}, strings.NewReader(c.suffix))
			}
			next := `data: {"jsonrpc":"2.0","id":9,"method":"roots/list","params":{}}` + "\n\n"
			src = io.MultiReader(src, strings.NewReader(next))
			st := &tagState{in: bufio.NewReaderSize(src, 64<<10), limit: limit}
			tr := &tagReader{src: io.NopCloser(nil), st: st, token: "T"}
			// What the reader keeps, after every Read: its buffers'
			// capacities (process-wide allocation counts would include
			// other goroutines' garbage).
			tail := &tailWriter{}
			buf := make([]byte, 32<<10)
			n, held := 0, 0
			for {
				k, err := tr.Read(buf)
				n += k
				_, _ = tail.Write(buf[:k])
				held = max(held, cap(st.line)+st.ev.Cap()+st.out.Cap()+cap(st.more))
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if n < size {
				t.Fatalf("passed %d bytes, want the whole event", n)
			}
			if held > 4*limit {
				t.Errorf("reading a %d MiB event held %d KiB of buffers (bound %d KiB)", size>>20, held>>10, 4*limit>>10)
			}
			want := `data: {"id":9,"jsonrpc":"2.0","method":"roots/list","params":{"_meta":{"` + MetaKeyCaller + `":"T"}}}` + "\n\n"
			if !strings.HasSuffix(tail.String(), want) {
				t.Errorf("the event after the big one was not tagged: ...%q", tail.String())
			}
		})
	}
}

type repeatReader struct {
	s    string
	n    int
	part string
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.part == "" {
		if r.n == 0 {
			return 0, io.EOF
		}
		r.n--
		r.part = r.s
	}
	k := copy(p, r.part)
	r.part = r.part[k:]
	return k, nil
}

// tailWriter keeps the last 4 KiB written.
type tailWriter struct{ b []byte }

func (w *tailWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	if len(w.b) > 4096 {
		w.b = append(w.b[:0], w.b[len(w.b)-4096:]...)
	}
	return len(p), nil
}

func (w *tailWriter) String() string { return string(w.b) }

func TestIsAnswerData(t *testing.T) {
	for line, want := range map[string]bool{
		`data: {"jsonrpc":"2.0","id":1,"result":{}}`:                                         true,
		`data:{"result":{"content":[]},"jsonrpc":"2.0","id":1}`:                              true,
		`data: {"jsonrpc":"2.0","id":"x","error":{"code":1}}`:                                true,
		`data: {"jsonrpc":"2.0","id":1,"method":"roots/list"}`:                               false,
		`data: {"method":"x","result":1}`:                                                    false,
		`data: {"jsonrpc":"2.0","id":1,"\u0072esult":{}}`:                                    false,
		`data: {"jsonrpc":"2.0","id":1,"params":{"result":1},"method"`:                       false,
		`data: {"jsonrpc":"2.0","id":1`:                                                      false,
		`data: [{"result":1}]`:                                                               false,
		`event: message`:                                                                     false,
		`data: {"jsonrpc":"2.0","pad":"` + strings.Repeat("x", answerScan) + `","result":1}`: false,
	} {
		if got := isAnswerData([]byte(line)); got != want {
			t.Errorf("isAnswerData(%.80q) = %v, want %v", line, got, want)
		}
	}
}
