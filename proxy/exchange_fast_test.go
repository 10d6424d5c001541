package proxy

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestFrontFastInputRequired: 2026-07-28 calls on the stdio front's fast
// path ask the client mid-call: an upstream's relayed elicitation and
// sampling, the proxy's approval followed by a relayed roots/list in a
// second round. Each first answer is input_required, the retry gets the
// result, the first request's id is free again as soon as it is answered,
// and the answers are byte-identical (requestState aside) to the go-sdk
// path's. A call that never gets its retry is ended with the connection
// (the test's cleanup).
func TestFrontFastInputRequired(t *testing.T) {
	p := startProxyText(t, fmt.Sprintf("[tool_search]\nenabled = false\n[upstreams.a]\nurl = %s\n[tools]\nrequire_approval = [\"a__roots\"]\n", tomlQuote(askingUpstream(t))))
	const trip = `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}},"sampling":{},"roots":{}}`
	state := regexp.MustCompile(`"requestState":"[^"]*"`)
	run := func(t *testing.T, fast bool) []string {
		lc := startLineClient(t, p, fast)
		var out []string
		// call sends tools/call name (extra: more params members) and
		// returns its answer and the answer's result.
		call := func(id int, name, extra string) map[string]any {
			t.Helper()
			l := lc.call(id, "tools/call", fmt.Sprintf(`{"name":%q,"arguments":{}%s,"_meta":{%s}}`, name, extra, trip))
			out = append(out, state.ReplaceAllString(string(l), `"requestState":"S"`))
			var msg struct {
				Result map[string]any
				Error  any
			}
			if err := json.Unmarshal(l, &msg); err != nil || msg.Result == nil {
				t.Fatalf("tools/call %s: %s (%v)", name, l, err)
			}
			return msg.Result
		}
		// needs checks an input_required answer and returns its
		// requestState and the key of its one question.
		needs := func(r map[string]any, what string) (string, string) {
			t.Helper()
			reqs, _ := r["inputRequests"].(map[string]any)
			st, _ := r["requestState"].(string)
			if r["resultType"] != "input_required" || len(reqs) != 1 || st == "" {
				t.Fatalf("%s: %v, want input_required with one question", what, r)
			}
			for k := range reqs {
				return st, k
			}
			return "", ""
		}
		text := func(r map[string]any) string {
			c, _ := r["content"].([]any)
			if len(c) != 1 {
				return fmt.Sprint(r)
			}
			m, _ := c[0].(map[string]any)
			s, _ := m["text"].(string)
			return s
		}
		retry := func(id int, name, st, key, answer string) map[string]any {
			t.Helper()
			return call(id, name, fmt.Sprintf(`,"requestState":%q,"inputResponses":{%q:%s}`, st, key, answer))
		}
		if l := lc.call(1, "tools/list", `{"_meta":{`+trip+`}}`); !strings.Contains(string(l), `"a__ask"`) {
			t.Fatalf("tools/list: %s", l)
		}
		// The first tools/call goes to the go-sdk (the front learns the
		// session's triple from its answer, internal/front); the next take
		// the fast path.
		st, key := needs(call(9, "a__ask", ""), "a__ask (go-sdk)")
		if r := retry(10, "a__ask", st, key, `{"action":"accept","content":{"word":"fig"}}`); text(r) != "accept: you said fig" {
			t.Errorf("a__ask after the answer: %v", r)
		}
		// Relayed elicitation; the first request's id is reused at once.
		st, key = needs(call(2, "a__ask", ""), "a__ask")
		st2, key2 := needs(call(2, "a__sample", ""), "a__sample (id 2 again)")
		if r := retry(3, "a__ask", st, key, `{"action":"accept","content":{"word":"banana"}}`); text(r) != "accept: you said banana" {
			t.Errorf("a__ask after the answer: %v", r)
		}
		if r := retry(4, "a__sample", st2, key2, `{"role":"assistant","model":"m","content":{"type":"text","text":"hello"}}`); text(r) != "model: hello" {
			t.Errorf("a__sample after the answer: %v", r)
		}
		// Approval (on the call's goroutine), then a relayed roots/list.
		st, key = needs(call(5, "a__roots", ""), "a__roots")
		st, key = needs(retry(6, "a__roots", st, key, `{"action":"accept","content":{"approve":true}}`), "a__roots after the approval")
		if r := retry(7, "a__roots", st, key, `{"roots":[{"uri":"file:///work","name":"work"}]}`); text(r) != "root file:///work" {
			t.Errorf("a__roots after the roots: %v", r)
		}
		// Left waiting for its retry: the connection's end ends it.
		needs(call(8, "a__ask", ""), "a__ask left")
		if n, want := lc.fastCalls(), map[bool]int{true: 4, false: 0}[fast]; n != want {
			t.Errorf("fast path served %d calls, want %d", n, want)
		}
		return out
	}
	var fast, sdk []string
	t.Run("fast", func(t *testing.T) { fast = run(t, true) })
	t.Run("go-sdk", func(t *testing.T) { sdk = run(t, false) })
	if t.Failed() {
		return
	}
	if len(fast) != len(sdk) {
		t.Fatalf("%d answers on the fast path, %d on the go-sdk's", len(fast), len(sdk))
	}
	for i := range fast {
		if fast[i] != sdk[i] {
			t.Errorf("answer %d:\n fast   %s\n go-sdk %s", i, fast[i], sdk[i])
		}
	}
	// The sessions' ends reach their exchanges through context.AfterFunc
	// (park), on goroutines of their own: wait for them.
	for deadline := time.Now().Add(20 * time.Second); exchangesLeft(p) != 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if n := exchangesLeft(p); n != 0 {
		t.Errorf("%d exchanges left after the connections ended", n)
	}
}
