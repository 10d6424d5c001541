package proxy

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The front lifts a tools/call's "task" member into the private _meta key
// (the go-sdk would drop it) and the middleware takes it out again, so it
// never reaches an upstream as _meta.
func TestLiftTask(t *testing.T) {
	in := json.RawMessage(`{"name":"t","arguments":{"a":1},"_meta":{"progressToken":7},"task":{"ttl":60000}}`)
	out := liftTask(in)
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
	if _, left := cr.Params.Meta[taskMetaKey]; left || !isHopMetaKey(taskMetaKey) {
		t.Errorf("the private key stays in _meta (%v) or is not a hop key", cr.Params.Meta)
	}
	plain := json.RawMessage(`{"name":"t","arguments":{"task":1}}`)
	if got := liftTask(plain); string(got) != string(plain) {
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
	b, err := json.Marshal(&initializeWithTasks{InitializeResult: ir, tasks: json.RawMessage(`{"requests":{"tools":{"call":{}}}}`)})
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
