package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
)

// Requests the go-sdk does not know (tasks) go past it on the
// proxy's own stdio transport: the upstream's capabilities.tasks is
// known, a tools/call carries its task member and its CreateTaskResult
// comes back raw, tasks/* answers (results and JSON-RPC errors) come
// back raw, the extra tool members are in the listing, and a connection
// that ends while a request waits fails it at once (not at call_timeout).
func TestOwnRequestsPastTheSDK(t *testing.T) {
	u := stdioUpstream("t", "fake:tasks")
	u.CallTimeout.Duration = time.Minute
	m, _ := startManager(t, []*config.Upstream{u}, Options{})
	ctx := context.Background()
	if got := string(m.Capability("t", nil, "tasks")); got != `{"list":{},"requests":{"tools":{"call":{}}}}` {
		t.Errorf("capabilities.tasks = %s", got)
	}
	if st, _ := m.Status("t"); string(st.Extra["slow"]) != `{"execution":{"taskSupport":"required"},"x-later":{"a":1}}` {
		t.Errorf("extra members of slow = %s", st.Extra["slow"])
	}
	raw := &RawResult{}
	if _, err := m.CallToolWith(ctx, "t", &mcp.CallToolParams{Name: "slow", Arguments: json.RawMessage(`{}`)}, CallOptions{Raw: raw, Task: json.RawMessage(`{"ttl":5000}`)}); err != nil {
		t.Fatal(err)
	}
	if got := string(raw.JSON); got != `{"task":{"taskId":"t-1","status":"working","requested":{"ttl":5000}}}` {
		t.Errorf("CreateTaskResult = %s", got)
	}
	if res, err := m.Request(ctx, "t", nil, "tasks/get", json.RawMessage(`{"taskId":"t-1"}`)); err != nil || string(res) != `{"taskId":"t-1","status":"completed"}` {
		t.Errorf("tasks/get = %s, %v", res, err)
	}
	_, err := m.Request(ctx, "t", nil, "tasks/get", json.RawMessage(`{"taskId":"nope"}`))
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != -32602 || !strings.Contains(err.Error(), `upstream "t"`) {
		t.Errorf("tasks/get of an unknown task: %v", err)
	}
	// The go-sdk session is unharmed by the answers it never saw.
	if res, err := m.CallTool(ctx, "t", &mcp.CallToolParams{Name: "slow", Arguments: json.RawMessage(`{}`)}); err != nil || res == nil {
		t.Errorf("a plain call after own requests: %v", err)
	}
	// call_timeout is a minute: a timeout would be DeadlineExceeded.
	_, err = m.Request(ctx, "t", nil, "tasks/cancel", json.RawMessage(`{"taskId":"t-1"}`))
	if !errors.Is(err, mcp.ErrConnectionClosed) {
		t.Errorf("a request whose connection ended: %v, want ErrConnectionClosed (not the call_timeout)", err)
	}
}
