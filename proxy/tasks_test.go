package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/fakeupstream"
	"github.com/mcp-toolsearch/mcp-toolsearch/internal/front"
)

// The front lifts a tools/call's "task" member into the private _meta key
// (the go-sdk would drop it) and the middleware takes it out again, so it
// never reaches an upstream as _meta.
func TestLiftTask(t *testing.T) {
	in := json.RawMessage(`{"name":"t","arguments":{"a":1},"_meta":{"progressToken":7},"task":{"ttl":60000}}`)
	out := front.LiftTask(in)
	var p mcp.CallToolParams
	if err := json.Unmarshal(out, &p); err != nil {
		t.Fatal(err)
	}
	if p.Meta["progressToken"] != 7.0 || p.Name != "t" || strings.Contains(string(out), `"task":`) {
		t.Errorf("lifted params %s", out)
	}
	cr := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Meta: p.Meta}}
	if got := takeTask(cr); string(got) != `{"ttl":60000}` {
		t.Errorf("takeTask = %s", got)
	}
	if _, left := cr.Params.Meta[front.TaskMetaKey]; left || !front.IsHopMetaKey(front.TaskMetaKey) {
		t.Errorf("the private key stays in _meta (%v) or is not a hop key", cr.Params.Meta)
	}
	plain := json.RawMessage(`{"name":"t","arguments":{"task":1}}`)
	if got := front.LiftTask(plain); string(got) != string(plain) {
		t.Errorf("params without a task member changed: %s", got)
	}
}

// A session's task book is bounded: the oldest ids are forgotten first.
func TestTaskBookBounded(t *testing.T) {
	var b taskBook
	for i := range maxTasksPerSession + 10 {
		b.add(fmt.Sprint(i), taskRoute{upstream: "u", entryID: "mcp:u:t"})
	}
	if _, ok := b.get("0"); ok {
		t.Error("the oldest task id is still held past the bound")
	}
	if _, ok := b.get(fmt.Sprint(maxTasksPerSession + 9)); !ok {
		t.Error("the newest task id is not held")
	}
	if n := len(b.m); n != maxTasksPerSession {
		t.Errorf("book holds %d ids, want %d", n, maxTasksPerSession)
	}
	if r := b.routes(); len(r) != 1 || r[0].upstream != "u" {
		t.Errorf("routes = %v", r)
	}
}

// capabilities.tasks is added to the initialize answer the go-sdk type
// cannot carry it in.
func TestInitializeWithTasks(t *testing.T) {
	ir := &mcp.InitializeResult{ProtocolVersion: "2025-11-25", Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}}, ServerInfo: &mcp.Implementation{Name: "p", Version: "1"}}
	b, err := json.Marshal(&front.InitializeWithTasks{InitializeResult: ir, Tasks: json.RawMessage(`{"requests":{"tools":{"call":{}}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		ProtocolVersion string
		Capabilities    map[string]any
	}
	if err := json.Unmarshal(b, &m); err != nil || m.ProtocolVersion != "2025-11-25" || m.Capabilities["tasks"] == nil || m.Capabilities["tools"] == nil {
		t.Errorf("initialize answer %s (%v)", b, err)
	}
}

// callAsTaskRaw calls tool name on cs as a task: the private _meta key is
// what the front transports lift a "task" member into (liftTask).
func callAsTaskRaw(t *testing.T, cs *mcp.ClientSession, name string) (*mcp.CallToolResult, error) {
	t.Helper()
	return cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{}, Meta: mcp.Meta{front.TaskMetaKey: map[string]any{}}})
}

// A "task" member must not switch off output
// validation. The upstream here offers no tasks: the call goes as a plain
// one (MCP 2025-11-25 tasks: a requestor MUST NOT send task-augmented
// requests a receiver did not declare) and its output is checked.
func TestTaskMemberToUpstreamWithoutTasks(t *testing.T) {
	p, _ := testProxy(t, validateConfig)
	cs := connect(t, p, "unit-task-notasks", nil)
	r, err := callAsTaskRaw(t, cs, "up__nostruct")
	if err != nil {
		t.Fatal(err)
	}
	if !r.IsError || !strings.Contains(resultText(r), "has no structuredContent") {
		t.Errorf("a task call of a tool whose upstream has no tasks skipped output validation: isError=%v %q", r.IsError, resultText(r))
	}
}

// An upstream that declares tasks but answers a task call with a plain
// CallToolResult: that answer is checked and redacted as any call's, and
// a redacted isError answer reaches the client (not -32603 "no answer").
func TestTaskCallAnsweredPlainly(t *testing.T) {
	sc := &fakeupstream.Scenario{
		Tools: func() string {
			return `[{"name":"t","inputSchema":{"type":"object"},"outputSchema":{"type":"object","required":["ok"]}},{"name":"f","inputSchema":{"type":"object"}}]`
		},
		Raw: func(s *fakeupstream.Session, m *fakeupstream.Msg) bool {
			switch m.Method {
			case "initialize":
				s.Result(m.ID, `{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"tasks":{"requests":{"tools":{"call":{}}}}},"serverInfo":{"name":"fakeupstream","version":"1"}}`)
				return true
			case "tools/call":
				if strings.Contains(string(m.Params), `"name":"f"`) {
					s.Result(m.ID, `{"content":[{"type":"text","text":"bad token hunter2"}],"isError":true}`)
				} else {
					s.Result(m.ID, `{"content":[{"type":"text","text":"plain"}]}`)
				}
				return true
			}
			return false
		},
	}
	hs := httptest.NewServer(&fakeupstream.HTTP{Scenario: sc})
	t.Cleanup(hs.Close)
	env := func(k string) (string, bool) { return "hunter2", k == "TOK" }
	p := startProxyIn(t, t.TempDir(), fmt.Sprintf("[tool_search]\nenabled = false\n[upstreams.up]\nurl = %s\ntrusted = true\nheaders = {X-Tok = \"${TOK}\"}\n", tomlQuote(hs.URL)), env, Options{})
	cs := connect(t, p, "unit-task-plain", nil)
	r, err := callAsTaskRaw(t, cs, "up__t")
	if err != nil {
		t.Fatal(err)
	}
	if !r.IsError || !strings.Contains(resultText(r), "has no structuredContent") {
		t.Errorf("a plain answer to a task call skipped output validation: isError=%v %q", r.IsError, resultText(r))
	}
	r, err = callAsTaskRaw(t, cs, "up__f")
	if err != nil {
		t.Fatalf("a redacted isError answer to a task call became an error: %v", err)
	}
	if !r.IsError || strings.Contains(resultText(r), "hunter2") || !strings.Contains(resultText(r), "bad token") {
		t.Errorf("isError answer: isError=%v %q, want it redacted", r.IsError, resultText(r))
	}
}

// sessionNamed is p's client session of the client named name.
func sessionNamed(t *testing.T, p *Proxy, name string) *session {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.sessions {
		if s.client == name {
			return s
		}
	}
	t.Fatalf("no session of client %q", name)
	return nil
}

// An upstream's request tied to a task
// (_meta related-task) goes only to the client session that holds the
// task and waits in tasks/result for it, never by the "only client with a
// call in flight" rule.
func TestRelatedTaskRequestRouting(t *testing.T) {
	p, _ := testProxy(t, validateConfig)
	asked := map[string]int{}
	var mu sync.Mutex
	elicit := func(name string) func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			asked[name]++
			mu.Unlock()
			return &mcp.ElicitResult{Action: "decline"}, nil
		}
	}
	connect(t, p, "task-a", elicit("task-a"))
	connect(t, p, "task-b", elicit("task-b"))
	a, b := sessionNamed(t, p, "task-a"), sessionNamed(t, p, "task-b")
	a.tasks.add("t-1", taskRoute{upstream: "up", entryID: "mcp:up:echo"})
	relay := p.pt.relayMiddleware("up", nil)(func(context.Context, string, mcp.Request) (mcp.Result, error) {
		t.Fatal("passed on unhandled")
		return nil, nil
	})
	ask := func(task string) error {
		_, err := relay(context.Background(), "elicitation/create", &mcp.ElicitRequest{Params: &mcp.ElicitParams{
			Meta:    mcp.Meta{"io.modelcontextprotocol/related-task": map[string]any{"taskId": task}},
			Message: "input for " + task, RequestedSchema: map[string]any{"type": "object"},
		}})
		return err
	}
	// B has a plain call in flight on the shared upstream; A's task t-1
	// is not waited for: nobody may be asked.
	_, doneB := p.pt.startCall(context.Background(), "up", b)
	defer doneB()
	var je *jsonrpc.Error
	if err := ask("t-1"); !errors.As(err, &je) || je.Code != jsonrpc.CodeMethodNotFound {
		t.Errorf("a request for task t-1 nobody waits for: %v, want -32601", err)
	}
	if asked["task-b"] != 0 {
		t.Fatalf("client B was shown the elicitation of A's task")
	}
	// A waits in tasks/result for t-1: A is asked, even with B in flight.
	_, doneA := p.pt.startTaskCall(context.Background(), "up", a, "t-1")
	defer doneA()
	if err := ask("t-1"); err != nil || asked["task-a"] != 1 || asked["task-b"] != 0 {
		t.Errorf("request for A's waited-for task: err %v, asked %v", err, asked)
	}
	// An id no session holds is refused, whoever waits.
	if err := ask("t-2"); err == nil || asked["task-b"] != 0 {
		t.Errorf("request for an unknown task: err %v, asked %v", err, asked)
	}
}

// Over Streamable HTTP, tasks/* are served only on
// the mount the session belongs to: /mcp does not serve the tasks of a
// session of [endpoints.x], whatever session id it is shown.
func TestTasksTiedToEndpoint(t *testing.T) {
	p, _ := testProxy(t, validateConfig+"[endpoints.x]\npath = \"/x/mcp\"\n")
	srv := httptest.NewServer(p.Handler(nil))
	t.Cleanup(srv.Close)
	cx := &rawClient{t: t, url: srv.URL + "/x/mcp"}
	cx.call("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "task-x", "version": "1"}})
	cx.post(context.Background(), "notifications/initialized", nil, true).Body.Close()
	if cx.sid == "" {
		t.Fatal("no session id from /x/mcp")
	}
	sessionNamed(t, p, "task-x").tasks.add("t-1", taskRoute{upstream: "up", entryID: "mcp:up:echo"})
	get := func(c *rawClient) int {
		resp := c.post(context.Background(), "tasks/get", map[string]any{"taskId": "t-1"}, false)
		resp.Body.Close()
		return resp.StatusCode
	}
	if st := get(&rawClient{t: t, url: srv.URL + "/mcp", sid: cx.sid}); st == http.StatusOK {
		t.Errorf("tasks/get on /mcp with a session id of /x/mcp was served (HTTP %d)", st)
	}
	if st := get(cx); st != http.StatusOK {
		t.Errorf("tasks/get on the session's own mount: HTTP %d", st)
	}
}

// A tasks/result answer is shaped like a direct
// tools/call's raw result (front.ShapeRaw): no resultType and no upstream hop
// keys in _meta, with or without output check.
func TestTaskResultShaped(t *testing.T) {
	p, _ := testProxy(t, validateConfig)
	in := json.RawMessage(`{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"up"},"keep":1},"content":[],"structuredContent":{"paid":true},"resultType":"complete"}`)
	for _, id := range []string{"mcp:up:echo", "mcp:up:paid"} { // unchecked, checked
		e := p.Catalog().ByID(id)
		if e == nil {
			t.Fatalf("no entry %s", id)
		}
		got := string(p.taskResult(e, in))
		if strings.Contains(got, "serverInfo") || strings.Contains(got, "resultType") || !strings.Contains(got, `"keep":1`) {
			t.Errorf("tasks/result of %s = %s, want it shaped (no serverInfo, no resultType, other _meta kept)", id, got)
		}
	}
}

// TestTasksThroughTheChain: tasks/* requests reach the proxy through the
// go-sdk server's receiving chain like every request: they draw on the
// [rate_limits] bucket of the task's tool (a second tasks/get within the
// burst of one is refused, and never reaches the upstream) and leave an
// audit line each.
func TestTasksThroughTheChain(t *testing.T) {
	dir := t.TempDir()
	auditFile := dir + "/audit.jsonl"
	up := startTestUpstream(t)
	p := startProxyIn(t, dir, fmt.Sprintf("[server]\ntransport = \"http\"\n[tool_search]\nenabled = false\n[upstreams.up]\nurl = %s\n[rate_limits.per_upstream.up]\nrate = 0.001\nburst = 1\n[audit]\nfile = %q\n", tomlQuote(up.URL), auditFile), nil, Options{})
	srv := httptest.NewServer(p.Handler(nil))
	t.Cleanup(srv.Close)
	c := &rawClient{t: t, url: srv.URL + "/mcp"}
	c.call("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "task-c", "version": "1"}})
	c.post(context.Background(), "notifications/initialized", nil, true).Body.Close()
	sessionNamed(t, p, "task-c").tasks.add("t-1", taskRoute{upstream: "up", entryID: "mcp:up:echo"})
	first := c.call("tasks/get", map[string]any{"taskId": "t-1"})
	if msg, _ := jpathMap(first, "error", "message").(string); strings.Contains(msg, "rate limit") {
		t.Fatalf("first tasks/get refused: %v", first)
	}
	second := c.call("tasks/get", map[string]any{"taskId": "t-1"})
	if msg, _ := jpathMap(second, "error", "message").(string); !strings.Contains(msg, "rate limit exceeded") {
		t.Errorf("second tasks/get within a burst of 1: %v, want a rate limit refusal", second)
	}
	waitFor(t, "two audit lines of tasks/get", func() bool {
		b, _ := os.ReadFile(auditFile)
		return strings.Count(string(b), `"via":"tasks/get"`) == 2 && strings.Contains(string(b), `"outcome":"rate_limited"`)
	})
}

// jpathMap is the value at keys in nested maps of m (nil when absent).
func jpathMap(m map[string]any, keys ...string) any {
	var v any = m
	for _, k := range keys {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}
