package modes

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// startingEnv is a testEnv whose upstreams "filesystem" and "memory" are
// still starting.
type startingEnv struct{ *testEnv }

func (startingEnv) Starting() []string { return []string{"filesystem", "memory"} }

// Issue 12 trial, trip point 1: while upstreams start, every search answer,
// the catalog summary, the instructions and a code run that searched say
// so, and no note tells the model to give up.
func TestStartingUpstreamsNamed(t *testing.T) {
	env := startingEnv{newTestEnv(t)}
	const st = "2 MCP servers still starting: filesystem, memory"
	s := &Tools{API: testAPI()}
	for _, tc := range []struct{ query, want string }{
		{"zzqx blorf", "no match yet: nothing in the catalog matches this query, but " + st + ", and their tools are not in the catalog yet. Search again in a moment"},
		{"create an issue", st + ": their tools are not in these hits yet; search again in a moment if none of these fits."},
		{"issue weather forecast banana", st + ", and their tools are not in the catalog yet: search again in a moment"},
	} {
		r, err := s.Call(context.Background(), env, ToolSearch, json.RawMessage(`{"query":"`+tc.query+`"}`))
		if err != nil || r.IsError {
			t.Fatalf("%s: %v %v", tc.query, r, err)
		}
		var sc struct{ Note string }
		b, _ := json.Marshal(r.StructuredContent)
		_ = json.Unmarshal(b, &sc)
		if !strings.Contains(sc.Note, tc.want) || strings.Contains(sc.Note, "tell the user") {
			t.Errorf("%s: note %q\nwant it to contain %q", tc.query, sc.Note, tc.want)
		}
	}
	if d := s.Tools(env)[0].Description; !strings.Contains(d, st+"; their tools are added when ready (notifications/tools/list_changed).") {
		t.Errorf("tool_search description: %q", d)
	}
	for _, sf := range []Surface{s, &Tools{API: testAPI(), Directory: true}, &Code{API: testAPI()}} {
		if in := sf.Instructions(env); !strings.Contains(in, "At the start of this session "+st) {
			t.Errorf("%s instructions: %q", sf.Mode(), in)
		}
	}
	// Without starting upstreams nothing changes.
	if in := s.Instructions(newTestEnv(t)); strings.Contains(in, "starting") {
		t.Errorf("instructions: %q", in)
	}
	c := newTestCode(t, 1)
	r, err := c.Call(context.Background(), env, ToolSearchCode, json.RawMessage(`{"code":"return (await openclaw.tools.search(\"create an issue\")).length"}`))
	if err != nil || r.IsError {
		t.Fatalf("code: %v %v", r, err)
	}
	var out CodeOutput
	b, _ := json.Marshal(r.StructuredContent)
	if json.Unmarshal(b, &out) != nil || !strings.HasPrefix(out.Hint, st+": their tools are not in the catalog yet") {
		t.Errorf("code hint: %q", out.Hint)
	}
}
