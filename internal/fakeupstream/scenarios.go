package fakeupstream

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
)

// OddSchemaTools are the tools of scenario "oddschemas":
// schemas strict clients refuse, plus one healthy tool.
const OddSchemaTools = `[
{"name":"draft7","description":"Only a $schema.","inputSchema":{"$schema":"http://json-schema.org/draft-07/schema#"}},
{"name":"anyvalue","description":"Only a title.","inputSchema":{"title":"AnyValue"}},
{"name":"oneof","description":"Top-level oneOf.","inputSchema":{"oneOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},{"type":"object","properties":{"b":{"type":"number"}},"required":["b"]}]}},
{"name":"stringroot","description":"A string root.","inputSchema":{"type":"string"}},
{"name":"emptyschema","description":"Empty schema.","inputSchema":{}},
{"name":"healthy","description":"A healthy tool.","inputSchema":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}}
]`

// DeepTools are the six tools of scenario "deep": one
// inputSchema nests 1,500 levels.
func DeepTools() string {
	deep := strings.Repeat(`{"type":"object","properties":{"a":`, 750) + `{"type":"string"}` + strings.Repeat(`}}`, 750)
	var tools []string
	for _, n := range []string{"one", "two", "three"} {
		tools = append(tools, `{"name":"`+n+`","inputSchema":{"type":"object"}}`)
	}
	tools = append(tools, `{"name":"deep","inputSchema":`+deep+`}`)
	for _, n := range []string{"four", "five"} {
		tools = append(tools, `{"name":"`+n+`","inputSchema":{"type":"object"}}`)
	}
	return "[" + strings.Join(tools, ",") + "]"
}

// BigTextTools are the tools of scenario "bigtext":
// "big" holds 1 MiB of text in its title, description, annotations.title,
// an inputSchema property's description, outputSchema's description and
// an unknown member; "enums" a 50,000-value enum; "meta" a 1 MiB _meta;
// "ok" is small.
func BigTextTools() string {
	mb := `"` + strings.Repeat("B", 1<<20) + `"`
	enum := make([]string, 50000)
	for i := range enum {
		enum[i] = fmt.Sprintf(`"value-%d"`, i)
	}
	return `[{"name":"big","title":` + mb + `,"description":` + mb + `,"annotations":{"title":` + mb + `},
"inputSchema":{"type":"object","properties":{"q":{"type":"string","description":` + mb + `}}},
"outputSchema":{"type":"object","description":` + mb + `},"x-later":{"note":` + mb + `}},
{"name":"enums","description":"Pick one.","inputSchema":{"type":"object","properties":{"v":{"enum":[` + strings.Join(enum, ",") + `]}}}},
{"name":"meta","description":"Bulky _meta.","inputSchema":{"type":"object"},"_meta":{"x":` + mb + `}},
{"name":"ok","description":"A small tool.","inputSchema":{"type":"object"}}]`
}

// Named returns a scenario by name; nil for an unknown name.
//
//	oddschemas  tools with schemas strict clients refuse, and "healthy"
//	deep        six tools, one nesting 1,500 levels
//	longname    tools "free-tier-usage" and "get-cost-forecast"
//	zerotools   tools "a" and "clear"; calling "clear" empties the list and
//	            sends notifications/tools/list_changed
//	stderrflood writes lines to stderr in a loop from its start and never
//	            answers initialize
//	elicitflood tools/call of "flood" sends 50 elicitation/create requests at
//	            once, and answers the call once all 50 are answered:
//	            "answered=A refused=R first refusal: MESSAGE"
//	hanglists   announces resources, prompts and logging but never answers
//	            resources/list, resources/templates/list, prompts/list or
//	            logging/setLevel (its tools work)
//	bigtext     tools whose text is 1 MB in every member a client or the
//	            model reads (BigTextTools), one with a 50,000-value enum,
//	            one with a 1 MB _meta, and "ok"
//	listchanges tools "a", "poke" and "drop"; "poke" sends
//	            notifications/tools/list_changed without changing anything,
//	            "drop" removes "a" and sends it
//	burst       tool "burst": each call answers at once and then adds five
//	            tools (t1, t2, …), one at a time, each followed by
//	            notifications/tools/list_changed, 1 to 13 ms apart
//	modernonly  speaks only 2026-07-28: initialize is unknown (-32601),
//	            server/discover lists 2026-07-28 alone, any other request
//	            without _meta io.modelcontextprotocol/protocolVersion is
//	            refused (-32602); a call answers "called NAME at VERSION"
func Named(name string) *Scenario {
	switch name {
	case "modernonly":
		return &Scenario{
			Raw: func(s *Session, m *Msg) bool {
				if len(m.ID) == 0 || m.Method == "" {
					return false
				}
				var p struct {
					Name string `json:"name"`
					Meta struct {
						Version string `json:"io.modelcontextprotocol/protocolVersion"`
					} `json:"_meta"`
				}
				_ = json.Unmarshal(m.Params, &p)
				switch {
				case m.Method == "initialize":
					s.Error(m.ID, -32601, "method not found: initialize")
				case m.Method == "server/discover":
					s.Result(m.ID, `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"fakeupstream","version":"1"}}}`)
				case p.Meta.Version == "":
					s.Error(m.ID, -32602, "Invalid params: missing _meta io.modelcontextprotocol/protocolVersion")
				case m.Method == "tools/call":
					s.Result(m.ID, `{"resultType":"complete",`+strings.TrimPrefix(TextResult("called "+p.Name+" at "+p.Meta.Version), "{"))
				default:
					return false
				}
				return true
			},
		}
	case "plain":
		return &Scenario{}
	case "tasks":
		// MCP 2025-11-25 tasks, raw: capabilities.tasks, a tool with
		// execution.taskSupport, a tools/call with "task" answered by a
		// CreateTaskResult echoing the task member, tasks/list and
		// tasks/get answered, tasks/cancel ends the process mid-request.
		return &Scenario{
			Tools: func() string {
				return `[{"name":"slow","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"},"x-later":{"a":1}}]`
			},
			Raw: func(s *Session, m *Msg) bool {
				var p struct {
					Task   json.RawMessage `json:"task"`
					TaskID string          `json:"taskId"`
				}
				_ = json.Unmarshal(m.Params, &p)
				switch {
				case m.Method == "initialize":
					s.Result(m.ID, `{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"tasks":{"list":{},"requests":{"tools":{"call":{}}}}},"serverInfo":{"name":"fakeupstream","version":"1"}}`)
				case m.Method == "tools/call" && p.Task != nil:
					s.Result(m.ID, `{"task":{"taskId":"t-1","status":"working","requested":`+string(p.Task)+`}}`)
				case m.Method == "tasks/list":
					s.Result(m.ID, `{"tasks":[{"taskId":"t-1","status":"working"}]}`)
				case m.Method == "tasks/get" && p.TaskID == "t-1":
					s.Result(m.ID, `{"taskId":"t-1","status":"completed"}`)
				case m.Method == "tasks/get":
					s.Error(m.ID, -32602, "no task "+p.TaskID)
				case m.Method == "tasks/cancel":
					os.Exit(3)
				default:
					return false
				}
				return true
			},
		}
	case "stderrflood":
		return &Scenario{
			BeforeInit: func(*Session) {
				go func() {
					line := []byte("stderrflood: " + strings.Repeat("z", 100) + "\n")
					for {
						if _, err := os.Stderr.Write(line); err != nil {
							return
						}
					}
				}()
			},
			Raw: func(s *Session, m *Msg) bool { return m.Method == "initialize" },
		}
	case "elicitflood":
		const n = 50
		var mu sync.Mutex
		var callID json.RawMessage
		answered, refused, firstRefusal := 0, 0, ""
		return &Scenario{
			Tools: func() string { return `[{"name":"flood","inputSchema":{"type":"object"}}]` },
			Raw: func(s *Session, m *Msg) bool {
				switch {
				case m.Method == "tools/call":
					mu.Lock()
					callID = append(json.RawMessage(nil), m.ID...)
					mu.Unlock()
					for i := 0; i < n; i++ {
						s.Line(fmt.Sprintf(`{"jsonrpc":"2.0","id":"e%d","method":"elicitation/create","params":{"message":"question %d","requestedSchema":{"type":"object","properties":{}}}}`, i, i))
					}
					return true
				case m.Method == "" && strings.HasPrefix(string(m.ID), `"e`):
					mu.Lock()
					defer mu.Unlock()
					if len(m.Error) > 0 {
						refused++
						if firstRefusal == "" {
							firstRefusal = string(m.Error)
						}
					} else {
						answered++
					}
					if answered+refused == n {
						s.Result(callID, TextResult(fmt.Sprintf("answered=%d refused=%d first refusal: %s", answered, refused, firstRefusal)))
					}
					return true
				}
				return false
			},
		}
	case "hanglists":
		return &Scenario{
			Raw: func(s *Session, m *Msg) bool {
				switch m.Method {
				case "initialize":
					s.Result(m.ID, `{"protocolVersion":"2025-06-18","capabilities":{"tools":{},"resources":{"listChanged":true},"prompts":{},"logging":{}},"serverInfo":{"name":"fakeupstream","version":"1"}}`)
					return true
				case "resources/list", "resources/templates/list", "prompts/list", "logging/setLevel":
					return true // never answered
				}
				return false
			},
		}
	case "longname":
		return &Scenario{Tools: func() string {
			return `[{"name":"free-tier-usage","inputSchema":{"type":"object"}},{"name":"get-cost-forecast","inputSchema":{"type":"object"}}]`
		}}
	case "oddschemas":
		return &Scenario{Tools: func() string { return OddSchemaTools }}
	case "bigtext":
		tools := BigTextTools()
		return &Scenario{Tools: func() string { return tools }}
	case "deep":
		return &Scenario{Tools: DeepTools}
	case "listchanges":
		var sess *Session
		return &Scenario{
			BeforeInit: func(s *Session) { sess = s },
			Tools: func() string {
				if sess.Get("dropped") == true {
					return `[{"name":"poke","inputSchema":{"type":"object"}},{"name":"drop","inputSchema":{"type":"object"}}]`
				}
				return `[{"name":"a","inputSchema":{"type":"object"}},{"name":"poke","inputSchema":{"type":"object"}},{"name":"drop","inputSchema":{"type":"object"}}]`
			},
			Call: func(s *Session, name string, _ json.RawMessage) string {
				switch name {
				case "drop":
					s.Set("dropped", true)
					go s.Line(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
				case "poke":
					go s.Line(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
				}
				return EchoResult(name)
			},
		}
	case "burst":
		var mu sync.Mutex
		added := 0
		return &Scenario{
			Tools: func() string {
				mu.Lock()
				defer mu.Unlock()
				tools := []string{`{"name":"burst","inputSchema":{"type":"object"}}`}
				for i := 1; i <= added; i++ {
					tools = append(tools, fmt.Sprintf(`{"name":"t%d","inputSchema":{"type":"object"}}`, i))
				}
				return "[" + strings.Join(tools, ",") + "]"
			},
			Call: func(s *Session, name string, _ json.RawMessage) string {
				if name == "burst" {
					go func() { // while the client lists
						for i := 0; i < 5; i++ {
							mu.Lock()
							added++
							mu.Unlock()
							s.Line(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
							time.Sleep(time.Duration(1+i*3) * time.Millisecond)
						}
					}()
				}
				return EchoResult(name)
			},
		}
	case "zerotools":
		var sess *Session
		return &Scenario{
			BeforeInit: func(s *Session) { sess = s },
			Tools: func() string {
				if sess.Get("cleared") == true {
					return `[]`
				}
				return `[{"name":"a","inputSchema":{"type":"object"}},{"name":"clear","inputSchema":{"type":"object"}}]`
			},
			Call: func(s *Session, name string, _ json.RawMessage) string {
				if name == "clear" {
					s.Set("cleared", true)
					go s.Line(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
				}
				return EchoResult(name)
			},
		}
	}
	return nil
}
