//go:build unix

package integration

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestTasksThroughProxy: a TypeScript SDK client that
// declares task support calls server-everything's simulate-research-query
// (execution.taskSupport "required") as a task through the proxy in
// direct mode, over stdio and Streamable HTTP (and on a per-client
// upstream session), and follows it to its
// result exactly as it does against server-everything directly: the
// proxy advertises the upstream's tasks capability, relays the task
// member of tools/call, passes the CreateTaskResult on, and routes
// tasks/get, tasks/list and tasks/result to the upstream; an input_required
// task's elicitation (sent by the upstream while the client waits in
// tasks/result) reaches the client and its answer the result. A second client
// session cannot read or list the first one's task (the upstream holds
// both sessions' tasks in one shared session), and a denied tool called
// as a task gets the answer an unknown tool gets.
func TestTasksThroughProxy(t *testing.T) {
	waitsMostly(t)
	cfg := everythingTransparent(t, "shared")
	steps := scriptArg(t,
		map[string]any{"op": "list"},
		map[string]any{"op": "callTask", "name": "simulate-research-query", "args": map[string]any{"topic": "otters"}},
		map[string]any{"op": "getTask"},
		map[string]any{"op": "listTasks"},
		map[string]any{"op": "taskResult"},
		map[string]any{"op": "getTask", "taskId": "no-such-task"},
		// input_required: the upstream asks the client (elicitation) while
		// the client waits in tasks/result; the answer shapes the result.
		map[string]any{"op": "callTask", "name": "simulate-research-query", "args": map[string]any{"topic": "python", "ambiguous": true}, "timeoutMs": 30000},
	)
	args := []string{"--quiet", "--caps", "elicitation,tasks", "--script", steps}
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	startHTTPServer(t, proxyCmd(t, cfg, "--transport", "http", "--listen", addr), nil, "http://"+addr+"/healthz")
	url := "http://" + addr + "/mcp"
	docs := nodeClientsAtOnce(t, map[string][]string{
		"direct":    append(append(slices.Clone(args), "--"), npmServer(t, "everything")...),
		"stdio":     append(append(slices.Clone(args), "--"), proxyCmd(t, cfg)...),
		"http":      append(slices.Clone(args), "--http", url),
		"perClient": append(append(slices.Clone(args), "--"), proxyCmd(t, everythingTransparent(t, "per-client"))...),
	})
	direct, viaStdio, viaHTTP, perClient := docs["direct"], docs["stdio"], docs["http"], docs["perClient"]

	text := func(doc map[string]any, i int) string {
		return fmt.Sprint(jpath(t, doc, "steps", i, "result", "content", 0, "text"))
	}
	wantCaps := jpath(t, direct, "initialize", "capabilities", "tasks")
	if wantCaps == nil || !strings.Contains(text(direct, 1), "Research Report: otters") {
		t.Fatalf("server-everything directly: tasks capability %v, task result %.200s (kit changed?)", wantCaps, text(direct, 1))
	}
	for what, doc := range map[string]map[string]any{"stdio": viaStdio, "http": viaHTTP} {
		if got := jpath(t, doc, "initialize", "capabilities", "tasks"); !reflect.DeepEqual(got, wantCaps) {
			t.Errorf("%s: capabilities.tasks %v through the proxy, %v directly", what, got, wantCaps)
		}
		call := jpath(t, doc, "steps", 1).(map[string]any)
		if call["error"] != nil {
			t.Errorf("%s: the task-augmented call failed: %v (messages %v)", what, call["error"], call["messages"])
			continue
		}
		msgs := fmt.Sprint(call["messages"])
		if !strings.HasPrefix(msgs, "[map[status:working taskId:") || !strings.HasSuffix(msgs, "map[type:result]]") {
			t.Errorf("%s: task messages %s, want taskCreated first and the result last", what, msgs)
		}
		id, _ := call["taskId"].(string)
		for i, want := range map[int]string{1: text(direct, 1), 4: text(direct, 4)} {
			if got := text(doc, i); got != want {
				t.Errorf("%s: step %d text through the proxy differs from directly\n got: %.300s\nwant: %.300s", what, i, got, want)
			}
		}
		if st := jpath(t, doc, "steps", 2, "result", "status"); st != "completed" || jpath(t, doc, "steps", 2, "result", "taskId") != id {
			t.Errorf("%s: tasks/get = %v, want task %s completed", what, jpath(t, doc, "steps", 2), id)
		}
		listed := jpath(t, doc, "steps", 3, "result", "tasks").([]any)
		if len(listed) != 1 || jpath(t, listed[0], "taskId") != id {
			t.Errorf("%s: tasks/list = %v, want exactly the session's task %s", what, listed, id)
		}
		if code := jpath(t, doc, "steps", 5, "error", "code"); code != float64(-32602) {
			t.Errorf("%s: tasks/get of an unknown id: %v, want -32602", what, jpath(t, doc, "steps", 5))
		}
		if got, want := text(doc, 6), text(direct, 6); got != want || !strings.Contains(got, "**Clarification**") {
			t.Errorf("%s: input_required task result through the proxy\n got: %.300s\nwant: %.300s", what, got, want)
		}
		if st := fmt.Sprint(jpath(t, doc, "steps", 6, "messages")); !strings.Contains(st, "status:input_required") {
			t.Errorf("%s: input_required task never showed status input_required: %s", what, st)
		}
	}

	// session = "per-client": the task runs on the client's own upstream
	// session and tasks/* follow it there.
	for _, i := range []int{1, 4, 6} {
		if got, want := text(perClient, i), text(direct, i); got != want {
			t.Errorf("per-client: step %d text through the proxy differs from directly\n got: %.300s\nwant: %.300s", i, got, want)
		}
	}
	if listed, _ := jpath(t, perClient, "steps", 3, "result", "tasks").([]any); len(listed) != 1 {
		t.Errorf("per-client: tasks/list = %v, want the session's one task", jpath(t, perClient, "steps", 3))
	}

	// Another client session of the same proxy (HTTP) cannot read the
	// first one's task, though server-everything still holds it.
	other, _ := jpath(t, viaHTTP, "steps", 1, "taskId").(string)
	if other == "" {
		t.Fatal("no task id from the HTTP client's task-augmented call")
	}
	thief := nodeClient(t, "--quiet", "--caps", "tasks", "--http", url, "--script", scriptArg(t,
		map[string]any{"op": "getTask", "taskId": other},
		map[string]any{"op": "taskResult", "taskId": other},
		map[string]any{"op": "listTasks"},
	))
	for i := range 2 {
		if e := jpath(t, thief, "steps", i, "error"); e == nil || jpath(t, e, "code") != float64(-32602) || !strings.Contains(fmt.Sprint(jpath(t, e, "message")), "unknown task") {
			t.Errorf("another session reading task %s (step %d): %v, want -32602 unknown task", other, i, jpath(t, thief, "steps", i))
		}
	}
	if got := jpath(t, thief, "steps", 2, "result", "tasks").([]any); len(got) != 0 {
		t.Errorf("another session's tasks/list shows %v, want none", got)
	}

	// A denied tool called as a task: the same answer as an unknown one.
	denyCfg := writeConfig(t, strings.Replace(readFile(t, cfg), "[upstreams.everything]", "[tools]\ndeny = [\"simulate-research-query\"]\n\n[upstreams.everything]", 1))
	denied := nodeClient(t, "--quiet", "--caps", "tasks", "--script", scriptArg(t,
		map[string]any{"op": "callTask", "name": "simulate-research-query", "args": map[string]any{"topic": "otters"}},
		map[string]any{"op": "callTask", "name": "no-such-tool", "args": map[string]any{"topic": "otters"}},
	), "--", proxyCmd(t, denyCfg)[0], "serve", "--config", denyCfg, "--log-level", "warn")
	d, u := fmt.Sprint(jpath(t, denied, "steps", 0, "error")), fmt.Sprint(jpath(t, denied, "steps", 1, "error"))
	if strings.ReplaceAll(d, "simulate-research-query", "X") != strings.ReplaceAll(u, "no-such-tool", "X") || !strings.Contains(d, "unknown tool") {
		t.Errorf("denied tool as a task: %s\nunknown tool as a task: %s\nwant the same answer", d, u)
	}
}
