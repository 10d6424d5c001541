package upstream

import (
	"bufio"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func filterAll(t testing.TB, in string, bufSize int) (string, string) {
	var log logBuffer
	f := &jsonLineFilter{
		r:      bufio.NewReaderSize(strings.NewReader(in), bufSize),
		closer: io.NopCloser(nil),
		log:    slog.New(slog.NewTextHandler(&log, nil)),
	}
	out, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return string(out), log.String()
}

func TestJSONLineFilter(t *testing.T) {
	long := strings.Repeat("y", 5000)
	in := "Server v2 listening\n" +
		`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n" +
		"\n" +
		"   \t" + `{"a":"` + long + `"}` + "\r\n" +
		"WARN: " + long + "\n" +
		`[{"jsonrpc":"2.0","method":"x"}]` + "\n" +
		"trailing text without newline"
	want := `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n" +
		`{"a":"` + long + `"}` + "\r\n" +
		`[{"jsonrpc":"2.0","method":"x"}]` + "\n"
	// A small bufio size forces the ErrBufferFull paths.
	for _, size := range []int{16, 4096} {
		out, log := filterAll(t, in, size)
		if out != want {
			t.Errorf("size %d: output mismatch:\n got %q\nwant %q", size, trunc(out), trunc(want))
		}
		for _, w := range []string{"Server v2 listening", "WARN: yyy", "trailing text without newline"} {
			if !strings.Contains(log, w) {
				t.Errorf("size %d: skipped line %q not logged", size, w)
			}
		}
		if strings.Contains(log, strings.Repeat("y", 600)) {
			t.Errorf("size %d: skipped line logged unbounded", size)
		}
	}
}

func trunc(s string) string { return truncate(s, 200) }

func TestBackoffBounds(t *testing.T) {
	lo, hi := 10*time.Millisecond, 80*time.Millisecond
	for attempt := 0; attempt < 10; attempt++ {
		d := lo << min(attempt, 3)
		for range 100 {
			got := backoff(lo, hi, attempt)
			if got < d/2 || got > d {
				t.Fatalf("attempt %d: %v outside [%v, %v]", attempt, got, d/2, d)
			}
		}
	}
}

func BenchmarkJSONLineFilter(b *testing.B) {
	line := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 1<<20) + `"}]}}` + "\n"
	in := strings.Repeat(line, 8)
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		f := &jsonLineFilter{r: bufio.NewReaderSize(strings.NewReader(in), 64<<10), closer: io.NopCloser(nil), log: slog.New(slog.DiscardHandler)}
		if _, err := io.Copy(io.Discard, f); err != nil {
			b.Fatal(err)
		}
	}
}
