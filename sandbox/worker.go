package sandbox

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/dop251/goja"
)

// wrapperHead and wrapperTail enclose the user's body so it runs as an async
// function; wrapperLines is how many lines the head adds before the body,
// subtracted from line numbers reported to the user.
const (
	wrapperHead  = "(async () => {\n"
	wrapperTail  = "\n})()"
	wrapperLines = 1
	scriptName   = "sandbox.js"
)

// WorkerMain is the worker role of the binary (DESIGN.md "Sandbox"): the
// lead's main calls it when os.Args[1] == "sandbox-worker" and exits with the
// returned code.
//
// The worker announces itself with a "ready" message on stdout, reads ONE run
// request from stdin, applies the limits it carries to its own process
// (RLIMIT_DATA, RLIMIT_CPU, RLIMIT_NOFILE, RLIMIT_FSIZE=0, RLIMIT_CORE=0, Go
// memory limit, no_new_privs), runs the JavaScript body in goja, speaks the
// bridge protocol (see protocol.go) and exits. It returns 0 after a run was
// reported (even one whose script failed), 1 on a protocol error (bad or
// missing request), and exits at once if stdin closes mid-run (the parent
// went away).
func WorkerMain() int {
	out := &workerOut{w: bufio.NewWriterSize(os.Stdout, 64<<10)}

	// Build the runtime and warm the code paths while idle, before reporting
	// ready, so a run pays neither. Limits are read through w.limits, filled
	// in below.
	w := &jsWorker{out: out, pending: map[int64]*pendingCall{}}
	w.setup()
	warmUp()
	if err := out.send(message{T: msgReady}); err != nil {
		fmt.Fprintf(os.Stderr, "sandbox-worker: cannot write to stdout: %v\n", err)
		return 1
	}

	in := bufio.NewReaderSize(os.Stdin, 64<<10)
	line, err := readLine(in, 64<<20)
	if err != nil {
		fmt.Fprintf(os.Stderr, "sandbox-worker: reading run request: %v\n", err)
		return 1
	}
	var req message
	if err := json.Unmarshal(line, &req); err != nil || req.T != msgRun || req.Limits == nil {
		fmt.Fprintf(os.Stderr, "sandbox-worker: first message must be a run request with limits (got %.80q)\n", line)
		return 1
	}
	w.limits = *req.Limits
	if err := applyLimits(w.limits); err != nil {
		fmt.Fprintf(os.Stderr, "sandbox-worker: applying limits: %v\n", err)
		return 1
	}

	// Replies arrive on a goroutine and are handed to the JS goroutine through
	// a channel: goja is single-threaded.
	replies := make(chan message, 256)
	go func() {
		for {
			line, err := readLine(in, 1<<30)
			if err != nil {
				// The parent closed our stdin or died: nobody wants the result.
				if err != io.EOF {
					fmt.Fprintf(os.Stderr, "sandbox-worker: reading replies: %v\n", err)
				}
				os.Exit(3)
			}
			var m message
			if err := json.Unmarshal(line, &m); err != nil || m.T != msgReply {
				fmt.Fprintf(os.Stderr, "sandbox-worker: bad reply message: %.80q\n", line)
				os.Exit(3)
			}
			replies <- m
		}
	}()

	done := w.run(req.Code, replies)
	done.ID = int64(w.refused)
	done.LogCut, done.LogDropLines, done.LogDropBytes = w.con.cutBytes, w.con.dropLines, w.con.dropBytes // console.go
	if err := out.send(done); err != nil {
		fmt.Fprintf(os.Stderr, "sandbox-worker: writing result: %v\n", err)
		return 1
	}
	return 0
}

// warmUp compiles and runs a small representative script in a throwaway
// runtime, so the first real run does not page in the parser, compiler and
// interpreter from a cold binary.
func warmUp() {
	vm := goja.New()
	prg, err := goja.Compile("warmup.js", wrapperHead+`const o = JSON.parse('{"a":[1,{"b":"c"}]}');
const r = await Promise.all([Promise.resolve(o), 2]);
try { null.x } catch (e) { String(e) }
return JSON.stringify({r, s: "x".repeat(3), m: [1, 2, 3].map(x => x * 2)});`+wrapperTail, false)
	if err == nil {
		_, _ = vm.RunProgram(prg)
	}
}

// workerOut serializes protocol messages onto stdout. It is used from the JS
// goroutine only.
type workerOut struct{ w *bufio.Writer }

func (o *workerOut) send(m message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if _, err := o.w.Write(b); err != nil {
		return err
	}
	return o.w.Flush()
}

type pendingCall struct {
	resolve, reject func(any) error
	op              string // search, describe or call
	// at is "sandbox.js:L:C", where the user's body made the call (""
	// when goja shows no frame of the body): a rejection settles later,
	// with no frame of the body on the stack, so its Error gets this
	// position in its stack and the run's error names (line N, col M).
	at string
}

// jsWorker is the goja side of one run.
type jsWorker struct {
	out       *workerOut
	limits    runLimits
	vm        *goja.Runtime
	pending   map[int64]*pendingCall
	nextID    int64 // bridge calls sent so far
	refused   int   // bridge calls refused by the call cap
	sentBytes int   // bridge-call argument bytes sent this run (MaxRunBytes)
	bodyLines int   // lines of the user's body (callSite)

	con consoleState // console.go

	// Originals captured before user code runs, so a script that replaces
	// JSON.parse or Error only affects itself, not the bridge.
	jsonParse     goja.Callable
	jsonStringify goja.Callable
	errorCtor     goja.Constructor
	// The prototypes whose toJSON JSON.stringify applies to the plain
	// objects and arrays a script passes (protoNote).
	objectProto, arrayProto *goja.Object
}

func (w *jsWorker) setup() {
	vm := goja.New()
	w.vm = vm
	w.jsonParse, _ = goja.AssertFunction(vm.Get("JSON").ToObject(vm).Get("parse"))
	w.jsonStringify, _ = goja.AssertFunction(vm.Get("JSON").ToObject(vm).Get("stringify"))
	w.errorCtor, _ = goja.AssertConstructor(vm.Get("Error"))
	w.objectProto = vm.NewObject().Prototype()
	w.arrayProto = vm.NewArray().Prototype()

	console := vm.NewObject()
	for _, lv := range []struct{ name, level string }{
		{"log", "log"}, {"info", "log"}, {"debug", "log"}, {"warn", "warn"}, {"error", "error"},
	} {
		level := lv.level
		_ = console.Set(lv.name, func(call goja.FunctionCall) goja.Value {
			w.log(level, call.Arguments)
			return goja.Undefined()
		})
	}
	_ = vm.Set("console", console)

	tools := vm.NewObject()
	for _, op := range []string{"search", "describe", "call"} {
		op := op
		_ = tools.Set(op, func(call goja.FunctionCall) goja.Value {
			return w.bridgeCall(op, call.Arguments)
		})
	}
	openclaw := vm.NewObject()
	_ = openclaw.Set("tools", tools)
	_ = vm.Set("openclaw", openclaw)
}

// stringifyArg renders one console argument: strings as they are, other
// values as JSON when possible, else via String().
func (w *jsWorker) stringifyArg(v goja.Value) string {
	if v == nil || goja.IsUndefined(v) {
		return "undefined"
	}
	if _, ok := v.(goja.String); ok { // not Export: that would copy a whole object into Go first
		return v.String()
	}
	if obj, ok := v.(*goja.Object); ok {
		if obj.ClassName() == "Error" {
			return v.String()
		}
		if _, isFn := goja.AssertFunction(v); !isFn {
			js, tooDeep, err := w.stringifyBounded(v, MaxValueDepth)
			if tooDeep {
				return fmt.Sprintf("[a value nested deeper than %d levels]", MaxValueDepth)
			}
			if err == nil && !goja.IsUndefined(js) {
				return js.String()
			}
		}
	}
	return v.String()
}

func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// bridgeCall sends one call to the parent and returns a pending Promise that
// the reply settles.
func (w *jsWorker) bridgeCall(op string, args []goja.Value) goja.Value {
	vm := w.vm
	p, resolve, reject := vm.NewPromise()
	if least := minArgsSize(args); least > w.limits.MaxMessageBytes {
		// Caught before JSON.stringify, which takes a second on a few MB.
		_ = reject(w.newError(fmt.Sprintf("openclaw.tools.%s: arguments are at least %d bytes, over the %d-byte limit", op, least, w.limits.MaxMessageBytes)))
		return vm.ToValue(p)
	}
	raw, tooDeep, err := w.bridgeArgs(args)
	if tooDeep {
		_ = reject(w.newError(fmt.Sprintf("the arguments of openclaw.tools.%s are nested deeper than %d levels", op, MaxValueDepth)))
		return vm.ToValue(p)
	}
	if err != nil {
		_ = reject(w.newError(fmt.Sprintf("openclaw.tools.%s: arguments are not JSON-serializable: %v%s", op, err, w.protoNote(", which JSON.stringify ran on them"))))
		return vm.ToValue(p)
	}
	if w.limits.MaxTotalCalls > 0 && w.nextID >= int64(w.limits.MaxTotalCalls) {
		// Refused here, so a runaway loop cannot flood the parent.
		w.refused++
		if w.refused == 1 {
			_ = w.out.send(message{T: msgRefused, ID: 1})
		}
		_ = reject(w.newError(callCapMessage(op, w.limits.MaxTotalCalls)))
		return vm.ToValue(p)
	}
	if len(raw) > w.limits.MaxMessageBytes {
		_ = reject(w.newError(fmt.Sprintf("openclaw.tools.%s: arguments are %d bytes, over the %d-byte limit", op, len(raw), w.limits.MaxMessageBytes)))
		return vm.ToValue(p)
	}
	if w.limits.MaxRunBytes > 0 && w.sentBytes+len(raw) > w.limits.MaxRunBytes {
		// Refused here, so the parent never holds them.
		_ = reject(w.newError(runBytesMessage(op, w.sentBytes, w.limits.MaxRunBytes)))
		return vm.ToValue(p)
	}
	w.sentBytes += len(raw)
	w.nextID++
	id := w.nextID
	if err := w.out.send(message{T: msgCall, ID: id, Op: op, Args: json.RawMessage(raw)}); err != nil {
		os.Exit(3) // the parent is gone
	}
	w.pending[id] = &pendingCall{resolve: resolve, reject: reject, op: op, at: w.callSite()}
	return vm.ToValue(p)
}

// callSite is "sandbox.js:L:C" of the innermost frame of the user's body on
// the current call stack (wrapper lines included, as in goja's stacks), or
// "" when there is none.
func (w *jsWorker) callSite() string {
	for _, f := range w.vm.CaptureCallStack(16, nil) {
		if f.SrcName() != scriptName {
			continue
		}
		pos := f.Position()
		if l := pos.Line - wrapperLines; l >= 1 && l <= w.bodyLines {
			return fmt.Sprintf("%s:%d:%d", scriptName, pos.Line, pos.Column)
		}
	}
	return ""
}

// rejection is the Error a settled-later bridge call rejects with: msg and
// props as errorWithProps, and, when the call site is known, a stack that
// names it ("at openclaw.tools.OP (sandbox.js:L:C)"), which describeJSError
// turns into "(line N, col M)" of the body.
func (w *jsWorker) rejection(pc *pendingCall, op, msg string, props json.RawMessage) goja.Value {
	msg += w.protoNote(", which JSON.stringify applies to the arguments of bridge calls") // bridgeargs.go
	e := w.errorWithProps(msg, props)
	if o, ok := e.(*goja.Object); ok && pc.at != "" {
		_ = o.DefineDataProperty("stack", w.vm.ToValue("Error: "+msg+"\n    at openclaw.tools."+op+" ("+pc.at+")"), goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
	}
	return e
}

// callCapMessage is the error a script sees for a call over the cap.
func callCapMessage(op string, limit int) string {
	return fmt.Sprintf("openclaw.tools.%s refused: this run reached the limit of %d bridge calls", op, limit)
}

// errorWithProps is newError(msg) with the own properties of props (a
// JSON object from the parent) set on it.
func (w *jsWorker) errorWithProps(msg string, props json.RawMessage) goja.Value {
	e := w.newError(msg)
	if len(props) == 0 {
		return e
	}
	o, ok := e.(*goja.Object)
	if !ok {
		return e
	}
	v, err := w.jsonParse(goja.Undefined(), w.vm.ToValue(string(props)))
	if err != nil {
		return e
	}
	if po, ok := v.(*goja.Object); ok {
		for _, k := range po.Keys() {
			_ = o.Set(k, po.Get(k))
		}
	}
	return e
}

func (w *jsWorker) newError(msg string) goja.Value {
	if o, err := w.errorCtor(nil, w.vm.ToValue(msg)); err == nil {
		return o
	}
	return w.vm.ToValue(msg)
}

// run compiles and runs the wrapped body, settles bridge calls as replies
// arrive, and returns the "done" message.
func (w *jsWorker) run(code string, replies <-chan message) message {
	vm := w.vm
	if w.limits.MaxCallStackSize > 0 {
		vm.SetMaxCallStackSize(w.limits.MaxCallStackSize)
	}
	bodyLines := strings.Count(code, "\n") + 1
	w.bodyLines = bodyLines
	prg, err := goja.Compile(scriptName, wrapperHead+code+wrapperTail, false)
	if err != nil {
		return w.fail(describeCompileError(err, bodyLines))
	}
	v, err := vm.RunProgram(prg)

	if err != nil {
		return w.fail(w.describeJSError(err, nil))
	}
	p, ok := v.Export().(*goja.Promise)
	if !ok {
		return w.fail("internal error: wrapped body did not return a Promise")
	}
	for p.State() == goja.PromiseStatePending {
		if len(w.pending) == 0 {
			return w.fail("the script awaits a Promise that can never settle (no bridge call is pending)")
		}
		m := <-replies
		pc := w.pending[m.ID]
		if pc == nil {
			continue
		}
		delete(w.pending, m.ID)
		var settleErr error
		if m.Error != "" || len(m.Value) == 0 {
			msg := m.Error
			if msg == "" {
				msg = "bridge returned no value"
			}
			settleErr = pc.reject(w.rejection(pc, pc.op, msg, m.Props))
		} else {
			val, perr := w.jsonParse(goja.Undefined(), vm.ToValue(string(m.Value)))
			if perr != nil {
				settleErr = pc.reject(w.newError("bridge returned invalid JSON: " + perr.Error()))
			} else {
				settleErr = pc.resolve(val)
			}
		}
		if settleErr != nil { // uncatchable (stack overflow in a continuation)
			return w.fail(w.describeJSError(settleErr, nil))
		}
	}
	if p.State() == goja.PromiseStateRejected {
		return w.fail(w.describeJSError(nil, p.Result()))
	}
	res := p.Result()
	var raw []byte
	undef := false
	if res == nil || goja.IsUndefined(res) {
		raw = []byte("null")
		undef = true
	} else {
		js, tooDeep, err := w.stringifyBounded(res, MaxValueDepth) // depth.go
		if tooDeep {
			return w.fail(fmt.Sprintf("the returned value is nested deeper than %d levels (arrays or objects inside each other); return a flatter value", MaxValueDepth))
		}
		if err != nil {
			return w.fail("the returned value is not JSON-serializable: " + w.describeJSError(err, nil))
		}
		if goja.IsUndefined(js) { // a function or symbol
			raw = []byte("null")
		} else {
			raw = []byte(js.String())
		}
	}
	raw, cut := cutJSON(raw, w.limits.MaxOutputBytes)
	return message{T: msgDone, OK: true, Value: raw, Truncated: cut, Undef: undef}
}

func (w *jsWorker) fail(msg string) message {
	// Bounded here too, so a huge thrown message never becomes an
	// oversized protocol message (the parent keeps maxRunErrorBytes).
	return message{T: msgDone, Error: clipError(msg, maxRunErrorBytes)}
}

var stackPosRE = regexp.MustCompile(regexp.QuoteMeta(scriptName) + `:(\d+):(\d+)`)

// userPos turns "sandbox.js:L:C" positions in s into the first position that
// lies inside the user's body, as " (line N, col M)"; "" when none does.
func userPos(s string, bodyLines int) string {
	for _, m := range stackPosRE.FindAllStringSubmatch(s, -1) {
		line, _ := strconv.Atoi(m[1])
		line -= wrapperLines
		if line >= 1 && line <= bodyLines {
			return fmt.Sprintf(" (line %d, col %s)", line, m[2])
		}
	}
	return ""
}

// describeJSError renders a Go error from goja or a rejected value as
// "<Name>: <message> (line N, col M)" with the position in the user's body.
// A thrown value that is not an Error is shown as JSON ("the script threw
// {...}"), written by stringifyBounded, so a deep one costs no more than
// MaxValueDepth levels (depth.go); its stack, when it has one, counts only
// when it is a string.
//
// Trust: the thrown value is the untrusted script's; reading it runs its
// code (toString, getters, Proxy traps), which may throw again: that is
// caught here, never the worker's end.
func (w *jsWorker) describeJSError(err error, val goja.Value) (desc string) {
	bodyLines := w.bodyLines
	// goja reports a JS exception thrown while reading the value as a Go
	// panic.
	defer func() {
		if x := recover(); x != nil {
			desc = "the script threw a value that cannot be described (reading it threw again)"
		}
	}()
	var stack string
	if err != nil {
		switch e := err.(type) {
		case *goja.StackOverflowError:
			return "RangeError: maximum call stack size exceeded" + userPos(e.String(), bodyLines)
		case *goja.Exception:
			val = e.Value()
			stack = e.String()
		default:
			return err.Error()
		}
	}
	if val == nil || goja.IsUndefined(val) {
		return "the script threw undefined" + userPos(stack, bodyLines)
	}
	var msg string
	if obj, ok := val.(*goja.Object); ok {
		if s := obj.Get("stack"); s != nil {
			if str, ok := s.Export().(string); ok {
				stack = str + "\n" + stack
			}
		}
		if obj.ClassName() != "Error" {
			js, tooDeep, err := w.stringifyBounded(obj, MaxValueDepth)
			switch {
			case tooDeep:
				msg = fmt.Sprintf("the script threw an array or object nested deeper than %d levels", MaxValueDepth)
			case err == nil && !goja.IsUndefined(js):
				msg = "the script threw " + clipError(js.String(), maxRunErrorBytes)
			}
		}
		if msg == "" {
			msg = val.String()
		}
	} else if s, isStr := val.Export().(string); isStr {
		msg = "the script threw " + strconv.Quote(s)
	} else {
		msg = val.String()
	}
	return msg + userPos(stack, bodyLines)
}

// Syntax errors read "SyntaxError: sandbox.js: Line 3:7 Unexpected token = (and 2 more errors)"
// (parser) or "SyntaxError: <msg> at sandbox.js:3:7" (compiler).
var (
	parsePosRE   = regexp.MustCompile(`^SyntaxError: ` + regexp.QuoteMeta(scriptName) + `: Line (\d+):(\d+) (.*)$`)
	moreErrorsRE = regexp.MustCompile(` \(and \d+ more errors?\)$`)
	compilePosRE = regexp.MustCompile(`^(.*) at ` + regexp.QuoteMeta(scriptName) + `:(\d+):(\d+)`)
)

// describeCompileError reports a syntax error with its line in the body.
func describeCompileError(err error, bodyLines int) string {
	msg := err.Error()
	var text, lineS, col string
	if m := parsePosRE.FindStringSubmatch(msg); m != nil {
		text, lineS, col = "SyntaxError: "+moreErrorsRE.ReplaceAllString(m[3], ""), m[1], m[2]
	} else if m := compilePosRE.FindStringSubmatch(msg); m != nil {
		text, lineS, col = m[1], m[2], m[3]
	} else {
		return msg
	}
	line, _ := strconv.Atoi(lineS)
	line -= wrapperLines
	switch {
	case line >= 1 && line <= bodyLines:
		return fmt.Sprintf("%s (line %d, col %s)", text, line, col)
	case line > bodyLines:
		return text + " (at the end of the body: an unclosed brace, bracket or string?)"
	default:
		return text
	}
}
