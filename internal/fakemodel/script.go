package fakemodel

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
)

// SearchDescribeCall plays a model that uses a tool-search surface the
// way its descriptions say: it searches with query, describes the first
// hit whose id contains pick, calls it with args, then answers with a text
// that quotes the call's result. It finds the surface's tools by the end
// of the name the client gave them ("tool_search", "tool_describe",
// "tool_call": clients prefix MCP tool names with the server's), and only
// among the tools the client loaded: a tool sent deferred cannot be called
// (the model sees its name only). When a step cannot go on, the answer
// says why, starting with "FAILED:".
func SearchDescribeCall(query, pick string, args map[string]any) Script {
	return func(r *Request) Turn {
		find := func(suffix string) string {
			for _, t := range r.Tools {
				if !t.Deferred && strings.HasSuffix(t.Name, suffix) {
					return t.Name
				}
			}
			return ""
		}
		search, describe, call := find("tool_search"), find("tool_describe"), find("tool_call")
		if search == "" || describe == "" || call == "" {
			return Turn{Text: fmt.Sprintf("FAILED: the client loaded no tool_search/tool_describe/tool_call (offered %s)", toolNames(r.Tools))}
		}
		steps := 0 // results of this surface's own tools so far
		var hitsText, callText string
		for _, res := range r.Results {
			steps++
			switch steps {
			case 1:
				hitsText = res.Text
			case 3:
				callText = res.Text
			}
		}
		id := ""
		if steps >= 1 {
			id = pickHit(hitsText, pick)
			if id == "" {
				return Turn{Text: fmt.Sprintf("FAILED: no hit with %q in the search result: %.300s", pick, hitsText)}
			}
		}
		switch steps {
		case 0:
			return Turn{Tool: search, Args: mustJSON(map[string]any{"query": query})}
		case 1:
			return Turn{Tool: describe, Args: mustJSON(map[string]any{"id": id})}
		case 2:
			return Turn{Tool: call, Args: mustJSON(map[string]any{"id": id, "args": args})}
		}
		return Turn{Text: "DONE: " + callText}
	}
}

// pickHit returns the first hit id in a tool_search result (JSON
// {"hits": [{"id": ...}]}) that contains pick. The JSON may follow a
// client's own text (Codex writes "Wall time: …\nOutput:\n" before a
// tool's result).
func pickHit(text, pick string) string {
	var res struct {
		Hits []struct {
			ID string `json:"id"`
		} `json:"hits"`
	}
	i := strings.Index(text, `{"hits"`)
	if i < 0 || json.NewDecoder(strings.NewReader(text[i:])).Decode(&res) != nil {
		return ""
	}
	for _, h := range res.Hits {
		if strings.Contains(h.ID, pick) {
			return h.ID
		}
	}
	return ""
}

func toolNames(ts []Tool) string {
	var b strings.Builder
	for i, t := range ts {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(t.Name)
		if t.Deferred {
			b.WriteString(" (deferred)")
		}
	}
	return b.String()
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// Egress is an HTTP proxy that lets nothing through: a client given it as
// HTTPS_PROXY/HTTP_PROXY (with the fake model's loopback address in
// NO_PROXY) has every other connection it tries refused at once and
// recorded, instead of reaching the network or hanging on it.
type Egress struct {
	mu    sync.Mutex
	hosts []string
}

// ServeHTTP records the target (CONNECT host:port, or the absolute URL of
// a plain HTTP request) and answers 403.
func (e *Egress) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	target := r.Host
	if r.Method != http.MethodConnect && r.URL.IsAbs() {
		target = r.URL.Host
	}
	if h, _, err := net.SplitHostPort(target); err == nil {
		target = h
	}
	e.mu.Lock()
	e.hosts = append(e.hosts, target)
	e.mu.Unlock()
	http.Error(w, "fakemodel egress: no network in this test", http.StatusForbidden)
}

// Hosts returns the hosts a client tried to reach, in order.
func (e *Egress) Hosts() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.hosts...)
}
