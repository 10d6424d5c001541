package upstream

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
)

func TestReadSSE(t *testing.T) {
	big := `{"jsonrpc":"2.0","result":{"t":"` + strings.Repeat("x", 5000) + `"},"id":42}`
	in := ": comment\r\n" +
		"event: ping\r\ndata: \r\n\r\n" +
		"id: 7\ndata: {\"a\":\ndata: 1}\n\n" +
		"retry: 1500\n\n" +
		"data: " + big + "\n\n" +
		"data: {\"b\":2}\n\n"
	var got []string
	err := readSSE(strings.NewReader(in), 1024, func(ev *sseEvent) bool {
		switch {
		case ev.Oversize:
			got = append(got, "oversize:"+string(ev.Sniff.id()))
		default:
			got = append(got, ev.Name+"|"+ev.ID+"|"+string(ev.Data))
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ping||", "|7|{\"a\":\n1}", "oversize:42", "|7|{\"b\":2}"}
	if strings.Join(got, " ; ") != strings.Join(want, " ; ") {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}

// Lines longer than the reader's buffer: within the cap a data line's
// value reaches the event whole (one or several lines, LF or CRLF), past
// it the event is oversize with its id still found, and either way the
// reading keeps no more than about the cap.
func TestReadSSELongLines(t *testing.T) {
	const capBytes = 1 << 20
	a := strings.Repeat("a", 100<<10)
	b := strings.Repeat("b", 40<<10)
	big := `{"jsonrpc":"2.0","result":{"t":"` + strings.Repeat("x", 3<<20) + `"},"id":7}`
	in := "data: " + a + "\n\n" +
		"data: " + b + "\r\ndata:" + b + "\r\n\r\n" +
		"id: 3\ndata: " + big + "\n\n" +
		"data: {\"c\":3}\n\n"
	var got []string
	err := readSSE(strings.NewReader(in), capBytes, func(ev *sseEvent) bool {
		if ev.Oversize {
			got = append(got, fmt.Sprintf("oversize:%s:%d", ev.Sniff.id(), ev.Size))
		} else {
			got = append(got, fmt.Sprintf("%s:%d:%.8s", ev.ID, len(ev.Data), ev.Data))
		}
		if string(ev.Data) != "" && !ev.Oversize {
			switch len(ev.Data) {
			case len(a):
				if string(ev.Data) != a {
					t.Error("the 100 KiB line came back changed")
				}
			case 2*len(b) + 1:
				if string(ev.Data) != b+"\n"+b {
					t.Error("the two 40 KiB lines came back changed")
				}
			}
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{":102400:aaaaaaaa", ":81921:bbbbbbbb", fmt.Sprintf("oversize:7:%d", len(big)+1), `3:7:{"c":3}`}
	if strings.Join(got, " ; ") != strings.Join(want, " ; ") {
		t.Fatalf("got  %q\nwant %q", got, want)
	}

	// 128 MiB in one data line, cap 1 MiB: the stream is cut off four
	// times the cap into the event (errEventCut), and what is allocated
	// stays near the cap (the line is not kept past it). The bound is
	// loose (other goroutines' garbage counts too); reading the line whole
	// would pass it many times over.
	huge := io.MultiReader(strings.NewReader(`data: {"jsonrpc":"2.0","method":"x","params":{"d":"`), &zeroReader{n: 128 << 20}, strings.NewReader("\"}}\n\n"))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	n := 0
	rest := &countReader{r: huge}
	if err := readSSE(rest, capBytes, func(ev *sseEvent) bool { n++; return true }); !errors.Is(err, errEventCut) {
		t.Fatalf("err = %v, want the stream cut off", err)
	}
	runtime.ReadMemStats(&after)
	if n != 0 || rest.n > int64(cutAfter(capBytes))+64<<10 {
		t.Fatalf("%d events, %d bytes read; want none, and at most %d bytes", n, rest.n, cutAfter(capBytes))
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 32*capBytes {
		t.Errorf("reading a 128 MiB event allocated %d KiB (cap %d KiB)", got>>10, capBytes>>10)
	}
}

// zeroReader reads n bytes of 'z'.
type zeroReader struct{ n int }

func (r *zeroReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), r.n)], zBlock)
	r.n -= k
	return k, nil
}

var zBlock = []byte(strings.Repeat("z", 64<<10))

type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	c.n += int64(k)
	return k, err
}
