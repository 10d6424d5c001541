// Package sandbox runs a JavaScript async-function body in goja inside a
// separate, short-lived worker process (SPEC §3 "code" mode, §5 runtime
// boundary; DESIGN.md "Sandbox").
//
// It knows nothing of MCP. The script sees only console.log/warn/error and
// openclaw.tools.search/describe/call; every tools call is sent to the parent
// over the worker's stdin/stdout (see protocol.go) and served there by a
// Bridge the caller supplies. The parent owns the wall-clock timeout and
// kills the worker's whole process group when it expires.
//
// The binary must route the worker role to WorkerMain: when os.Args[1] is
// "sandbox-worker" (Options.Args), main calls os.Exit(sandbox.WorkerMain()).
package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/mcp-toolsearch/mcp-toolsearch/proc"
)

// Bridge serves one bridge call of a running script. op is "search",
// "describe" or "call"; args is the JSON array of the JS call's arguments,
// e.g. ["create issue",{"limit":3}] or ["mcp:gh:create_issue",{...}]
// (undefined arguments arrive as null). The returned JSON value resolves the
// script's Promise; an error rejects it with an Error whose message is
// err.Error(). ctx is cancelled when the run ends (done, timeout, caller
// cancellation). Calls of one run may be served concurrently.
type Bridge func(ctx context.Context, op string, args json.RawMessage) (json.RawMessage, error)

// PropsError is implemented by Bridge errors that carry properties for the
// JS Error object the Promise is rejected with, as a JSON object (e.g.
// {"upstream": "gh", "code": -32042, "data": {...}}: the script reads
// e.code). Props larger than the bridge's error bound are dropped.
type PropsError interface {
	error
	JSProps() json.RawMessage
}

// Options configures a Pool. Zero fields take the defaults shown.
type Options struct {
	// Exe is the binary re-executed as a worker; default os.Executable().
	Exe string
	// Args are its arguments; default ["sandbox-worker"].
	Args []string
	// PoolSize is the number of pre-started idle workers; default 2.
	PoolSize int
	// MemoryLimitBytes is the worker's memory limit in bytes; default 512 MiB.
	// Linux: RLIMIT_DATA (RLIMIT_AS is not used: Go reserves address space
	// eagerly); macOS: the worker's own watchdog (the kernel does not apply
	// RLIMIT_DATA to mmap'd memory); Windows: the Job Object's process memory.
	MemoryLimitBytes int64
	// CPUSeconds is the worker's CPU-time limit in seconds (RLIMIT_CPU; on
	// Windows the Job Object's user time); default 30.
	CPUSeconds int
	// MaxConcurrentCalls caps bridge calls served at once per run; default 4.
	// Further calls wait for a slot.
	MaxConcurrentCalls int
	// MaxConcurrentRuns caps the runs (worker processes, each allowed
	// MemoryLimitBytes) at once; default 4. Further runs wait for a slot
	// (slots.go).
	MaxConcurrentRuns int
	// MaxRunsPerOwner caps the slots one owner (WithOwner: a client
	// session) holds at once; default MaxConcurrentRuns/2 (at least 1), so
	// no session can hold them all.
	MaxRunsPerOwner int
	// SlotWait is the longest a run waits for a slot (never past its own
	// timeout) before it fails with "sandbox busy"; default 3 s. The run's
	// timeout starts once it has its slot.
	SlotWait time.Duration
	// MaxTotalCalls caps bridge calls per run; default 64. Calls over the cap
	// are rejected in the script without reaching the Bridge.
	MaxTotalCalls int
	// MaxLogBytes bounds the console text kept per run, in bytes; default 16 KiB.
	MaxLogBytes int
	// MaxOutputBytes bounds Result.Value, in bytes; default 64 KiB.
	MaxOutputBytes int
	// MaxMessageBytes bounds the JSON arguments of one bridge call, in
	// bytes; default 256 KiB (the parent holds what the
	// worker sends, many times over on its way to the upstream).
	MaxMessageBytes int
	// MaxResultBytes bounds the JSON result the Bridge returns for one call,
	// in bytes; default 4 MiB (the result is in the proxy already, from the
	// upstream, whose messages upstream.Options.MaxMessageBytes bounds).
	MaxResultBytes int
	// MaxRunBridgeBytes bounds the JSON arguments of all the bridge calls of
	// one run together, in bytes; default 2 MiB. Calls past it are rejected
	// with an error naming the limit (bridge.go).
	MaxRunBridgeBytes int
	// MaxInflightBridgeBytes bounds the arguments of the bridge calls being
	// served at once over all runs of the pool, in bytes; default 1 MiB.
	// Further calls wait (bridge.go).
	MaxInflightBridgeBytes int
	// MaxCallStackSize is goja's maximum JS call depth; default 2000.
	MaxCallStackSize int
	// StartTimeout bounds how long a new worker may take to report ready;
	// default 10 s.
	StartTimeout time.Duration
	// Logger receives worker failures (with bounded stderr); default
	// slog.Default().
	Logger *slog.Logger
}

func (o *Options) defaults() error {
	if o.Exe == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("sandbox: cannot find own executable: %w", err)
		}
		o.Exe = exe
	}
	if o.Args == nil {
		o.Args = []string{"sandbox-worker"}
	}
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.PoolSize, 2)
	def(&o.CPUSeconds, 30)
	def(&o.MaxConcurrentCalls, 4)
	def(&o.MaxConcurrentRuns, 4)
	def(&o.MaxRunsPerOwner, max(1, o.MaxConcurrentRuns/2))
	if o.SlotWait <= 0 {
		o.SlotWait = 3 * time.Second
	}
	def(&o.MaxTotalCalls, 64)
	def(&o.MaxLogBytes, 16<<10)
	def(&o.MaxOutputBytes, 64<<10)
	def(&o.MaxMessageBytes, 256<<10)
	def(&o.MaxResultBytes, 4<<20)
	def(&o.MaxRunBridgeBytes, 2<<20)
	def(&o.MaxInflightBridgeBytes, 1<<20)
	def(&o.MaxCallStackSize, 2000)
	if o.MemoryLimitBytes <= 0 {
		o.MemoryLimitBytes = 512 << 20
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = 10 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return nil
}

// LogLine is one console line of a script. Level is "log", "warn" or
// "error" (console.info/debug map to "log"), or "note" for the one line the
// sandbox adds at the end of console output cut at Options.MaxLogBytes,
// saying what was not kept: "[console output truncated at 16384 bytes: …]"
// (console.go).
type LogLine struct {
	Level string `json:"level"`
	Text  string `json:"text"`
}

// CallRecord is one bridge call a script made. Arg0 is its first argument
// when that is a string (the query of search, the id of describe/call).
// Error is the error the script saw ("" on success), or "still running when
// the run ended" for calls in flight at the end. Ms is the call's duration in
// milliseconds.
type CallRecord struct {
	Op    string  `json:"op"`
	Arg0  string  `json:"arg0,omitempty"`
	Error string  `json:"error,omitempty"`
	Ms    float64 `json:"ms"`
}

// Result is the outcome of one Run.
//
// OK is true when the body returned normally; Value is then the returned
// value as JSON ("null" for undefined, and Undefined is set: the body had no
// `return`, or returned undefined). Otherwise Error says why, with
// "(line N, col M)" of the user's body when known: a thrown error, a syntax
// error, "timed out after N ms" (TimedOut set), "sandbox worker died: ..."
// or a refused start. OutputTruncated marks a Value cut to MaxOutputBytes
// (Value is then a JSON string ending in a "…[output truncated: N bytes
// total]" marker). SearchCount, DescribeCount and CallCount count the calls
// that reached the Bridge and Calls lists them in order; RefusedCalls counts
// calls refused by the MaxTotalCalls cap (exact when the run completes, at
// least 1 after a timeout if any was refused).
// DurationMs is the wall time of Run in milliseconds.
type Result struct {
	OK            bool            `json:"ok"`
	Value         json.RawMessage `json:"value,omitempty"`
	Error         string          `json:"error,omitempty"`
	TimedOut      bool            `json:"timedOut,omitempty"`
	Busy          bool            `json:"busy,omitempty"` // no sandbox slot within SlotWait: the body never ran (slots.go)
	Logs          []LogLine       `json:"logs,omitempty"`
	LogsTruncated bool            `json:"logsTruncated,omitempty"`
	// LogsDroppedLines and LogsDroppedBytes say what of the console was
	// not kept: lines dropped whole, and bytes in all (theirs and the cut
	// end of the last line kept); console.go. When the run ended before
	// the worker reported its counts (timeout, a dead worker), only what
	// the parent itself dropped is counted, and the note says so.
	LogsDroppedLines int          `json:"logsDroppedLines,omitempty"`
	LogsDroppedBytes int64        `json:"logsDroppedBytes,omitempty"`
	OutputTruncated  bool         `json:"outputTruncated,omitempty"`
	Undefined        bool         `json:"undefined,omitempty"`
	Calls            []CallRecord `json:"calls,omitempty"`
	SearchCount      int          `json:"searchCount"`
	DescribeCount    int          `json:"describeCount"`
	CallCount        int          `json:"callCount"`
	RefusedCalls     int          `json:"refusedCalls,omitempty"`
	DurationMs       float64      `json:"durationMs"`
}

// Pool keeps pre-started workers and runs scripts on them; each worker runs
// one script and exits. A Pool is safe for concurrent use.
type Pool struct {
	opts  Options
	idle  chan *worker
	slots *slots // MaxConcurrentRuns slots shared between owners (slots.go)
	// inflight weighs the bridge-call arguments being served (bridge.go).
	inflight *semaphore.Weighted

	mu     sync.Mutex
	closed bool
	live   map[*worker]struct{}
	wg     sync.WaitGroup // background spawns and reapers
}

// NewPool starts opts.PoolSize workers and waits until each reports ready.
// It returns an error (and leaves nothing running) when a worker cannot be
// started, e.g. the binary does not route opts.Args to WorkerMain; the caller
// then falls back to the "tools" mode (SPEC §3, last bullet).
func NewPool(opts Options) (*Pool, error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	p := &Pool{opts: opts, idle: make(chan *worker, opts.PoolSize), slots: newSlots(opts.MaxConcurrentRuns, opts.MaxRunsPerOwner), live: map[*worker]struct{}{},
		inflight: semaphore.NewWeighted(int64(opts.MaxInflightBridgeBytes))}
	for range opts.PoolSize {
		w, err := p.spawn()
		if err != nil {
			p.Close()
			return nil, err
		}
		p.idle <- w
	}
	// Never run with fewer guarantees silently: say what holds on this OS.
	enforced, notByOS := osLimits(&p.opts)
	if notByOS == "" {
		opts.Logger.Info("code sandbox limits", "os", runtime.GOOS, "enforced", enforced)
	} else {
		opts.Logger.Info("code sandbox limits", "os", runtime.GOOS, "enforced", enforced, "not_enforced_by_the_os", notByOS)
	}
	return p, nil
}

// Close kills every worker (idle or running) and waits for all of them to be
// reaped and their temporary directories removed. Runs in progress end with
// an error. Close is idempotent.
func (p *Pool) Close() {
	p.mu.Lock()
	p.closed = true
	ws := make([]*worker, 0, len(p.live))
	for w := range p.live {
		ws = append(ws, w)
	}
	p.mu.Unlock()
	for _, w := range ws {
		w.kill()
	}
	p.wg.Wait()
	for _, w := range ws {
		<-w.exited
	}
	for {
		select {
		case w := <-p.idle:
			w.kill()
			<-w.exited
		default:
			return
		}
	}
}

// get returns a ready worker: an idle one when available, else a fresh one.
func (p *Pool) get() (*worker, error) {
	for {
		select {
		case w := <-p.idle:
			select {
			case <-w.exited: // died while idle
				continue
			default:
				return w, nil
			}
		default:
			return p.spawn()
		}
	}
}

// refill starts one worker in the background and parks it in the idle set.
func (p *Pool) refill() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.wg.Add(1)
	p.mu.Unlock()
	go func() {
		defer p.wg.Done()
		w, err := p.spawn()
		if err != nil {
			p.mu.Lock()
			closed := p.closed
			p.mu.Unlock()
			switch {
			case errors.Is(err, errPoolClosed):
			case closed:
				// The pool closed while the spare was starting and Close
				// killed it (a WARN at every stdio
				// session's end): expected, not a fault.
				p.opts.Logger.Debug("sandbox: spare worker stopped by Close while starting", "error", err)
			default:
				p.opts.Logger.Warn("sandbox: cannot start a spare worker", "error", err)
			}
			return
		}
		select {
		case p.idle <- w:
		default:
			w.kill()
		}
	}()
}

// Run runs the async-function body code in a fresh worker with the given
// wall-clock timeout (> 0; callers clamp it, SPEC §4 code_timeout_ms),
// serving its bridge calls with bridge. It always
// returns a Result (never nil); failures are reported in Result.Error.
// Run returns shortly after the timeout or ctx's cancellation: the worker's
// process group is killed and bridge calls still in flight are abandoned
// (their ctx is cancelled) and recorded as such.
func (p *Pool) Run(ctx context.Context, code string, timeout time.Duration, bridge Bridge) *Result {
	start := time.Now()
	r := &run{pool: p, bridge: bridge, res: &Result{}}
	defer func() { r.res.DurationMs = msSince(start) }()
	defer func() {
		if r.bigCalls.Load() {
			afterRun() // bridge.go
		}
	}()

	if timeout <= 0 {
		r.res.Error = fmt.Sprintf("sandbox: timeout must be positive, got %v", timeout)
		return r.res
	}
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed {
		r.res.Error = "sandbox unavailable: the pool is closed"
		return r.res
	}
	release, err := p.slots.acquire(ctx, ownerOf(ctx), min(timeout, p.opts.SlotWait))
	if err != nil {
		if errors.Is(err, ErrBusy) {
			r.res.Busy = true
			r.res.Error = err.Error()
		} else {
			r.res.Error = "cancelled: " + err.Error()
		}
		return r.res
	}
	defer release()
	deadline := time.NewTimer(timeout) // counted from the slot on
	defer deadline.Stop()
	w, err := p.get()
	if err != nil {
		r.res.Error = "sandbox unavailable: " + err.Error()
		return r.res
	}
	// Start the replacement after the run: on a small machine a starting
	// worker competes with the running one for CPU.
	defer p.refill()
	r.w = w

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	r.ctx = runCtx
	r.sem = make(chan struct{}, p.opts.MaxConcurrentCalls)

	req := message{T: msgRun, Code: code, Limits: &runLimits{
		MemoryLimitBytes: p.opts.MemoryLimitBytes,
		CPUSeconds:       p.opts.CPUSeconds,
		MaxLogBytes:      p.opts.MaxLogBytes,
		MaxOutputBytes:   p.opts.MaxOutputBytes,
		MaxMessageBytes:  p.opts.MaxMessageBytes,
		MaxRunBytes:      p.opts.MaxRunBridgeBytes,
		MaxTotalCalls:    p.opts.MaxTotalCalls,
		MaxCallStackSize: p.opts.MaxCallStackSize,
	}}
	if err := w.send(req); err != nil {
		r.res.Error = "sandbox worker died before the run: " + err.Error()
		w.kill()
		return r.finish()
	}

	for {
		select {
		case m, ok := <-w.msgs:
			if !ok {
				r.workerDied()
				return r.finish()
			}
			if m.T == msgDone {
				r.done(m)
				go p.reap(w)
				return r.finish()
			}
			r.handle(m)
		case <-deadline.C:
			w.killAndWait()
			r.res.TimedOut = true
			r.res.Error = fmt.Sprintf("timed out after %d ms", timeout.Milliseconds())
			return r.finish()
		case <-ctx.Done():
			w.killAndWait()
			r.res.Error = "cancelled: " + ctx.Err().Error()
			return r.finish()
		}
	}
}

// reap waits briefly for a worker that reported done to exit by itself.
func (p *Pool) reap(w *worker) {
	select {
	case <-w.exited:
	case <-time.After(2 * time.Second):
		w.kill()
	}
}

func msSince(t time.Time) float64 { return float64(time.Since(t).Microseconds()) / 1000 }

// run is the parent-side state of one Run.
type run struct {
	pool   *Pool
	w      *worker
	bridge Bridge
	ctx    context.Context
	sem    chan struct{}

	mu     sync.Mutex // guards res.Calls, inflight and res counts after start
	res    *Result
	starts []time.Time
	open   []bool
	total  int

	con      parentConsole // console.go
	argBytes int           // bridge-call argument bytes received (bridge.go)
	bigCalls atomic.Bool   // a bridge call of bigCallBytes or more was served (bridge.go afterRun)
}

func (r *run) handle(m message) {
	switch m.T {
	case msgLog:
		r.addLog(m)
	case msgCall:
		r.call(m)
	case msgRefused:
		r.mu.Lock()
		r.res.RefusedCalls = max(r.res.RefusedCalls, 1)
		r.mu.Unlock()
	default:
		// Unknown message types are ignored; the worker is ours.
	}
}

func (r *run) call(m message) {
	rec := CallRecord{Op: m.Op}
	var args []json.RawMessage
	if json.Unmarshal(m.Args, &args) == nil && len(args) > 0 {
		var s string
		if json.Unmarshal(args[0], &s) == nil {
			rec.Arg0 = truncateUTF8(s, 200)
		}
	}
	refuse := ""
	switch {
	case m.Op != "search" && m.Op != "describe" && m.Op != "call":
		refuse = fmt.Sprintf("unknown bridge operation %q", m.Op)
	case r.total >= r.pool.opts.MaxTotalCalls:
		refuse = callCapMessage(m.Op, r.pool.opts.MaxTotalCalls)
	case r.overRunBytes(m): // bridge.go
		refuse = runBytesMessage(m.Op, r.argBytes, r.pool.opts.MaxRunBridgeBytes)
	}
	if refuse != "" {
		// Only a misbehaving worker gets here (it enforces the cap itself);
		// refusals are counted, not recorded, so they cannot grow without bound.
		r.mu.Lock()
		r.res.RefusedCalls++
		r.mu.Unlock()
		_ = r.w.send(message{T: msgReply, ID: m.ID, Error: refuse})
		return
	}
	r.mu.Lock()
	idx := len(r.res.Calls)
	r.res.Calls = append(r.res.Calls, rec)
	r.starts = append(r.starts, time.Now())
	r.open = append(r.open, true)
	r.total++
	switch m.Op {
	case "search":
		r.res.SearchCount++
	case "describe":
		r.res.DescribeCount++
	case "call":
		r.res.CallCount++
	}
	r.mu.Unlock()
	go r.serve(idx, m)
}

// serve runs one bridge call on its own goroutine, bounded by the run's
// concurrency cap, and sends the reply.
func (r *run) serve(idx int, m message) {
	var (
		out json.RawMessage
		err error
	)
	select {
	case r.sem <- struct{}{}:
		func() {
			defer func() {
				<-r.sem
				if x := recover(); x != nil {
					err = fmt.Errorf("bridge failed: %v", x)
				}
			}()
			if r.bridge == nil {
				err = errors.New("no bridge is configured for this run")
				return
			}
			release, aerr := r.pool.bytesInFlight(r.ctx, len(m.Args)) // bridge.go
			if aerr != nil {
				err = aerr
				return
			}
			defer release()
			out, err = r.bridge(r.ctx, m.Op, m.Args)
			if afterCall(len(m.Args) + len(out)) { // bridge.go: big calls' garbage goes back to the OS
				r.bigCalls.Store(true)
			}
		}()
	case <-r.ctx.Done():
		err = r.ctx.Err()
	}
	if err == nil {
		switch {
		case len(out) == 0:
			out = json.RawMessage("null")
		case len(out) > r.pool.opts.MaxResultBytes:
			err = fmt.Errorf("openclaw.tools.%s: result is %d bytes, over the %d-byte limit", m.Op, len(out), r.pool.opts.MaxResultBytes)
		case !json.Valid(out):
			err = fmt.Errorf("openclaw.tools.%s: the proxy returned invalid JSON", m.Op)
		}
	}
	reply := message{T: msgReply, ID: m.ID}
	if err != nil {
		reply.Error = clipError(err.Error(), maxCallErrorBytes)
		if reply.Error == "" {
			reply.Error = "bridge call failed"
		}
		var pe PropsError
		if errors.As(err, &pe) {
			if p := pe.JSProps(); len(p) > 0 && len(p) <= maxCallErrorBytes && json.Valid(p) {
				reply.Props = p
			}
		}
	} else {
		reply.Value = out
	}
	r.mu.Lock()
	if r.open[idx] {
		r.open[idx] = false
		r.res.Calls[idx].Ms = msSince(r.starts[idx])
		r.res.Calls[idx].Error = reply.Error
	}
	r.mu.Unlock()
	_ = r.w.send(reply)
}

func (r *run) done(m message) {
	r.mu.Lock()
	r.res.RefusedCalls = max(r.res.RefusedCalls, int(m.ID))
	r.mu.Unlock()
	r.countedLogs(m) // console.go
	if m.OK {
		r.res.OK = true
		v, cut := cutJSON(m.Value, r.pool.opts.MaxOutputBytes+128)
		if len(v) == 0 || !json.Valid(v) {
			r.res.OK = false
			r.res.Error = "sandbox worker returned an invalid value"
			return
		}
		r.res.Value = v
		r.res.Undefined = m.Undef
		r.res.OutputTruncated = m.Truncated || cut
		return
	}
	r.res.Error = clipError(m.Error, maxRunErrorBytes)
	if r.res.Error == "" {
		r.res.Error = "the script failed"
	}
}

// gcFaultOnMemory reports whether a worker's stderr is the Go runtime's
// crash report of a segmentation fault inside its garbage collector. Under
// the worker's memory limit (RLIMIT_DATA) one allocation past it, such as
// 'x'.repeat(2**28) with a 128 MiB limit, makes the Go 1.26 collector
// (mgcmark_greenteagc.go, spanQueue.tryDrain) fault on memory it could not
// map instead of throwing "runtime: out of memory". A pure-Go
// worker has no other way into such a fault, so it is worded as the
// memory limit.
func gcFaultOnMemory(stderr string) bool {
	first, _, _ := strings.Cut(stderr, "\n")
	if !strings.HasPrefix(first, "SIGSEGV") && !strings.HasPrefix(first, "unexpected fault address") {
		return false
	}
	return strings.Contains(stderr, "runtime.gcDrain") || strings.Contains(stderr, "runtime/mgc")
}

// workerDied explains why the worker's stdout closed before a result.
func (r *run) workerDied() {
	w := r.w
	select {
	case <-w.exited:
	case <-time.After(time.Second):
		w.killFor("its output ended and it did not exit within 1 s")
		<-w.exited
	}
	reason := "exited without a result"
	stderr := w.p.Stderr()
	lstderr := strings.ToLower(stderr)
	st := w.p.State()
	switch {
	case w.readErr != nil && errors.Is(w.readErr, errLineTooLong):
		reason = "sent an oversized message"
	case w.readErr != nil && errors.Is(w.readErr, errRunTooMuch):
		reason = w.readErr.Error()
	case strings.Contains(lstderr, "out of memory") || strings.Contains(lstderr, "cannot allocate memory") ||
		strings.Contains(lstderr, "failed to allocate"):
		reason = fmt.Sprintf("out of memory (limit %d MiB)", r.pool.opts.MemoryLimitBytes>>20)
	case gcFaultOnMemory(stderr):
		reason = fmt.Sprintf("out of memory (limit %d MiB; the worker's Go runtime faulted in its garbage collector when an allocation went past it)", r.pool.opts.MemoryLimitBytes>>20)
	case strings.Contains(lstderr, "stack overflow") || strings.Contains(lstderr, "stack exceeds"):
		reason = "stack overflow"
	case st != nil:
		if k, ok := w.p.KilledByProxy(); ok {
			reason = k + " without a result"
		} else if signaled, sig := w.p.Signaled(); signaled {
			reason = "killed by signal " + sig
			if cpu := st.UserTime() + st.SystemTime(); cpu >= time.Duration(r.pool.opts.CPUSeconds)*time.Second-100*time.Millisecond {
				reason += fmt.Sprintf(" (CPU time limit of %d s)", r.pool.opts.CPUSeconds)
			}
		} else {
			reason = fmt.Sprintf("exited with status %d without a result", st.ExitCode())
		}
	}
	r.pool.mu.Lock()
	closed := r.pool.closed
	r.pool.mu.Unlock()
	if closed {
		r.res.Error = "sandbox stopped: the pool was closed during the run"
		return
	}
	r.res.Error = "sandbox worker died: " + reason
	r.pool.opts.Logger.Warn("sandbox worker died", "reason", reason, "pid", w.p.Pid(), "stderr", stderr)
}

// finish snapshots the result; calls still in flight are marked.
func (r *run) finish() *Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, open := range r.open {
		if open {
			r.open[i] = false
			r.res.Calls[i].Ms = msSince(r.starts[i])
			r.res.Calls[i].Error = "still running when the run ended"
		}
	}
	r.noteLogs() // console.go
	if r.res.TimedOut {
		r.pool.opts.Logger.Info("sandbox run timed out", "error", r.res.Error, "calls", len(r.res.Calls))
	}
	// Serving goroutines no longer touch Calls once every entry is closed.
	return r.res
}

var errPoolClosed = errors.New("the pool is closed")

// Error texts are bounded, in bytes: a bridge error (it reaches the script
// and Result.Calls) and the run's error (a thrown value's message).
const (
	maxCallErrorBytes = 512
	maxRunErrorBytes  = 4 << 10
)

// clipError cuts s to at most max bytes (on a UTF-8 boundary) with a
// marker saying how long it was.
func clipError(s string, max int) string {
	if len(s) <= max {
		return s
	}
	return truncateUTF8(s, max) + fmt.Sprintf("… [%d bytes in all]", len(s))
}

// worker is the parent's handle on one worker process.
type worker struct {
	p       *proc.Process // started by package proc: own group or job, always reaped
	dir     string
	stdin   io.WriteCloser
	sendMu  sync.Mutex
	msgs    chan message
	readErr error         // set before msgs is closed
	exited  chan struct{} // closed after the reap (stderr read) and cleanup
	// abandoned is closed when the parent stops reading msgs (timeout,
	// cancellation): the stdout reader then stops instead of blocking on
	// a full msgs forever (a goroutine and a pipe per timed-out run).
	abandoned   chan struct{}
	abandonOnce sync.Once
}

// spawn starts one worker and waits for its "ready" message.
func (p *Pool) spawn() (*worker, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, errPoolClosed
	}
	p.wg.Add(1) // released when the worker is reaped
	p.mu.Unlock()

	w, err := p.startWorker()
	if err != nil {
		p.wg.Done()
		return nil, err
	}
	p.mu.Lock()
	p.live[w] = struct{}{}
	closed := p.closed
	p.mu.Unlock()
	go func() {
		<-w.p.Done()
		_ = os.RemoveAll(w.dir)
		w.sendMu.Lock()
		_ = w.stdin.Close()
		w.sendMu.Unlock()
		p.mu.Lock()
		delete(p.live, w)
		p.mu.Unlock()
		close(w.exited)
		p.wg.Done()
	}()
	if closed {
		w.kill()
		return nil, errPoolClosed
	}

	timer := time.NewTimer(p.opts.StartTimeout)
	defer timer.Stop()
	select {
	case m, ok := <-w.msgs:
		if ok && m.T == msgReady {
			return w, nil
		}
		w.killFor(`its first message was not "ready"`)
		<-w.exited
		return nil, fmt.Errorf("sandbox worker %s %s did not start (%s); stderr: %q", p.opts.Exe, strings.Join(p.opts.Args, " "), w.p.ExitReason(), truncateUTF8(w.p.Stderr(), 500))
	case <-timer.C:
		w.kill()
		return nil, fmt.Errorf("sandbox worker %s did not report ready within %s", p.opts.Exe, p.opts.StartTimeout)
	}
}

func (p *Pool) startWorker() (*worker, error) {
	dir, err := os.MkdirTemp("", "sandbox-worker-")
	if err != nil {
		return nil, fmt.Errorf("sandbox: creating the worker's directory: %w", err)
	}
	wp, err := proc.Start(proc.Spec{
		Path: p.opts.Exe, Args: p.opts.Args,
		Env:        []string{}, // empty environment (SPEC §5)
		Dir:        dir,
		StderrKeep: 8 << 10,
		Limits:     jobLimits(&p.opts), // Windows; Unix workers set their own rlimits
	})
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("sandbox: starting worker %s: %w", p.opts.Exe, err)
	}
	outR := wp.Stdout()
	w := &worker{
		p: wp, dir: dir, stdin: wp.Stdin(),
		msgs:      make(chan message, 16), // bounded: a line is at most lineMax (bridge.go)
		abandoned: make(chan struct{}),
		exited:    make(chan struct{}),
	}
	lineMax := p.opts.MaxMessageBytes + 2*p.opts.MaxOutputBytes + 2*p.opts.MaxLogBytes + 64<<10
	go w.readMessages(outR, lineMax, p.runOutputCap())
	return w, nil
}

// send writes one message to the worker's stdin; safe for concurrent use.
func (w *worker) send(m message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	w.sendMu.Lock()
	defer w.sendMu.Unlock()
	_, err = w.stdin.Write(b)
	return err
}

// kill kills the worker's whole process group (job on Windows). It does
// not wait; <-w.exited does. Nil-safe for a worker without a process (the
// fuzz target's).
func (w *worker) kill() { w.killFor("") }

// killFor is kill with the proxy's reason, for the worker's exit reason
// ("killed by the proxy (WHY): …", package proc).
func (w *worker) killFor(why string) {
	if w.p != nil {
		w.p.KillFor(why)
	}
}

// killAndWait kills the worker's process group and waits for it to be
// reaped, at most 150 ms (a SIGKILLed process normally goes in well under
// 1 ms; the background waiter reaps it in any case).
func (w *worker) killAndWait() {
	w.abandonOnce.Do(func() { close(w.abandoned) })
	w.kill()
	select {
	case <-w.exited:
	case <-time.After(150 * time.Millisecond):
	}
}
