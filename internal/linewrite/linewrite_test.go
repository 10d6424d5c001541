package linewrite

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
)

// TestWriterKeepsEachWritersOrder: 16 goroutines write numbered lines
// concurrently through a pipe; every line arrives whole, once, and each
// goroutine's lines in the order it wrote them (a call's progress before
// its answer).
func TestWriterKeepsEachWritersOrder(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	lw := New(w)
	const writers, lines = 16, 400
	got := make(chan []byte, 1)
	go func() { b, _ := io.ReadAll(r); got <- b }()
	var wg sync.WaitGroup
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range lines {
				msg := fmt.Sprintf(`{"g":%d,"i":%d,"pad":%q}`+"\n", g, i, strings.Repeat("x", i%300))
				if _, err := lw.Write([]byte(msg)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := lw.Close(); err != nil {
		t.Fatal(err)
	}
	next := make([]int, writers)
	n := 0
	for _, line := range bytes.Split(bytes.TrimSuffix(<-got, []byte("\n")), []byte("\n")) {
		var g, i int
		if _, err := fmt.Sscanf(string(line), `{"g":%d,"i":%d,`, &g, &i); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		if want := fmt.Sprintf(`{"g":%d,"i":%d,"pad":%q}`, g, i, strings.Repeat("x", i%300)); string(line) != want {
			t.Fatalf("line %q, want %q", line, want)
		}
		if i != next[g] {
			t.Fatalf("writer %d: line %d after %d", g, i, next[g]-1)
		}
		next[g]++
		n++
	}
	if n != writers*lines {
		t.Fatalf("%d lines, want %d", n, writers*lines)
	}
	writes, batched := lw.Stats()
	t.Logf("%d messages in %d writes (%d batched)", n, writes, batched)
}

// blockingWriter holds its first write until release is closed.
type blockingWriter struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	calls   int
	entered chan struct{}
	release chan struct{}
	fail    error
}

func (b *blockingWriter) Write(p []byte) (int, error) {
	b.mu.Lock()
	b.calls++
	first := b.calls == 1
	b.mu.Unlock()
	if first {
		close(b.entered)
		<-b.release
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fail != nil && !first {
		return 0, b.fail
	}
	return b.buf.Write(p)
}

// TestWriterCoalesces: what is written while a write is in flight goes out
// in one write when it returns, in order; Flush waits for it.
func TestWriterCoalesces(t *testing.T) {
	bw := &blockingWriter{entered: make(chan struct{}), release: make(chan struct{})}
	lw := New(bw)
	done := make(chan error)
	go func() { _, err := lw.Write([]byte("a\n")); done <- err }()
	<-bw.entered
	for _, m := range []string{"b\n", "c\n", "d\n"} {
		if n, err := lw.Write([]byte(m)); err != nil || n != len(m) {
			t.Fatalf("queued Write = %d, %v", n, err)
		}
	}
	close(bw.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := lw.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := bw.buf.String(); got != "a\nb\nc\nd\n" {
		t.Fatalf("stream %q", got)
	}
	if writes, batched := lw.Stats(); writes != 2 || batched != 3 || bw.calls != 2 {
		t.Fatalf("writes %d (stream saw %d), batched %d; want 2, 3", writes, bw.calls, batched)
	}
	// Idle again: the next message is written at once, by its caller.
	if _, err := lw.Write([]byte("e\n")); err != nil || bw.buf.String() != "a\nb\nc\nd\ne\n" {
		t.Fatalf("idle Write: %v, stream %q", err, bw.buf.String())
	}
}

// TestWriterErrorSticks: once a (batched) write failed, every later Write
// and Flush report it and nothing more is written.
func TestWriterErrorSticks(t *testing.T) {
	boom := errors.New("broken pipe")
	bw := &blockingWriter{entered: make(chan struct{}), release: make(chan struct{}), fail: boom}
	lw := New(bw)
	done := make(chan error)
	go func() { _, err := lw.Write([]byte("a\n")); done <- err }()
	<-bw.entered
	if _, err := lw.Write([]byte("b\n")); err != nil {
		t.Fatal(err)
	}
	close(bw.release)
	if err := <-done; err != nil {
		t.Fatalf("the first Write wrote its own message: %v", err)
	}
	if err := lw.Flush(); !errors.Is(err, boom) {
		t.Fatalf("Flush = %v, want %v", err, boom)
	}
	calls := bw.calls
	if _, err := lw.Write([]byte("c\n")); !errors.Is(err, boom) {
		t.Fatalf("Write after the failure = %v", err)
	}
	if bw.calls != calls {
		t.Fatal("a Write after the failure reached the stream")
	}
}
