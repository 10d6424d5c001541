package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"testing"
)

// FuzzWorkerProtocol feeds arbitrary bytes to the parent as a worker's
// stdout (the worker runs model-written code: nothing it sends is trusted)
// and drives the run as Run does: the reader, handle (log, call, refused)
// and done. The parent must not panic, and every bound must hold whatever
// the worker sends: the console text, the number of calls reaching the
// bridge, the returned value (valid JSON, cut to the output limit) and the
// error text. Seed corpus: testdata/fuzz/FuzzWorkerProtocol.
func FuzzWorkerProtocol(f *testing.F) {
	f.Fuzz(func(t *testing.T, out []byte) {
		opts := Options{Exe: "unused", MaxLogBytes: 256, MaxOutputBytes: 256, MaxMessageBytes: 1024, MaxTotalCalls: 4,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
		if err := opts.defaults(); err != nil {
			t.Fatal(err)
		}
		p := &Pool{opts: opts}
		inR, inW, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		drained := make(chan struct{})
		go func() { _, _ = io.Copy(io.Discard, inR); close(drained) }()
		w := &worker{stdin: inW, msgs: make(chan message, 64), abandoned: make(chan struct{}),
			exited: make(chan struct{})}
		lineMax := opts.MaxMessageBytes + 2*opts.MaxOutputBytes + 2*opts.MaxLogBytes + 64<<10
		go w.readMessages(io.NopCloser(bytes.NewReader(out)), lineMax, p.runOutputCap())

		ctx, cancel := context.WithCancel(context.Background())
		bridge := func(_ context.Context, op string, args json.RawMessage) (json.RawMessage, error) {
			return args, nil // echo: the worker's own bytes come back to it
		}
		r := &run{pool: p, w: w, bridge: bridge, res: &Result{}, ctx: ctx, sem: make(chan struct{}, opts.MaxConcurrentCalls)}
		finished := false
		for m := range w.msgs {
			if m.T == msgDone {
				r.done(m)
				finished = true
				break
			}
			r.handle(m)
		}
		w.abandonOnce.Do(func() { close(w.abandoned) })
		cancel()
		if !finished {
			r.res.Error = "sandbox worker died: exited without a result"
		}
		res := r.finish()

		logBytes := 0
		for i, l := range res.Logs {
			if l.Level == "note" && i == len(res.Logs)-1 && res.LogsTruncated {
				if len(l.Text) > 300 {
					t.Errorf("console note of %d bytes", len(l.Text))
				}
				continue
			}
			logBytes += len(l.Text) + 1
			if l.Level != "log" && l.Level != "warn" && l.Level != "error" {
				t.Errorf("log level %q", l.Level)
			}
		}
		if logBytes > opts.MaxLogBytes {
			t.Errorf("console text %d bytes, over MaxLogBytes %d", logBytes, opts.MaxLogBytes)
		}
		if len(res.Calls) > opts.MaxTotalCalls {
			t.Errorf("%d calls reached the bridge, over MaxTotalCalls %d", len(res.Calls), opts.MaxTotalCalls)
		}
		for _, c := range res.Calls {
			if len(c.Arg0) > 200+len("…") {
				t.Errorf("call Arg0 not bounded: %d bytes", len(c.Arg0))
			}
		}
		if res.OK {
			if !json.Valid(res.Value) {
				t.Errorf("OK result with invalid JSON value %q", res.Value)
			}
			if len(res.Value) > opts.MaxOutputBytes+128+2*len("…[output truncated: 0000000000 bytes total]")+8 {
				t.Errorf("value %d bytes, over the output limit", len(res.Value))
			}
		}
		if len(res.Error) > maxRunErrorBytes+64 {
			t.Errorf("error %d bytes, over the bound", len(res.Error))
		}
		// Serving goroutines may still write replies: close the pipe only
		// after they are done with it (they hold no lock once cancelled).
		r.mu.Lock()
		r.mu.Unlock() //lint:ignore SA2001 a barrier: the serving goroutines have released the lock

		_ = inW.Close()
		<-drained
	})
}
