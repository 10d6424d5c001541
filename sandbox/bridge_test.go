package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// driveParent runs the parent's side of one run (reader, handle, done) over
// out as the worker's stdout, like Run does, and returns the result, the
// worker handle and the replies the parent wrote to the worker, once want
// of them arrived (or the stream ended with fewer).
func driveParent(t *testing.T, opts Options, out []byte, want int) (*Result, *worker, []message) {
	t.Helper()
	opts.Exe, opts.Logger = "unused", slog.New(slog.NewTextHandler(io.Discard, nil))
	if err := opts.defaults(); err != nil {
		t.Fatal(err)
	}
	p := &Pool{opts: opts}
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var replies []message
	got := make(chan struct{}, 1024)
	go func() {
		sc := bufio.NewScanner(inR)
		sc.Buffer(make([]byte, 64<<10), 8<<20)
		for sc.Scan() {
			var m message
			_ = json.Unmarshal(sc.Bytes(), &m)
			mu.Lock()
			replies = append(replies, m)
			mu.Unlock()
			got <- struct{}{}
		}
	}()
	w := &worker{stdin: inW, msgs: make(chan message, 16), abandoned: make(chan struct{}), exited: make(chan struct{})}
	lineMax := opts.MaxMessageBytes + 2*opts.MaxOutputBytes + 2*opts.MaxLogBytes + 64<<10
	go w.readMessages(io.NopCloser(bytes.NewReader(out)), lineMax, p.runOutputCap())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	bridge := func(_ context.Context, op string, args json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`"ok"`), nil
	}
	r := &run{pool: p, w: w, bridge: bridge, res: &Result{}, ctx: ctx, sem: make(chan struct{}, opts.MaxConcurrentCalls)}
	for m := range w.msgs {
		if m.T == msgDone {
			r.done(m)
			break
		}
		r.handle(m)
	}
	for i := 0; i < want; i++ {
		select {
		case <-got:
		case <-time.After(10 * time.Second): // fail-safe bound
			i = want
		}
	}
	w.abandonOnce.Do(func() { close(w.abandoned) })
	res := r.finish()
	mu.Lock()
	defer mu.Unlock()
	return res, w, append([]message(nil), replies...)
}

func callLine(id int, argBytes int) string {
	return fmt.Sprintf(`{"t":"call","id":%d,"op":"call","args":["mcp:a:b",{"x":%q}]}`, id, strings.Repeat("y", argBytes))
}

// TestParentRefusesPastRunBytes: a worker that does not
// keep to the limit of a run (the real one refuses such calls itself) gets
// its calls past MaxRunBridgeBytes refused by the parent, with the limit
// named, and they never reach the bridge.
func TestParentRefusesPastRunBytes(t *testing.T) {
	var out strings.Builder
	for i := 1; i <= 6; i++ {
		out.WriteString(callLine(i, 900) + "\n")
	}
	out.WriteString(`{"t":"done","ok":true,"value":1}` + "\n")
	res, _, replies := driveParent(t, Options{MaxMessageBytes: 1024, MaxRunBridgeBytes: 3000}, []byte(out.String()), 6)
	if len(res.Calls) != 3 || res.RefusedCalls != 3 {
		t.Errorf("calls that reached the bridge %d, refused %d; want 3 and 3", len(res.Calls), res.RefusedCalls)
	}
	refused := 0
	for _, m := range replies {
		if strings.Contains(m.Error, "the limit of a run is 3000 bytes") {
			refused++
		}
	}
	if refused != 3 {
		t.Errorf("%d replies name the limit of a run, want 3: %+v", refused, replies)
	}
}

// TestParentStopsReadingPastRunOutput: a worker that sends more bytes in
// all than a run may (whatever the message kinds) is cut off and killed,
// and the run says why; a single line over the line limit likewise.
func TestParentStopsReadingPastRunOutput(t *testing.T) {
	opts := Options{MaxMessageBytes: 1024, MaxRunBridgeBytes: 2048, MaxLogBytes: 256, MaxOutputBytes: 256, MaxTotalCalls: 4}
	var out strings.Builder
	for out.Len() < 4<<20 { // logs are dropped past MaxLogBytes, but still read
		out.WriteString(`{"t":"log","level":"log","text":"` + strings.Repeat("z", 60000) + `"}` + "\n")
	}
	_, w, _ := driveParent(t, opts, []byte(out.String()), 0)
	if !errors.Is(w.readErr, errRunTooMuch) {
		t.Errorf("readErr = %v, want errRunTooMuch", w.readErr)
	}
	long := `{"t":"log","text":"` + strings.Repeat("z", 200<<10) + `"}` + "\n"
	_, w, _ = driveParent(t, opts, []byte(long), 0)
	if !errors.Is(w.readErr, errLineTooLong) {
		t.Errorf("readErr = %v, want errLineTooLong", w.readErr)
	}
}

// TestWorkerRefusesBigArguments: the real worker refuses, in the script,
// arguments over the per-call limit (before JSON.stringify for big ones)
// and calls past the limit of a run, naming each limit; nothing of them
// reaches the bridge.
func TestWorkerRefusesBigArguments(t *testing.T) {
	fb := &fakeBridge{}
	p := newPool(t, func(o *Options) { o.MaxMessageBytes = 64 << 10; o.MaxRunBridgeBytes = 200 << 10 })
	res := p.Run(context.Background(), `
const big = "x".repeat(3900000), mid = "y".repeat(60000);
const r1 = await openclaw.tools.call("mcp:a:b", {t: big}).then(() => "ok", e => e.message);
const rs = await Promise.allSettled([1,2,3,4].map(() => openclaw.tools.call("mcp:a:b", {t: mid})));
return [r1, rs.map(r => r.status === "fulfilled" || !r.reason.message.includes("limit") ? "reached" : r.reason.message)];`, 20*time.Second, fb.serve)
	if !res.OK {
		t.Fatalf("run failed: %s", res.Error)
	}
	var v []any
	_ = json.Unmarshal(res.Value, &v)
	s := fmt.Sprint(v)
	if !strings.Contains(s, "arguments are at least 39000") || !strings.Contains(s, "bytes, over the 65536-byte limit") ||
		!strings.Contains(s, "reached reached reached") || !strings.Contains(s, "the limit of a run is 204800 bytes") {
		t.Errorf("outcomes: %s", s)
	}
	if len(res.Calls) != 3 {
		t.Errorf("%d calls reached the bridge, want 3", len(res.Calls))
	}
}

// BenchmarkBigResults measures what afterCall and afterRun (garbage of
// big bridge calls collected and handed back to the OS) cost a run of 8
// calls with 512 KB results, with about 2M live objects standing in for a
// big catalog:
//
//	go test ./sandbox -run '^$' -bench BigResults -benchtime 20x
func BenchmarkBigResults(b *testing.B) {
	// The fields only take room (text a pointer to scan), as a catalog's
	// objects do.
	type node struct {
		//lint:ignore U1000 takes room
		name, text string
		//lint:ignore U1000 takes room
		pad [2]int64
	}
	live := make([]*node, 1<<20) // ~70 MB in 2M objects
	for i := range live {
		live[i] = &node{name: strconv.Itoa(i)}
	}
	p := newPool(b, nil)
	result, _ := json.Marshal(strings.Repeat("r", 512<<10))
	bridge := func(context.Context, string, json.RawMessage) (json.RawMessage, error) { return result, nil }
	code := `let n = 0; for (let i = 0; i < 8; i++) n += (await openclaw.tools.call("mcp:a:b", {})).length; return n`
	for _, free := range []bool{true, false} {
		b.Run(fmt.Sprintf("free=%v", free), func(b *testing.B) {
			freeAfterBigCalls = free
			defer func() { freeAfterBigCalls = true }()
			for b.Loop() {
				b.StopTimer()
				for len(p.idle) < cap(p.idle) { // warm: wait for the spares
					time.Sleep(200 * time.Microsecond)
				}
				b.StartTimer()
				if res := p.Run(context.Background(), code, 30*time.Second, bridge); !res.OK {
					b.Fatalf("run failed: %s", res.Error)
				}
			}
		})
	}
	_ = live[len(live)-1].name
}
