package front

import (
	"bytes"
	"encoding/json"
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
