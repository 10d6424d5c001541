package front

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/jsonscan"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TaskMetaKey is the private _meta key that carries a client's "task"
// member from the front transport to the middleware (never forwarded:
// the receiving side removes it, and it is a hop key, meta.go).
const TaskMetaKey = "io.github.mcp-toolsearch/task"

// LiftTask moves the "task" member of tools/call params into
// _meta[TaskMetaKey] (the go-sdk's CallToolParams has no such member); params without one come
// back unchanged.
func LiftTask(params json.RawMessage) json.RawMessage {
	if !bytes.Contains(params, []byte(`"task"`)) {
		return params
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(params, &m) != nil || m["task"] == nil {
		return params
	}
	meta := map[string]json.RawMessage{}
	if raw := m["_meta"]; raw != nil && json.Unmarshal(raw, &meta) != nil {
		return params // the go-sdk refuses the params anyway
	}
	meta[TaskMetaKey] = m["task"]
	delete(m, "task")
	mb, err := json.Marshal(meta)
	if err != nil {
		return params
	}
	m["_meta"] = mb
	out, err := json.Marshal(m)
	if err != nil {
		return params
	}
	return out
}

// IsTasksMethod reports whether method is one of the tasks utility's
// requests that the proxy answers itself.
func IsTasksMethod(method string) bool {
	switch method {
	case "tasks/get", "tasks/result", "tasks/list", "tasks/cancel":
		return true
	}
	return false
}

// InitializeWithTasks is an initialize answer whose capabilities carry
// "tasks" (mcp.ServerCapabilities of go-sdk v1.8.0 has no such member).
type InitializeWithTasks struct {
	*mcp.InitializeResult
	Tasks json.RawMessage // the capability's value
}

func (r *InitializeWithTasks) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(r.InitializeResult)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	caps := map[string]json.RawMessage{}
	if raw := m["capabilities"]; len(raw) > 0 {
		if err := json.Unmarshal(raw, &caps); err != nil {
			return nil, err
		}
	}
	caps["tasks"] = r.Tasks
	if m["capabilities"], err = json.Marshal(caps); err != nil {
		return nil, err
	}
	return json.Marshal(m)
}

// LiftTaskFrame is the Streamable HTTP half of lifting a tools/call's
// "task" member into _meta (LiftTask; the stdio transport lifts its
// own), a FrameHook of IDGuardWith: a POST holding one tools/call with a
// "task" member gets it lifted. Everything else passes
// unchanged (one scan for `"task`). Requests of protocol 2026-07-28 pass
// (no tasks there). tasks/* requests reach the go-sdk server, where they
// are registered methods (tasksMethods) answered in the receiving chain.
func LiftTaskFrame(_ http.ResponseWriter, r *http.Request, body []byte) ([]byte, bool) {
	if !bytes.Contains(body, []byte(`"task`)) || strings.TrimSpace(r.Header.Get("Mcp-Protocol-Version")) >= ModernVersion {
		return body, false
	}
	var method, params []byte
	_, serr := jsonscan.Object(body, func(k, v []byte) bool {
		switch string(k) {
		case "method":
			method = v
		case "params":
			params = v
		}
		return true
	})
	if serr != nil || string(method) != `"tools/call"` || params == nil {
		return body, false
	}
	if lifted := LiftTask(params); !bytes.Equal(lifted, params) {
		return replaceParams(body, lifted), false
	}
	return body, false
}

// replaceParams is the request object body with its params replaced.
func replaceParams(body, params []byte) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return body
	}
	m["params"] = params
	out, err := json.Marshal(m)
	if err != nil {
		return body
	}
	return out
}

// TasksParams are the params of a tasks/* request, kept as received: they
// are passed on to the upstream that owns the task.
type TasksParams struct {
	mcp.ParamsBase
	Raw json.RawMessage
}

func (t *TasksParams) UnmarshalJSON(b []byte) error {
	t.Raw = bytes.Clone(b)
	return json.Unmarshal(b, &t.ParamsBase)
}

// TasksMethods registers the tasks utility's requests on s, so that they
// reach its receiving chain (drains, identity, traces, the proxy's
// middleware, which answers them) like every other
// request; go-sdk v1.8.0 knows no tasks and would answer -32601 before.
func TasksMethods(s *mcp.Server) {
	for _, m := range []string{"tasks/get", "tasks/result", "tasks/list", "tasks/cancel"} {
		// The middleware answers first; this is reached only by a request
		// it does not answer (none).
		_ = mcp.AddReceivingCustomMethod(s, m, func(context.Context, *mcp.ServerSession, *TasksParams) (*RawResult, error) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: " + m}
		})
	}
}
