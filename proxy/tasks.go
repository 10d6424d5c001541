package proxy

// Tasks pass-through (MCP 2025-11-25 basic/utilities/tasks). An upstream that offers tasks
// (capabilities.tasks.requests.tools.call) lets a client call a tool "as
// a task": tools/call carries a "task" member, the answer is a
// CreateTaskResult ({"task": {"taskId", "status", …}}), and the client
// then polls tasks/get, fetches the tool's result with tasks/result, lists
// with tasks/list and cancels with tasks/cancel. go-sdk v1.8.0 knows none
// of this, so the proxy:
//
//   - advertises capabilities.tasks on its front (initialize answers of
//     protocol 2025-11-25 sessions) when an upstream the session may see
//     offers tasks.requests.tools.call (initializeWithTasks);
//   - lifts the "task" member of a client's tools/call into a private
//     _meta key in its front transports, before the go-sdk decodes the
//     params and would drop it (liftTask: internal/front, tasksFrame for
//     Streamable HTTP); the middleware takes it out again (takeTask);
//   - runs the call through THE call path, (*Proxy).call (policy, input
//     validation, rate limits, approval, telemetry: a denied tool answers
//     as an unknown one), and forward sends it upstream with the task
//     member past the go-sdk (upstream.CallOptions.Task) and returns the
//     CreateTaskResult as received;
//   - records the task id with its upstream in the calling session's
//     taskBook, and answers tasks/* requests itself in the front
//     transports (the go-sdk server refuses methods it does not know),
//     passing each to the upstream that owns the task (serveTasks).
//
// Trust: clients are not trusted. Task ids are the upstream's, and on a
// shared upstream session every client's tasks live in the same upstream
// session, so a client that learnt or guessed another's task id could read
// its result. A session may only name task ids it created itself (its
// taskBook): any other id gets the answer a nonexistent one gets (-32602),
// and tasks/list shows only the session's own tasks. The book is bounded
// (maxTasksPerSession, oldest forgotten first) and ends with the session.
// A task whose tool the session's policy no longer allows (a reload), or
// asked for by another verified user than the one who created it (a
// session id presented with another user's token: the go-sdk refuses that
// for the requests it handles, tasks/* bypass it), is unknown too.
//
// An input_required task asks the client while the client waits in
// tasks/result: that request is registered as the session's call in
// flight on the shared upstream session, so the upstream's elicitation or
// sampling request reaches this client (passthrough_relay.go). A request
// that names its task (_meta "io.modelcontextprotocol/related-task")
// reaches only the session that holds that task and waits for its
// result; with none it is refused.
//
// Not passed: notifications/tasks/status (optional in the spec; clients
// poll tasks/get), task-augmented requests from upstreams to clients
// (sampling, elicitation as tasks), and tasks for 2026-07-28 sessions or
// over stateless HTTP (no session to own the task).

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/audit"
	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
	"github.com/mcp-toolsearch/mcp-toolsearch/identity"
	"github.com/mcp-toolsearch/mcp-toolsearch/ingest"
	"github.com/mcp-toolsearch/mcp-toolsearch/internal/front"
	"github.com/mcp-toolsearch/mcp-toolsearch/telemetry"
	"github.com/mcp-toolsearch/mcp-toolsearch/tracing"
	"github.com/mcp-toolsearch/mcp-toolsearch/upstream"
)

// maxTasksPerSession bounds the task ids one client session may hold.
const maxTasksPerSession = 1024

// maxTaskListPages bounds the upstream tasks/list pages read per answer.
const maxTaskListPages = 16

// taskRoute is where a task lives.
type taskRoute struct {
	upstream string
	entryID  string               // the catalog id of the tool called
	conn     *upstream.ClientConn // per-client session; nil: shared
	owner    string               // the verified user who created it ("" none: taskOwner)
}

// taskBook is one client session's tasks, by task id (shared by the
// copies of a session).
type taskBook struct {
	mu    sync.Mutex
	m     map[string]taskRoute
	order []string // oldest first
}

func (b *taskBook) add(id string, r taskRoute) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil {
		b.m = map[string]taskRoute{}
	}
	if _, ok := b.m[id]; !ok {
		b.order = append(b.order, id)
	}
	b.m[id] = r
	for len(b.order) > maxTasksPerSession {
		delete(b.m, b.order[0])
		b.order = b.order[1:]
	}
}

func (b *taskBook) get(id string) (taskRoute, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	r, ok := b.m[id]
	return r, ok
}

// routes are the distinct places the session's tasks live.
func (b *taskBook) routes() []taskRoute {
	b.mu.Lock()
	defer b.mu.Unlock()
	seen := map[taskRoute]bool{}
	var out []taskRoute
	for _, id := range b.order {
		r := b.m[id]
		r.entryID, r.owner = "", ""
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	return out
}

// taskCall is a task-augmented tools/call on its way through the call
// path: forward fills in where it went.
type taskCall struct {
	param  json.RawMessage // the client's "task" member
	asTask bool            // call: the upstream offers task-augmented tools/call (takesTaskCalls)
	sent   bool
	route  taskRoute
}

// takesTaskCalls reports whether upstream declares
// capabilities.tasks.requests.tools.call (MCP 2025-11-25
// basic/utilities/tasks, Capabilities: a requestor sends task-augmented
// requests only to a receiver that declared them); a client's "task"
// member for any other upstream's tool is dropped and the call made
// plainly.
func (p *Proxy) takesTaskCalls(upstream string) bool {
	caps := p.ups.Capability(upstream, "tasks")
	if caps == nil {
		return false
	}
	var c struct {
		Requests struct {
			Tools struct {
				Call json.RawMessage `json:"call"`
			} `json:"tools"`
		} `json:"requests"`
	}
	return json.Unmarshal(caps, &c) == nil && c.Requests.Tools.Call != nil && string(c.Requests.Tools.Call) != "null"
}

type taskCallKey struct{}

func withTaskCall(ctx context.Context, tc *taskCall) context.Context {
	return context.WithValue(ctx, taskCallKey{}, tc)
}

func taskCallFrom(ctx context.Context) *taskCall {
	tc, _ := ctx.Value(taskCallKey{}).(*taskCall)
	return tc
}

// takeTask removes the lifted task member from a tools/call request and
// returns it (nil when the call is not task-augmented).
func takeTask(cr *mcp.CallToolRequest) json.RawMessage {
	if cr.Params == nil || cr.Params.Meta == nil {
		return nil
	}
	v, ok := cr.Params.Meta[front.TaskMetaKey]
	if !ok {
		return nil
	}
	delete(cr.Params.Meta, front.TaskMetaKey)
	b, err := json.Marshal(v)
	if err != nil || len(b) == 0 || b[0] != '{' {
		return json.RawMessage(`{}`)
	}
	return b
}

// callAsTask runs a task-augmented tools/call (server.go): the same call
// path as any call, then the upstream's CreateTaskResult is passed on raw
// and its task id recorded for this session.
func (p *Proxy) callAsTask(ctx context.Context, s *session, ss *mcp.ServerSession, cr *mcp.CallToolRequest, args, task json.RawMessage) (mcp.Result, error) {
	name := cr.Params.Name
	if s.tasks == nil || modernRequestOf(cr) || !rawFrontOK(ss) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "task-augmented tools/call is offered on protocol 2025-11-25 sessions only (this session cannot hold tasks)"}
	}
	tc := &taskCall{param: task}
	ctx = withTaskCall(ctx, tc)
	slot := &upstream.RawResult{}
	ctx = withRawSlot(ctx, slot)
	res, err := p.surf().Call(ctx, s, name, args)
	if err != nil {
		var ae *ArgumentsError
		if errors.As(err, &ae) {
			return errorText(p.conf().Redact(ae.Error())), nil
		}
		return nil, wireError(err)
	}
	if !tc.sent && tc.asTask {
		// p.call skipped the output check expecting a task that forward
		// did not send after all: checked here.
		return p.plainTaskAnswer(s, tc, slot, res)
	}
	if !tc.sent {
		// Not forwarded as a task: a tool of the proxy's own (tool_search,
		// …), or the call path answered itself (rate limit, approval
		// refused): that answer, as for any call.
		if slot.JSON != nil {
			return front.NewRawResult(slot.JSON, false, false), nil
		}
		if res.Content == nil {
			res.Content = []mcp.Content{}
		}
		return res, nil
	}
	if slot.JSON != nil {
		if id := createdTaskID(slot.JSON); id != "" {
			tc.route.owner = taskOwner(identityOf(cr))
			s.tasks.add(id, tc.route)
			p.log.Debug("task created", "upstream", tc.route.upstream, "tool", tc.route.entryID, "task", id, "client", s.client, "session", s.id())
			return front.NewRawResult(slot.JSON, false, false), nil
		}
	}
	return p.plainTaskAnswer(s, tc, slot, res)
}

// plainTaskAnswer is the answer to a task-augmented tools/call that the
// upstream answered without a task (a CallToolResult: the spec lets a
// receiver ignore the member): checked against the tool's outputSchema
// and redacted as any call's answer (p.call skipped both, expecting a
// task). slot.JSON is nil when p.call already decoded and redacted the
// answer (an error result with secrets configured): res is that answer.
func (p *Proxy) plainTaskAnswer(s *session, tc *taskCall, slot *upstream.RawResult, res *mcp.CallToolResult) (mcp.Result, error) {
	out := res
	if slot.JSON != nil {
		var r mcp.CallToolResult
		if err := json.Unmarshal(slot.JSON, &r); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "upstream " + tc.route.upstream + ": answer to the task-augmented tools/call is neither a CreateTaskResult nor a CallToolResult: " + bounded(err.Error(), 200)}
		}
		out = &r
	}
	if out == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "upstream " + tc.route.upstream + ": no answer to the task-augmented tools/call"}
	}
	if e := s.Snapshot().ByID(tc.route.entryID); e != nil {
		if check := p.outputCheck(e); check != nil {
			out = check(out)
		}
		if cleaned, err := p.cleanResult(context.Background(), e, out); err == nil { // results.go
			out = cleaned
		}
	}
	out = redactResult(p.conf(), out)
	if out.Content == nil {
		out.Content = []mcp.Content{}
	}
	return out, nil
}

// createdTaskID is task.taskId of a CreateTaskResult ("" when absent).
func createdTaskID(res json.RawMessage) string {
	var r struct {
		Task struct {
			TaskID string `json:"taskId"`
		} `json:"task"`
	}
	if json.Unmarshal(res, &r) != nil {
		return ""
	}
	return r.Task.TaskID
}

// errUnknownTask is the answer for a task id the session does not own
// (the spec's answer for a nonexistent one).
func errUnknownTask(id string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown task " + strings.TrimSpace(bounded(id, 200))}
}

// taskOwner is the key of a verified user ("" for none: stdio, a static
// token, no token), as the go-sdk binds HTTP sessions (TokenInfo.UserID).
func taskOwner(id *identity.Identity) string {
	if id == nil || id.Subject == "" {
		return ""
	}
	return id.Issuer + "|" + id.Subject
}

// serveTasks answers a tasks/* request of session s from the verified
// user caller (taskOwner): passed to the upstream that owns the task,
// result as received.
func (p *Proxy) serveTasks(ctx context.Context, s *session, caller, method string, params json.RawMessage) (json.RawMessage, error) {
	if s == nil || s.tasks == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: method + ": this session holds no tasks (tasks need a protocol 2025-11-25 session)"}
	}
	ctx, stop := s.bind(ctx)
	defer stop()
	if method == "tasks/list" {
		return p.listTasks(ctx, s, caller)
	}
	var ref struct {
		TaskID string `json:"taskId"`
	}
	if json.Unmarshal(params, &ref) != nil || ref.TaskID == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: method + `: params.taskId (a string) is required`}
	}
	r, ok := s.tasks.get(ref.TaskID)
	if !ok || r.owner != caller {
		return nil, errUnknownTask(ref.TaskID)
	}
	e := s.Snapshot().ByID(r.entryID)
	if e == nil || !s.allowed(e) {
		return nil, errUnknownTask(ref.TaskID) // no longer allowed: as unknown (SPEC §6)
	}
	// A tasks/* request draws on the same [rate_limits] buckets as a call
	// of the task's tool, and leaves an audit line as a call does.
	if p.idn != nil {
		if blocked := p.rateLimited(ctx, s, e); blocked != nil {
			p.auditTask(ctx, s, e, method, telemetry.OutcomeRateLimited, 0, nil)
			return nil, &jsonrpc.Error{Code: -32000, Message: blocked.Content[0].(*mcp.TextContent).Text}
		}
	}
	start := time.Now()
	if r.conn == nil && method == "tasks/result" {
		// While the result is awaited, the upstream may ask the client
		// (an input_required task's elicitation travels with tasks/result):
		// its requests on the shared session reach this client, as during
		// a call (passthrough_relay.go).
		var done func()
		ctx, done = p.pt.startTaskCall(ctx, r.upstream, s, ref.TaskID)
		defer done()
	}
	res, err := p.ups.Request(ctx, r.upstream, r.conn, method, params)
	outcome := telemetry.OutcomeOK
	if err != nil {
		outcome = telemetry.OutcomeError
	}
	p.auditTask(ctx, s, e, method, outcome, float64(time.Since(start).Microseconds())/1000, err)
	if err != nil {
		return nil, wireError(p.redactErr(p.shapeErr(e, err)))
	}
	if method == "tasks/result" {
		return p.taskResult(e, res), nil
	}
	return res, nil
}

// taskResult is a tasks/result answer (the tool's CallToolResult) as the
// client gets it: as received, unless the proxy must look into it as it
// does for a direct call (p.call): output validation of trusted tools,
// redaction of secrets. It is shaped as a direct call's raw result is
// (front.ShapeRaw: no resultType, no upstream hop keys in _meta).
func (p *Proxy) taskResult(e *catalog.Entry, res json.RawMessage) json.RawMessage {
	res = front.ShapeRaw(res)
	if ingest.JSONMayHoldHidden(res) { // results.go: hidden characters, as on the call path
		slot := &upstream.RawResult{JSON: res}
		if out, err := p.cleanResult(withRawSlot(context.Background(), slot), e, nil); err == nil && slot.JSON == nil {
			if b, err := json.Marshal(out); err == nil {
				res = b
			}
		}
	}
	check := p.outputCheck(e)
	if check == nil && len(p.conf().Secrets()) == 0 {
		return res
	}
	var r mcp.CallToolResult
	if json.Unmarshal(res, &r) != nil {
		return res
	}
	out := redactResult(p.conf(), &r)
	if check != nil {
		out = check(out)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return res
	}
	return b
}

// listTasks answers tasks/list with the session's own tasks: each
// upstream holding some is asked (up to maxTaskListPages pages), and only
// the ids in the session's book are kept. No pagination towards the
// client (the book is bounded).
func (p *Proxy) listTasks(ctx context.Context, s *session, caller string) (json.RawMessage, error) {
	tasks := []json.RawMessage{}
	for _, r := range s.tasks.routes() {
		cursor := ""
		for page := 0; page < maxTaskListPages; page++ {
			params := json.RawMessage(`{}`)
			if cursor != "" {
				params, _ = json.Marshal(map[string]string{"cursor": cursor})
			}
			res, err := p.ups.Request(ctx, r.upstream, r.conn, "tasks/list", params)
			if err != nil {
				p.log.Debug("tasks/list failed", "upstream", r.upstream, "err", err)
				break
			}
			var l struct {
				Tasks      []json.RawMessage `json:"tasks"`
				NextCursor string            `json:"nextCursor"`
			}
			if json.Unmarshal(res, &l) != nil {
				break
			}
			for _, t := range l.Tasks {
				var id struct {
					TaskID string `json:"taskId"`
				}
				if json.Unmarshal(t, &id) != nil {
					continue
				}
				if own, ok := s.tasks.get(id.TaskID); ok && own.owner == caller && own.upstream == r.upstream && own.conn == r.conn {
					if e := s.Snapshot().ByID(own.entryID); e != nil && s.allowed(e) {
						tasks = append(tasks, t)
					}
				}
			}
			if l.NextCursor == "" || l.NextCursor == cursor {
				break
			}
			cursor = l.NextCursor
		}
	}
	return json.Marshal(map[string]any{"tasks": tasks})
}

// frontTasksCapability is capabilities.tasks for session s: what the
// upstreams s may see offer of list, cancel and requests.tools.call (nil
// when none offers requests.tools.call: no task could be created). Only
// upstreams whose tools the surface lists directly count (every one in
// direct mode; in the search modes those with direct_only tools): a tool
// reached through tool_call or the code bridge is not called as a task.
func (p *Proxy) frontTasksCapability(s *session) json.RawMessage {
	var list, cancel, call bool
	direct := p.surf().Mode() == "direct"
	for _, up := range p.ups.Names() {
		if u, ok := p.conf().Upstreams[up]; !ok || (!direct && len(u.DirectOnly) == 0) || !p.pt.visible(s, up) {
			continue
		}
		caps := p.ups.Capability(up, "tasks")
		if caps == nil {
			continue
		}
		var c struct {
			List     json.RawMessage `json:"list"`
			Cancel   json.RawMessage `json:"cancel"`
			Requests struct {
				Tools struct {
					Call json.RawMessage `json:"call"`
				} `json:"tools"`
			} `json:"requests"`
		}
		if json.Unmarshal(caps, &c) != nil {
			continue
		}
		list = list || c.List != nil
		cancel = cancel || c.Cancel != nil
		call = call || c.Requests.Tools.Call != nil
	}
	if !call {
		return nil
	}
	out := `{"requests":{"tools":{"call":{}}}`
	if list {
		out += `,"list":{}`
	}
	if cancel {
		out += `,"cancel":{}`
	}
	return json.RawMessage(out + "}")
}

// withTasksCapability returns the initialize answer ir for session s with
// capabilities.tasks when s may hold tasks (protocol 2025-11-25 or later
// on a session) and an upstream it may see offers them.
func (p *Proxy) withTasksCapability(ir *mcp.InitializeResult, s *session) mcp.Result {
	if s == nil || s.tasks == nil || ir.ProtocolVersion < "2025-11-25" {
		return ir
	}
	caps := p.frontTasksCapability(s)
	if caps == nil {
		return ir
	}
	return &front.InitializeWithTasks{InitializeResult: ir, Tasks: caps}
}

// serveTasksRequest answers a tasks/* request of the receiving chain
// (server.go): for the session it came on, from the verified user of its
// token (the task's owner must be that user).
func (p *Proxy) serveTasksRequest(ctx context.Context, s *session, method string, req mcp.Request) (mcp.Result, error) {
	var params json.RawMessage
	if tp, ok := req.GetParams().(*front.TasksParams); ok && tp != nil {
		params = tp.Raw
	}
	res, err := p.serveTasks(ctx, s, taskOwner(identityOf(req)), method, params)
	if err != nil {
		return nil, err
	}
	if res == nil {
		res = json.RawMessage(`{}`)
	}
	return front.NewRawResult(res, false, false), nil
}

// auditTask writes the audit line of a tasks/* request for the task of
// tool e (kind call, via the method).
func (p *Proxy) auditTask(ctx context.Context, s *session, e *catalog.Entry, method, outcome string, ms float64, err error) {
	if p.idn == nil || p.idn.audit == nil {
		return
	}
	ev := audit.Event{Kind: audit.KindCall, Subject: s.subjectKey(), Session: sessionID(s), Tool: e.ID, Upstream: e.Upstream, Via: method,
		Outcome: outcome, DurationMs: ms, TraceID: tracing.TraceID(ctx)}
	if err != nil {
		ev.Detail = p.conf().Redact(err.Error())
	}
	p.idn.audit.Record(ev)
}
