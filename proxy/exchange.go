package proxy

//lint:file-ignore SA1019 sampling, roots and logging are deprecated from protocol 2026-07-28 on; clients and servers of earlier protocols still use them

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/front"
	"github.com/mcp-toolsearch/mcp-toolsearch/upstream"
)

// Input-required results (MCP 2026-07-28, SEP-2322) on the front.
//
// A 2026-07-28 client cannot be sent a request (no sampling/createMessage,
// elicitation/create or roots/list from server to client). When a call
// of such a client needs the client's input mid-way — an upstream on an
// older protocol asks for it during the call, or the proxy's own approval
// asks (tools.require_approval) — the proxy answers the client's
// tools/call with an input_required result naming the requests, and keeps
// the call running in the background; the client retries the same
// tools/call with inputResponses and the requestState, and gets the result
// (or the next input_required). This object is an exchange:
//
//   - the call runs in its own goroutine, on a copy of the client's
//     session whose ex names the exchange; askClient (relays, approval)
//     puts a question on the exchange and waits for the answer;
//   - each tools/call of the client (the first, then each retry) waits
//     until the call ends (the result) or has unanswered questions (an
//     input_required result listing them, with requestState = the
//     exchange's id);
//   - an exchange not retried within tools.approval_timeout is cancelled
//     (its questions fail, so the upstream gets an error);
//   - cancelling the tools/call that waits on the exchange (the first or a
//     retry) cancels the exchange's call too (waitExchange), as it would a
//     call without an exchange; so does the end of the client's session
//     where there is one (stdio), even between rounds.
//
// Exchanges live in the process that started the call: a retry that
// reaches another replica (server.stateless behind a load balancer) gets
// -32602 naming the reason. requestState is an unguessable id (128 random
// bits), so one client cannot answer another's questions; it grants
// nothing else (the retry must name the same tool).

// Limits of exchanges.
const (
	// maxExchanges bounds the calls waiting for client input at once.
	maxExchanges = 1000
	// askSettle lets concurrent questions of one call gather into one
	// input_required result.
	askSettle = 20 * time.Millisecond
	// statePrefix marks the proxy's requestState values.
	statePrefix = "mts1."
)

// exchanges is the process's table of exchanges by id.
type exchanges struct {
	mu sync.Mutex
	m  map[string]*exchange
	// owners binds each parked exchange to its subject (exchangeowner.go).
	owners     stateOwners
	ownersOnce sync.Once
}

type exchange struct {
	id      string
	tool    string // the tools/call name; a retry must name the same
	subject string // who started it (exchangeowner.go); a retry must be the same
	cancel  context.CancelFunc
	done    chan struct{} // closed when the call returned
	res     *mcp.CallToolResult
	err     error
	raw     *upstream.RawResult // the call's raw-result slot (rawslot.go): &rawSlot
	// rawSlot is raw's storage (one allocation with the exchange).
	rawSlot upstream.RawResult
	// handoff is the input_required answer of a call that ended with its
	// approval question sealed into requestState (resume.go); under mu.
	handoff *mcp.CallToolResult
	mu      sync.Mutex
	seq     int
	round   int                  // input_required results given so far
	state   string               // the requestState of the last of them
	pending map[string]*question // asked, not yet answered (made by the first question)
	wake    chan struct{}        // (cap 1) a question was added
	// Set by park (the first input_required result), nil before; expiry
	// and unwatch are written under mu, before the exchange is in the
	// table.
	expiry  *time.Timer
	life    context.Context // the session's (session.life); nil: cannot end
	unwatch func() bool     // stops the watch on life

	// What run needs (the call), in the exchange's own allocation
	// (no closure and no separate session copy).
	p    *Proxy
	cctx context.Context
	cs   session // the call's own copy of the client's session, naming ex
	args json.RawMessage
}

type question struct {
	req    mcp.InputRequest
	answer chan answerOrErr // cap 1
}

type answerOrErr struct {
	res mcp.InputResponse
	err error
}

// errNoAnswer is the error of a question whose exchange expired or was
// cancelled.
var errNoAnswer = errors.New("the client did not answer (no retry of its tools/call within tools.approval_timeout)")

// callModern runs tools/call cr of a 2026-07-28 client (session s) as an
// exchange: a new call, or the retry of one (cr.Params.RequestState).
func (p *Proxy) callModern(ctx context.Context, s *session, cr *mcp.CallToolRequest, args json.RawMessage) (mcp.Result, error) {
	var ex *exchange
	if state := cr.Params.RequestState; strings.HasPrefix(state, resumePrefix) {
		// A call that waited for approval, resumable here (resume.go).
		rctx, err := p.resumeCall(ctx, s, cr, args)
		if err != nil {
			return nil, err
		}
		if ex, err = p.startExchange(rctx, s, cr.Params.Name, args); err != nil {
			return nil, err
		}
	} else if state != "" {
		id := exchangeID(state)
		p.exs.mu.Lock()
		ex = p.exs.m[id]
		p.exs.mu.Unlock()
		owner, bound := p.owners().Owner(ctx, id)
		if bound {
			if subject := p.exchangeSubject(ctx, s); owner != subject {
				return nil, p.foreignState(s, subject, owner, cr.Params.Name) // exchangeowner.go
			}
		}
		if ex == nil && bound {
			return nil, errStateElsewhere // bound by another replica (shares_store.go)
		}
		if ex != nil && !ex.current(state) {
			ex = nil // an earlier round's or a forged state
		}
		if ex == nil {
			return nil, errUnknownState
		}
		if ex.tool != cr.Params.Name {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("requestState belongs to a call of %q, not %q", ex.tool, cr.Params.Name)}
		}
		ex.deliver(cr.Params.InputResponses)
	} else {
		var err error
		if ex, err = p.startExchange(ctx, s, cr.Params.Name, args); err != nil {
			return nil, err
		}
	}
	return p.waitExchange(ctx, ex)
}

// startExchange starts the call in the background. Its context keeps ctx's
// values (progress token, _meta) but not its cancellation: the call
// outlives this request when it needs input (an input_required answer ends
// the request, the retry is another). While a request of the client waits
// on the exchange, cancelling that request ends the exchange
// (waitExchange).
func (p *Proxy) startExchange(ctx context.Context, s *session, name string, args json.RawMessage) (*exchange, error) {
	// The id, the table entry, the expiry timer and the watch on the
	// session's end are made when the call first asks a question (park):
	// most calls never do, and while a request waits on the exchange its
	// own context (bound to the session, server.go) ends it (a
	// random id, a timer and two context registrations per call).
	ex := &exchange{tool: name, subject: p.exchangeSubject(ctx, s), done: make(chan struct{}), wake: make(chan struct{}, 1), life: s.life, p: p, cs: *s, args: args}
	ex.raw = &ex.rawSlot

	// The result may pass as the upstream's bytes (rawslot.go), stamped
	// for the 2026-07-28 client when written.
	cctx := withRawSlot(context.WithoutCancel(ctx), ex.raw)
	ex.cctx, ex.cancel = context.WithCancel(cctx)
	ex.cs.ex = ex // the call's own copy of the session names the exchange
	if ex.cs.base == nil {
		ex.cs.base = s
	}
	front.GoWarmTask(ex) // internal/front: ex.run
	return ex, nil
}

// run is the exchange's call, on its own goroutine (startExchange).
func (ex *exchange) Run() {
	defer close(ex.done)
	ex.res, ex.err = ex.p.surf().Call(ex.cctx, &ex.cs, ex.tool, ex.args)
}

// park makes ex retrievable by a retry before its first input_required
// result goes out: an unguessable id (128 random bits), its entry in the
// table (at most maxExchanges), the expiry after tools.approval_timeout
// without a retry, and, for a session that can end (stdio: the connection
// is the session), its end taking the exchange with it, since no retry can
// come after it. Later rounds only restart the expiry. Called by the
// request that waits on ex (waitExchange), never concurrently with
// itself: a retry can only find ex once park has run.
func (p *Proxy) park(ex *exchange) error {
	if ex.expiry != nil {
		ex.expiry.Reset(p.approvalTimeout())
		return nil
	}
	var idb [16]byte
	_, _ = rand.Read(idb[:])
	ex.id = statePrefix + base64.RawURLEncoding.EncodeToString(idb[:])
	// Bound to its subject before a retry can find it (exchangeowner.go).
	if err := p.owners().Bind(context.Background(), ex.id, ex.subject, p.approvalTimeout()); err != nil {
		return &jsonrpc.Error{Code: -32000, Message: "mcp-toolsearch: the call cannot wait for client input now: " + p.conf().Redact(err.Error())}
	}
	p.exs.mu.Lock()
	if p.exs.m == nil {
		p.exs.m = map[string]*exchange{}
	}
	if len(p.exs.m) >= maxExchanges {
		p.exs.mu.Unlock()
		p.owners().Forget(ex.id)
		return &jsonrpc.Error{Code: -32000, Message: fmt.Sprintf("mcp-toolsearch: too many calls waiting for client input (%d); retry later", maxExchanges)}
	}
	ex.mu.Lock()
	ex.expiry = time.AfterFunc(p.approvalTimeout(), func() { p.endExchange(ex) })
	if ex.life != nil {
		ex.unwatch = context.AfterFunc(ex.life, func() { p.endExchange(ex) })
	}
	ex.mu.Unlock()
	p.exs.m[ex.id] = ex
	p.exs.mu.Unlock()
	return nil
}

// endExchange cancels ex and forgets it: its questions fail.
func (p *Proxy) endExchange(ex *exchange) {
	ex.mu.Lock()
	parked := ex.expiry != nil
	ex.mu.Unlock()
	if parked {
		p.exs.mu.Lock()
		delete(p.exs.m, ex.id) // first: a retry no longer finds a cancelled call
		p.exs.mu.Unlock()
		p.owners().Forget(ex.id)
	}
	ex.cancel()
	ex.mu.Lock()
	if ex.expiry != nil {
		ex.expiry.Stop()
	}
	if ex.unwatch != nil {
		ex.unwatch()
	}
	for k, q := range ex.pending {
		q.answer <- answerOrErr{err: errNoAnswer}
		delete(ex.pending, k)
	}
	ex.mu.Unlock()
}

// waitExchange answers one tools/call of the exchange: the call's result
// when it ends, or input_required while it has unanswered questions.
func (p *Proxy) waitExchange(ctx context.Context, ex *exchange) (mcp.Result, error) {
	if ex.expiry != nil {
		ex.expiry.Stop() // a request waits: the exchange does not expire meanwhile
	}
	for {
		if reqs := ex.questions(); len(reqs) > 0 {
			return p.inputRequired(ex, reqs)
		}
		select {
		case <-ex.done:
			p.endExchange(ex)
			return ex.result()
		case <-ex.wake:
			// Let questions asked at the same moment join this answer.
			select {
			case <-ex.done:
			case <-time.After(askSettle):
			}
		case <-ctx.Done():
			// The client cancelled this request (stdio: notifications/cancelled;
			// Streamable HTTP: it closed the request's response stream, which
			// MCP 2026-07-28 Cancellation makes the cancellation signal), or its
			// session ended. The call is the request's, so it ends too: the
			// upstream leg sends its own notifications/cancelled. An exchange
			// parked between rounds has no request in flight and is not
			// reached by this (it ends at tools.approval_timeout).
			p.endExchange(ex)
			return nil, ctx.Err()
		}
	}
}

// inputRequired parks ex between rounds (park) and returns the
// input_required result that asks the client reqs, with the requestState
// its retry brings back; when ex cannot be parked it ends, and park's
// error is returned.
func (p *Proxy) inputRequired(ex *exchange, reqs mcp.InputRequestMap) (mcp.Result, error) {
	if err := p.park(ex); err != nil {
		p.endExchange(ex)
		return nil, err
	}
	return withResultType(&mcp.CallToolResult{InputRequests: reqs, RequestState: ex.nextState()}, resultInputRequired), nil
}

// result is the answer of ex's call, which has ended (done closed).
func (ex *exchange) result() (mcp.Result, error) {
	ex.mu.Lock()
	h := ex.handoff
	ex.mu.Unlock()
	if h != nil {
		return h, nil
	}
	if ae, ok := errors.AsType[*ArgumentsError](ex.err); ok {
		// A tool execution error, so the model can correct itself (MCP
		// 2025-11-25, Tools / Error Handling), as for older clients.
		return withResultType(errorText(ex.p.conf().Redact(ae.Error())), resultComplete), nil
	}
	if ex.err != nil {
		return nil, wireError(ex.err)
	}
	if ex.raw.JSON != nil {
		r := front.NewRawResult(ex.raw.JSON, true, ex.raw.Answer)
		ex.mu.Lock()
		r.SetRecords(ex.raw.Members()) // the first waiter's alone: a second one (a repeated retry) scans
		ex.raw.Records = nil
		ex.mu.Unlock()
		return r, nil
	}
	res := ex.res
	if res.Content == nil {
		res.Content = []mcp.Content{}
	}
	return withResultType(res, resultComplete), nil
}

// questions are the unanswered questions of ex, by key.
func (ex *exchange) questions() mcp.InputRequestMap {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if len(ex.pending) == 0 {
		return nil
	}
	out := mcp.InputRequestMap{}
	for k, q := range ex.pending {
		out[k] = q.req
	}
	return out
}

// deliver hands each answer to the question of the same key; answers to
// unknown keys are ignored (the spec lets a client send extra ones).
func (ex *exchange) deliver(answers mcp.InputResponseMap) {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	keys := make([]string, 0, len(answers))
	for k := range answers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if q, ok := ex.pending[k]; ok && answers[k] != nil {
			q.answer <- answerOrErr{res: answers[k]}
			delete(ex.pending, k)
		}
	}
}

// exchangeID is the exchange id a requestState names: the state is the id
// and, after a dot, the round ("mts1.<id>.<round>"; nextState).
func exchangeID(state string) string {
	rest, ok := strings.CutPrefix(state, statePrefix)
	if !ok {
		return state
	}
	id, _, _ := strings.Cut(rest, ".")
	return statePrefix + id
}

// nextState is the requestState of the next input_required result of ex:
// its id and the round, so each round's state differs from the last (MCP
// 2026-07-28 multi-round input, SEP-2322) and only the newest is accepted
// (current).
func (ex *exchange) nextState() string {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	ex.round++
	ex.state = fmt.Sprintf("%s.%d", ex.id, ex.round)
	return ex.state
}

// current reports whether state is the requestState ex gave last.
func (ex *exchange) current(state string) bool {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	return state == ex.state
}

// inputKeyKey is the context key of the key an input request should have
// in the client's input_required result (withInputKey).
type inputKeyKey struct{}

// withInputKey asks askClient to give the question the key the upstream
// gave it (the client then answers under the upstream's own key).
func withInputKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, inputKeyKey{}, key)
}

// ask puts a question on ex and waits for its answer. Its key is the one
// ctx names (withInputKey) when no pending question has it, else
// "<kind>-<n>".
func (ex *exchange) ask(ctx context.Context, req mcp.InputRequest) (mcp.InputResponse, error) {
	q := &question{req: req, answer: make(chan answerOrErr, 1)}
	ex.mu.Lock()
	ex.seq++
	key, _ := ctx.Value(inputKeyKey{}).(string)
	if _, taken := ex.pending[key]; key == "" || taken {
		key = fmt.Sprintf("%s-%d", inputKind(req), ex.seq)
	}
	if ex.pending == nil {
		ex.pending = map[string]*question{}
	}
	ex.pending[key] = q
	ex.mu.Unlock()
	select {
	case ex.wake <- struct{}{}:
	default:
	}
	select {
	case a := <-q.answer:
		return a.res, a.err
	case <-ctx.Done():
		ex.mu.Lock()
		delete(ex.pending, key)
		ex.mu.Unlock()
		return nil, ctx.Err()
	}
}

func inputKind(req mcp.InputRequest) string {
	switch req.(type) {
	case *mcp.ElicitParams:
		return "elicit"
	case *mcp.ListRootsParams:
		return "roots"
	default:
		return "sample"
	}
}

// askClient asks the client of session s for input: through the call's
// exchange for a 2026-07-28 call, else as a request on the client's
// session (sampling/createMessage, elicitation/create, roots/list). req is
// *mcp.ElicitParams, *mcp.CreateMessageWithToolsParams or
// *mcp.ListRootsParams; the answer is the matching *mcp.ElicitResult,
// *mcp.CreateMessageWithToolsResult or *mcp.ListRootsResult.
func askClient(ctx context.Context, s *session, req mcp.InputRequest) (mcp.Result, error) {
	if s.ex != nil {
		res, err := s.ex.ask(ctx, req)
		if err != nil {
			return nil, err
		}
		return asResult(req, res)
	}
	ctx, stop := s.p.askScope(ctx) // drain.go: the drain's start fails it
	defer stop()
	var res mcp.Result
	var err error
	switch r := req.(type) {
	case *mcp.ElicitParams:
		res, err = s.ss.Elicit(ctx, r)
	case *mcp.CreateMessageWithToolsParams:
		res, err = s.ss.CreateMessageWithTools(ctx, r)
	case *mcp.ListRootsParams:
		res, err = s.ss.ListRoots(ctx, r)
	default:
		return nil, fmt.Errorf("askClient: unsupported input request %T", req)
	}
	if err != nil && context.Cause(ctx) == errDraining {
		return nil, errDraining
	}
	return res, err
}

// asResult gives a client's input response the result type the asking
// side expects (a sampling answer may come as either sampling result).
func asResult(req mcp.InputRequest, res mcp.InputResponse) (mcp.Result, error) {
	switch req.(type) {
	case *mcp.ElicitParams:
		if r, ok := res.(*mcp.ElicitResult); ok {
			return r, nil
		}
	case *mcp.ListRootsParams:
		if r, ok := res.(*mcp.ListRootsResult); ok {
			return r, nil
		}
	case *mcp.CreateMessageWithToolsParams:
		if r, ok := res.(*mcp.CreateMessageWithToolsResult); ok {
			return r, nil
		}
		b, err := json.Marshal(res)
		if err == nil {
			var r mcp.CreateMessageWithToolsResult
			if err = json.Unmarshal(b, &r); err == nil {
				return &r, nil
			}
		}
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("inputResponses: a %T does not answer a %T", res, req)}
}
