package front

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

func TestCheckFrameIDs(t *testing.T) {
	for _, c := range []struct {
		frame string
		pass  bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, true},
		{`{"jsonrpc":"2.0","id":"x","method":"ping"}`, true},
		{`{"jsonrpc":"2.0","id":9007199254740992,"method":"ping"}`, true},
		{`{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`, false},
		{`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, false},
		{`{"jsonrpc":"2.0","id":1e3,"method":"ping"}`, false},
		{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, false},
		{`{"jsonrpc":"2.0","id":[1],"method":"ping"}`, false},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, true},
		{`{"jsonrpc":"2.0","id":1.5,"result":{}}`, true}, // an answer: the SDK judges it
		{`not json`, true},
		{`{"jsonrpc":"2.0","id":2,"mehtod":"ping"}`, false}, // no method, result or error
		{`{"jsonrpc":"1.0","id":2,"method":"ping"}`, false},
		{`{"jsonrpc":"2.0","id":2,"method":7}`, false},
	} {
		pass, answers := checkFrame([]byte(c.frame))
		if (pass != nil) != c.pass || (pass == nil) != (len(answers) == 1) {
			t.Errorf("%s: pass %s, want %v (%s)", c.frame, pass, c.pass, answers)
		}
	}
	_, answers := checkFrame([]byte(`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`))
	if len(answers) != 1 || !strings.HasPrefix(string(answers[0]), `{"jsonrpc":"2.0","id":1.5,"error":{"code":-32600,"message":"invalid request id 1.5`) {
		t.Fatalf("%s", answers)
	}
}

// TestCheckFrameBatch: each malformed element of a batch gets its own
// error object, with its id when it has a usable one, and the others go on
// as a batch of their own (JSON-RPC 2.0 section 6).
func TestCheckFrameBatch(t *testing.T) {
	for _, c := range []struct {
		frame, pass string
		answers     []string
	}{
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]`,
			`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]`, nil},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"mehtod":"tools/list"}]`,
			`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, []string{`{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"invalid request: no \"method\" (a request or notification) and no \"result\" or \"error\" (a response)"}}`}},
		{`[{"jsonrpc":"2.0","id":3,"method":"ping"}, 5 ]`,
			`[{"jsonrpc":"2.0","id":3,"method":"ping"}]`, []string{`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: a batch element must be a JSON-RPC message object, not 5"}}`}},
		{`[{"jsonrpc":"2.0","id":"a","method":"ping"},{"jsonrpc":"2.0","id":"a","method":"ping"}]`,
			`[{"jsonrpc":"2.0","id":"a","method":"ping"}]`, []string{`{"jsonrpc":"2.0","id":"a","error":{"code":-32600,"message":"invalid request: the batch holds request id \"a\" twice"}}`}},
		{`[{"jsonrpc":"2.0","id":1.5,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`,
			`[{"jsonrpc":"2.0","method":"notifications/initialized"}]`, []string{`{"jsonrpc":"2.0","id":1.5,"error":`}},
		{`[1,{"id":4}]`, "", []string{`"id":null,"error":{"code":-32600`, `{"jsonrpc":"2.0","id":4,"error":{"code":-32600,"message":"invalid request: \"jsonrpc\" must be \"2.0\""}}`}},
		{`[{"jsonrpc":"2.0","id":9,"result":{}}]`, `[{"jsonrpc":"2.0","id":9,"result":{}}]`, nil}, // a client's answer passes
	} {
		pass, answers := checkFrame([]byte(c.frame))
		if string(pass) != c.pass {
			t.Errorf("%s: passes %s, want %s", c.frame, pass, c.pass)
		}
		if len(answers) != len(c.answers) {
			t.Errorf("%s: answers %s, want %d", c.frame, answers, len(c.answers))
			continue
		}
		for i, a := range answers {
			if !strings.Contains(string(a), c.answers[i]) {
				t.Errorf("%s: answer %d = %s, want %s", c.frame, i, a, c.answers[i])
			}
		}
	}
}

// TestFrameBody: the body IDGuardWith passes on reads as the bytes it
// holds.
func TestFrameBody(t *testing.T) {
	fb := newFrameBody([]byte("abc"))
	b, err := io.ReadAll(fb)
	if err != nil || !bytes.Equal(b, []byte("abc")) || fb.Close() != nil {
		t.Fatalf("%q %v", b, err)
	}
}
