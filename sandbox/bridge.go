package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dop251/goja"
)

// The bridge's byte caps. Trust: the worker runs
// model-written code; whatever it sends, the parent (the proxy) holds in
// its own memory, which the worker's memory limit does not cover. So:
//
//   - one bridge call's arguments are at most MaxMessageBytes, and the
//     arguments of all calls of a run at most MaxRunBridgeBytes: the worker
//     rejects calls past either in the script (an Error naming the limit),
//     and the parent refuses them again (run.call) should a worker not;
//   - the parent reads one line of at most lineMax bytes (readLine never
//     buffers past it) and at most runOutputCap bytes in all from one run:
//     a worker past either is killed and the run reports why;
//   - the arguments of the calls being served at once, over all runs, are
//     at most MaxInflightBridgeBytes (bytesInFlight), and the garbage of
//     big calls is collected and handed back to the OS once
//     it passes garbageBytes (afterCall) and after the run (afterRun), so
//     the proxy stays near its size and returns to it.

// errRunTooMuch is the read error of a worker that sent more than
// runOutputCap bytes in one run.
var errRunTooMuch = errors.New("sent more bytes than a run may")

// runOutputCap is the most bytes the parent reads from one worker: the
// arguments of every bridge call, the console, the result, with room for
// the protocol around them.
func (p *Pool) runOutputCap() int64 {
	o := p.opts
	return int64(o.MaxRunBridgeBytes) + int64(o.MaxMessageBytes) + 2*int64(o.MaxLogBytes) + 2*int64(o.MaxOutputBytes) +
		int64(o.MaxTotalCalls)*256 + 1<<20
}

// readMessages reads the worker's stdout, one JSON message per line of at
// most lineMax bytes and at most total bytes in all, into w.msgs until EOF,
// a bad line, or the parent abandons the run. A line that is too long, past
// the total, or not a JSON message kills the worker (w.readErr says why)
// and ends the stream: the parent then reports the worker dead.
//
// Trust: the worker runs model-written code; the parent treats everything
// it sends as untrusted (docs/security.md). A line is never buffered past
// lineMax (readLine stops at the limit).
func (w *worker) readMessages(out io.ReadCloser, lineMax int, total int64) {
	defer out.Close()
	defer close(w.msgs)
	br := bufio.NewReaderSize(out, 64<<10)
	var read int64
	for {
		line, err := readLine(br, lineMax)
		if err != nil {
			if err != io.EOF {
				w.readErr = err
				w.kill()
			}
			return
		}
		if read += int64(len(line)) + 1; total > 0 && read > total {
			w.readErr = fmt.Errorf("%w: more than %d bytes", errRunTooMuch, total)
			w.kill()
			return
		}
		var m message
		if err := json.Unmarshal(line, &m); err != nil {
			w.readErr = fmt.Errorf("bad message from worker: %w", err)
			w.kill()
			return
		}
		select {
		case w.msgs <- m:
		case <-w.abandoned:
			return
		}
	}
}

// overRunBytes adds the arguments of call m to the run's total and
// reports whether that goes past MaxRunBridgeBytes (the worker should have
// refused it already). A refused call's bytes still count.
func (r *run) overRunBytes(m message) bool {
	r.argBytes += len(m.Args)
	return r.argBytes > r.pool.opts.MaxRunBridgeBytes
}

// runBytesMessage is the error a script sees for a call past the run's
// byte limit.
func runBytesMessage(op string, sent, limit int) string {
	return fmt.Sprintf("openclaw.tools.%s refused: this run already sent %d bytes of bridge-call arguments, and the limit of a run is %d bytes", op, sent, limit)
}

// bigCallBytes is the size (arguments and result) from which a bridge
// call counts as big: the proxy then checks its garbage after the call and
// once more after the run (afterCall, afterRun).
const bigCallBytes = 64 << 10

// garbageBytes is how much garbage the heap may carry, over what the last
// collection found live, before afterCall collects it.
const garbageBytes = 16 << 20

// freeAfterBigCalls switches afterCall and afterRun (off only in
// BenchmarkBigResults, to measure what they cost).
var freeAfterBigCalls = true

var (
	freeMu      sync.Mutex  // one collection at a time; callers queue behind it (backpressure)
	freePending atomic.Bool // afterRun's collection is scheduled
)

// afterCall collects the garbage of big bridge calls (n bytes of arguments
// and result) once it passes garbageBytes, and hands it back to the OS,
// before the call's bytes in flight are released: one megabyte crossing the
// proxy's call path (decoded, re-encoded, sent to the upstream, its answer
// decoded) allocates many times that, and with GOGC=400, as `serve` sets
// it, that garbage would otherwise grow the heap five times over before a
// collection, and stay mapped after it. It reports whether the call was
// big. Small calls cost nothing here; a collection costs tens of ms on a
// big heap (BenchmarkBigResults), so it is not made after every big call.
func afterCall(n int) bool {
	if n < bigCallBytes || !freeAfterBigCalls {
		return false
	}
	if garbage() > garbageBytes {
		freeMu.Lock()
		if garbage() > garbageBytes { // not collected while this call waited
			debug.FreeOSMemory()
		}
		freeMu.Unlock()
	}
	return true
}

// afterRunDelay is how long after a run afterRun collects.
const afterRunDelay = 200 * time.Millisecond

// afterRun hands the garbage of a run that made big bridge calls back to
// the OS, so that the proxy returns to its size; in the background, a
// moment later (the run's answer does not wait, and its garbage is made
// by then), at most one scheduled at a time.
func afterRun() {
	if !freeAfterBigCalls || !freePending.CompareAndSwap(false, true) {
		return
	}
	go func() {
		time.Sleep(afterRunDelay) // the answer to the client is encoded and sent meanwhile
		freeMu.Lock()
		defer freeMu.Unlock()
		freePending.Store(false)
		debug.FreeOSMemory()
	}()
}

var garbageSamples = []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/live:bytes"}}
var garbageMu sync.Mutex

// garbage is the heap's bytes over what the last collection found live
// (runtime/metrics; about a microsecond).
func garbage() uint64 {
	garbageMu.Lock()
	defer garbageMu.Unlock()
	metrics.Read(garbageSamples)
	objects, live := garbageSamples[0].Value, garbageSamples[1].Value
	if objects.Kind() != metrics.KindUint64 || live.Kind() != metrics.KindUint64 || objects.Uint64() < live.Uint64() {
		return 0
	}
	return objects.Uint64() - live.Uint64()
}

// minArgsSize is a lower bound of the JSON size of a bridge call's
// arguments: the lengths of the strings and keys it finds, looking at most
// at 2000 values (so a huge object costs little to reject and nothing is
// missed that JSON.stringify would count: it only undercounts).
func minArgsSize(args []goja.Value) int {
	budget := 2000
	n := 0
	for _, a := range args {
		n += minJSONSize(a, &budget, 0)
	}
	return n
}

func minJSONSize(v goja.Value, budget *int, depth int) int {
	if *budget <= 0 || depth > 64 || v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return 0
	}
	*budget--
	obj, ok := v.(*goja.Object)
	if !ok {
		return len(v.String()) // a string (quotes not counted), a number, a boolean
	}
	if _, isFunc := goja.AssertFunction(obj); isFunc {
		return 0
	}
	n := 0
	for _, k := range obj.Keys() {
		if *budget <= 0 {
			break
		}
		n += len(k) + minJSONSize(obj.Get(k), budget, depth+1)
	}
	return n
}

// bytesInFlight waits until n bytes of bridge-call arguments fit under
// MaxInflightBridgeBytes over all runs (a call larger than the whole limit
// waits for all of it), and returns the function that gives them back.
func (p *Pool) bytesInFlight(ctx context.Context, n int) (func(), error) {
	if p.inflight == nil {
		return func() {}, nil
	}
	w := int64(min(max(n, 1), p.opts.MaxInflightBridgeBytes))
	if err := p.inflight.Acquire(ctx, w); err != nil {
		return nil, err
	}
	return func() { p.inflight.Release(w) }, nil
}
